package ciplan

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// E2E is the gate's e2e part (make test-e2e: go test -short ./test/e2e/): the tests below and only they,
// each with the runs it makes. Every other e2e test runs in make test-full alone. The gate holds one
// green run per tier and one live test per mechanism; every breach and fault, the statistics on live
// stacks and the proof that each threshold can fail are the full suite's (issue 28).
//
// A test opts in by its entry, and its entry is held to what it does: in short mode a run that matches
// none of its test's planned runs fails the test, and an entry that made no run fails the gate
// (test/e2e), so the plan is what the gate runs.
var E2E = []Test{
	// Not parallel (the full suite's acme_burst takes every cycle left): go test runs it first, alone.
	{Name: "TestScaleScenarios/green", Serial: true, Runs: []Run{{Cmd: "loadtest run", Env: "TIER=scale SCENARIOS=bulk_renewal DURATION=8s"}}},
	// The green run of the tiers that share a stack, alone: its verdict is certctl's budgets on this machine.
	{Name: "TestAllTiersGreen", Alone: true, Runs: []Run{{Cmd: "make loadtest", Env: "TIER=all"}}},
	// The other tiers' green runs wait on certctl's clocks and agents, or judge budgets beside other
	// stacks, where a timing budget they do not aim at is excused only when the run's own samples say the
	// machine decided it (test/e2e's machineDecides).
	{Name: "TestDeployTier/green", Runs: []Run{{Cmd: "loadtest run", Env: "TIER=deploy SCENARIOS=deploy_latency DURATION=1m START_TIMEOUT=2m"}}},
	{Name: "TestPKITier/orders, issuance and revocation checks",
		Runs: []Run{{Cmd: "loadtest run", Env: "TIER=pki SCENARIOS=acme_order_flow,acme_http01_c5,ocsp_crl DURATION=10s"}}},
	{Name: "TestLimiterTier/as certctl answers", Runs: []Run{{Cmd: "loadtest run", Env: "TIER=limiter DURATION=10s"}}},
	{Name: "TestAuthTier/logins and the session path", Runs: []Run{{Cmd: "loadtest run", Env: "TIER=auth SCENARIOS=oidc_login DURATION=10s START_TIMEOUT=4m"}}},
	// One live test per mechanism. A fault during the load keeping the run's results and naming the
	// fault is the server killed's; TestFaultsKeepTheVerdict's other faults (a pause among them) are the
	// full suite's.
	{Name: "TestServerKilledMidRunThenRerun", Runs: []Run{{Cmd: "loadtest run", Env: "DURATION=20s"}, {Cmd: "loadtest run"}}},
	{Name: "TestConnectorThresholdsCanFail/wrong starter certificate", Runs: []Run{{Cmd: "loadtest run", Env: "TIER=connector"}}},
	// A breach's live exit 99 with the thresholds named is the spot checks' and the connector's here;
	// TestAPIThresholdsCanFail's are the full suite's. The spot checks without bulk_revoke (its setup
	// issues 2,200 certificates): 15 s of load measured alone.
	{Name: "TestSpotchecks/slow and refused reads and writes", Runs: []Run{{Cmd: "loadtest spotcheck", Env: "SCENARIOS=stats_summary,inventory_walk,tick_renewal_scan", Measured: 20 * time.Second}}},
	// The network's way out, checked during a run of one scenario as two segments: the gate's live test
	// of both, on one stack.
	{Name: "TestNoRouteOut", Runs: []Run{{Cmd: "loadtest run --segments 2", Env: "SCENARIOS=list_certificates DURATION=20s"}}},
	{Name: "TestDiskFull/too small before the run", Runs: []Run{{Cmd: "loadtest run", Env: "DURATION=5m", Aborts: true}}},
	// The growth modes (docs/growth.md): growth's sweep at two small sizes is the gate's live test of what
	// they share, a seeded stack of the mix's tiers (PKI's included) per size and one record of them all.
	// Its load as measured alone (make test-e2e-full's records): the planner cannot see a seed. A soak (the
	// same run read in windows) and a cold start (a seeded stack and its restarts) are the full suite's.
	{Name: "TestGrowthSmall", Runs: []Run{{Cmd: "loadtest growth", Env: "TIER= DURATION=10s GROWTH_SIZES=50,800", Measured: 30 * time.Second}}},
	// Refused before any stack: seconds each.
	{Name: "TestBadInput", Runs: []Run{
		{Cmd: "loadtest run", Env: "TIER=bogus", Refused: true}, {Cmd: "loadtest run", Env: "DURATION=5x", Refused: true},
		{Cmd: "loadtest run", Refused: true, N: 6}, {Cmd: "make loadtest", Env: "TIER=bogus", Refused: true},
	}},
	{Name: "TestReadOnlyResults", Runs: []Run{{Cmd: "loadtest run", Refused: true}}},
	{Name: "TestFixturesValidatedByTheirDaemons"},
}

