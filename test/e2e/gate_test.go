package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"certctl-loadtest/internal/cli"
	"certctl-loadtest/internal/harness"
)

// The gate is the e2e part of `make test` (go test -short): the tests below and only they, each with the
// runs it makes. Every other e2e test runs in `make test-full` alone. The gate holds one green run per
// tier and one live test per mechanism; every breach and fault, the statistics on live stacks and the
// proof that each threshold can fail are the full suite's (issue 28).
//
// A test opts in by its entry, and its entry is held to what it does: in short mode a run that matches
// none of its test's planned runs fails the test (runDuring), so TestGatePlan plans what the gate runs.
var gate = []gated{
	// Not parallel (the full suite's acme_burst takes every cycle left): go test runs it first, alone.
	{test: "TestScaleScenarios/green", serial: true, runs: []planned{{cmd: "loadtest run", env: "TIER=scale SCENARIOS=bulk_renewal DURATION=8s"}}},
	// The green run of the tiers that share a stack, alone: its verdict is certctl's budgets on this machine.
	{test: "TestAllTiersGreen", alone: true, runs: []planned{{cmd: "make loadtest", env: "TIER=all"}}},
	// The other tiers' green runs wait on certctl's clocks and agents, or judge budgets that hold beside
	// other stacks (a latency budget broken on CPU alone is logged there, not failed: wantThresholds).
	{test: "TestDeployTier/green", runs: []planned{{cmd: "loadtest run", env: "TIER=deploy SCENARIOS=deploy_latency DURATION=1m"}}},
	{test: "TestPKITier/orders, issuance and revocation checks",
		runs: []planned{{cmd: "loadtest run", env: "TIER=pki SCENARIOS=acme_order_flow,issuance_c4,ocsp_crl DURATION=10s"}}},
	{test: "TestLimiterTier/as certctl answers", runs: []planned{{cmd: "loadtest run", env: "TIER=limiter DURATION=10s"}}},
	{test: "TestAuthTier/logins and the session path", runs: []planned{{cmd: "loadtest run", env: "TIER=auth SCENARIOS=oidc_login DURATION=10s"}}},
	// One live test per mechanism.
	{test: "TestServerKilledMidRunThenRerun", runs: []planned{{cmd: "loadtest run", env: "DURATION=20s"}, {cmd: "loadtest run"}}},
	{test: "TestAPIThresholdsCanFail/latency and errors", runs: []planned{{cmd: "loadtest run"}}},
	{test: "TestFaultsKeepTheVerdict/server paused", runs: []planned{{cmd: "loadtest run", env: "DURATION=12s"}}},
	{test: "TestConnectorThresholdsCanFail/wrong starter certificate", runs: []planned{{cmd: "loadtest run", env: "TIER=connector"}}},
	{test: "TestSpotchecks/slow and refused reads and writes", runs: []planned{{cmd: "loadtest spotcheck", measured: 75 * time.Second}}},
	{test: "TestSegmentsMerge", runs: []planned{{cmd: "loadtest run --segments 2", env: "SCENARIOS=list_certificates DURATION=20s"}}},
	{test: "TestNoRouteOut", runs: []planned{{cmd: "loadtest run", env: "DURATION=20s"}}},
	{test: "TestDiskFull/too small before the run", runs: []planned{{cmd: "loadtest run", env: "DURATION=5m", aborts: true}}},
	// The growth modes (docs/growth.md), each at a small size. A growth size is a seeded stack of the
	// mix's tiers (PKI's included) and 10 s of load; a cold start is a seeded stack and its two restarts.
	// Their loads as measured alone (make test-e2e-full's records): the planner cannot see a seed or a restart.
	{test: "TestGrowthSmall", runs: []planned{{cmd: "loadtest growth", env: "TIER= DURATION=10s", n: 3, measured: 30 * time.Second}}},
	{test: "TestSoakShort", runs: []planned{{cmd: "loadtest soak", env: "SCENARIOS=list_certificates DURATION=40s"}}},
	{test: "TestColdStartSmall", runs: []planned{{cmd: "loadtest coldstart", measured: 40 * time.Second}}},
	// Refused before any stack: seconds each.
	{test: "TestBadInput", runs: []planned{
		{cmd: "loadtest run", env: "TIER=bogus", refused: true}, {cmd: "loadtest run", env: "DURATION=5x", refused: true},
		{cmd: "loadtest run", refused: true, n: 6}, {cmd: "make loadtest", env: "TIER=bogus", refused: true},
	}},
	{test: "TestReadOnlyResults", runs: []planned{{cmd: "loadtest run", refused: true}}},
	{test: "TestFixturesValidatedByTheirDaemons"},
}

