package harness

import (
	"os"
	"path/filepath"
	"testing"

	"certctl-loadtest/internal/results"
)

// k6 exits 0 when it held every threshold, one over no sample included; the record does not hold that
// one, and the run is a breach.
func TestCollectNoSampleIsABreach(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755)
	os.WriteFile(filepath.Join(dir, "scenarios", "held.json"), []byte(`{"thresholds_ok": true}`), 0o644)
	os.WriteFile(filepath.Join(dir, "scenarios", "nothing.json"), []byte(`{"thresholds_ok": false, "thresholds": [{"metric": "acme_order_ms", "expression": "p(95)<2000", "ok": false, "no_sample": true}]}`), 0o644)
	runs := []results.ScenarioRun{{Name: "held"}, {Name: "nothing"}}
	if code := collect(dir, runs); code != results.ExitThresholds || runs[0].ExitCode != 0 || runs[1].ExitCode != results.ExitThresholds {
		t.Errorf("exit %d, runs %+v", code, runs)
	}
}