// E2EKnobs are the knobs every e2e run starts from (test/e2e's stackEnv), under its own: the plan reads
// a run with them. MACHINE_CHECK=false: the tests run stacks side by side on purpose, and a green run
// that judges budgets beside them turns it back on (TestMachineDecides judges the check itself).
// KNOWN_DEFECTS=fail: they judge every breach; TestKnownDefects judges the registry.
var E2EKnobs = []string{"IMAGES=offline", "TIER=api", "DURATION=5s", "START_TIMEOUT=90s", "MACHINE_CHECK=false", "KNOWN_DEFECTS=fail"}

// Test is a test of the gate and the runs it makes, in order.
type Test struct {
	Name   string // t.Name(): a test, or one subtest of it, with spaces
	Serial bool   // a test go test runs before the parallel ones, alone
	Alone  bool   // its runs have the machine to themselves
	Runs   []Run
}

// Run is a run as the gate plans it: the command and the knobs that set its stacks, their load and its
// verdict (Keys) over the suite's defaults; a run matches it when those are the same.
type Run struct {
	Cmd     string // "loadtest run", "loadtest spotcheck", "make loadtest", "act tiers", "act gate", with flags
	Env     string // Keys=value, space-separated, over the suite's defaults
	Refused bool   // refused before any stack starts (bad input)
	Aborts  bool   // its stacks start, and k6's setup refuses the load
	N       int    // this many runs alike (0: one)
	// Measured replaces the planner's load where it can give only a bound: the spot checks run a number
	// of iterations within a 10-minute maxDuration, a growth size or a cold start seeds and restarts,
	// a timed-out step ends at its timeout. The figure is the load as a rehearsal measured it.
	Measured time.Duration
}

// Keys are the knobs that decide how many stacks a run starts, how long their load lasts, how long it
// may wait for them and whether the machine judges its timing breaches.
var Keys = []string{"TIER", "SCENARIOS", "DURATION", "SEGMENTS", "GROWTH_SIZES", "START_TIMEOUT", "MACHINE_CHECK"}

// Covering is the entry of tests that a test's runs belong to: its own, or its parent's.
func Covering(tests []Test, name string) (Test, bool) {
	for _, g := range tests {
		if n := TestName(g.Name); name == n || strings.HasPrefix(name, n+"/") {
			return g, true
		}
	}
	return Test{}, false
}

// InPlan says whether a test (as t.Name() spells it) runs in the plan: it, a parent of it or a subtest
// of it has an entry.
func InPlan(tests []Test, name string) bool {
	for _, g := range tests {
		n := TestName(g.Name)
		if n == name || strings.HasPrefix(n, name+"/") || strings.HasPrefix(name, n+"/") {
			return true
		}
	}
	return false
}

// TestName is an entry's test as t.Name() spells it: go test writes a subtest's spaces as underscores.
func TestName(entry string) string { return strings.ReplaceAll(entry, " ", "_") }

// Effective is the value of each of Keys in env, the last assignment winning, as the harness reads it.
func Effective(env []string) []string {
	var out []string
	for _, k := range Keys {
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

// Matches is the planned run of entry g that a run of cmd with env is, if any.
func Matches(g Test, defaults []string, cmd string, env []string) bool {
	got := strings.Join(Effective(env), " ")
	for _, p := range g.Runs {
		if p.Cmd == cmd && strings.Join(Effective(append(append([]string{}, defaults...), strings.Fields(p.Env)...)), " ") == got {
			return true
		}
	}
	return false
}

// Made records which planned runs a suite's tests made, so that the suite can name those it never made
// (a renamed test, a dropped run): planned and never judged.
type Made struct{ runs sync.Map }

// Match is whether the test called name, running cmd with env, makes one of its entry's planned runs;
// the run is recorded as made.
func (m *Made) Match(tests []Test, defaults []string, name, cmd string, env []string) bool {
	g, ok := Covering(tests, name)
	if !ok {
		return false
	}
	for i, p := range g.Runs {
		if Matches(Test{Runs: []Run{p}}, defaults, cmd, env) {
			m.runs.Store(fmt.Sprintf("%s\x00%d", g.Name, i), struct{}{})
			return true
		}
	}
	return false
}

// Missing are the planned runs of tests that no test made.
func (m *Made) Missing(tests []Test) []string {
	var out []string
	for _, g := range tests {
		for i, p := range g.Runs {
			if _, ok := m.runs.Load(fmt.Sprintf("%s\x00%d", g.Name, i)); !ok {
				out = append(out, fmt.Sprintf("%s: `%s` %s", g.Name, p.Cmd, p.Env))
			}
		}
	}
	return out
}
