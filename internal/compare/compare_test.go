package compare

import (
	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/testbed"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func run(t *testing.T, old, new Side, o Options) Result {
	t.Helper()
	r, err := Compare(old, new, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func dirs(names ...string) []string {
	out := []string{}
	for _, n := range names {
		out = append(out, filepath.Join("testdata", n))
	}
	return out
}

// Two runs of one build, recorded in one sitting: nothing may come out significant.
func TestSameBuildIsNoSignificantChange(t *testing.T) {
	r := run(t, Side{Dirs: dirs("v217-a")}, Side{Dirs: dirs("v217-b")}, Options{})
	if r.Verdict != "no significant change" {
		t.Errorf("verdict %q, want no significant change:\n%s", r.Verdict, Text(r))
	}
	for _, row := range r.Rows {
		if row.Verdict != "~" {
			t.Errorf("%s %s: %s", row.Scenario, row.Metric, row.Verdict)
		}
	}
	if r.Old.Label != "old v2.1.7" || r.New.Label != "new v2.1.7" {
		t.Errorf("labels %q, %q", r.Old.Label, r.New.Label)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "has one run") }) {
		t.Errorf("no one-run warning: %q", r.Warnings)
	}
	golden.Check(t, "same-build.txt", Text(r))
}

// v2.1.7 against certctl's main branch a day later: every scenario regressed, and the cause is the
// audit INSERT.
func TestReleaseAgainstNext(t *testing.T) {
	r := run(t, Side{Dirs: dirs("v217-a", "v217-b")}, Side{Dirs: dirs("main-a")}, Options{})
	if r.Verdict != "regressed" {
		t.Fatalf("verdict %q:\n%s", r.Verdict, Text(r))
	}
	for _, sc := range []string{"acme_flow", "issuance_acceptance", "list_certificates"} {
		if !slices.ContainsFunc(r.Regressed, func(s string) bool { return strings.HasPrefix(s, sc+" p50 ×") }) {
			t.Errorf("%s's p50 is not named regressed by a factor: %q", sc, r.Regressed)
		}
	}
	if r.Cause == nil || len(r.Cause.Statements) == 0 || r.Cause.Statements[0].Query != "INSERT INTO audit_events" {
		t.Fatalf("cause does not lead with the audit INSERT: %+v", r.Cause)
	}
	if !slices.ContainsFunc(r.Cause.New, func(f string) bool { return strings.Contains(f, "waiting on locks") }) {
		t.Errorf("main's findings do not name the lock queue: %q", r.Cause.New)
	}
	golden.Check(t, "release-vs-next.txt", Text(r))
	golden.Check(t, "release-vs-next.md", Markdown(r))
	b, err := output.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "release-vs-next.json", string(b))
}

func TestToleranceDecidesWhatFails(t *testing.T) {
	r := run(t, Side{Dirs: dirs("v217-a")}, Side{Dirs: dirs("main-a")}, Options{Tolerance: 100})
	if r.Verdict != "changed" || len(r.Regressed) != 0 {
		t.Errorf("tolerance ×101: verdict %q, regressed %q", r.Verdict, r.Regressed)
	}
	r = run(t, Side{Dirs: dirs("v217-a")}, Side{Dirs: dirs("main-a")}, Options{Tolerance: 5})
	if r.Verdict != "regressed" || len(r.Regressed) == 0 || strings.Contains(strings.Join(r.Regressed, ";"), "p99") {
		t.Errorf("tolerance ×6: only the p50s (×20 and more) fail: %q", r.Regressed)
	}
}

