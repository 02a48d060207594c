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

// k6 inspect prints a threshold as its expression, or, under ABORT_ON_FAIL, as k6's object form: the
// plan reads the expression of both, and refuses anything else.
func TestInspectReadsBothThresholdForms(t *testing.T) {
	out := `{"scenarios": {"s": {"executor": "constant-arrival-rate", "rate": 5, "timeUnit": "1s", "duration": "2m"}},
		"thresholds": {"checks{scenario:s}": ["rate==1"], "http_reqs{scenario:s}": [],
		"http_req_duration{expected_response:true,scenario:s}": [{"threshold": "p(95)<800", "abortOnFail": true, "delayAbortEval": "30s"}]}}`
	rows, err := Inspect("api", "k6/api/s.js", func(string) ([]byte, error) { return []byte(out), nil })
	if err != nil || len(rows) != 1 || strings.Join(rows[0].Thresholds["http_req_duration"], ",") != "p(95)<800" || strings.Join(rows[0].Thresholds["checks"], ",") != "rate==1" {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
	bad := strings.Replace(out, `"threshold": "p(95)<800"`, `"limit": 800`, 1)
	if _, err := Inspect("api", "k6/api/s.js", func(string) ([]byte, error) { return []byte(bad), nil }); err == nil || !strings.Contains(err.Error(), "neither an expression nor k6's object form") {
		t.Errorf("err %v", err)
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
