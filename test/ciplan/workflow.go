package ciplan

import "time"

// Workflow is the workflow suite's part of the gate (make test-workflow: go test -short ./test/workflow/):
// each test that runs act, with the runs its jobs make. A run is "act EVENT WORKFLOW" with the knobs
// its inputs, matrix and variables give the harness (test/workflow reads them from act's command); a
// run that matches none of its test's fails the test, so this is what the suite runs.
var Workflow = []Test{
	// In go test's order (the files' and, within them, the tests'): the pull-request gate, the longest,
	// starts first.
	{Name: "TestPlan"},
	// The pull-request gate through README's snippet: two runs a side, alternating, each on a stack of
	// its own; the one live test of the gate's verdict under act (the same build's pass is the full suite's).
	{Name: "TestPullRequestGate/a slower endpoint fails, named", Runs: []Run{{Cmd: "act pull_request loadtest.yml", Env: "TIER=api,acme SCENARIOS=acme_flow DURATION=10s", N: 4}}},
	// Recorded artifacts: no stack, a job each.
	{Name: "TestTrendJob", Runs: []Run{{Cmd: "act schedule trend.yml", Refused: true}}},
	// A 5-minute run (its workflow's own TIER and DURATION) stopped by its step's 45-second timeout: the
	// gate's live failing verdict after the upload. Before the tiers' job in its file, so that the
	// longest of the rest runs beside the pull-request gate.
	{Name: "TestRunStepTimesOut", Runs: []Run{{Cmd: "act workflow_dispatch timeout.yml", Measured: 45 * time.Second}}},
	// A breach failing the tiers' job (TestDefaultJob/thresholds breached) is the full suite's.
	{Name: "TestDefaultJob/green", Runs: []Run{{Cmd: "act workflow_dispatch loadtest.yml", Env: "TIER=api DURATION=5s"}}},
	// The pin cannot be pulled offline: the run stops before its stack.
	{Name: "TestCertctlImagePinWhenNoneGiven", Runs: []Run{{Cmd: "act workflow_dispatch loadtest.yml", Env: "TIER=api DURATION=5s", Refused: true}}},
	// A scale scenario's job (TestScaleJob) is a second dispatched stack of the same job: the full suite's.
	// Monday's plan, its four jobs (TIER=all and a job per scale scenario) each refusing DURATION=5x
	// before its stack. Thursday's sixteen jobs (two minutes of act) are the full suite's.
	{Name: "TestScheduleRefusesBadInputEarly/17 5 * * 1", Runs: []Run{{Cmd: "act schedule loadtest.yml", Env: "DURATION=5x", Refused: true, N: 4}}},
	{Name: "TestDependabot"},
}

// WorkflowKnobs are the knobs every act run's harness starts from (test/workflow's runs), under its own.
var WorkflowKnobs = []string{"IMAGES=offline", "MACHINE_CHECK=false"}
