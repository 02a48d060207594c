package capacity

import (
	"certctl-loadtest/internal/golden"
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
			st.Broke = []Breach{{Kind: "latency", Threshold: "http_req_duration p(95)<800", Measured: "p(95)=912 ms"}}
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
