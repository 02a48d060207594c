package e2e

import (
	"path/filepath"
	"testing"
)

const acmeRoutes = "GET /acme/profile/lt-profile/directory,HEAD /acme/profile/lt-profile/new-nonce,GET /acme/profile/lt-profile/renewal-info"

// The ACME tier against the double: green, and each threshold breached by a run built for it.
func TestACMEFlow(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		code int
		fail []string
	}{
		{"green", nil, 0, nil},
		{
			// 900 ms on each ACME endpoint: past every per-endpoint p95 budget (500, 300, 800 ms).
			"endpoint latency", []string{"DOUBLE_LATENCY=900ms", "DOUBLE_FAULT_ROUTE=" + acmeRoutes, "RATE_ACME_FLOW=10", "PRE_VUS=100"}, 99,
			[]string{"http_req_duration p(95)<500", "http_req_duration p(95)<300", "http_req_duration p(95)<800"},
		},
		{"server errors", []string{"DOUBLE_ERROR_RATE=0.2", "DOUBLE_FAULT_ROUTE=" + acmeRoutes}, 99,
			[]string{"http_req_failed rate<0.01", "checks rate>0.99"}},
		{"dropped iterations", []string{"MAX_VUS=1", "DOUBLE_LATENCY=50ms", "DOUBLE_FAULT_ROUTE=" + acmeRoutes}, 99,
			[]string{"dropped_iterations count==0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := loadtestRun(t, doubleEnv(t, append([]string{"TIER=acme"}, c.env...)...))
			wantCode(t, r, c.code)
			wantThresholds(t, r, "acme_flow", c.fail...)
		})
	}
}

// The scale scenarios against the double, each at short duration, each budget shown able to fail.
func TestScaleScenarios(t *testing.T) {
	cases := []struct {
		name, scenario string
		env            []string
		code           int
		fail           []string
	}{
		{"bulk renewal green", "bulk_renewal", nil, 0, nil},
		{"bulk renewal latency", "bulk_renewal", []string{"DOUBLE_LATENCY=6s", "DOUBLE_FAULT_ROUTE=POST /api/v1/certificates/bulk-renew", "PRE_VUS=60"}, 99,
			[]string{"http_req_duration p(95)<2000", "http_req_duration p(99)<5000"}},
		{"bulk renewal errors", "bulk_renewal", []string{"DOUBLE_ERROR_RATE=0.3", "DOUBLE_FAULT_ROUTE=POST /api/v1/certificates/bulk-renew"}, 99,
			[]string{"http_req_failed rate<0.01"}},
		{"bulk renewal dropped", "bulk_renewal", []string{"MAX_VUS=1", "DOUBLE_LATENCY=400ms", "DOUBLE_FAULT_ROUTE=POST /api/v1/certificates/bulk-renew"}, 99,
			[]string{"dropped_iterations count==0"}},
		{"agent storm green", "agent_storm", nil, 0, nil},
		{"agent storm latency", "agent_storm", []string{"DOUBLE_LATENCY=1200ms", "DOUBLE_FAULT_ROUTE=POST /api/v1/agents", "RATE_AGENT_STORM=20", "PRE_VUS=100"}, 99,
			[]string{"http_req_duration p(95)<500", "http_req_duration p(99)<1000"}},
		{"agent storm errors", "agent_storm", []string{"DOUBLE_ERROR_RATE=0.02", "DOUBLE_FAULT_ROUTE=POST /api/v1/agents"}, 99,
			[]string{"http_req_failed rate<0.001"}},
		{"agent storm dropped", "agent_storm", []string{"MAX_VUS=1", "DOUBLE_LATENCY=50ms", "DOUBLE_FAULT_ROUTE=POST /api/v1/agents"}, 99,
			[]string{"dropped_iterations count==0"}},
		{"acme burst green", "acme_burst", []string{"VUS_ACME_BURST=20"}, 0, nil},
		{"acme burst latency", "acme_burst", []string{"VUS_ACME_BURST=20", "DOUBLE_LATENCY=900ms", "DOUBLE_FAULT_ROUTE=" + acmeRoutes}, 99,
			[]string{"http_req_duration p(95)<500", "http_req_duration p(95)<300", "http_req_duration p(95)<800"}},
		{
			// 0.5 % 5xx: over the 0.1 % server-error budget, under the 1 % the checks allow.
			"acme burst 5xx", "acme_burst", []string{"VUS_ACME_BURST=20", "DOUBLE_ERROR_RATE=0.005", "DOUBLE_FAULT_ROUTE=" + acmeRoutes}, 99,
			[]string{"acme_server_errors rate<0.001"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := doubleEnv(t, append([]string{"TIER=scale", "SCENARIOS=" + c.scenario, "DURATION=8s"}, c.env...)...)
			r := loadtestRun(t, env)
			wantCode(t, r, c.code)
			wantThresholds(t, r, c.scenario, c.fail...)
		})
	}
}

// certctl's limiter answers /acme with a text/plain 429 (FACTS.md §2): the burst counts it as the
// wrong shape, and never as the RFC 8555 one.
func TestACMEBurstCountsRateLimitShapes(t *testing.T) {
	r := loadtestRun(t, doubleEnv(t, "TIER=scale", "SCENARIOS=acme_burst", "DURATION=8s", "VUS_ACME_BURST=50", "CERTCTL_RATE_LIMIT_ENABLED=true"))
	if r.code == 0 {
		t.Log("the run passed although the limiter was on")
	}
	for _, sc := range r.summary.Scenarios {
		if sc.Name != "acme_burst" || sc.Result == nil {
			continue
		}
		if sc.Result.Counters["rate_limit_other"] == 0 || sc.Result.Counters["rate_limit_shape_ok"] != 0 {
			t.Errorf("429 counters %v: want text/plain 429s counted as the other shape", sc.Result.Counters)
		}
		return
	}
	t.Fatalf("no acme_burst result:\n%s", r.output)
}

// Seeds applied by the scale tier: a failing fixture stops the run before any k6 container starts,
// and the SQL error is shown.
func TestFailingSeedStopsTheRun(t *testing.T) {
	dir := filepath.Join(root, "test", "e2e", "testdata", "seed-missing-base")
	r := loadtestRun(t, doubleEnv(t, "TIER=scale", "SCENARIOS=bulk_renewal", "SEED_DIR="+dir))
	wantCode(t, r, 3)
	wantOutput(t, r, `violates foreign key constraint`)
	wantOutput(t, r, `scale-seed failed \(exited, exit 1\) before any load`)
	wantOutput(t, r, `no scenario ran|nothing was run`)
	if matched := regexpFind(`scenario bulk_renewal: k6 run`, r.output); matched {
		t.Error("k6 started although the seed failed")
	}
}