// One run's point estimate is k6's own figure: the summary's p50/p95/p99.
func TestPointEstimateIsK6s(t *testing.T) {
	r := run(t, Side{Dirs: dirs("v217-a")}, Side{Dirs: dirs("v217-a")}, Options{})
	s, err := readSummary(filepath.Join("testdata", "v217-a"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range s.Scenarios {
		want := map[string]float64{"p50": sc.Record.LatencyMS.P50, "p95": sc.Record.LatencyMS.P95, "p99": sc.Record.LatencyMS.P99}
		for _, row := range r.Rows {
			if row.Scenario == sc.Name && want[row.Metric] != 0 && math.Abs(row.Old-want[row.Metric]) > 0.01 {
				t.Errorf("%s %s: %g, k6 said %g", sc.Name, row.Metric, row.Old, want[row.Metric])
			}
		}
	}
}

func TestWithoutRawSamplesFiguresAreShownNotJudged(t *testing.T) {
	bare := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "v217-b", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bare, "summary.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, Side{Dirs: dirs("v217-a")}, Side{Dirs: []string{bare}}, Options{})
	for _, row := range r.Rows {
		if row.Verdict != "no samples" || row.Fails {
			t.Errorf("%s %s: %s", row.Scenario, row.Metric, row.Verdict)
		}
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "without raw samples") }) {
		t.Errorf("warnings %q", r.Warnings)
	}
}

func synthetic(f func(i int) (float64, bool)) []sample {
	var ss []sample
	for i := 0; i < 6000; i++ {
		v, ok := f(i)
		ss = append(ss, sample{t: float64(i) / 50, v: v, ok: ok})
	}
	return ss
}

func TestBootstrapSeesAShiftAndNotItsAbsence(t *testing.T) {
	base := synthetic(func(i int) (float64, bool) { return 5 + float64(i%97)/10, true })
	slower := synthetic(func(i int) (float64, bool) { return 1.5 * (5 + float64(i%97)/10), i%50 != 0 })
	o := Options{}
	o.defaults()
	for _, c := range []struct {
		name    string
		b       []sample
		verdict string
	}{{"same", base, "~"}, {"×1.5 and 2 % errors", slower, "worse"}} {
		bl := blockLength([][]sample{base, c.b})
		lo, hi := binRange([]runBlocks{blocksOf(base, bl)}, []runBlocks{blocksOf(c.b, bl)})
		rng := newRand(o.Seed)
		ra := bootstrap([]runBlocks{blocksOf(base, bl)}, 500, rng, lo, hi)
		rb := bootstrap([]runBlocks{blocksOf(c.b, bl)}, 500, rng, lo, hi)
		ratios := make([]float64, 500)
		for d := range ratios {
			ratios[d] = rb.q[1][d] / ra.q[1][d]
		}
		low, high := interval(ratios, 0.95)
		ea, eb := pooled([][]sample{base}), pooled([][]sample{c.b})
		r := Row{Change: eb.q[1] / ea.q[1], Low: &low, High: &high}
		judgeRatio(&r, o)
		if r.Verdict != c.verdict {
			t.Errorf("%s: p95 %g → %g, interval %g … %g: %s, want %s", c.name, ea.q[1], eb.q[1], low, high, r.Verdict, c.verdict)
		}
		if c.name != "same" {
			if got := eb.errorRate(); math.Abs(got-0.02) > 1e-9 {
				t.Errorf("error rate %g, want 0.02", got)
			}
		}
	}
}

func TestBlocksKeepEveryRequest(t *testing.T) {
	ss := synthetic(func(i int) (float64, bool) { return 1, i%10 != 0 })
	bs := blocksOf(ss, 10)
	if len(bs) != 12 {
		t.Errorf("%d blocks of 10 s in 120 s, want 12", len(bs))
	}
	n, failed, ok := 0, 0, 0
	for _, b := range bs {
		n += b.n
		failed += b.failed
		for _, c := range b.bins {
			ok += int(c.n)
		}
	}
	if n != 6000 || failed != 600 || ok != 5400 {
		t.Errorf("n %d failed %d ok %d", n, failed, ok)
	}
}

