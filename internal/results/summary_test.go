package results

import (
	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/diagnosis"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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

// The machine decides a breached run only when every breach that counts is a timing budget: a wrong answer or a
// threshold over no sample is certctl's (or the harness's) whatever the machine did.
func TestMachineDecided(t *testing.T) {
	v := 900.0
	decided := &diagnosis.Diagnosis{Machine: &diagnosis.MachineShare{Decided: true, Sentence: "the machine decided, not certctl: …"}}
	rec := func(ths ...Threshold) Scenario {
		return Scenario{Name: "s", Record: &Record{Thresholds: ths, Setup: json.RawMessage(`{"certctl_version": "dev"}`)}}
	}
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
		run := Run{Scenarios: []ScenarioRun{{Name: "s"}}}
		code := c.s.ExitCode
		judge(&c.s, run, false)
		if got := c.s.ExitCode == ExitInconclusive && c.s.Inconclusive != ""; got != c.want {
			t.Errorf("%s: decided %v (exit %d from %d), want %v", c.name, got, c.s.ExitCode, code, c.want)
		}
	}
}

// KNOWN_DEFECTS=pass: a breached run whose every breach a registered defect explains exits 0, its
// breaches listed as known and none among the failed checks; one new breach besides keeps it at 99, and
// only that breach fails. A run recorded before (no KNOWN_DEFECTS) is judged strictly, as it was.
func TestKnownDefectsPass(t *testing.T) {
	run, err := loadRun("../report/testdata/run-pki-finalize")
	if err != nil {
		t.Fatal(err)
	}
	strict := Assemble("../report/testdata/run-pki-finalize", run)
	if strict.ExitCode != ExitThresholds || strict.Passed || len(strict.Breaches.Known) != 4 {
		t.Fatalf("recorded, judged strictly: exit %d, known %+v", strict.ExitCode, strict.Breaches.Known)
	}
	run.Config["KNOWN_DEFECTS"] = "pass"
	s := Assemble("../report/testdata/run-pki-finalize", run)
	if s.ExitCode != ExitOK || !s.Passed || len(s.FailedChecks) != 0 || len(s.Breaches.Known) != 4 || len(s.Breaches.New) != 0 {
		t.Errorf("known only: exit %d passed %v failed %q breaches %+v", s.ExitCode, s.Passed, s.FailedChecks, s.Breaches)
	}
	// A budget no defect explains, broken beside the known ones.
	v := 2400.0
	for i, sc := range strict.Scenarios {
		if sc.Record != nil {
			r := *sc.Record
			r.Thresholds = append(append([]Threshold(nil), r.Thresholds...), Threshold{Metric: "acme_order_ms{scenario:" + sc.Name + "}", Expression: "p(95)<2000", Value: &v})
			strict.Scenarios[i].Record = &r
		}
	}
	strict.ExitCode, strict.FailedChecks = ExitThresholds, []string{}
	strict.Breaches = classify("../report/testdata/run-pki-finalize", run, strict.Scenarios)
	judge(&strict, run, true)
	if strict.ExitCode != ExitThresholds || len(strict.FailedChecks) != 1 || !strings.Contains(strict.FailedChecks[0], "acme_order_ms") {
		t.Errorf("known and new: exit %d failed %q", strict.ExitCode, strict.FailedChecks)
	}
}

// A breach a known defect would explain but whose size was recorded on another testbed makes the run
// inconclusive, not passed; one worse than recorded fails it as a new one would.
func TestKnownDefectsUnjudgedAndWorse(t *testing.T) {
	run, err := loadRun("../report/testdata/run-pki-finalize")
	if err != nil {
		t.Fatal(err)
	}
	run.Config["KNOWN_DEFECTS"] = "pass"
	base := Assemble("../report/testdata/run-pki-finalize", run)
	if base.ExitCode != ExitOK || len(base.Breaches.Known) != 4 {
		t.Fatalf("recorded: exit %d, %+v", base.ExitCode, base.Breaches)
	}
	rejudge := func(move func(v *defects.Verdict)) Summary {
		s := base
		v := *base.Breaches
		v.Known = slices.Clone(v.Known)
		move(&v)
		s.Breaches, s.ExitCode, s.FailedChecks, s.Inconclusive = &v, ExitThresholds, []string{}, ""
		judge(&s, run, true)
		return s
	}
	s := rejudge(func(v *defects.Verdict) {
		u := v.Known[1]
		u.Why = "recorded on another testbed (2 CPUs vs 4)"
		v.Unjudged, v.Known = []defects.Known{u}, slices.Delete(v.Known, 1, 2)
	})
	if s.ExitCode != ExitInconclusive || !strings.Contains(s.Inconclusive, "acme_order_ok rate>0.99 is acme-finalize's, but its size cannot be judged: recorded on another testbed (2 CPUs vs 4)") {
		t.Errorf("unjudged: exit %d, %q", s.ExitCode, s.Inconclusive)
	}
	s = rejudge(func(v *defects.Verdict) {
		v.Worse, v.Known = []defects.Known{v.Known[1]}, slices.Delete(v.Known, 1, 2)
	})
	if s.ExitCode != ExitThresholds || len(s.FailedChecks) != 1 || !strings.Contains(s.FailedChecks[0], "acme_order_ok") {
		t.Errorf("worse: exit %d, %q", s.ExitCode, s.FailedChecks)
	}
}

func loadRun(dir string) (Run, error) {
	var run Run
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err == nil {
		err = json.Unmarshal(b, &run)
	}
	return run, err
}

// The saturated pool's rows: one order row a part, each with its validation, its issuances a second
// over the run, and the part's own figures (not the scenario's mixed latency).
func TestSaturatedPoolRowsByPart(t *testing.T) {
	rec := &Record{Tier: "pki", Executor: "constant-vus", DurationS: 60,
		LatencyMS: Latency{P95: 9000},
		Counters:  map[string]float64{"issued_slow": 75, "issued_fast": 30, "issued": 105},
		TrendsMS: map[string]Latency{
			"order_slow": {P50: 8400, Max: 9100}, "validation_slow": {P50: 8100, Max: 8900},
			"order_fast": {P50: 3600, Max: 5200}, "validation_fast": {P50: 3300, Max: 4900},
		}}
	rec.VUs.Max = 17
	rows := pkiTier([]Scenario{{Name: "acme_http01_saturated", Status: "passed", Record: rec}})
	want := []struct {
		op       string
		ok, perS float64
		p50      float64
	}{
		{"order, slow responder (holds a validation slot)", 75, 1.25, 8400},
		{"  validation", 0, 0, 8100},
		{"order, fast responder (while the pool is full)", 30, 0.5, 3600},
		{"  validation", 0, 0, 3300},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Operation != w.op || r.OK != w.ok || r.PerSecond != w.perS || r.Latency.P50 != w.p50 || r.Clients != 17 {
			t.Errorf("row %d = %+v; want %+v", i, r, w)
		}
	}
}
