package capacity

import (
	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/results"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fake is a server that holds up to limit; flaky rates breach on their first run only.
func fake(limit float64, flaky map[float64]bool, calls *[]string) func(context.Context, float64, int) (Step, error) {
	return func(_ context.Context, rate float64, attempt int) (Step, error) {
		*calls = append(*calls, fmt.Sprintf("%g/%d", rate, attempt))
		st := Step{Rate: rate, Attempt: attempt, P50: rate / 10, P95: rate, P99: rate * 2, Achieved: rate, BudgetP95: limit, RunDir: fmt.Sprintf("r%g-%d", rate, attempt),
			Passed: rate <= limit && !(flaky[rate] && attempt == 1)}
		if !st.Passed {
			// ABORT_ON_FAIL ended the step once its budget broke.
			st.Broke, st.StoppedS = []Breach{{Kind: "latency", Threshold: "http_req_duration p(95)<800", Measured: "p(95)=912 ms"}}, 41
		}
		return st, nil
	}
}

func clock() func() time.Time {
	t := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Minute); return t }
}

func TestRampConfirmBisect(t *testing.T) {
	var calls []string
	s := Search{Scenario: "list_certificates", Unit: "s", Start: 50, Factor: 2, Max: 1600, Precision: 0.1, StepS: 60, Measure: fake(137, map[float64]bool{100: true}, &calls)}
	r, err := s.Run(context.Background(), clock())
	if err != nil {
		t.Fatal(err)
	}
	want := "50/1 100/1 100/2 200/1 200/2 150/1 150/2 125/1 138/1 138/2 132/1"
	if got := strings.Join(calls, " "); got != want {
		t.Errorf("steps %s\nwant  %s", got, want)
	}
	if r.Knee != 132 || r.Ceiling != 138 || r.KneeStep.Rate != 132 || r.BreakStep.Attempt != 1 {
		t.Errorf("knee %g ceiling %g", r.Knee, r.Ceiling)
	}
	if !strings.Contains(r.Verdict, "knee at 132/s") || !strings.Contains(r.Verdict, "latency p(95)=912 ms") {
		t.Errorf("verdict %q", r.Verdict)
	}
	curve := Curve(r)
	if len(curve) != 7 || !curve[1].Passed || curve[1].Attempt != 2 {
		t.Errorf("curve %+v: one step a rate, 100/s held on its repeat", curve)
	}
	golden.Check(t, "search.txt", Text(r))
	golden.Check(t, "search.svg", SVG(r))
}

func TestHoldsAtMax(t *testing.T) {
	var calls []string
	s := Search{Scenario: "x", Unit: "m", Start: 10, Factor: 2, Max: 40, Measure: fake(1000, nil, &calls)}
	r, _ := s.Run(context.Background(), clock())
	if r.Knee != 40 || r.Ceiling != 0 || !strings.Contains(r.Verdict, "CAPACITY_MAX") || len(calls) != 3 {
		t.Errorf("%+v %v", r.Verdict, calls)
	}
}

func TestBreachAtStartStepsDown(t *testing.T) {
	var calls []string
	s := Search{Scenario: "x", Unit: "s", Start: 100, Factor: 2, Max: 400, Measure: fake(30, nil, &calls)}
	r, _ := s.Run(context.Background(), clock())
	if r.Knee < 27 || r.Knee > 30 || r.Ceiling-r.Knee > 3 {
		t.Errorf("knee %g ceiling %g: %v", r.Knee, r.Ceiling, calls)
	}
}

func TestAStepWithoutVerdictStopsTheSearchAndKeepsItsSteps(t *testing.T) {
	s := Search{Scenario: "x", Unit: "s", Start: 10, Factor: 2, Max: 400, Measure: func(_ context.Context, rate float64, a int) (Step, error) {
		if rate > 20 {
			return Step{Rate: rate, Attempt: a, Problem: "stack fault"}, errors.New("stack fault")
		}
		return Step{Rate: rate, Attempt: a, Passed: true}, nil
	}}
	r, err := s.Run(context.Background(), clock())
	if err == nil || r.Knee != 20 || len(r.Steps) != 3 || r.Verdict == "" {
		t.Errorf("err %v knee %g steps %d verdict %q", err, r.Knee, len(r.Steps), r.Verdict)
	}
}

// Two searches of one scenario: the knee moved down only when the new interval lies wholly below the
// old, up only when wholly above; overlapping intervals, or a search without a verdict, say so.
func TestCompareKnees(t *testing.T) {
	res := func(knee, ceiling float64) Result {
		return Result{Schema: Schema, Scenario: "list_certificates", Unit: "s", Knee: knee, Ceiling: ceiling}
	}
	for _, c := range []struct {
		name     string
		old, new Result
		verdict  string
		text     string
	}{
		{"down", res(80, 90), res(40, 45), "lower", "list_certificates knee: v2.1.7 [80, 90)/s, main [40, 45)/s: the knee moved down: main breaches at a load v2.1.7 carried"},
		{"up", res(40, 45), res(80, 90), "higher", "the knee moved up"},
		{"overlapping", res(40, 50), res(45, 55), "~", "the knees' intervals overlap"},
		{"touching is lower", res(80, 90), res(70, 80), "lower", "[70, 80)/s"},
		{"old held to the maximum", res(160, 0), res(80, 90), "lower", "v2.1.7 above 160/s"},
		{"new held to the maximum", res(80, 90), res(160, 0), "higher", "main above 160/s"},
		{"no verdict", res(0, 0), res(80, 90), "no knee", "no comparison"},
	} {
		got, err := CompareKnees("v2.1.7", "a", c.old, "main", "b", c.new)
		if err != nil || got.Verdict != c.verdict || !strings.Contains(got.Text, c.text) {
			t.Errorf("%s: %v %q (%v); want %s saying %q", c.name, got.Verdict, got.Text, err, c.verdict, c.text)
		}
	}
	other := res(1, 2)
	other.Scenario = "issuance_acceptance"
	if _, err := CompareKnees("a", "a", res(1, 2), "b", "b", other); err == nil {
		t.Error("two scenarios' searches were compared")
	}
}

// A step k6 ended once a threshold broke (ABORT_ON_FAIL) says where it stopped; one cut short by a
// fault with every threshold held, or one that ran its length, does not.
func TestStepStoppedOnceItsBudgetBroke(t *testing.T) {
	summary := func(cut, broke bool) results.Summary {
		rec := &results.Record{DurationS: 120, TestRunDurationS: 41.2, CutShort: cut,
			Thresholds: []results.Threshold{{Metric: "http_req_duration{scenario:s}", Expression: "p(95)<800", OK: !broke}}}
		return results.Summary{Passed: !broke, ExitCode: map[bool]int{true: 99, false: 0}[broke], Scenarios: []results.Scenario{{Name: "s", Record: rec}}}
	}
	for _, c := range []struct {
		cut, broke bool
		want       float64
	}{{true, true, 41.2}, {false, true, 0}, {true, false, 0}} {
		if got := FromSummary(summary(c.cut, c.broke), "s").StoppedS; got != c.want {
			t.Errorf("cut short %v, broke %v: stopped at %v, want %v", c.cut, c.broke, got, c.want)
		}
	}
}
