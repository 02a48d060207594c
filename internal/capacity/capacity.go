// Package capacity searches for a scenario's knee: the highest arrival rate at which its budget holds
// and nothing is dropped. Every step is an ordinary run of the scenario at one rate (the caller's Measure),
// so any step can be repeated alone with make loadtest; this package decides which rates to try and reads
// what broke.
//
// The rule: ramp up from Start by Factor until a step breaches, then bisect between the highest rate
// that held and the lowest that breached until they are within Precision of each other. A breach counts
// only when a repeat at the same rate breaches too: on a shared machine one run in a few is slow for
// reasons of its own. A step is long enough to be judged when it lasts its Step duration (default 60 s),
// which at the rates searched is thousands of requests: tens above the p99.
package capacity

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"
)

const Schema = "certctl-loadtest/capacity@1"

// Step is one run at one rate.
type Step struct {
	Rate     float64 `json:"rate"`
	Attempt  int     `json:"attempt"` // 2: the repeat that confirms or clears a breach
	RunID    string  `json:"run_id"`
	RunDir   string  `json:"run_dir"`
	Passed   bool    `json:"passed"`
	ExitCode int     `json:"exit_code"`
	// Broke is what failed, one entry each: latency, errors, dropped iterations (from the thresholds k6
	// judged), with the threshold and its measured value.
	Broke    []Breach `json:"broke,omitempty"`
	Achieved float64  `json:"achieved_per_s"`
	Dropped  float64  `json:"dropped_iterations"`
	Requests float64  `json:"requests"`
	Errors   float64  `json:"error_rate"`
	P50      float64  `json:"p50_ms"`
	P95      float64  `json:"p95_ms"`
	P99      float64  `json:"p99_ms"`
	// BudgetP95 is the scenario's tightest p95 budget in ms (0: none), for the plot.
	BudgetP95 float64 `json:"budget_p95_ms,omitempty"`
	// Server is the run's diagnosis: its limiting finding when one was named, else its headroom.
	Server  string  `json:"server,omitempty"`
	TookS   float64 `json:"took_s"`
	Problem string  `json:"problem,omitempty"` // a run that gave no verdict on the load (a stack fault)
	// StoppedS is how long a breached step's k6 ran (setup included) when it stopped before its length
	// once a threshold broke (ABORT_ON_FAIL): the verdict was settled; 0 when it ran its whole length.
	StoppedS float64 `json:"stopped_s,omitempty"`
}

// Breach is one threshold a step failed.
type Breach struct {
	Kind      string `json:"kind"` // latency | errors | dropped iterations | other
	Threshold string `json:"threshold"`
	Measured  string `json:"measured,omitempty"`
}

// Search is the rule's knobs and the measurement.
type Search struct {
	Scenario  string
	Unit      string  // "s" or "m": the scenario's time unit
	Start     float64 // first rate
	Factor    float64 // ramp multiplier, 2
	Max       float64 // highest rate tried
	Precision float64 // relative width at which bisection stops, 0.1
	StepS     float64 // each step's duration, for the record
	Measure   func(ctx context.Context, rate float64, attempt int) (Step, error)
	Log       func(format string, a ...any)
}

// Result is capacity.json.
type Result struct {
	Schema    string  `json:"schema"`
	Scenario  string  `json:"scenario"`
	Unit      string  `json:"unit"`
	StepS     float64 `json:"step_s"`
	Start     float64 `json:"start"`
	Factor    float64 `json:"factor"`
	Max       float64 `json:"max"`
	Precision float64 `json:"precision"`
	// Knee is the highest rate that held; zero when even the lowest tried breached. Ceiling is the lowest
	// confirmed breach; zero when Max held.
	Knee      float64   `json:"knee"`
	KneeStep  *Step     `json:"knee_step,omitempty"`
	Ceiling   float64   `json:"ceiling"`
	BreakStep *Step     `json:"break_step,omitempty"`
	Verdict   string    `json:"verdict"`
	Steps     []Step    `json:"steps"`
	StartedAt time.Time `json:"started_at"`
	TookS     float64   `json:"took_s"`
}

