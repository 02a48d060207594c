package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"certctl-loadtest/internal/overhead"
	"certctl-loadtest/internal/results"
)

// loadtest overhead against the real certctl, at its smallest (not through make, which makes every
// failing code 2): every instrument on against every one off,
// two rounds in alternating order. The off runs have no instruments (no server/, no progress lines),
// the on runs state their share, and the comparison and the budget are written. Whether the budget
// holds over 10 s beside other stacks is not what this judges: make overhead, alone, does.
func TestOverhead(t *testing.T) {
	e2e(t)
	t.Parallel()
	results_ := t.TempDir()
	r := run(t, append(stackEnv(t), "RESULTS_DIR="+results_, "SCENARIOS=list_certificates", "DURATION=10s",
		"OVERHEAD=all", "OVERHEAD_RUNS=2", "PROGRESS_INTERVAL=3s"), loadtest, "overhead")
	dir := filepath.Join(results_, r.runID)
	b, err := os.ReadFile(filepath.Join(dir, overhead.JSONFile))
	if err != nil {
		t.Fatalf("no %s: %v\n%s", overhead.JSONFile, err, r.output)
	}
	var res overhead.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{overhead.On, overhead.All}, {overhead.All, overhead.On}}; !slices.EqualFunc(res.Order, want, slices.Equal) || !res.Complete {
		t.Fatalf("order %v (complete %v), want %v", res.Order, res.Complete, want)
	}
	if len(res.Runs[overhead.On]) != 2 || len(res.Runs[overhead.All]) != 2 || len(res.Instruments) != 1 || res.Instruments[0].Compare == nil || !res.Budget.Judged {
		t.Fatalf("runs %v, instruments %+v, budget %+v", res.Runs, res.Instruments, res.Budget)
	}
	wantCode(t, r, map[bool]int{true: 0, false: 1}[res.Budget.Held])
	for _, name := range []string{overhead.On, overhead.All} {
		for _, rel := range res.Runs[name] {
			run := filepath.Join(dir, rel)
			s, err := results.Load(run)
			if err != nil {
				t.Fatal(err)
			}
			_, serr := os.Stat(filepath.Join(run, "server"))
			switch name {
			case overhead.On:
				if serr != nil || s.Diagnosis == nil || s.Diagnosis.Machine == nil || s.Diagnosis.Machine.HarnessPct == nil {
					t.Errorf("%s: every instrument on, but no diagnosis or share (%v)", rel, serr)
				}
			case overhead.All:
				if serr == nil || s.Diagnosis != nil || s.Run.Config["DIAGNOSIS"] != "false" || s.Run.Config["COLLECT_STATEMENTS"] != "off" || s.Run.Settings["PROGRESS_INTERVAL"] != "0" {
					t.Errorf("%s: every instrument off, but server/ %v, config %v, settings %v", rel, serr, s.Run.Config, s.Run.Settings)
				}
			}
		}
	}
	wantOutput(t, r, `(?m)^budget: with every instrument on, no scenario's p50 changes significantly against every instrument off: (held|broken) \(its p50 at 95 %\)(: .+)?$`)
	wantOutput(t, r, `(?m)^loadtest: overhead: run 4 of 4: every instrument on \(`)
}
