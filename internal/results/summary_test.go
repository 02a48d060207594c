package results

import (
	"certctl-loadtest/internal/diagnosis"
	"encoding/json"
	"strings"
	"testing"
)

// A finding says what to set, or, when the run set it, that certctl fails even so.
func TestFindingNamesTheWorkaround(t *testing.T) {
	s, err := Load("../report/testdata/run-pki-finalize")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Findings) != 1 || !strings.Contains(s.Findings[0], "ACME_FINALIZE_WORKAROUND=1 adds the rows") {
		t.Fatalf("findings %q", s.Findings)
	}
	r := s.Scenarios[0].Record
	r.Setup = json.RawMessage(`{"acme_finalize_workaround": true}`)
	if f := findings(s.Scenarios); len(f) != 1 || !strings.Contains(f[0], "the workaround was applied: this certctl fails even with it") {
		t.Errorf("findings with the workaround applied %q", f)
	}
}

// The machine decides a breached run only when every breach is a timing budget: a wrong answer or a
// threshold over no sample is certctl's (or the harness's) whatever the machine did.
func TestMachineDecided(t *testing.T) {
	v := 900.0
	decided := &diagnosis.Diagnosis{Machine: &diagnosis.MachineShare{Decided: true, Sentence: "the machine decided, not certctl: …"}}
	rec := func(ths ...Threshold) Scenario { return Scenario{Name: "s", Record: &Record{Thresholds: ths}} }
	latency := Threshold{Metric: "http_req_duration{scenario:s}", Expression: "p(95)<800", Value: &v}
	dropped := Threshold{Metric: "dropped_iterations{scenario:s}", Expression: "count==0", Value: &v}
	errors := Threshold{Metric: "http_req_failed{scenario:s}", Expression: "rate<0.01", Value: &v}
	none := Threshold{Metric: "acme_order_ms{scenario:s}", Expression: "p(95)<2000", NoSample: true}
	for _, c := range []struct {
		name string
		s    Summary
		want bool
	}{
		{"latency and dropped", Summary{ExitCode: ExitThresholds, Diagnosis: decided, Scenarios: []Scenario{rec(latency, dropped)}}, true},
		{"an error rate too", Summary{ExitCode: ExitThresholds, Diagnosis: decided, Scenarios: []Scenario{rec(latency, errors)}}, false},
		{"no sample", Summary{ExitCode: ExitThresholds, Diagnosis: decided, Scenarios: []Scenario{rec(none)}}, false},
		{"the machine to itself", Summary{ExitCode: ExitThresholds, Diagnosis: &diagnosis.Diagnosis{Machine: &diagnosis.MachineShare{}}, Scenarios: []Scenario{rec(latency)}}, false},
		{"a stack fault", Summary{ExitCode: ExitStackFault, Diagnosis: decided, Scenarios: []Scenario{rec(latency)}}, false},
		{"re-rendered", Summary{ExitCode: ExitInconclusive, Diagnosis: decided, Scenarios: []Scenario{rec(latency)}}, true},
	} {
		if got := machineDecided(c.s) != ""; got != c.want {
			t.Errorf("%s: decided %v, want %v", c.name, got, c.want)
		}
	}
}