// gated is a test of the gate and the runs it makes, in order.
type gated struct {
	test   string // t.Name(): a test, or one subtest of it
	serial bool   // a test go test runs before the parallel ones, alone
	alone  bool   // its runs have the machine to themselves (alone(t))
	runs   []planned
}

// gateParallel: a test whose subtests the full suite runs before the parallel tests, for the machine's
// sake, runs among them in the gate, where only its lighter subtest runs.
func gateParallel(t *testing.T) {
	if testing.Short() {
		t.Parallel()
	}
}

// planned is a run as the gate plans it: the command and the knobs that set its stacks and their load
// (planKeys) over stackEnv's; a run matches it when those are the same.
type planned struct {
	cmd     string // "loadtest run", "loadtest spotcheck", "make loadtest", with their flags
	env     string // planKeys=value, space-separated, over stackEnv's defaults
	refused bool   // refused before any stack starts (bad input)
	aborts  bool   // its stacks start, and k6's setup refuses the load
	n       int    // this many runs alike (0: one)
	// measured replaces the planner's load where it can give only a bound: the spot checks run a number
	// of iterations within a 10-minute maxDuration, and a faulted one ends at its first check. The
	// figure is the load as the CI rehearsal of the gate measured it.
	measured time.Duration
}

// planKeys are the knobs that decide how many stacks a run starts and how long their load lasts.
var planKeys = []string{"TIER", "SCENARIOS", "DURATION", "SEGMENTS"}

// stackCost is what a stack costs on top of its load in the gate: images checked, the stack up and
// seeded, k6's setup, the graceful stop, the teardown; for the deploy tier also its loops' end (each
// waits on two agent polls of 30 s). Measured in a rehearsal of the gate on this 2-CPU machine (go test
// -short -v ./test/e2e/: each run's "exit N in T" less its planned load): 23 to 29 s a stack of the
// parallel part (35 s for the API breach, whose 6 s requests end after the load), 20 s a scale stack
// alone, 25 s a PKI stack, 100 s the deploy stack. An auth stack adds Keycloak's start and realm
// import: 62 s a stack alone (TIER=auth DURATION=30s, 4 stacks in 369 s, 2026-11-28).
var stackCost = map[string]time.Duration{
	"auth":    62 * time.Second,
	"default": 27 * time.Second,
	"deploy":  100 * time.Second,
	"pki":     25 * time.Second,
	"scale":   20 * time.Second,
}

// concurrency is how many stacks' worth of work the gate's shared part got done at once on this 2-CPU
// machine in that rehearsal: the sum of its runs' times (about 680 s) over their wall time (about 275 s,
// the parallel tests' 318 s less the 41 s of the run that held the machine alone).
const concurrency = 2.4

// refusedCost: a run refused before its stack, the harness's start and its preflight (0.1 to 2.8 s).
const refusedCost = time.Second

// gateBudget is what the gate's e2e part may take as planned (warm): what make test's 20 minutes leave
// on a cold machine, with a margin. A cold .ci/run (a fresh clone, every image built) measured 893 s at
// 5aac88e: 530 s of e2e, planned at 8m, and 363 s for the rest (the Compose plugin, the images, module
// downloads and builds, the unit, browser, k6 and workflow tests). 20 minutes less the rest leave 14;
// the budget keeps 4.5 of them for a slower day.
const gateBudget = 9*time.Minute + 30*time.Second

