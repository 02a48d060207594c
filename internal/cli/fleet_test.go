package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"certctl-loadtest/internal/diagnosis"
	"certctl-loadtest/internal/fleet"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/testbed"
)

// A size holds only when every threshold of every scenario held: a breach certctl's registry explains
// (exit 0 under KNOWN_DEFECTS=pass) still does not carry the fleet; a machine-decided run decides nothing.
func TestJudgeTry(t *testing.T) {
	v := 912.4
	rec := func(ok bool) *results.Record {
		r := &results.Record{Thresholds: []results.Threshold{{Metric: "http_req_duration{expected_response:true,scenario:stats_summary}", Expression: "p(95)<800", OK: ok, Aggregate: "p(95)", Value: &v}}}
		return r
	}
	sum := func(code int, ok bool) results.Summary {
		return results.Summary{ExitCode: code, Scenarios: []results.Scenario{{Name: "stats_summary", Record: rec(ok)}},
			Diagnosis: &diagnosis.Diagnosis{Findings: []diagnosis.Finding{{Kind: "info", Sentence: "k6 at 20 %"}, {Kind: "limit", Sentence: "postgres at 95 % CPU"}}}}
	}
	var held, known, broke, machine fleet.Try
	judgeTry(&held, sum(0, true))
	judgeTry(&known, sum(0, false))
	judgeTry(&broke, sum(99, false))
	s := sum(6, false)
	s.Inconclusive = "work outside the run took 40 % of the CPUs"
	judgeTry(&machine, s)
	if !held.Holds || known.Holds || broke.Holds || machine.Decided() {
		t.Errorf("held %+v, known %+v, broke %+v, machine %+v", held, known, broke, machine)
	}
	if len(broke.Broke) != 1 || broke.Broke[0] != "stats_summary: http_req_duration{expected_response:true} p(95)<800 (p(95)=912.4)" || broke.Cause != "postgres at 95 % CPU" {
		t.Errorf("broke %q, cause %q", broke.Broke, broke.Cause)
	}
	if !strings.Contains(machine.Problem, "work outside the run") {
		t.Errorf("machine-decided: %q", machine.Problem)
	}
}

