package harness

import (
	"certctl-loadtest/internal/results"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// copyFile copies a file of internal/results/testdata/recorded into the run directory.
func copySegmentFile(t *testing.T, dir, rel string) {
	b, err := os.ReadFile(filepath.Join("..", "results", "testdata", "recorded", rel))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	}
	if err != nil {
		t.Error(err)
	}
}

// SEGMENTS=2: two k6 processes per scenario, each with its segment and its own files, merged into the
// scenario's record once both have ended; a segment that wrote nothing fails the scenario (no results),
// whatever the other half said.
func TestRunSegments(t *testing.T) {
	for _, c := range []struct {
		name    string
		missing string // the segment whose k6 writes no record
		code    int
		status  string
	}{
		{"both halves", "", 0, "passed 0"},
		{"a half missing", "2of2", results.ExitNoResults, "no-results 4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Tiers, cfg.Segments = []string{"api"}, 2
			cfg.Scenarios = []Scenario{{Tier: "api", Name: "list_certificates", Path: "k6/api/list_certificates.js"}}
			var mu sync.Mutex
			var runs [][]string
			k6 := func(ctx context.Context, cmd Cmd) int {
				mu.Lock()
				runs = append(runs, cmd.Args)
				mu.Unlock()
				seg := ""
				for i, a := range cmd.Args {
					if a == "-e" && strings.HasPrefix(cmd.Args[i+1], "LT_SEGMENT=") {
						seg = strings.TrimPrefix(cmd.Args[i+1], "LT_SEGMENT=")
					}
				}
				if seg != c.missing {
					copySegmentFile(t, cfg.RunDir(), "scenarios/segments/list_certificates@"+seg+".json")
					copySegmentFile(t, cfg.RunDir(), "raw/segments/list_certificates@"+seg+".json.gz")
				}
				return 0
			}
			f := engine(t, cfg, nil, answer{prefix: "compose run --rm --no-deps -T --name ", do: k6})
			res := runWith(context.Background(), t, cfg, f)
			if res.code != c.code {
				t.Fatalf("exit %d, want %d\n%s", res.code, c.code, res.stderr)
			}
			if got := scenarioStatus(res.summary)["list_certificates"]; got != c.status {
				t.Errorf("list_certificates %s, want %s", got, c.status)
			}
			if len(runs) != 2 {
				t.Fatalf("%d k6 processes, want 2", len(runs))
			}
			var segs []string
			for _, args := range runs {
				line := strings.Join(args, " ")
				i := slices.Index(args, "--execution-segment")
				if i < 0 || !strings.Contains(line, "--execution-segment-sequence 0,1/2,1") {
					t.Fatalf("a process without its segment: %s", line)
				}
				segs = append(segs, args[i+1])
				id := map[string]string{"0:1/2": "1of2", "1/2:1": "2of2"}[args[i+1]]
				for _, want := range []string{"--name certctl-lt-t1-k6-list-certificates-" + id, "json=/results/raw/segments/list_certificates@" + id + ".json.gz",
					"K6_WEB_DASHBOARD_EXPORT=/results/dashboard/segments/list_certificates@" + id + ".html", "LT_SEGMENT=" + id} {
					if !strings.Contains(line, want) {
						t.Errorf("process %s: no %q in %s", id, want, line)
					}
				}
			}
			slices.Sort(segs)
			if strings.Join(segs, " ") != "0:1/2 1/2:1" {
				t.Errorf("segments %v", segs)
			}
			if c.missing == "" {
				rec := res.summary.Scenarios[0].Record
				if rec == nil || len(rec.Segments) != 2 || rec.Iterations != 12002 {
					t.Fatalf("merged record %+v", rec)
				}
				if !strings.Contains(res.stderr, "scenario list_certificates: merged 2 segments (1of2 0:1/2 6001 iterations; 2of2 1/2:1 6001 iterations): thresholds held on the pooled samples") {
					t.Errorf("no merge line:\n%s", res.stderr)
				}
				if !strings.Contains(res.stdout, "split loads") {
					t.Errorf("the summary does not say the load was split:\n%s", res.stdout)
				}
			} else if !strings.Contains(res.stderr, "no record of the load's segment 1/2:1") {
				t.Errorf("the missing half is not named:\n%s", res.stderr)
			}
		})
	}
}
