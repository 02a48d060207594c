package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/results"
)

// JUnit renders a run as JUnit XML, for CI systems and test dashboards: a suite per scenario, a test
// case per threshold. A breach a registered defect explains is skipped with the defect's id and why
// (failed under KNOWN_DEFECTS=fail, as the run is), as is one the machine decided (the run
// inconclusive) or one the registry could not size here (unjudged); every other breach fails, a budget
// that judged no sample included. A scenario whose k6 process left
// no record, or failed without a threshold to say why, is an error.
func JUnit(s results.Summary) string {
	suites := junit.Testsuites{Name: fmt.Sprintf("certctl-loadtest run %s: %s (exit %d)", s.RunID, s.Verdict(), s.ExitCode)}
	for i, sc := range s.Scenarios {
		suite := junit.Testsuite{Name: sc.Name, ID: i, Package: "certctl-loadtest." + sc.Tier}
		if !s.Run.StartedAt.IsZero() {
			suite.SetTimestamp(s.Run.StartedAt.UTC())
		}
		class := "certctl-loadtest." + sc.Tier + "." + sc.Name
		var failed bool
		if rec := sc.Record; rec != nil {
			suite.Time = fmt.Sprintf("%.3f", rec.DurationS)
			for _, th := range rec.Thresholds {
				tc := junit.Testcase{Name: th.Metric + " " + th.Expression, Classname: class}
				if !th.OK {
					failed = true
					breach(&tc, s, sc.Name, th)
				}
				suite.AddTestcase(tc)
			}
		}
		if sc.Status != "passed" && !failed {
			// Nothing above says why the scenario did not pass: its process did.
			problem := sc.Problem
			if problem == "" {
				problem = fmt.Sprintf("k6 exited %d", sc.ExitCode)
			}
			suite.AddTestcase(junit.Testcase{Name: "k6 run", Classname: class,
				Error: &junit.Result{Message: problem, Type: sc.Status}})
		}
		suites.AddSuite(suite)
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	if err := suites.WriteXML(&b); err != nil {
		// Only a writer's error can fail it, and a bytes.Buffer has none.
		panic(err)
	}
	return b.String()
}

// breach marks a threshold's test case: skipped when a known defect, the machine or the registry's
// reach explains it, failed otherwise.
func breach(tc *junit.Testcase, s results.Summary, scenario string, th results.Threshold) {
	key, measured := th.Key(), th.Measured()
	find := func(list []defects.Known) *defects.Known {
		i := slices.IndexFunc(list, func(k defects.Known) bool { return k.Scenario == scenario && k.Threshold == key })
		if i < 0 {
			return nil
		}
		return &list[i]
	}
	skip := func(msg string) { tc.Skipped = &junit.Result{Message: msg} }
	if v := s.Breaches; v != nil {
		if k := find(v.Worse); k != nil {
			tc.Failure = &junit.Result{Message: fmt.Sprintf("%s: known defect %s, worse than recorded", measured, strings.Join(k.Defects, ", ")), Type: "worse", Data: k.Why}
			return
		}
		if k := find(v.Unjudged); k != nil {
			skip(fmt.Sprintf("unjudged: %s; known defect %s, recorded on another testbed or load: its size here cannot be told", measured, strings.Join(k.Defects, ", ")))
			return
		}
		if k := find(v.Known); k != nil {
			msg := fmt.Sprintf("known defect %s: %s", strings.Join(k.Defects, ", "), measured)
			if k.Why != "" {
				msg += "; " + k.Why
			}
			if s.Run.Config["KNOWN_DEFECTS"] == "fail" {
				// Asked to fail on every breach: the file says what the exit code says.
				tc.Failure = &junit.Result{Message: msg + " (KNOWN_DEFECTS=fail)", Type: "known"}
				return
			}
			skip(msg)
			return
		}
	}
	if s.Inconclusive != "" && th.Timing() {
		skip(fmt.Sprintf("inconclusive: %s; %s", measured, s.Inconclusive))
		return
	}
	tc.Failure = &junit.Result{Message: fmt.Sprintf("%s %s: %s", th.Metric, th.Expression, measured), Type: "threshold"}
}
