package ciplan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// Budget is what CI may take on this 2-CPU machine, all of .ci/run from a fresh clone.
const Budget = 15 * time.Minute

// e2ePlanner's costs of a stack on top of its load, measured in a rehearsal of the gate on this 2-CPU
// machine (go test -short -v ./test/e2e/: each run's "exit N in T" less its planned load): 23 to 29 s a
// stack of the parallel part (35 s for the API breach, whose 6 s requests end after the load), 20 s a
// scale stack alone, 25 s a PKI stack, 100 s the deploy stack; an auth stack adds Keycloak's start and
// realm import: 62 s a stack alone (TIER=auth DURATION=30s, 4 stacks in 369 s, 2026-11-28). A refused
// run is the harness's start and its preflight (0.1 to 2.8 s).
var e2ePlanner = Planner{
	Stack:   map[string]time.Duration{"auth": 62 * time.Second, "default": 27 * time.Second, "deploy": 100 * time.Second, "pki": 25 * time.Second, "scale": 20 * time.Second},
	Refused: time.Second,
}

// e2eConcurrency is how many stacks' worth of work the gate's shared part got done at once on this
// 2-CPU machine in that rehearsal: the sum of its runs' times (about 680 s) over their wall time (about
// 275 s, the parallel tests' 318 s less the 41 s of the run that held the machine alone).
const e2eConcurrency = 2.4

// workflowPlanner's costs under act, from go test -short -v ./test/workflow/ on this machine
// (2026-11-29): a test's act (its containers, the harness built, the steps around the run: about 10 s
// more than the run, TestDefaultJob/green 42 s for a 5-second run), a job refused before its stack (8 s:
// Monday's four jobs in 36 s, Thursday's sixteen in 120 s; a trend job 20 s), and a stack as the e2e
// suite's.
var workflowPlanner = Planner{
	Stack:   map[string]time.Duration{"default": 27 * time.Second, "scale": 20 * time.Second, "pki": 25 * time.Second},
	Refused: 8 * time.Second,
	PerTest: 10 * time.Second,
}

// workflowConcurrency: act's jobs side by side (-parallel 2) on 2 CPUs: the suite's tests took 868 s in
// all over its 445 s (go test -short -v ./test/workflow/, alone on this machine, 2026-11-29).
const workflowConcurrency = 1.9

// suite is a step whose runs are planned: its tests, how it reads its knobs, how make runs it.
type suite struct {
	step        string
	tests       []Test
	planner     Planner
	concurrency float64
}

func suiteOf(root, step string) suite {
	for _, s := range suites(root) {
		if s.step == step {
			return s
		}
	}
	panic(step)
}

func suites(root string) []suite {
	e2e, wf := e2ePlanner, workflowPlanner
	e2e.Root, e2e.Defaults = root, E2EKnobs
	wf.Root, wf.Defaults = root, WorkflowKnobs
	return []suite{{"test-e2e", E2E, e2e, e2eConcurrency}, {"test-workflow", Workflow, wf, workflowConcurrency}}
}

// row is a step of the plan.
type row struct {
	step            string
	took, then, now time.Duration // measured; its plan then and now (0: unplanned)
	cost            time.Duration
	missing, via    string
}

// planCI plans CI: each step's measured cost, a planned step's scaled by its plan now over its plan when
// measured (a test added or lengthened moves it before it is ever measured).
func planCI(t *testing.T, steps []Step, costs map[string]Cost, planned map[string]time.Duration) ([]row, time.Duration) {
	t.Helper()
	var rows []row
	var total time.Duration
	for _, s := range steps {
		r := row{step: s.Name, now: planned[s.Name], via: s.Via}
		c, ok := costs[s.Name]
		switch {
		case !ok:
			r.missing = "no measured cost: run it under .ci/run (scripts/ci-step.sh records it in " + CostsFile + ")"
		case r.now > 0 && c.Planned > 0:
			r.took, r.then = c.Took, c.Planned
			r.cost = time.Duration(float64(c.Took) * float64(r.now) / float64(c.Planned))
		case r.now > 0:
			r.took = c.Took
			r.cost = max(c.Took, r.now)
		default:
			r.took, r.cost = c.Took, c.Took
			if c.Took >= LongestRun {
				// The runs of a planned step are each held to LongestRun; an unplanned step is one run.
				r.missing = fmt.Sprintf("took %s unplanned: a step of %s or more is a suite whose runs test/ciplan plans, or the full suite's", c.Took.Round(time.Second), LongestRun)
			}
		}
		total += r.cost
		rows = append(rows, r)
	}
	return rows, total.Round(time.Second)
}

