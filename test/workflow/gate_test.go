package workflow

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"certctl-loadtest/test/ciplan"
)

// The workflow suite's part of the gate is test/ciplan's Workflow: in short mode an act run that matches
// none of its test's planned runs fails the test, and a planned run no test made fails the suite, so
// TestCIPlan plans what the suite runs.

// made are the planned runs some test made.
var made ciplan.Made

// checkPlanned, in short mode, fails an act run its test's entry does not plan. A run is named as the
// plan names it: "act EVENT WORKFLOW" and the harness's knobs its inputs, matrix, variables and
// environment give it.
func checkPlanned(t *testing.T, wf, event, payload string, env, args []string) {
	t.Helper()
	if !testing.Short() {
		return
	}
	cmd := fmt.Sprintf("act %s %s", event, filepath.Base(wf))
	// Every job's environment starts from the suite's knobs (runActIn's env file), then the test's.
	knobs := append(append([]string{}, ciplan.WorkflowKnobs...), actKnobs(event, payload, env, args)...)
	if made.Match(ciplan.Workflow, ciplan.WorkflowKnobs, t.Name(), cmd, knobs) {
		return
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
		if k, _, _ := strings.Cut(kv, "="); slices.Contains(ciplan.Keys, k) {
			knobs = append(knobs, kv)
		}
	}
	return knobs
}

// unfiltered: no -run or -skip narrowed the suite, so every planned run should have been made.
func unfiltered() bool {
	return flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == ""
}

// An act run is named as the plan names it: each way a test gives the harness its knobs.
func TestActKnobs(t *testing.T) {
	for _, c := range []struct {
		event, payload string
		env, args      []string
		want           string
	}{
		{"workflow_dispatch", `{"inputs": {"tier": "api", "duration": "5s"}}`, nil, nil, "TIER=api SCENARIOS= DURATION=5s"},
		{"workflow_dispatch", `{"inputs": {"tier": "scale", "duration": "5s"}}`, []string{"RATE_AGENT_STORM=30"}, []string{"--job", "loadtest", "--matrix", "scenarios:agent_storm"}, "TIER=scale SCENARIOS=agent_storm DURATION=5s"},
		{"schedule", `{"schedule": "17 5 * * 1"}`, []string{"DURATION=5x"}, nil, "TIER= SCENARIOS= DURATION=5x"},
		{"pull_request", `{"number": 7}`, nil, []string{"--var", "LOADTEST_SCENARIOS=acme_flow", "--var", "LOADTEST_DURATION=20s"}, "TIER=api,acme SCENARIOS=acme_flow DURATION=20s"},
		{"pull_request", `{"number": 7}`, []string{"MACHINE_CHECK=true"}, []string{"--var", "LOADTEST_TIERS=api,pki"}, "TIER=api,pki SCENARIOS= DURATION=1m"},
	} {
		got := strings.Join(ciplan.Effective(append(append([]string{}, ciplan.WorkflowKnobs...), actKnobs(c.event, c.payload, c.env, c.args)...))[:3], " ")
		if got != c.want {
			t.Errorf("%s %s %q %q: %s, want %s", c.event, c.payload, c.env, c.args, got, c.want)
		}
	}
	// Every planned run of the suite matches itself as a test would make it.
	for _, g := range ciplan.Workflow {
		for _, r := range g.Runs {
			if !ciplan.Matches(ciplan.Test{Runs: []ciplan.Run{r}}, ciplan.WorkflowKnobs, r.Cmd, append(append([]string{}, ciplan.WorkflowKnobs...), strings.Fields(r.Env)...)) {
				t.Errorf("%s: %s %s does not match itself", g.Name, r.Cmd, r.Env)
			}
		}
	}
}