// loadtest compare of two fleet answers: exit 7 across testbeds, 1 for a smaller fleet on one.
func TestCompareFleetAnswers(t *testing.T) {
	tb := testbed.Calibration{CPUs: 2, CPUSingle: 1000, CPUAll: 1980, FsyncP50Ms: 0.9}
	write := func(n, broke float64, c testbed.Calibration) string {
		dir := t.TempDir()
		r := fleet.Result{Schema: fleet.Schema, Fleet: fleet.Description{Name: "example"}, Answer: n, Interval: [2]float64{n, broke}, Testbed: &c, Verdict: "carries", Confirmed: true}
		b, _ := json.Marshal(r)
		if err := os.WriteFile(filepath.Join(dir, "fleet.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	fast := tb
	fast.CPUSingle, fast.CPUAll = 3000, 6000
	a, smaller, elsewhere := write(32_000, 40_000, tb), write(12_000, 15_000, tb), write(90_000, 110_000, fast)
	if o := mainWith(t, []string{"compare", "old=" + a, "new=" + smaller}, nil, nil); o.code != ExitRegressed || !strings.Contains(o.stdout, "new carries a smaller fleet than old") {
		t.Errorf("smaller: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o := mainWith(t, []string{"compare", a, elsewhere}, nil, nil); o.code != ExitNotComparable || !strings.Contains(o.stdout, "NOT COMPARABLE") {
		t.Errorf("two testbeds: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	// A recorded answer (docs/fleet/<build>.json) compares as its search's directory does, named by its file.
	recorded := filepath.Join(t.TempDir(), "v2.1.7.json")
	if b, err := os.ReadFile(filepath.Join(a, "fleet.json")); err != nil || os.WriteFile(recorded, b, 0o644) != nil {
		t.Fatal(err)
	}
	if o := mainWith(t, []string{"compare", recorded, smaller}, nil, nil); o.code != ExitRegressed || !strings.Contains(o.stdout, "carries a smaller fleet than v2.1.7") {
		t.Errorf("a recorded answer: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
}

// compare-builds FLEET=…: a search a build, planned before anything runs.
func TestCompareBuildsFleetPlan(t *testing.T) {
	o := mainWith(t, []string{"compare-builds", "--plan", "--reference", "certctl:v2.1.7", "--candidate", "certctl:main"}, map[string]string{"FLEET": "fleets/example.yaml"}, nil)
	if o.code != 0 || !strings.Contains(o.stdout, "a fleet search of v2.1.7, then of main, then the two answers side by side") || len(o.calls) > 0 {
		t.Errorf("exit %d, calls %q:\n%s%s", o.code, o.calls, o.stdout, o.stderr)
	}
}

// Every run of a search has a directory of its own, the confirming run's at a size run before too.
func TestTryRunIDs(t *testing.T) {
	if a, b := tryRunID("fleet-x", 3, 32_000), tryRunID("fleet-x", 7, 32_000); a == b || a != "fleet-x-3-32000" {
		t.Errorf("%q, %q", a, b)
	}
}

// A size's run repeats as that run alone: make loadtest with the fleet's load at the size, not the
// search (FLEET_*) nor the compare-builds that started it.
func TestTryRepeatsAsOneRun(t *testing.T) {
	d := exampleFleet(t)
	o := tryKnobs(d, 5700, "2m", 120)
	environ := []string{"LOADTEST_GOAL=compare-builds", "FLEET=fleets/example.yaml", "FLEET_GROWTH=docs/growth/v2.1.7.json", "FLEET_STEP=2m"}
	for k, v := range o {
		environ = append(environ, k+"="+v)
	}
	getenv := func(k string) string {
		v := ""
		for _, kv := range environ {
			if name, val, _ := strings.Cut(kv, "="); name == k {
				v = val
			}
		}
		return v
	}
	cmd := commandLine("run", getenv, environ)
	if !strings.HasPrefix(cmd, "make loadtest TIER=api,acme,pki,growth ") || !strings.Contains(cmd, " SEED_INVENTORY=5700") ||
		!strings.Contains(cmd, " RATE_AGENT_WORK=") || strings.Contains(cmd, "FLEET") {
		t.Errorf("repeat command %q: want make loadtest with the size's knobs and none of the search's", cmd)
	}
}

// FLEET_RESUME=1 goes on with a record of the same fleet, step, build and testbed whose runs are all
// there; anything else is refused before a run starts.
func TestResumable(t *testing.T) {
	d := exampleFleet(t)
	tb := testbed.Calibration{CPUs: 2, CPUSingle: 13000, CPUAll: 26000, FsyncP50Ms: 0.11}
	write := func(rec fleet.Result, runs ...string) string {
		dir := t.TempDir()
		for _, r := range runs {
			js, _ := json.Marshal(results.Run{RunID: r, Testbed: &tb, Certctl: results.Certctl{Build: "/builds/main-151107c"}})
			if err := os.MkdirAll(filepath.Join(dir, r), 0o755); err != nil || os.WriteFile(filepath.Join(dir, r, "run.json"), js, 0o644) != nil {
				t.Fatal(err)
			}
		}
		js, _ := json.Marshal(rec)
		if err := os.WriteFile(filepath.Join(dir, "fleet.json"), js, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	rec := fleet.Result{Schema: fleet.Schema, Fleet: d, StepS: 120, Testbed: &tb, Build: "main-151107c", Tries: []fleet.Try{
		{Size: 4000, Role: "bracket", RunID: "s-1-4000", RunDir: "s-1-4000", Holds: true},
		{Size: 8000, Role: "bracket", RunID: "s-2-8000", RunDir: "s-2-8000", Problem: "inconclusive: the machine decided it"},
		{Size: 8000, Role: "bracket", RunID: "s-3-8000", RunDir: "s-3-8000"},
	}}
	here := func(context.Context, string) testbed.Calibration { return tb }
	noDocker := func(context.Context, harness.Cmd) (int, error) { return 1, nil }
	e := Env{Calibrate: here, Exec: noDocker}
	first := harness.Config{Dist: "/elsewhere/main-151107c"}
	s := fleet.DefaultSettings
	got, recorded, err := resumable(context.Background(), e, write(rec, "s-1-4000", "s-2-8000", "s-3-8000"), d, s, first)
	if err != nil || len(got) != 1 || recorded != 3 || got[0].try.Size != 4000 || got[0].build != "main-151107c" || got[0].testbed != tb {
		t.Fatalf("kept %+v, %v: want the run before the one that decided nothing", got, err)
	}
	other := d
	other.Name = "another"
	slow := tb
	slow.CPUSingle, slow.CPUAll = 6000, 12000
	for _, c := range []struct {
		name  string
		dir   string
		d     fleet.Description
		stepS float64
		dist  string
		here  testbed.Calibration
		want  string
	}{
		{"another fleet", write(rec, "s-1-4000"), other, 120, "", tb, "searched another fleet (example) than FLEET's (another)"},
		{"another step", write(rec, "s-1-4000"), d, 60, "", tb, "ran 120s a size, FLEET_STEP 60s"},
		{"another build", write(rec, "s-1-4000"), d, 120, "/builds/v2.1.7", tb, "searched certctl main-151107c, CERTCTL_DIST is v2.1.7"},
		{"another testbed", write(rec, "s-1-4000"), d, 120, "", slow, "ran on another testbed than this machine's now (a core 13000/s vs 6000/s"},
		{"its runs gone", write(rec), d, 120, "", tb, "run s-1-4000 of the record"},
		{"no record", t.TempDir(), d, 120, "", tb, "fleet.json: no such file"},
	} {
		s.StepS = c.stepS
		now := c.here
		_, _, err := resumable(context.Background(), Env{Calibrate: func(context.Context, string) testbed.Calibration { return now }, Exec: noDocker}, c.dir, c.d, s, harness.Config{Dist: c.dist})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// exampleFleet is fleets/example.yaml, parsed.
func exampleFleet(t *testing.T) fleet.Description {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "fleets", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := fleet.Parse(b, "fleets/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
