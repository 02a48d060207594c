package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/testbed"
)

func example(t *testing.T) Description {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "fleets", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(b, "fleets/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParseRefusesEarly(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join("..", "..", "fleets", "example.yaml"))
	good := string(b)
	for _, tc := range []struct{ name, text, want string }{
		{"missing", strings.Replace(good, "peak_factor: 3\n", "", 1), "missing peak_factor"},
		{"unknown", good + "certificates: 1000\n", "field certificates not found"},
		{"share", strings.Replace(good, "acme_share: 0.5", "acme_share: 1.5", 1), "acme_share: 1.5 must be a share between 0 and 1"},
		{"zero poll", strings.Replace(good, "agent_poll_seconds: 30", "agent_poll_seconds: 0", 1), "agent_poll_seconds: 0 must be a positive number"},
		{"peak", strings.Replace(good, "peak_factor: 3", "peak_factor: 0.5", 1), "peak_factor: 0.5 must be 1"},
		{"text", strings.Replace(good, "rotation_days: 47", "rotation_days: often", 1), "cannot unmarshal"},
	} {
		_, err := Parse([]byte(tc.text), "f.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "f.yaml: ") {
			t.Errorf("%s: %v; want an error naming f.yaml and %q", tc.name, err, tc.want)
		}
	}
}

// The example fleet at 100,000 certificates: each rate by its formula, and rounded as k6 runs it.
func TestMixAt100k(t *testing.T) {
	mix := example(t).Mix(100_000)
	want := map[string]struct {
		perS float64
		rate int
		unit string
	}{
		"agent_work":          {100_000.0 / 10 / 30, 333, "s"},
		"ocsp_crl":            {100_000.0 * 48 / 86400 * 3, 167, "s"},
		"acme_flow":           {100_000.0 * 0.5 * 2 / 86400 * 3, 208, "m"},
		"acme_order_flow":     {100_000.0 / (47 * 86400) * 3 * 0.5, 2, "m"},
		"issuance_acceptance": {100_000.0 / (47 * 86400) * 3 * 0.5, 2, "m"},
		"stats_summary":       {5.0 / 60, 5, "m"},
		"list_certificates":   {5.0 * 2 / 60, 10, "m"},
	}
	if len(mix) != len(want) {
		t.Fatalf("%d operations, want %d: %+v", len(mix), len(want), mix)
	}
	for _, o := range mix {
		w := want[o.Scenario]
		if math.Abs(o.PerSecond-w.perS) > 1e-9 || o.Rate != w.rate || o.Unit != w.unit {
			t.Errorf("%s: %g/s run as %d/%s; want %g/s as %d/%s", o.Scenario, o.PerSecond, o.Rate, o.Unit, w.perS, w.rate, w.unit)
		}
	}
	k := Knobs(mix)
	if k["TIER"] != Tiers || k["RATE_AGENT_WORK"] != "333" || k["TIME_UNIT_AGENT_WORK"] != "s" || k["TIME_UNIT_ACME_ORDER_FLOW"] != "m" ||
		!strings.HasPrefix(k["SCENARIOS"], "agent_work,ocsp_crl,") {
		t.Errorf("knobs %v", k)
	}
	// As a 2-minute run makes it: an operation rarer than twenty a run runs twenty times (ten a minute),
	// the dashboard's five summaries a minute among them.
	for _, o := range example(t).RunMix(10_000, 120) {
		if raised := o.Scenario == "acme_order_flow" || o.Scenario == "issuance_acceptance" || o.Scenario == "stats_summary"; o.Raised != raised || (raised && (o.Rate != 10 || o.Unit != "m")) {
			t.Errorf("%s at 10,000 in 2 minutes: %d/%s raised %v", o.Scenario, o.Rate, o.Unit, o.Raised)
		}
	}
	// No ACME clients, no dashboard: those operations are not run at all.
	d := example(t)
	d.ACMEShare, d.DashboardUsers = 0, 0
	for _, o := range d.Mix(1000) {
		if o.Scenario == "acme_flow" || o.Scenario == "acme_order_flow" || o.Scenario == "stats_summary" || o.Scenario == "list_certificates" {
			t.Errorf("%s in a fleet without ACME clients or dashboard users", o.Scenario)
		}
	}
}

// A fake testbed that carries 37,000 certificates: the search brackets, bisects to 25 % and confirms.
func TestSearchFindsTheLimitAndConfirmsIt(t *testing.T) {
	run := func(limit float64) Runner {
		return func(_ context.Context, n float64, role string) Try {
			t := Try{Size: n, Role: role, Holds: n <= limit, TookS: 60}
			if !t.Holds {
				t.ExitCode, t.Broke, t.Cause = 99, []string{"stats_summary: http_req_duration p(95)<800"}, "postgres at 95 % CPU"
			}
			return t
		}
	}
	saves := 0
	var firstSave Result
	res := Search(context.Background(), example(t), Plan{Low: 10_000, High: 100_000}, DefaultSettings, run(37_000), func(r Result) {
		if saves++; saves == 1 {
			firstSave = r
		}
	})
	// The record a search under way leaves says so, with the time its runs took so far.
	if firstSave.Verdict != "searching, runs so far: 1" || firstSave.TookS != 60 {
		t.Errorf("the first save: verdict %q, took %g s: want \"searching, runs so far: 1\", 60 s", firstSave.Verdict, firstSave.TookS)
	}
	if !res.Confirmed || res.Answer > 37_000 || res.Interval[1] <= 37_000 || res.Interval[1]/res.Interval[0] > 1.25 {
		t.Fatalf("answer %g in %v, confirmed %v: %s", res.Answer, res.Interval, res.Confirmed, res.Verdict)
	}
	last := res.Tries[len(res.Tries)-2:]
	if last[0].Role != "confirm" || last[0].Size != res.Answer || last[1].Role != "beyond" || last[1].Size != round2(res.Answer*1.25) {
		t.Errorf("confirming runs %+v", last)
	}
	if !strings.HasPrefix(res.Verdict, "carries "+SizeText(res.Answer)+" certificates (") || res.GivesWay == nil || res.GivesWay.Holds {
		t.Errorf("verdict %q, gives way %+v", res.Verdict, res.GivesWay)
	}
	if saves < len(res.Tries) || len(res.Tries) > 8 {
		t.Errorf("%d tries, %d saves: want each try saved, and eight tries at most from a tenfold bracket", len(res.Tries), saves)
	}
	// A bracket that is wrong both ways is widened: the limit below it, and above it.
	for _, limit := range []float64{1_500, 900_000} {
		res := Search(context.Background(), example(t), Plan{Low: 10_000, High: 100_000}, DefaultSettings, run(limit), func(Result) {})
		if !res.Confirmed || res.Answer > limit || res.Interval[1] <= limit {
			t.Errorf("limit %g: answer %g in %v (%s)", limit, res.Answer, res.Interval, res.Verdict)
		}
	}
	// Everything holds up to the most tried: "at least", and the record still writes (no infinity in it).
	most := DefaultSettings
	most.Max = 200
	res = Search(context.Background(), example(t), Plan{Low: 100, High: 200}, most, run(1e9), func(Result) {})
	if _, err := json.Marshal(res); err != nil || !res.AtLeast || res.Answer != 200 || !strings.HasPrefix(res.Verdict, "carries at least 200 certificates") {
		t.Errorf("at least: %+v, %v", res, err)
	}
	// Nothing holds: said so, with what broke at the smallest size.
	res = Search(context.Background(), example(t), Plan{Low: 1000, High: 10_000}, DefaultSettings, run(10), func(Result) {})
	if res.Answer != 0 || !strings.HasPrefix(res.Verdict, "carries no fleet of this shape: 100 certificates") || !strings.Contains(res.Verdict, "postgres at 95 % CPU") {
		t.Errorf("nothing holds: %g, %q", res.Answer, res.Verdict)
	}
	// A run that decides nothing stops the search and says so; what ran is kept.
	stuck := func(_ context.Context, n float64, role string) Try {
		return Try{Size: n, Role: role, Problem: "the machine decided it"}
	}
	res = Search(context.Background(), example(t), Plan{Low: 1000, High: 10_000}, DefaultSettings, stuck, func(Result) {})
	if len(res.Tries) != 1 || !strings.Contains(res.Verdict, "decided nothing (the machine decided it)") {
		t.Errorf("undecided: %d tries, %q", len(res.Tries), res.Verdict)
	}
}

// The bracket from growth curves: the operation that reaches its budget first decides it.
// A confirming run that breaks refutes its size: the search goes on below it, from the largest size
// that held every time, as main-151107c's search of 2026-12-07 needed (8,000 held, then broke at 822 ms).
func TestSearchGoesOnBelowARefutedConfirmation(t *testing.T) {
	flaky := func(limit, once float64) Runner {
		seen := map[float64]int{}
		return func(_ context.Context, n float64, role string) Try {
			seen[n]++
			tr := Try{Size: n, Role: role, Holds: n <= limit || (n == once && seen[n] == 1), TookS: 60}
			if !tr.Holds {
				tr.ExitCode, tr.Broke = 99, []string{"stats_summary: http_req_duration p(95)<800"}
			}
			return tr
		}
	}
	res := Search(context.Background(), example(t), Plan{Low: 4000, High: 8000}, DefaultSettings, flaky(6000, 8000), func(Result) {})
	var roles []string
	for _, tr := range res.Tries {
		roles = append(roles, fmt.Sprintf("%s %g %v", tr.Role, tr.Size, tr.Holds))
	}
	if !res.Confirmed || res.Answer != 5700 || res.Interval != [2]float64{5700, 6800} {
		t.Fatalf("answer %g in %v, confirmed %v: %s\nruns: %v", res.Answer, res.Interval, res.Confirmed, res.Verdict, roles)
	}
	refuted := false
	for _, tr := range res.Tries {
		refuted = refuted || (tr.Role == "confirm" && tr.Size == 8000 && !tr.Holds)
		if !tr.Holds && tr.Size <= res.Answer {
			t.Errorf("the answer %g is at or above a size that broke: %+v", res.Answer, tr)
		}
	}
	if !refuted {
		t.Errorf("no refuted confirmation at 8,000: %v", roles)
	}
	// With one confirming run (the rule removed), the same machine leaves the search unanswered.
	one := DefaultSettings
	one.Confirms = 1
	res = Search(context.Background(), example(t), Plan{Low: 4000, High: 8000}, one, flaky(6000, 8000), func(Result) {})
	if res.Confirmed || !strings.Contains(res.Verdict, "the first confirming run") {
		t.Errorf("one confirming run: %q", res.Verdict)
	}
	// Every size to 8,000 holds on its first run and breaks on its second: the search stops after its last confirming run, and says so.
	seen := map[float64]int{}
	always := func(_ context.Context, n float64, role string) Try {
		seen[n]++
		tr := Try{Size: n, Role: role, Holds: n <= 8000 && seen[n] == 1, TookS: 60}
		if !tr.Holds {
			tr.ExitCode, tr.Broke = 99, []string{"stats_summary: http_req_duration p(95)<800"}
		}
		return tr
	}
	res = Search(context.Background(), example(t), Plan{Low: 4000, High: 8000}, DefaultSettings, always, func(Result) {})
	confirms := 0
	for _, tr := range res.Tries {
		if tr.Role == "confirm" {
			confirms++
		}
	}
	if res.Confirmed || confirms != 3 || !strings.Contains(res.Verdict, "the third confirming run") {
		t.Errorf("%d confirming runs, verdict %q", confirms, res.Verdict)
	}
}

// A resumed search takes its record's runs while it asks for what they ran, and runs the rest: main-151107c's
// search of 2026-12-07, made under the old rule, goes on below its refuted 8,000 with four runs, not eleven.
func TestResumeGoesOnFromTheRecord(t *testing.T) {
	held := func(n float64, role string) Try { return Try{Size: n, Role: role, Holds: true, TookS: 200} }
	broke := func(n float64, role string) Try {
		return Try{Size: n, Role: role, ExitCode: 99, Broke: []string{"stats_summary"}, TookS: 200}
	}
	record := []Try{held(4000, "bracket"), held(8000, "bracket"), broke(32000, "bracket"), broke(16000, "bisect"),
		broke(11000, "bisect"), broke(9400, "bisect"), broke(8000, "confirm"), broke(10000, "beyond")}
	var kept []int
	var left []Try
	var ran []string
	runner := Resume(record, func(_ context.Context, n float64, role string) Try {
		ran = append(ran, fmt.Sprintf("%s %g", role, n))
		if n <= 6000 {
			return held(n, role)
		}
		return broke(n, role)
	}, func(i int) { kept = append(kept, i) }, func(asked, ran Try) { left = append(left, asked, ran) })
	res := Search(context.Background(), example(t), Plan{Low: 4000, High: 8000}, DefaultSettings, runner, func(Result) {})
	if len(kept) != 7 || kept[6] != 6 {
		t.Errorf("kept the record's runs %v: want its first seven (to the refuted confirmation)", kept)
	}
	if len(left) != 2 || left[0].Size != 5700 || left[0].Role != "bisect" || left[1].Size != 10000 {
		t.Errorf("left the record at %+v", left)
	}
	if want := []string{"bisect 5700", "bisect 6800", "confirm 5700", "beyond 7100"}; !slices.Equal(ran, want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
	if !res.Confirmed || res.Answer != 5700 || len(res.Tries) != 11 {
		t.Errorf("answer %g, confirmed %v, %d tries: %s", res.Answer, res.Confirmed, len(res.Tries), res.Verdict)
	}
	// A record the search asks for all of, and more: every run kept, nothing left, the rest run.
	kept, left, ran = nil, nil, nil
	Search(context.Background(), example(t), Plan{Low: 4000, High: 8000}, DefaultSettings, Resume(record[:2], func(_ context.Context, n float64, role string) Try {
		ran = append(ran, fmt.Sprintf("%s %g", role, n))
		return broke(n, role)
	}, func(i int) { kept = append(kept, i) }, func(asked, ran Try) { left = append(left, asked) }), func(Result) {})
	if len(kept) != 2 || len(left) != 0 || len(ran) == 0 || ran[0] != "bracket 32000" {
		t.Errorf("a record run out: kept %v, left %v, ran %v", kept, left, ran)
	}
}

func TestBracketFromGrowth(t *testing.T) {
	curves := map[string][]Point{
		// v2.1.7's recorded growth (docs/growth/v2.1.7.json): the summary is past 800 ms at 10k.
		"stats_summary":     {{1000, 87.243}, {10000, 997.138}, {100000, 7309.251}},
		"list_certificates": {{1000, 7.449}, {10000, 16.011}, {100000, 269.795}},
		"flat":              {{1000, 5}, {10000, 5}},
	}
	p := Bracket(curves, map[string]float64{"stats_summary": 800, "list_certificates": 800, "flat": 800}, "docs/growth/v2.1.7.json")
	if len(p.Predicted) != 2 || p.Predicted[0].Scenario != "stats_summary" || p.Predicted[0].Size < 5000 || p.Predicted[0].Size > 10000 {
		t.Fatalf("predictions %+v", p.Predicted)
	}
	if p.Predicted[1].Scenario != "list_certificates" || p.Predicted[1].Size < 200_000 {
		t.Errorf("list_certificates extrapolated past its last size: %+v", p.Predicted[1])
	}
	if p.Low != round2(p.Predicted[0].Size/4) || p.High != round2(p.Predicted[0].Size*4) || !strings.Contains(p.From, "stats_summary's p95 reaches its 800 ms budget") {
		t.Errorf("bracket %+v", p)
	}
	if d := Bracket(nil, nil, ""); d.Low != 1000 || d.High != 100_000 {
		t.Errorf("default bracket %+v", d)
	}
}

func TestRound2AndSizeText(t *testing.T) {
	for in, want := range map[float64]float64{12345: 12000, 37000: 37000, 46250: 46000, 99: 99, 1_234_567: 1_200_000} {
		if got := round2(in); got != want {
			t.Errorf("round2(%g) = %g, want %g", in, got, want)
		}
	}
	if s := SizeText(1_200_000); s != "1,200,000" {
		t.Errorf("SizeText: %q", s)
	}
}

// fleet.txt, from a search on the fake testbed that carries 37,000 certificates.
func TestTextGolden(t *testing.T) {
	run := func(_ context.Context, n float64, role string) Try {
		t := Try{Size: n, Role: role, Holds: n <= 37_000, TookS: 150, RunID: "fleet-" + SizeText(n), RunDir: "fleet-" + SizeText(n),
			P95: map[string]float64{"stats_summary": 800 * n / 38_000, "agent_work": 5 + n/10_000}}
		if !t.Holds {
			t.ExitCode, t.Broke, t.Cause = 99, []string{"stats_summary: http_req_duration p(95)<800 (p(95)=912 ms)"}, "postgres at 95 % CPU, most in the summary's job count"
		}
		return t
	}
	p := Bracket(map[string][]Point{"stats_summary": {{1000, 87.243}, {10000, 997.138}, {100000, 7309.251}}}, map[string]float64{"stats_summary": 800}, "docs/growth/v2.1.7.json")
	res := Search(context.Background(), example(t), p, DefaultSettings, run, func(Result) {})
	res.Testbed = &testbed.Calibration{CPUs: 2, CPUModel: "AMD EPYC", CPUSingle: 1000, CPUAll: 1980, FsyncP50Ms: 0.9, FsyncP99Ms: 2.1, FsyncOps: 200}
	res.Build = "v2.1.7"
	golden.Check(t, "fleet.txt", Text(res))
	page, err := Index(res)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "fleet.html", page)
}

// Two answers: judged on one testbed and one fleet, refused across testbeds.
func TestCompareAnswers(t *testing.T) {
	tb := testbed.Calibration{CPUs: 2, CPUModel: "AMD EPYC", CPUSingle: 1000, CPUAll: 1980, FsyncP50Ms: 0.9}
	d := example(t)
	answer := func(n, broke float64, c testbed.Calibration) Result {
		return Result{Schema: Schema, Fleet: d, Answer: n, Interval: [2]float64{n, broke}, Testbed: &c, Verdict: "carries " + SizeText(n) + " certificates", Confirmed: true}
	}
	// Two searches that were not confirmed are no answers to set side by side (2026-12-07: both builds'
	// first searches, which the compare called "larger").
	unconfirmed := answer(5_700, 6_800, tb)
	unconfirmed.Confirmed = false
	if c := Compare("v2.1.7", answer(4_800, 5_700, tb), "main", unconfirmed); c.Verdict != "not comparable" || !strings.Contains(c.Text, "main's answer is not confirmed") {
		t.Errorf("unconfirmed: %+v", c)
	}
	if c := Compare("v2.1.7", answer(32_000, 40_000, tb), "main", answer(12_000, 15_000, tb)); c.Verdict != "smaller" || !strings.Contains(c.Text, "main carries a smaller fleet than v2.1.7: 12,000 against 32,000 certificates") {
		t.Errorf("smaller: %+v", c)
	}
	if c := Compare("a", answer(32_000, 40_000, tb), "b", answer(36_000, 45_000, tb)); c.Verdict != "same" {
		t.Errorf("overlapping intervals: %+v", c)
	}
	fast := tb
	fast.CPUSingle, fast.CPUAll = 2500, 4900
	if c := Compare("here", answer(32_000, 40_000, tb), "there", answer(80_000, 100_000, fast)); c.Verdict != "not comparable" || !strings.Contains(c.Text, "NOT COMPARABLE: a core 1000/s vs 2500/s") {
		t.Errorf("two testbeds: %+v", c)
	}
	other := answer(32_000, 40_000, tb)
	other.Fleet.Name, other.Fleet.ACMEShare = "mine", 1
	if c := Compare("a", answer(32_000, 40_000, tb), "b", other); c.Verdict != "not comparable" || !strings.Contains(c.Text, "two fleets (example, mine)") {
		t.Errorf("two fleets: %+v", c)
	}
	longer := answer(36_000, 45_000, tb)
	longer.StepS = 300
	if c := Compare("a", answer(32_000, 40_000, tb), "b", longer); c.Verdict != "not comparable" || !strings.Contains(c.Text, "two steps (0s, 300s)") {
		t.Errorf("two steps: %+v", c)
	}
}

// One run calibrated beside other work does not make the answer another testbed's.
func TestMedianTestbed(t *testing.T) {
	if MedianTestbed(nil) != nil {
		t.Error("no runs: want no testbed")
	}
	var tbs []testbed.Calibration
	for _, c := range []float64{9361, 13757, 13419, 13383, 13209, 13295, 13488, 13539} {
		tbs = append(tbs, testbed.Calibration{CPUs: 2, CPUSingle: c})
	}
	if m := MedianTestbed(tbs); m == nil || m.CPUSingle != 13383 {
		t.Errorf("median of v2.1.7's eight runs: %+v, want the run at 13,383/s a core", m)
	}
}