// Two sides that set a knob apart measured two experiments: compare says which knob. The certctl that
// ran is what is compared, and a side recorded before settings were kept says nothing either way.
func TestSettingsApartAreWarned(t *testing.T) {
	side := func(label string, settings ...map[string]string) loaded {
		l := loaded{info: SideInfo{Label: label}}
		for i, m := range settings {
			var sum results.Summary
			sum.Run.Settings = m
			l.summaries = append(l.summaries, sum)
			l.info.Runs = append(l.info.Runs, RunInfo{RunID: fmt.Sprint(label, i), Passed: true})
		}
		return l
	}
	w := warnings([2]loaded{
		side("old", map[string]string{"CERTCTL_DIST": "/b/v2.1.7", "RATE_LIST_CERTIFICATES": "80"}, map[string]string{"CERTCTL_DIST": "/b/v2.1.7", "RATE_LIST_CERTIFICATES": "80"}),
		side("new", map[string]string{"CERTCTL_DIST": "/b/main", "MAX_VUS": "50"}, map[string]string{"CERTCTL_DIST": "/b/main", "MAX_VUS": "50"}),
	})
	joined := strings.Join(w, "\n")
	for _, want := range []string{
		"the MAX_VUS settings differ: old MAX_VUS at its default, new MAX_VUS=50",
		"the RATE_LIST_CERTIFICATES settings differ: old RATE_LIST_CERTIFICATES=80, new RATE_LIST_CERTIFICATES at its default",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "CERTCTL_DIST") {
		t.Errorf("the certctl compared is warned about:\n%s", joined)
	}
	if w := warnings([2]loaded{side("old", nil, nil), side("new", map[string]string{"MAX_VUS": "50"}, map[string]string{"MAX_VUS": "50"})}); strings.Contains(strings.Join(w, "\n"), "MAX_VUS") {
		t.Errorf("a side recorded before settings were kept: %q", w)
	}
}

// The instruments move certctl's figures (docs/diagnosis.md#the-cost-of-looking): sides that ran with
// different ones are warned about, whichever knob set them apart.
func TestInstrumentsApartAreWarned(t *testing.T) {
	run := func(diag, stmts string, settings map[string]string) results.Summary {
		var sum results.Summary
		sum.Run.Config = map[string]string{"DIAGNOSIS": diag, "COLLECT_STATEMENTS": stmts}
		sum.Run.Settings = settings
		return sum
	}
	side := func(label string, sums ...results.Summary) loaded {
		l := loaded{info: SideInfo{Label: label}, summaries: sums}
		for i := range sums {
			l.info.Runs = append(l.info.Runs, RunInfo{RunID: fmt.Sprint(label, i), Passed: true})
		}
		return l
	}
	on := run("true", "on", map[string]string{})
	for name, off := range map[string]results.Summary{
		"DIAGNOSIS=false":          run("false", "on", map[string]string{"DIAGNOSIS": "false"}),
		"PG_STAT_STATEMENTS=false": run("true", "off", map[string]string{"PG_STAT_STATEMENTS": "false"}),
		"PROGRESS_INTERVAL=0":      run("true", "on", map[string]string{"PROGRESS_INTERVAL": "0"}),
	} {
		joined := strings.Join(warnings([2]loaded{side("old", on, on), side("new", off, off)}), "\n")
		if !strings.Contains(joined, "the instruments (they move certctl's figures: docs/diagnosis.md#the-cost-of-looking) differ: old DIAGNOSIS=true PG_STAT_STATEMENTS=true PROGRESS_INTERVAL=default, new ") || !strings.Contains(joined, name) {
			t.Errorf("%s: %s", name, joined)
		}
		if strings.Contains(joined, "settings differ") {
			t.Errorf("%s warned twice: %s", name, joined)
		}
	}
	if w := warnings([2]loaded{side("old", on, on), side("new", on, on)}); strings.Contains(strings.Join(w, "\n"), "instruments") {
		t.Errorf("the same instruments: %q", w)
	}
}

// Each side's breaches against the registry: what a release fixed or newly broke.
func TestDefectsBySide(t *testing.T) {
	side := func(label string, v *defects.Verdict) loaded {
		return loaded{info: SideInfo{Label: label}, summaries: []results.Summary{{Breaches: v}, {}}}
	}
	old := side("v2.1.7", &defects.Verdict{Known: []defects.Known{{Breach: defects.Breach{Scenario: "ocsp_crl", Threshold: "pki_ocsp_ok rate>0.99"}, Defects: []string{"ocsp-500"}}}})
	next := side("main", &defects.Verdict{New: []defects.Breach{{Scenario: "list_certificates", Threshold: "http_req_failed rate<0.01"}},
		NotAppearing: []defects.Absent{{Defect: "ocsp-500", Scenarios: []string{"ocsp_crl"}}}})
	r := Result{Defects: [2]SideDefects{sideDefects(old), sideDefects(next)}}
	want := []string{"v2.1.7: known: ocsp-500", "main: new: list_certificates: http_req_failed rate<0.01 · not appearing: ocsp-500"}
	if got := defectLines(r); !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	if !strings.Contains(Text(r), "certctl's known defects (docs/certctl-findings.md), by side:\n  v2.1.7: known: ocsp-500\n") {
		t.Errorf("text:\n%s", Text(r))
	}
}

