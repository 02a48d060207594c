package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"certctl-loadtest/internal/growth"
	"certctl-loadtest/internal/results"
)

// loadtest growth at three small inventory sizes against the real certctl: each size an ordinary run on
// a fresh stack seeded by seed/inventory (SEED_INVENTORY), then growth.json with every size's run, each
// operation's p50/p95 at every size and a fitted growth, growth.txt and growth.svg.
func TestGrowthSmall(t *testing.T) {
	t.Parallel()
	e2e(t)
	dir := t.TempDir()
	// Sizes where every budget of the mix holds on this machine beside other stacks: the dashboard's
	// counts cost certctl worse than linearly (summary-reads-every-job), and at 3,200 certificates their
	// p95 passed the 800 ms budget (901 ms), a growth figure, not this mechanism's.
	// The gate runs two sizes, the mechanism (a fresh seeded stack a size, one record of all); the fit
	// needs three and is internal/growth's unit test, and the full suite's run of three (a stack less on
	// the gate's critical path: about a minute).
	sizes := []string{"50", "200", "800"}
	if testing.Short() {
		sizes = []string{"50", "800"}
	}
	env := knobEnv("RESULTS_DIR="+dir, "GROWTH_SIZES="+strings.Join(sizes, ","), "DURATION=10s")
	// knobEnv's TIER=api: the growth mix is the command's own when TIER and SCENARIOS are both unset.
	for i, kv := range env {
		if kv == "TIER=api" {
			env = append(env[:i], env[i+1:]...)
			break
		}
	}
	r := run(t, append(env, "RUN_ID=growth-small"), loadtest, "growth")
	wantCode(t, r, 0)
	b, err := os.ReadFile(filepath.Join(dir, "growth-small", "growth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g growth.Result
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Steps) != len(sizes) {
		t.Fatalf("%d sizes ran; want %d: %+v", len(g.Steps), len(sizes), g.Steps)
	}
	// Each size ran green: beside other stacks a timing budget may break (99), excused only when that
	// size's run says the machine decided it and nothing but timing budgets broke; an error rate or a
	// check never is.
	for _, st := range g.Steps {
		if st.Problem != "" {
			t.Errorf("size %g: %s", st.Size, st.Problem)
			continue
		}
		if st.ExitCode == 0 {
			continue
		}
		var sum results.Summary
		b, err := os.ReadFile(filepath.Join(dir, "growth-small", st.RunDir, "summary.json"))
		if err == nil {
			err = json.Unmarshal(b, &sum)
		}
		if err != nil {
			t.Errorf("size %g: exit %d, and its summary cannot be read: %v", st.Size, st.ExitCode, err)
			continue
		}
		if broke, why := runExcuse(sum); st.ExitCode == 99 && why != "" {
			logExcused(t, fmt.Sprintf("size %g: %s broke", st.Size, strings.Join(broke, "; ")), why)
			continue
		}
		t.Errorf("size %g: exit %d; broke %v", st.Size, st.ExitCode, sum.FailedChecks)
	}
	// Every operation of the mix measured at every size, with both fits.
	if len(g.Ops) != len(g.Scenarios) || len(g.Ops) < 4 {
		t.Errorf("operations %d for scenarios %q", len(g.Ops), g.Scenarios)
	}
	for _, op := range g.Ops {
		fitted := op.P50 != nil && op.P95 != nil
		if len(op.Points) != len(sizes) || fitted != (len(sizes) >= 3) {
			t.Errorf("%s: %d points, fits %v %v (%s); want %d, and both fits from three sizes", op.Name, len(op.Points), op.P50, op.P95, op.NoFit, len(sizes))
		}
	}
	for _, f := range []string{"growth.txt", "growth.svg", "index.html"} {
		if _, err := os.Stat(filepath.Join(dir, "growth-small", f)); err != nil {
			t.Error(err)
		}
	}
	t.Logf("growth:\n%s", r.output[max(0, len(r.output)-900):])
}

// The growth tier's own scenarios (the dashboard's counts, agents' work polls) break every budget when
// the fault proxy makes certctl slow and wrong on their routes: 3 s answers, half of them 500, two VUs
// for 10 polls and 1 summary (60 a minute) a second. The setup's agent listing (GET /api/v1/agents?…) is not a route the faults
// hit. Full suite: the gate runs the mix through TestGrowthSmall.
func TestGrowthTierBreach(t *testing.T) {
	t.Parallel()
	e2e(t)
	r := loadtestRun(t, stackEnv(t, "TIER=growth", "SEED_INVENTORY=100", "DURATION=20s", "MAX_VUS=2", "PRE_VUS=2", "RATE_STATS_SUMMARY=60",
		"FAULT_LATENCY=3s", "FAULT_ERROR_RATE=0.5", "FAULT_ROUTE=GET /api/v1/stats/summary,GET /api/v1/agents/"))
	wantCode(t, r, 99)
	all := []string{"http_req_duration p(95)<800", "http_req_duration p(99)<2000", "http_req_failed rate<0.01", "checks rate>0.99",
		"dropped_iterations count==0"}
	wantThresholds(t, r, "stats_summary", all...)
	wantThresholds(t, r, "agent_work", all...)
}