// covering is the gate's entry that a test's runs belong to: its own, or its parent's.
func covering(name string) (gated, bool) {
	for _, g := range gate {
		if n := testName(g.test); name == n || strings.HasPrefix(name, n+"/") {
			return g, true
		}
	}
	return gated{}, false
}

// testName is an entry's test as t.Name() spells it: go test writes a subtest's spaces as underscores.
func testName(entry string) string { return strings.ReplaceAll(entry, " ", "_") }

// e2e starts every e2e test: in short mode a test with nothing in the gate is skipped, and then what a
// run needs is readied (needStack).
func e2e(t *testing.T) {
	t.Helper()
	if testing.Short() {
		in := false
		for _, g := range gate {
			n := testName(g.test)
			in = in || n == t.Name() || strings.HasPrefix(n, t.Name()+"/") || strings.HasPrefix(t.Name(), n+"/")
		}
		if !in {
			t.Skip("full suite only (make test-full); the gate's tests are listed in gate_test.go")
		}
	}
	needStack(t)
}

// checkPlanned, in short mode, skips a run of a subtest the gate leaves out, and fails a gate test's
// run that its entry does not plan: the gate's plan must be what it runs.
func checkPlanned(t *testing.T, env []string, name string, args []string) {
	t.Helper()
	if !testing.Short() {
		return
	}
	g, ok := covering(t.Name())
	if !ok {
		t.Skip("full suite only (make test-full); the gate's tests are listed in gate_test.go")
	}
	cmd := command(name, args)
	got := effective(env)
	for _, p := range g.runs {
		if p.cmd == cmd && slices.Equal(got, effective(knobEnv(strings.Fields(p.env)...))) {
			return
		}
	}
	t.Fatalf("gate: %s runs `%s` with %s, which gate_test.go does not plan for it: plan it (TestGatePlan then judges the gate's time), or leave the test to the full suite",
		t.Name(), cmd, strings.Join(got, " "))
}

// command names a run's command as the plan does: the harness as "loadtest".
func command(name string, args []string) string {
	if name == loadtest {
		name = "loadtest"
	}
	return strings.Join(append([]string{name}, args...), " ")
}

// effective is the value of each planKey in env, the last assignment winning, as the harness reads it.
func effective(env []string) []string {
	var out []string
	for _, k := range planKeys {
		v := ""
		for _, kv := range env {
			if val, ok := strings.CutPrefix(kv, k+"="); ok {
				v = val
			}
		}
		out = append(out, k+"="+v)
	}
	return out
}

// TestGatePlan is the guard that keeps the gate under its budget, without docker: it plans each gate
// run's stacks and their load as `loadtest check` does (k6 inspect with the run's knobs), adds each
// stack's measured cost, schedules the runs as go test and the machine lock do (the serial tests
// first, then -parallel slots, a run marked alone draining them) and fails when the plan passes
// gateBudget. A test that grows the gate must be planned (checkPlanned), and so is judged here.
func TestGatePlan(t *testing.T) {
	t.Parallel()
	slots := parallelSlots(t)
	jobs := planGate(t, gate)
	total, rows := schedule(jobs, slots, concurrency)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "test\tstacks\tload\tplanned\tstarts\tends\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", r.name, r.stacks, r.load, r.took, r.start, r.end)
	}
	tw.Flush()
	t.Logf("the gate's e2e runs as planned (%d parallel slots):\n%s\nplanned: %s of a %s budget", slots, b.String(), total, gateBudget)
	if total > gateBudget {
		t.Errorf("the gate's e2e runs are planned to take %s, past its %s budget: move a test to the full suite (make test-full), or shorten its runs\n%s",
			total, gateBudget, b.String())
	}
	// The guard can fail: one 2-minute run added to the gate, among the parallel tests or alone, takes
	// it past its budget.
	for _, alone := range []bool{false, true} {
		grown, _ := schedule(append(jobs, planGate(t, []gated{{test: "a 2-minute run", alone: alone,
			runs: []planned{{cmd: "loadtest run", env: "DURATION=2m"}}}})...), slots, concurrency)
		if grown <= gateBudget {
			t.Errorf("with a 2-minute run (alone: %v) the gate is planned at %s, within its %s budget: the guard would not see the gate grow back", alone, grown, gateBudget)
		}
		t.Logf("with a 2-minute run added (alone: %v): planned %s", alone, grown)
	}
}