// A closed-model scenario's throughput is judged as its percentiles are, lower being worse: the same
// clients answered at a rate a fifth lower fail the comparison (beyond a 10 % tolerance), the same rate
// does not, and a higher one reads better. An arrival-rate scenario gets no throughput row (its rate
// is the one it was given), and its other rows read as without this row.
// A change is significant only when its interval clears the noise band, not only "no change": the A/A
// of 2026-12-06 (v2.1.7 against itself, alone: issuance p50 +39 %, interval +5 % … +62 %) failed the gate
// when leaving out 1 was enough.
func TestSignificantBeyondTheNoiseBand(t *testing.T) {
	o := Options{Tolerance: 0.25}
	o.defaults()
	for _, c := range []struct {
		name              string
		change, low, high float64
		verdict           string
		fails             bool
	}{
		{"the A/A of 2026-12-06", 1.39, 1.05, 1.62, "~", false},
		{"worse past the band, beyond the tolerance", 1.39, 1.12, 1.62, "worse", true},
		{"worse past the band, within the tolerance", 1.2, 1.11, 1.3, "worse", false},
		{"inside the noise", 1.08, 1.02, 1.14, "~", false},
		{"better, the interval in the band", 0.8, 0.7, 0.95, "~", false},
		{"better past the band", 0.7, 0.6, 0.85, "better", false},
	} {
		low, high := c.low, c.high
		r := Row{Change: c.change, Low: &low, High: &high}
		judgeRatio(&r, o)
		if r.Verdict != c.verdict || r.Fails != c.fails {
			t.Errorf("%s: ×%g (%g … %g): %s, fails %v; want %s, fails %v", c.name, c.change, low, high, r.Verdict, r.Fails, c.verdict, c.fails)
		}
	}
}

func TestClosedModelThroughputIsJudged(t *testing.T) {
	// 50 requests a second for 120 s; the slower side spaces them 25 % further apart (a rate a fifth lower).
	at := func(spacing float64) []sample {
		var ss []sample
		for i := 0; i < 6000; i++ {
			ss = append(ss, sample{t: float64(i) * spacing / 50, v: 20 + float64(i%13), ok: true})
		}
		return ss
	}
	o := Options{Tolerance: 0.1}
	o.defaults()
	for _, c := range []struct {
		name         string
		spacing      float64
		verdict      string
		fails        bool
		wantOld, new float64
	}{
		{"a fifth lower", 1.25, "worse", true, 50, 40},
		{"the same", 1, "~", false, 50, 50},
		{"a third higher", 0.75, "better", false, 50, 66.67},
	} {
		a, b := at(1), at(c.spacing)
		bl := blockLength([][]sample{a, b})
		r := throughputRow("issuance_c16", []runBlocks{blocksOf(a, bl)}, []runBlocks{blocksOf(b, bl)}, bl, o)
		if r.Metric != ThroughputMetric || r.Verdict != c.verdict || r.Fails != c.fails || math.Abs(r.Old-c.wantOld) > 1 || math.Abs(r.New-c.new) > 1.5 {
			t.Errorf("%s: %+v (interval %v … %v); want %s, fails %v, %g → %g/s", c.name, r, *r.Low, *r.High, c.verdict, c.fails, c.wantOld, c.new)
		}
		if got := valueText(r, r.New); !strings.HasSuffix(got, "/s") {
			t.Errorf("%s: the throughput reads %q; want requests per second", c.name, got)
		}
	}
	for ex, want := range map[string]bool{"constant-vus": true, "per-vu-iterations": true, "constant-arrival-rate": false, "ramping-arrival-rate": false, "": false} {
		if closedModel(ex) != want {
			t.Errorf("closedModel(%q) = %v, want %v", ex, !want, want)
		}
	}
}

