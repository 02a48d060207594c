package plan

import (
	"strings"
	"testing"
)

func TestUnscoped(t *testing.T) {
	for in, want := range map[string]string{
		"http_req_duration{scenario:s}":        "http_req_duration",
		"checks{target_type:nginx,scenario:s}": "checks{target_type:nginx}",
		"dropped_iterations{scenario:s}":       "dropped_iterations",
	} {
		if got := unscoped(in, "s"); got != want {
			t.Errorf("%s: %s", in, got)
		}
	}
}

// The plan's last line says what comes on top of the load: a stack's start, or none for an external
// certctl; and the wall time of scenarios that run at once is the longest start + duration.
func TestPlanWallTime(t *testing.T) {
	rows := []Row{
		{Tier: "api", Scenario: "issuance_acceptance", Executor: "constant-arrival-rate", Rate: 50, TimeUnit: "1s", Duration: "5m", PreVUs: 50, MaxVUs: 300},
		{Tier: "api", Scenario: "list_certificates", Executor: "constant-arrival-rate", Rate: 50, TimeUnit: "1s", Duration: "5m", StartTime: "30s", PreVUs: 50, MaxVUs: 300},
	}
	for _, c := range []struct {
		external bool
		want     string
	}{
		{false, "load: 5m30s from the first k6 start, all scenarios at once; add the stack's start"},
		{true, "load: 5m30s from the first k6 start, all scenarios at once; no stack starts (the certctl is not the harness's)"},
	} {
		got := Text(rows, false, c.external)
		if !strings.Contains(got, c.want) || (c.external && strings.Contains(got, "stack's start")) {
			t.Errorf("external=%v:\n%s", c.external, got)
		}
	}
}
