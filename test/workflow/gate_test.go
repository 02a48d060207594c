package workflow

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"certctl-loadtest/test/ciplan"
)

// The workflow suite's part of the gate is test/ciplan's Workflow: in short mode an act run that matches
// none of its test's planned runs fails the test, and a planned run no test made fails the suite, so
// TestCIPlan plans what the suite runs.

// ran are the planned runs some test made ("entry\x00index").
var ran sync.Map

// checkPlanned, in short mode, fails an act run its test's entry does not plan. A run is named as the
// plan names it: "act EVENT WORKFLOW" and the harness's knobs its inputs, matrix, variables and
// environment give it.
func checkPlanned(t *testing.T, wf, event, payload string, env, args []string) {
	t.Helper()
	if !testing.Short() {
		return
	}
	cmd := fmt.Sprintf("act %s %s", event, filepath.Base(wf))
	knobs := actKnobs(event, payload, env, args)
	g, ok := ciplan.Covering(ciplan.Workflow, t.Name())
	if ok {
		for i, p := range g.Runs {
			if ciplan.Matches(ciplan.Test{Runs: []ciplan.Run{p}}, ciplan.WorkflowKnobs, cmd, knobs) {
				ran.Store(fmt.Sprintf("%s\x00%d", g.Name, i), struct{}{})
				return
			}
		}
	}
	t.Fatalf("gate: %s runs `%s` with %s, which test/ciplan/workflow.go does not plan for it: plan it (TestCIPlan then judges CI's time), or leave the test to the full suite",
		t.Name(), cmd, strings.Join(ciplan.Effective(knobs), " "))
}

// actKnobs are the harness's knobs an act run sets: the dispatch's tier and duration inputs, a matrix's
// scenarios, the pull-request workflow's variables (over the gate's own plan: TIER=api,acme, 1m), and
// the job environment's own.
func actKnobs(event, payload string, env, args []string) []string {
	var knobs []string
	if event == "pull_request" {
		knobs = append(knobs, "TIER=api,acme", "DURATION=1m")
	}
	var p struct {
		Inputs map[string]string `json:"inputs"`
	}
	if json.Unmarshal([]byte(payload), &p) == nil {
		for in, k := range map[string]string{"tier": "TIER", "duration": "DURATION", "scenarios": "SCENARIOS"} {
			if v, ok := p.Inputs[in]; ok {
				knobs = append(knobs, k+"="+v)
			}
		}
	}
	for i := 0; i+1 < len(args); i++ {
		switch a, v := args[i], args[i+1]; {
		case a == "--matrix" && strings.HasPrefix(v, "scenarios:"):
			knobs = append(knobs, "SCENARIOS="+strings.TrimPrefix(v, "scenarios:"))
		case a == "--var" && strings.HasPrefix(v, "LOADTEST_"):
			k, val, _ := strings.Cut(strings.TrimPrefix(v, "LOADTEST_"), "=")
			if k == "TIERS" {
				k = "TIER"
			}
			if k == "TIER" || k == "SCENARIOS" || k == "DURATION" {
				knobs = append(knobs, k+"="+val)
			}
		}
	}
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == "DURATION" || k == "TIER" || k == "SCENARIOS" {
			knobs = append(knobs, kv)
		}
	}
	return knobs
}

// unran are the planned runs no test made: a renamed test, a run dropped.
func unran() []string {
	var out []string
	for _, g := range ciplan.Workflow {
		for i, p := range g.Runs {
			if _, ok := ran.Load(fmt.Sprintf("%s\x00%d", g.Name, i)); !ok {
				out = append(out, fmt.Sprintf("%s: `%s` %s", g.Name, p.Cmd, p.Env))
			}
		}
	}
	return out
}

// unfiltered: no -run or -skip narrowed the suite, so every planned run should have been made.
func unfiltered() bool {
	return flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == ""
}