func render(rows []row, total time.Duration) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "step\tmeasured\tplanned then\tplanned now\tcost\n")
	d := func(x time.Duration) string {
		if x == 0 {
			return "-"
		}
		return x.Round(time.Second).String()
	}
	for _, r := range rows {
		cost := d(r.cost)
		if r.missing != "" {
			cost = r.missing
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.step, d(r.took), d(r.then), d(r.now), cost)
	}
	tw.Flush()
	fmt.Fprintf(&b, "all of CI: %s of a %s budget, margin %s", total, Budget, Budget-total)
	return b.String()
}

// planned is the suites' runs planned once (k6 inspect of every run takes a while): each suite's jobs and
// the slots make gives it.
type planned struct {
	jobs  map[string][]Job
	slots map[string]int
}

func planAll(t *testing.T, root string) planned {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	p := planned{jobs: map[string][]Job{}, slots: map[string]int{}}
	for _, s := range suites(root) {
		if p.slots[s.step], err = ParallelSlots(string(mk), s.step); err != nil {
			t.Fatal(err)
		}
		if p.jobs[s.step], err = s.planner.Plan(s.tests); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// schedule is each suite's planned time with extra tests added to it, and its schedule.
func (p planned) schedule(t *testing.T, root string, extra map[string][]Test) (map[string]time.Duration, map[string][]Job) {
	t.Helper()
	took, scheduled := map[string]time.Duration{}, map[string][]Job{}
	for _, s := range suites(root) {
		jobs := p.jobs[s.step]
		if len(extra[s.step]) > 0 {
			more, err := s.planner.Plan(extra[s.step])
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(append([]Job{}, jobs...), more...)
		}
		took[s.step], scheduled[s.step] = Schedule(jobs, p.slots[s.step], s.concurrency)
	}
	return took, scheduled
}

// LongestRun is the longest load a run of the gate may have: a run that long is the full suite's. Each
// run is cheap alone, and their sum is what the budget holds; this keeps a long one from slipping into
// the margin the budget leaves.
const LongestRun = 2 * time.Minute

// TestCIPlan is the guard that keeps CI within its budget, without docker: it reads CI's steps from
// .ci/run and the Makefile, takes each one's cost as last measured (.ci/costs.tsv), plans the gate's
// e2e and workflow runs with the harness's own planner and scales their measured cost by their plan now
// over their plan then, and fails when the whole passes Budget or a step has no cost. It prints the plan,
// step by step, with the margin; under .ci/run (CI_PLAN) it leaves the planned figures for the steps
// that measure themselves after it.
func TestCIPlan(t *testing.T) {
	root, _ := filepath.Abs("../..")
	steps, err := ReadSteps(root)
	if err != nil {
		t.Fatal(err)
	}
	costs, err := ReadCosts(filepath.Join(root, CostsFile))
	if err != nil {
		t.Fatal(err)
	}
	all := planAll(t, root)
	planned, scheduled := all.schedule(t, root, nil)
	for _, s := range []string{"test-e2e", "test-workflow"} {
		t.Logf("%s as planned:\n%s", s, renderJobs(scheduled[s]))
	}
	rows, total := planCI(t, steps, costs, planned)
	out := render(rows, total)
	t.Logf("CI as .ci/run runs it, each step at its measured cost:\n%s", out)
	for _, r := range rows {
		if r.missing != "" {
			t.Errorf("%s (from `%s`): %s", r.step, r.via, r.missing)
		}
	}
	for _, s := range suites(root) {
		for _, j := range all.jobs[s.step] {
			if j.Longest >= LongestRun {
				t.Errorf("%s: %s loads a stack for %s: a run of %s or more is the full suite's (make test-full)", s.step, j.Name, j.Longest, LongestRun)
			}
		}
	}
	if total > Budget {
		t.Errorf("CI is planned to take %s, past its %s budget: move a test to the full suite (make test-full), shorten its runs, or cache what a step rebuilds\n%s", total, Budget, out)
	}
	if p := os.Getenv("CI_PLAN"); p != "" {
		var b strings.Builder
		for _, s := range []string{"test-e2e", "test-workflow"} {
			fmt.Fprintf(&b, "%s\t%.1f\n", s, planned[s].Seconds())
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The guard can fail: a 2-minute run added to the e2e gate (among the parallel tests, or alone) or to
	// the workflow suite, or a 2-minute step, takes CI past its budget; a step with no cost fails it.
	twoMinutes := func(alone bool) []Test {
		return []Test{{Name: "a 2-minute run", Alone: alone, Runs: []Run{{Cmd: "loadtest run", Env: "TIER=api DURATION=2m"}}}}
	}
	for _, g := range []struct {
		name  string
		extra map[string][]Test
	}{
		{"an e2e test", map[string][]Test{"test-e2e": twoMinutes(false)}},
		{"an e2e test alone", map[string][]Test{"test-e2e": twoMinutes(true)}},
		{"a workflow test", map[string][]Test{"test-workflow": twoMinutes(false)}},
	} {
		grownPlan, _ := all.schedule(t, root, g.extra)
		_, grown := planCI(t, steps, costs, grownPlan)
		long := false
		for step, tests := range g.extra {
			s := suiteOf(root, step)
			more, err := s.planner.Plan(tests)
			if err != nil {
				t.Fatal(err)
			}
			long = long || more[0].Longest >= LongestRun
		}
		t.Logf("with a 2-minute run added as %s: CI planned at %s; refused as too long a run: %v", g.name, grown, long)
		if grown <= Budget && !long {
			t.Errorf("with a 2-minute run added as %s CI is planned at %s, within its %s budget: the guard would not see CI grow", g.name, grown, Budget)
		}
	}
	script, _ := os.ReadFile(filepath.Join(root, ".ci", "run"))
	mk, _ := os.ReadFile(filepath.Join(root, "Makefile"))
	for _, line := range []string{"scripts/ci-step.sh warm-cache go build ./...", "go vet ./..."} {
		grownSteps, err := Steps(string(script)+"\n"+line+"\n", string(mk))
		if err != nil {
			t.Fatal(err)
		}
		grownRows, _ := planCI(t, grownSteps, costs, planned)
		if last := grownRows[len(grownRows)-1]; last.missing == "" {
			t.Errorf("a new step `%s` is planned at %s: a step without a measured cost must fail the guard", line, last.cost)
		}
	}
	withStep := map[string]Cost{"two-minutes": {Took: 2 * time.Minute}}
	for k, v := range costs {
		withStep[k] = v
	}
	grownSteps, _ := Steps(string(script)+"\nscripts/ci-step.sh two-minutes sleep 120\n", string(mk))
	grownRows, grown := planCI(t, grownSteps, withStep, planned)
	refused := grownRows[len(grownRows)-1].missing
	t.Logf("with a 2-minute step: CI planned at %s; refused as too long a step: %q", grown, refused)
	if grown <= Budget && refused == "" {
		t.Errorf("with a 2-minute step CI is planned at %s, within its %s budget, and the step is not refused", grown, Budget)
	}
}

func renderJobs(jobs []Job) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "test\tstacks\tload\tplanned\tstarts\tends\n")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", j.Name, j.Stacks, j.Load, j.Took, j.Start, j.End)
	}
	tw.Flush()
	return b.String()
}

// CI's steps as .ci/run runs them: install-deps by itself, then make test's targets in make's order, the
// harness's binary before the e2e tests that need it; plumbing (set, cd, export, if) is no step, and a
// command that does not name its step is one, under its line.
func TestSteps(t *testing.T) {
	root, _ := filepath.Abs("../..")
	steps, err := ReadSteps(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.Name)
	}
	want := []string{"install-deps", "images", "lint-workflows", "bin/k6", "test-unit", "test-browser", "test-k6", "bin/loadtest", "test-e2e", "test-workflow"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("steps %q\nwant  %q", names, want)
	}
	mk, _ := os.ReadFile(filepath.Join(root, "Makefile"))
	got, err := Steps("set -e\ncd x\nexport A=1\nif [ -d y ]; then\n  B=$(pwd)\nfi\nmkdir -p results\ngo vet ./...\nmake test-k6 CI=true\n", string(mk))
	if err != nil || len(got) != 2 || got[0].Name != "go vet ./..." || got[1].Name != "test-k6" {
		t.Errorf("steps %+v, %v", got, err)
	}
	if _, err := Steps("make no-such-target\n", string(mk)); err == nil {
		t.Error("make of a target the Makefile lacks: no error")
	}
}
