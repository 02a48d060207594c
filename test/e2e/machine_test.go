package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"certctl-loadtest/internal/diagnosis"
	"certctl-loadtest/internal/results"
)

// A run that breaks a timing budget while work outside it takes the machine is inconclusive: exit 6,
// one sentence naming the outside work, and no finding that blames certctl. Two busy loops outside
// the stack take the 2 CPUs; list_certificates' 1 s of injected latency makes the breach certain, so
// the verdict, not the breach, is what is judged. Without the burner the same breach exits 99
// (TestAPIThresholdsCanFail), and MACHINE_CHECK=false, the other tests' setting, judges it so here too.
func TestMachineDecides(t *testing.T) {
	e2e(t)
	t.Parallel()
	alone(t)
	env := stackEnv(t, "MACHINE_CHECK=true", "SCENARIOS=list_certificates", "DURATION=20s", "RATE_LIST_CERTIFICATES=10",
		"FAULT_LATENCY=1s", "FAULT_ROUTE=GET /api/v1/certificates$")
	r := runDuring(t, env, func(*os.Process) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		for i := 0; i < 3; i++ {
			burner := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
			if err := burner.Start(); err != nil {
				t.Errorf("burner: %v", err)
				return
			}
			go burner.Wait()
		}
	}, loadtest, "run")
	wantCode(t, r, 6)
	wantOutput(t, r, `(?m)^loadtest: exit 6, not 99: the machine decided, not certctl: work outside the run took \d+ % of the machine's 2 CPUs`)
	d := r.summary.Diagnosis
	if d == nil || d.Machine == nil || !d.Machine.Decided || d.Machine.OutsidePct < 20 {
		t.Fatalf("diagnosis machine %+v", d)
	}
	for _, f := range d.Findings {
		if f.Kind == "contention" || f.Kind == "limit" {
			t.Errorf("a finding blames certctl while the machine decided: %s", f.Sentence)
		}
	}
	if !strings.HasPrefix(r.summary.Inconclusive, "the machine decided, not certctl") || !strings.HasPrefix(r.summary.FailedChecks[0], "inconclusive: ") {
		t.Errorf("summary inconclusive %q, failed %q", r.summary.Inconclusive, r.summary.FailedChecks)
	}
}

// The suites' machine excuse, without a stack: what machineExcuse and runExcuse forgive, from a run's
// own summary, and what they never do. Without the excuse every "excused" case below is a failed test
// in its suite; without its limits every "not excused" case would pass one.
func TestMachineExcuse(t *testing.T) {
	const why = "work outside the run took 41 % of the machine's 2 CPUs"
	ms := func(v float64) *float64 { return &v }
	summary := func(sentence string, th ...results.Threshold) results.Summary {
		rec := &results.Record{Iterations: 10, Counters: map[string]float64{"issued": 8, "unanswered": 2}, Thresholds: th}
		return results.Summary{ExitCode: 99, Scenarios: []results.Scenario{{Name: "acme_flow", Record: rec}},
			Diagnosis: &diagnosis.Diagnosis{Machine: &diagnosis.MachineShare{Unjudged: sentence}}}
	}
	p95 := results.Threshold{Metric: "http_req_duration{expected_response:true,scenario:acme_flow}", Expression: "p(95)<300", Aggregate: "p(95)", Value: ms(313)}
	order := results.Threshold{Metric: "acme_order_ok{scenario:acme_flow}", Expression: "rate>0.99", Aggregate: "rate", Value: ms(0.8)}
	checks := results.Threshold{Metric: "checks{scenario:acme_flow}", Expression: "rate==1", Aggregate: "rate", Value: ms(0.9)}
	empty := results.Threshold{Metric: "pki_issue_ms{scenario:acme_flow}", Expression: "p(95)<500", NoSample: true}
	answered := summary(why, order)
	answered.Scenarios[0].Record.Counters["unanswered"] = 1
	cases := []struct {
		name string
		s    results.Summary
		key  string
		want bool
	}{
		{"a latency budget, the machine decided", summary(why, p95), "http_req_duration p(95)<300", true},
		{"a latency budget, the machine did not", summary("", p95), "http_req_duration p(95)<300", false},
		{"a latency budget that judged no sample", summary(why, empty), "pki_issue_ms p(95)<500", false},
		{"a checks rate", summary(why, checks), "checks rate==1", false},
		{"orders that got no answer, the machine decided", summary(why, order), "acme_order_ok rate>0.99", true},
		{"orders that got no answer, the machine did not", summary("", order), "acme_order_ok rate>0.99", false},
		{"orders certctl answered with a failure", answered, "acme_order_ok rate>0.99", false},
	}
	for _, c := range cases {
		if got := machineExcuse(c.s, "acme_flow", c.key) != ""; got != c.want {
			t.Errorf("%s: excused %v, want %v", c.name, got, c.want)
		}
	}
	runs := []struct {
		name string
		s    results.Summary
		want bool
	}{
		{"timing budgets only, the machine decided", summary(why, p95), true},
		{"timing budgets only, the machine did not", summary("", p95), false},
		{"a timing budget beside a checks rate", summary(why, p95, checks), false},
		{"a timing budget that judged no sample", summary(why, empty), false},
	}
	for _, c := range runs {
		if broke, got := runExcuse(c.s); (got != "") != c.want || (got != "") != (len(broke) > 0) {
			t.Errorf("%s: run excused %q (broke %v), want excused %v", c.name, got, broke, c.want)
		}
	}
	green := summary(why)
	green.ExitCode = 0
	if broke, got := runExcuse(green); got != "" {
		t.Errorf("a run that passed is excused: %q %v", got, broke)
	}
}