// job is one gate test's runs, as one unit of the schedule.
type job struct {
	name          string
	serial, alone bool
	stacks        int
	load, took    time.Duration
	start, end    time.Duration
}

// planGate plans each gated test's runs with the harness's own planner.
func planGate(t *testing.T, tests []gated) []job {
	t.Helper()
	rootDir := rootOrAbs()
	var jobs []job
	for _, g := range tests {
		j := job{name: g.test, serial: g.serial, alone: g.alone}
		for _, p := range g.runs {
			n := max(p.n, 1)
			if p.refused {
				j.took += time.Duration(n) * refusedCost
				continue
			}
			env := knobEnv(strings.Fields(p.env)...)
			sub := "run"
			if strings.HasPrefix(p.cmd, "loadtest spotcheck") {
				sub = "spotcheck"
			}
			loads, tier, err := planRun(rootDir, env, sub)
			if err != nil {
				t.Fatalf("%s: planning `%s` %s: %v", g.test, p.cmd, p.env, err)
			}
			cost, ok := stackCost[tier]
			if !ok {
				cost = stackCost["default"]
			}
			for _, l := range loads {
				if p.aborts {
					l = 0
				}
				if p.measured > 0 {
					l = p.measured
				}
				j.stacks += n
				j.load += time.Duration(n) * l
				j.took += time.Duration(n) * (cost + l)
			}
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// planRun asks the harness's planner what a run with env would start: each stack's load, and the tier
// whose stack it is (its cost).
func planRun(rootDir string, env []string, sub string) ([]time.Duration, string, error) {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	// No build to read: the plan does not depend on which certctl runs.
	delete(vars, "CERTCTL_DIST")
	getenv := func(k string) string { return vars[k] }
	var environ []string
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	e := cli.Env{Getenv: getenv, Environ: append(os.Environ(), environ...), Stdout: io.Discard, Stderr: io.Discard,
		Root: rootDir, Now: time.Now, Exec: func(ctx context.Context, c harness.Cmd) (int, error) {
			// k6 inspect reads the scenario's path from the repository's root, where loadtest runs.
			cmd := exec.CommandContext(ctx, c.Name, c.Args...)
			cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = rootDir, c.Env, c.Stdout, c.Stderr
			return exitStatus(cmd.Run()), nil
		}}
	loads, err := cli.PlanStacks(context.Background(), e, sub)
	tier := strings.Split(vars["TIER"], ",")[0]
	if sub == "spotcheck" || tier == "api" || tier == "all" || tier == "connector" || tier == "acme" || tier == "limiter" {
		tier = "default"
	}
	return loads, tier, err
}

// parallelSlots reads -parallel from the Makefile's short e2e run: the plan schedules what make runs.
func parallelSlots(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(rootOrAbs(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^test-e2e:.*\n\tgo test [^\n]*-short[^\n]*-parallel (\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Makefile: test-e2e runs no `go test -short ... -parallel N`")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func rootOrAbs() string {
	if root != "" {
		return root
	}
	r, _ := filepath.Abs("../..")
	return r
}

// schedule lays the jobs out as go test runs them: the serial tests first, one after another; then the
// parallel ones, in the order given, each in the first free of the slots, and a job marked alone draining
// them all (the machine lock). Three stacks on 2 CPUs do not go three times as fast: the shared part
// takes at least its work over the concurrency the gate's rehearsal achieved, after the exclusive runs.
func schedule(jobs []job, slots int, concurrency float64) (time.Duration, []job) {
	var out []job
	var serialEnd time.Duration
	for _, j := range jobs {
		if j.serial {
			j.start, j.end = serialEnd, serialEnd+j.took
			serialEnd = j.end
			out = append(out, j)
		}
	}
	free := make([]time.Duration, slots)
	for i := range free {
		free[i] = serialEnd
	}
	var work, exclusive time.Duration
	end := serialEnd
	for _, j := range jobs {
		if j.serial {
			continue
		}
		if j.alone {
			exclusive += j.took
		} else {
			work += j.took
		}
		if j.alone {
			start := slices.Max(free)
			j.start, j.end = start, start+j.took
			for i := range free {
				free[i] = j.end
			}
		} else {
			i := slices.Index(free, slices.Min(free))
			j.start, j.end = free[i], free[i]+j.took
			free[i] = j.end
		}
		end = max(end, j.end)
		out = append(out, j)
	}
	floor := serialEnd + exclusive + time.Duration(float64(work)/concurrency)
	return max(end, floor).Round(time.Second), out
}

// fullRecord is the last full rehearsal's outcome as make test-full records it: go test's result line
// of each test and subtest, and of the package.
const fullRecord = "testdata/full-suite.txt"

var (
	resultRE  = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (Test\S+) \(([\d.]+)s\)$`)
	packageRE = regexp.MustCompile(`^(ok|FAIL)\s+\S+\s+([\d.]+)s$`)
	testRE    = regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
)

// TestFullPlan prints what make test-full will run and how long it took last time: each e2e test with
// its time in the last full rehearsal (testdata/full-suite.txt, which make test-full rewrites when it
// passes), the tests that rehearsal did not have, and its wall time. No docker; make test-full prints it
// before it starts.
func TestFullPlan(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var tests, all []string // the e2e tests; and with them the plans, which need no stack
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testRE.FindAllStringSubmatch(string(b), -1) {
			all = append(all, m[1])
			if m[1] != "TestGatePlan" && m[1] != "TestFullPlan" {
				tests = append(tests, m[1])
			}
		}
	}
	slices.Sort(tests)
	took, wall, err := readFullRecord(fullRecord)
	if err != nil {
		t.Logf("no record of a full rehearsal (%v): make test-full writes one when it passes", err)
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "test\tin the gate\tlast full rehearsal\n")
	for _, name := range tests {
		last := "new: no figure yet"
		if d, ok := took[name]; ok {
			last = d.Round(time.Second).String()
		}
		// A test whose subtests run in parallel ends, for go test, before they start: its subtests' times.
		var n int
		var longest, sum time.Duration
		for sub, d := range took {
			if strings.HasPrefix(sub, name+"/") {
				n, longest, sum = n+1, max(longest, d), sum+d
			}
		}
		if n > 0 && took[name] < time.Second {
			last = fmt.Sprintf("%d subtests, the longest %s, %s in all", n, longest.Round(time.Second), sum.Round(time.Second))
		}
		in := "no"
		if _, ok := covering(name); ok {
			in = "all of it"
		}
		for _, g := range gate {
			if strings.HasPrefix(testName(g.test), name+"/") {
				in = "one subtest"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, in, last)
	}
	tw.Flush()
	for name := range took {
		if top, _, _ := strings.Cut(name, "/"); !slices.Contains(all, top) {
			t.Errorf("%s: %s records %s, which no longer exists: make test-full rewrites the record", fullRecord, name, name)
		}
	}
	expected := "unknown"
	if wall > 0 {
		expected = wall.Round(time.Minute).String() + " (the last full rehearsal's, go test's own figure)"
	}
	t.Logf("the full suite's e2e tests (-parallel 3 after the serial ones):\n%s\nexpected: %s", b.String(), expected)
}

// readFullRecord reads each test's and subtest's time and the package's from go test -v's result lines.
func readFullRecord(path string) (map[string]time.Duration, time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	took := map[string]time.Duration{}
	var wall time.Duration
	for _, l := range strings.Split(string(b), "\n") {
		if m := resultRE.FindStringSubmatch(l); m != nil {
			s, _ := strconv.ParseFloat(m[3], 64)
			took[m[2]] = time.Duration(s * float64(time.Second))
		}
		if m := packageRE.FindStringSubmatch(l); m != nil {
			s, _ := strconv.ParseFloat(m[2], 64)
			wall = time.Duration(s * float64(time.Second))
		}
	}
	if wall == 0 {
		return took, 0, fmt.Errorf("%s has no package result line", path)
	}
	return took, wall, nil
}
