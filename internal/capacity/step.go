package capacity

import (
	"certctl-loadtest/internal/results"
	"fmt"
	"strconv"
	"strings"
)

// FromSummary reads a step's figures and what broke from its run's summary.
func FromSummary(s results.Summary, scenario string) Step {
	st := Step{RunID: s.RunID, Passed: s.Passed, ExitCode: s.ExitCode}
	for _, sc := range s.Scenarios {
		if sc.Name != scenario {
			continue
		}
		if sc.Record == nil {
			st.Problem = sc.Problem
			continue
		}
		r := sc.Record
		st.Achieved, st.Dropped, st.Requests, st.Errors = r.AchievedRatePerS, r.DroppedIterations, r.Requests, r.ErrorRate
		st.P50, st.P95, st.P99 = r.LatencyMS.P50, r.LatencyMS.P95, r.LatencyMS.P99
		for _, t := range r.Thresholds {
			if agg, limit, ok := strings.Cut(t.Expression, "<"); ok && agg == "p(95)" && kindOf(t.Metric) == "latency" {
				if v, err := strconv.ParseFloat(strings.TrimPrefix(limit, "="), 64); err == nil && (st.BudgetP95 == 0 || v < st.BudgetP95) {
					st.BudgetP95 = v
				}
			}
			if !t.OK {
				st.Broke = append(st.Broke, Breach{Kind: kindOf(t.Metric), Threshold: t.Metric + " " + t.Expression, Measured: t.Measured()})
			}
		}
		if r.CutShort && len(st.Broke) > 0 {
			st.StoppedS = r.TestRunDurationS
		}
	}
	if d := s.Diagnosis; d != nil {
		for _, f := range d.Findings {
			if f.Kind == "limit" || f.Kind == "contention" {
				st.Server = f.Sentence
				break
			}
		}
		if st.Server == "" {
			for _, f := range d.Findings {
				if f.Kind == "headroom" {
					st.Server = f.Sentence
				}
			}
		}
	}
	// A run that failed with every threshold held did not judge the load: a fault of the stack or the
	// harness, not a breach.
	if !st.Passed && len(st.Broke) == 0 && st.Problem == "" {
		st.Problem = fmt.Sprintf("the run exited %d with every threshold held: %s", s.ExitCode, strings.Join(s.FailedChecks, "; "))
	}
	return st
}

func kindOf(metric string) string {
	name, _, _ := strings.Cut(metric, "{")
	switch {
	case name == "dropped_iterations":
		return "dropped iterations"
	case name == "http_req_failed" || name == "checks":
		return "errors"
	case strings.Contains(name, "duration") || strings.HasSuffix(name, "_ms"):
		return "latency"
	}
	return "other"
}