// Run searches. An error from Measure (a step with no verdict) ends the search with what it found so far.
func (s Search) Run(ctx context.Context, now func() time.Time) (Result, error) {
	if s.Factor <= 1 {
		s.Factor = 2
	}
	if s.Precision <= 0 {
		s.Precision = 0.1
	}
	if s.Log == nil {
		s.Log = func(string, ...any) {}
	}
	started := now()
	r := Result{Schema: Schema, Scenario: s.Scenario, Unit: s.Unit, StepS: s.StepS, Start: s.Start, Factor: s.Factor, Max: s.Max, Precision: s.Precision, StartedAt: started, Steps: []Step{}}
	var held, broke *Step
	// try runs a rate, repeating a breach once; the step returned is the one that decides.
	try := func(rate float64) (*Step, error) {
		st, err := s.Measure(ctx, rate, 1)
		r.Steps = append(r.Steps, st)
		if err != nil {
			return nil, err
		}
		if st.Passed {
			s.Log("capacity: %s at %g/%s held: p95 %.1f ms", s.Scenario, rate, s.Unit, st.P95)
			return &r.Steps[len(r.Steps)-1], nil
		}
		s.Log("capacity: %s at %g/%s breached (%s); repeating it to confirm", s.Scenario, rate, s.Unit, breachText(st.Broke))
		again, err := s.Measure(ctx, rate, 2)
		r.Steps = append(r.Steps, again)
		if err != nil {
			return nil, err
		}
		if again.Passed {
			s.Log("capacity: %s at %g/%s held on the repeat: counted as held", s.Scenario, rate, s.Unit)
		} else {
			s.Log("capacity: %s at %g/%s breached again: confirmed", s.Scenario, rate, s.Unit)
			// What broke first is the first run's account; the repeat confirms it.
			return &r.Steps[len(r.Steps)-2], nil
		}
		return &r.Steps[len(r.Steps)-1], nil
	}
	finish := func(err error) (Result, error) {
		r.TookS = math.Round(now().Sub(started).Seconds())
		if held != nil {
			r.Knee, r.KneeStep = held.Rate, copyStep(held)
		}
		if broke != nil {
			r.Ceiling, r.BreakStep = broke.Rate, copyStep(broke)
		}
		r.Verdict = verdict(r, s)
		return r, err
	}
	rate := s.Start
	// Ramp.
	for {
		if ctx.Err() != nil {
			return finish(ctx.Err())
		}
		st, err := try(rate)
		if err != nil {
			return finish(err)
		}
		if st.Passed {
			held = st
			if rate >= s.Max {
				return finish(nil)
			}
			rate = math.Min(s.Max, math.Round(rate*s.Factor))
			continue
		}
		broke = st
		break
	}
	// Below the start: step down until a rate holds.
	for held == nil {
		rate = math.Floor(broke.Rate / s.Factor)
		if rate < 1 {
			return finish(nil)
		}
		st, err := try(rate)
		if err != nil {
			return finish(err)
		}
		if st.Passed {
			held = st
		} else {
			broke = st
		}
	}
	// Bisect.
	for broke.Rate-held.Rate > math.Max(1, s.Precision*held.Rate) {
		if ctx.Err() != nil {
			return finish(ctx.Err())
		}
		mid := math.Round((held.Rate + broke.Rate) / 2)
		st, err := try(mid)
		if err != nil {
			return finish(err)
		}
		if st.Passed {
			held = st
		} else {
			broke = st
		}
	}
	return finish(nil)
}

func copyStep(s *Step) *Step { c := *s; return &c }

func verdict(r Result, s Search) string {
	switch {
	case r.Knee == 0 && r.Ceiling == 0:
		return "no step gave a verdict"
	case r.Knee == 0:
		return fmt.Sprintf("breached even at %g/%s", r.Ceiling, s.Unit)
	case r.Ceiling == 0:
		return fmt.Sprintf("held up to the search's maximum, %g/%s: the knee is higher (CAPACITY_MAX)", r.Knee, s.Unit)
	}
	return fmt.Sprintf("knee at %g/%s: held there, breached at %g/%s (%s)", r.Knee, s.Unit, r.Ceiling, s.Unit, breachText(r.BreakStep.Broke))
}

func breachText(b []Breach) string {
	if len(b) == 0 {
		return "no threshold named"
	}
	kinds := []string{}
	for _, x := range b {
		k := x.Kind
		if x.Measured != "" {
			k += " " + x.Measured
		}
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	out := kinds[0]
	for _, k := range kinds[1:] {
		out += ", " + k
	}
	return out
}
