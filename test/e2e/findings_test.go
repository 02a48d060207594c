package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"certctl-loadtest/internal/findings"
)

// Every reproduction against the release and the next build, each on a stack of its own: a result
// that contradicts the catalogue's `reproduces` for that build (a defect fixed, or one appearing) makes
// `loadtest findings` exit 1, so this pins which reproduce on which. Those that could not run say why,
// and the test lists them.
func TestFindings(t *testing.T) {
	e2e(t)
	builds := map[string]string{"release": dist}
	if next := os.Getenv("CERTCTL_NEXT_DIST"); next != "" {
		builds["next"] = next
	}
	for name, build := range builds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			results_ := t.TempDir()
			r := run(t, stackEnv(t, "CERTCTL_DIST="+build, "RESULTS_DIR="+results_), loadtest, "findings")
			wantCode(t, r, 0)
			b, err := os.ReadFile(filepath.Join(results_, r.runID, findings.ResultFile))
			if err != nil {
				t.Fatalf("no %s: %v\n%s", findings.ResultFile, err, r.output)
			}
			var rep findings.Report
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			cat, err := findings.Load()
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Results) != len(cat.Findings) || rep.Build != filepath.Base(build) {
				t.Fatalf("%d results for build %q, want %d for %q", len(rep.Results), rep.Build, len(cat.Findings), filepath.Base(build))
			}
			for _, x := range rep.Results {
				if x.Outcome == findings.CouldNotRun {
					t.Logf("%s could not run: %s", x.ID, x.Says)
				}
			}
		})
	}
}
