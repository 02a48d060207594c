package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"certctl-loadtest/internal/findings"
)

// Every reproduction against the release and the next build, each on a stack of its own, one after the
// other (two stacks would slow the scripts that wait on certctl's clocks): a result that contradicts the
// catalogue's `reproduces` for that build (a defect fixed, or one appearing) makes `loadtest findings`
// exit 1, so this pins which reproduce on which. On the harness's own stack a pinned one must also run:
// "could not run" there is a broken script, not a judgement. The others that could not run say why.
func TestFindings(t *testing.T) {
	e2e(t)
	builds := releaseAndNext()
	for name, build := range builds {
		t.Run(name, func(t *testing.T) {
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
				switch {
				case x.Outcome == findings.CouldNotRun && x.Expected == findings.Reproduces:
					t.Errorf("%s reproduces on %s by the catalogue, and could not run: %s", x.ID, rep.Build, x.Says)
				case x.Outcome == findings.CouldNotRun:
					t.Logf("%s could not run: %s", x.ID, x.Says)
				}
			}
		})
	}
}
