package docs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/fleet"
	"certctl-loadtest/internal/testbed"
)

// The README's first-screen answer comes from the recorded fleet.json of each build, with its testbed,
// the pinned release's first although its name sorts last.
func TestFleetAnswerFromTheRecord(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("CERTCTL_IMAGE=ghcr.io/certctl-io/certctl-server:v2.1.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := FleetAnswer(root); err != nil || !strings.HasPrefix(s, "No fleet answer is recorded yet") {
		t.Fatalf("none recorded: %q, %v", s, err)
	}
	if err := os.MkdirAll(filepath.Join(root, FleetDir), 0o755); err != nil {
		t.Fatal(err)
	}
	gw := fleet.Try{Size: 40_000, Broke: []string{"stats_summary: http_req_duration p(95)<800 (p(95)=912)"}, Cause: "postgres at 95 % CPU"}
	r := fleet.Result{Schema: fleet.Schema, Fleet: fleet.Description{Name: "example", RotationDays: 47}, Answer: 32_000,
		Interval: [2]float64{32_000, 40_000}, Confirmed: true, Verdict: "carries 32,000 certificates (32,000–40,000)", GivesWay: &gw,
		Tries: make([]fleet.Try, 8), TookS: 1500,
		Testbed: &testbed.Calibration{CPUs: 2, CPUModel: "AMD EPYC 7B13", At: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}}
	for _, build := range []string{"main-151107c", "v2.1.7"} {
		b, _ := json.Marshal(r)
		if err := os.WriteFile(filepath.Join(root, FleetDir, build+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := FleetAnswer(root)
	if i, j := strings.Index(s, "**certctl v2.1.7"), strings.Index(s, "**certctl main-151107c**"); i < 0 || j < i {
		t.Errorf("the pinned release's answer is not first:\n%s", s)
	}
	want := "- **certctl v2.1.7 (the pinned release)** carries 32,000 certificates (32,000–40,000) of the example fleet (`fleets/example.yaml`) at 47-day rotation, on 2 CPUs (AMD EPYC 7B13), calibrated 2026-12-02; the first thing to give way beyond it: stats_summary: http_req_duration p(95)<800 (p(95)=912) — postgres at 95 % CPU ([docs/fleet](docs/fleet/v2.1.7.json), 8 runs, 25 min)."
	if err != nil || !strings.Contains(s, want) {
		t.Errorf("got %q, %v\nwant %q", s, err, want)
	}
}