// withTestbed copies a recorded run and gives it a calibration.
func withTestbed(t *testing.T, name string, c testbed.Calibration) string {
	t.Helper()
	return withMachine(t, name, &c, "")
}

// withMachine copies a recorded run and gives it a calibration (nil: none) and its host a CPU model.
func withMachine(t *testing.T, name string, c *testbed.Calibration, model string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dst, "summary.json")
	b, _ := os.ReadFile(path)
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	run := s["run"].(map[string]any)
	if c != nil {
		run["testbed"] = c
	}
	if model != "" {
		run["host"].(map[string]any)["cpu_model"] = model
	}
	b, _ = json.Marshal(s)
	os.WriteFile(path, b, 0o644)
	return dst
}

// Runs of one build on one testbed compare as before; on testbeds apart (a disk ×33 slower) the verdict
// is "not comparable", said first, whatever the rows show; a run with no calibration is warned about.
func TestTestbedsApartAreNotComparable(t *testing.T) {
	here := testbed.Calibration{CPUs: 2, CPUSingle: 28000, CPUAll: 56000, FsyncP50Ms: 0.1}
	slow := here
	slow.FsyncP50Ms = 3.3
	r := run(t, Side{Label: "a", Dirs: []string{withTestbed(t, "v217-a", here)}}, Side{Label: "b", Dirs: []string{withTestbed(t, "v217-b", here)}}, Options{})
	if r.Verdict != "no significant change" || len(r.NotComparable) > 0 || slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "testbed") }) {
		t.Errorf("one testbed: %q %q %q", r.Verdict, r.NotComparable, r.Warnings)
	}
	r = run(t, Side{Label: "a", Dirs: []string{withTestbed(t, "v217-a", here)}}, Side{Label: "b", Dirs: []string{withTestbed(t, "v217-b", slow)}}, Options{})
	if r.Verdict != VerdictNotComparable {
		t.Fatalf("verdict %q", r.Verdict)
	}
	want := "  NOT COMPARABLE: a (run m1-v217-api-acme) and b (run m2-v217-api-acme) ran on different testbeds: fsync p50 0.100 ms vs 3.300 ms (×33.0, tolerance ×3); the rows are the machines' difference as much as certctl's (docs/methodology.md#testbeds)\n"
	if lines := strings.SplitAfterN(Text(r), "\n", 3); lines[1] != want {
		t.Errorf("second line %q\nwant        %q", lines[1], want)
	}
	if !strings.HasPrefix(Markdown(r), "### ⚠️ Compare") {
		t.Errorf("markdown %q", Markdown(r)[:40])
	}
	// Asked to (stacks side by side on purpose), the same two are compared, the difference a warning.
	r = run(t, Side{Label: "a", Dirs: []string{withTestbed(t, "v217-a", here)}}, Side{Label: "b", Dirs: []string{withTestbed(t, "v217-b", slow)}}, Options{AcrossTestbeds: true})
	if r.Verdict == VerdictNotComparable || len(r.NotComparable) > 0 || !slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "compared across testbeds, as asked: a (run m1-v217-api-acme)")
	}) {
		t.Errorf("across testbeds: %q %q %q", r.Verdict, r.NotComparable, r.Warnings)
	}
	// The committed baselines of 2026-11-24 (no calibration, an Intel host) against a run on another CPU
	// whose calibration kept no model: the hosts' models set them apart.
	r = run(t, Side{Label: "a", Dirs: []string{withMachine(t, "v217-a", nil, "Intel(R) Xeon(R) Processor")}}, Side{Label: "b", Dirs: []string{withMachine(t, "v217-b", &here, "AMD EPYC")}}, Options{})
	if r.Verdict != VerdictNotComparable || !slices.Contains(r.NotComparable, "CPU Intel(R) Xeon(R) Processor vs AMD EPYC") {
		t.Errorf("hosts of two models: %q %q", r.Verdict, r.NotComparable)
	}
	r = run(t, Side{Label: "a", Dirs: dirs("v217-a")}, Side{Label: "b", Dirs: []string{withTestbed(t, "v217-b", slow)}}, Options{})
	if r.Verdict == VerdictNotComparable || !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, "testbed unknown for a ") }) {
		t.Errorf("one side uncalibrated: %q %q", r.Verdict, r.Warnings)
	}
}

// Two runs on one machine, one on the offline kit's PostgreSQL 15 (recorded before runs named their
// PostgreSQL: its image says it), one on 16: another database under certctl, not comparable; on the
// same major they compare.
func TestPostgresMajorsApartAreNotComparable(t *testing.T) {
	here := testbed.Calibration{CPUs: 2, CPUSingle: 28000, CPUAll: 56000, FsyncP50Ms: 0.1}
	on := func(name, version string) string {
		dir := withTestbed(t, name, here)
		path := filepath.Join(dir, "summary.json")
		b, _ := os.ReadFile(path)
		var s map[string]any
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		s["run"].(map[string]any)["postgres"] = version
		b, _ = json.Marshal(s)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	r := run(t, Side{Label: "a", Dirs: []string{withTestbed(t, "v217-a", here)}}, Side{Label: "b", Dirs: []string{on("v217-b", "16.15")}}, Options{})
	if r.Verdict != VerdictNotComparable || !slices.Contains(r.NotComparable, "PostgreSQL 15 vs 16") {
		t.Errorf("15 against 16: %q %q", r.Verdict, r.NotComparable)
	}
	r = run(t, Side{Label: "a", Dirs: []string{on("v217-a", "16.4-1.pgdg120+1")}}, Side{Label: "b", Dirs: []string{on("v217-b", "16.15")}}, Options{})
	if r.Verdict == VerdictNotComparable {
		t.Errorf("16 against 16: %q %q", r.Verdict, r.NotComparable)
	}
}

// Judged metrics alone can fail a comparison: the others are still marked, and shown.
func TestJudgedMetrics(t *testing.T) {
	r := run(t, Side{Dirs: dirs("v217-a", "v217-b")}, Side{Dirs: dirs("main-a")}, Options{Judged: []string{"p50"}})
	worseP95 := 0
	for _, row := range r.Rows {
		if row.Fails && row.Metric != "p50" {
			t.Errorf("%s %s fails, but only p50 is judged", row.Scenario, row.Metric)
		}
		if row.Metric == "p95" && row.Verdict == "worse" {
			worseP95++
		}
	}
	if r.Verdict != "regressed" || worseP95 == 0 {
		t.Errorf("verdict %q, p95 rows marked worse %d: the medians still fail it and the p95s are still shown", r.Verdict, worseP95)
	}
	if !strings.Contains(Text(r), "(p50 only; the other rows are shown, not judged)") {
		t.Errorf("the method line does not say what is judged:\n%s", Text(r))
	}
	// Without it a p95 fails as well: the rule is what kept them out.
	all := run(t, Side{Dirs: dirs("v217-a", "v217-b")}, Side{Dirs: dirs("main-a")}, Options{})
	if !slices.ContainsFunc(all.Rows, func(row Row) bool { return row.Fails && row.Metric == "p95" }) {
		t.Errorf("no p95 fails when every metric is judged: the test above shows nothing")
	}
}

// Two runs a side: the bootstrap's spread of their pool is half what the runs' own spread says, and the
// interval is widened by √2 for it; one run a side is left as it is.
func TestWiden(t *testing.T) {
	reps := []float64{1, 2, 4}
	widen(reps, 2, 2, true)
	want := []float64{2 * math.Pow(0.5, math.Sqrt2), 2, 2 * math.Pow(2, math.Sqrt2)}
	for i := range reps {
		if math.Abs(reps[i]-want[i]) > 1e-9 {
			t.Errorf("log scale: %v, want %v", reps, want)
		}
	}
	diffs := []float64{-0.01, 0, 0.03}
	widen(diffs, 0.01, 3, false)
	k := math.Sqrt(1.5)
	if math.Abs(diffs[0]-(0.01-0.02*k)) > 1e-12 || math.Abs(diffs[2]-(0.01+0.02*k)) > 1e-12 {
		t.Errorf("plain: %v", diffs)
	}
	one := []float64{1, 3}
	widen(one, 2, 1, true)
	if one[0] != 1 || one[1] != 3 {
		t.Errorf("one run: %v, want it unchanged", one)
	}
}
