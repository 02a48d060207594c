package soak

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/results"
)

var t0 = time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)

// fakeRun writes a run of minutes of load: one scenario at 5 requests a second whose latency is
// lat(second), and certctl's memory mem(second) sampled every 2 s, and two table samples.
func fakeRun(t *testing.T, minutes int, lat, mem func(s float64) float64) (string, results.Summary) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "raw"), 0o755)
	os.MkdirAll(filepath.Join(dir, "server"), 0o755)
	f, err := os.Create(filepath.Join(dir, "raw", "list_certificates.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	fmt.Fprintln(zw, `{"type":"Point","data":{"time":"2026-11-28T07:59:59Z","value":900,"tags":{"phase":"setup","expected_response":"true"}},"metric":"http_req_duration"}`)
	for ms := 0; ms < minutes*60_000; ms += 200 {
		s := float64(ms) / 1000
		at := t0.Add(time.Duration(ms) * time.Millisecond).Format(time.RFC3339Nano)
		// A spread within each second, so a window's p95 is not its mean.
		v := lat(s) * (0.8 + 0.5*float64(ms%1000)/1000)
		fmt.Fprintf(zw, `{"type":"Point","data":{"time":%q,"value":%g,"tags":{"expected_response":"true"}},"metric":"http_req_duration"}`+"\n", at, v)
		failed := 0
		if ms%60_000 == 0 {
			failed = 1
		}
		fmt.Fprintf(zw, `{"type":"Point","data":{"time":%q,"value":%d,"tags":{}},"metric":"http_req_failed"}`+"\n", at, failed)
	}
	zw.Close()
	f.Close()
	var c strings.Builder
	for s := 0; s < minutes*60; s += 2 {
		at := t0.Add(time.Duration(s) * time.Second).Format(time.RFC3339)
		fmt.Fprintf(&c, `{"at":%q,"service":"certctl-server","mem_bytes":%d}`+"\n", at, int64(mem(float64(s))*(1<<20)))
		fmt.Fprintf(&c, `{"at":%q,"service":"postgres","mem_bytes":%d}`+"\n", at, int64((100+float64(s)/60)*(1<<20)))
	}
	os.WriteFile(filepath.Join(dir, "server", "containers.jsonl"), []byte(c.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "server", "pg_tables.jsonl"), []byte(
		`{"at":"2026-11-28T07:59:58Z","tables":[{"name":"audit_events","table_bytes":8192000,"index_bytes":2048000,"live":1000,"dead":0,"autovacuums":0,"autoanalyzes":1},{"name":"jobs","table_bytes":819200,"index_bytes":16384,"live":10,"dead":0,"autovacuums":0,"autoanalyzes":0}]}
{"at":"2026-11-28T08:10:00Z","tables":[{"name":"audit_events","table_bytes":16384000,"index_bytes":4096000,"live":9000,"dead":12,"autovacuums":2,"autoanalyzes":3},{"name":"jobs","table_bytes":819200,"index_bytes":16384,"live":10,"dead":4,"autovacuums":0,"autoanalyzes":0},{"name":"new_table","table_bytes":8192,"index_bytes":0,"live":1,"dead":0,"autovacuums":0,"autoanalyzes":0}]}
`), 0o644)
	sum := results.Summary{Run: results.Run{RunID: "soak-test"}, Scenarios: []results.Scenario{{Name: "list_certificates",
		Record: &results.Record{LatencyMetric: "http_req_duration{expected_response:true}"}}}}
	return dir, sum
}

var budgets = Budgets{Window: time.Minute, P95Drift: 1.5, MemoryPctPerHour: 10}

func TestSteadyRunPasses(t *testing.T) {
	dir, sum := fakeRun(t, 8, func(float64) float64 { return 10 }, func(s float64) float64 { return 40 + 10*(1-1/(1+s/3)) })
	r := Analyze(dir, sum, budgets)
	if r.Verdict != "steady" || len(r.Reasons) != 0 {
		t.Fatalf("verdict %s %v", r.Verdict, r.Reasons)
	}
	sc := r.Scenarios[0]
	if len(sc.Windows) != 8 || sc.P95 == nil || sc.P95.Points != 7 || sc.Breach {
		t.Fatalf("scenario %+v", sc)
	}
	if w := sc.Windows[3]; w.Requests != 300 || w.Failed != 1 || w.N != 300 {
		t.Errorf("window %+v", w)
	}
	golden.Check(t, "steady.txt", Text(r))
}

// A latency that climbs through the run breaches the drift budget; the same climb under a looser
// budget does not.
func TestDriftBreaches(t *testing.T) {
	dir, sum := fakeRun(t, 8, func(s float64) float64 { return 10 + s/20 }, func(float64) float64 { return 50 })
	r := Analyze(dir, sum, budgets)
	if r.Verdict != "breach" || !r.Scenarios[0].Breach || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "list_certificates: p95 drifted") {
		t.Fatalf("verdict %s %v %+v", r.Verdict, r.Reasons, r.Scenarios[0].P95)
	}
	loose := budgets
	loose.P95Drift = 10
	if r := Analyze(dir, sum, loose); r.Verdict != "steady" {
		t.Errorf("under ×10: %s %v", r.Verdict, r.Reasons)
	}
}

// Noise that happens to end higher is not a drift: the slope's interval must exclude zero.
func TestNoisyEndIsNotADrift(t *testing.T) {
	noisy := func(s float64) float64 { return []float64{10, 30, 9, 28, 11, 27, 10, 31}[int(s/60)] }
	dir, sum := fakeRun(t, 8, noisy, func(float64) float64 { return 50 })
	r := Analyze(dir, sum, Budgets{Window: time.Minute, P95Drift: 1.01, MemoryPctPerHour: 10})
	if r.Scenarios[0].Breach {
		t.Fatalf("noise judged a drift: %+v", r.Scenarios[0].P95)
	}
}

// certctl's memory still rising through the second half breaches; PostgreSQL's, rising too, is
// reported and not judged.
func TestGrowingMemoryBreaches(t *testing.T) {
	dir, sum := fakeRun(t, 8, func(float64) float64 { return 10 }, func(s float64) float64 { return 50 + s/30 })
	r := Analyze(dir, sum, budgets)
	if r.Verdict != "breach" || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "certctl-server: memory still grows") {
		t.Fatalf("verdict %s %v", r.Verdict, r.Reasons)
	}
	for _, m := range r.Memory {
		if m.Service == "postgres" && (m.Judged || m.Breach || m.PctPerHour <= 10) {
			t.Errorf("postgres %+v", m)
		}
	}
	tb := r.Tables[0]
	if tb.Name != "audit_events" || tb.EndRows != 9000 || tb.Autovacuums != 2 || tb.EndBytes != 20480000 || len(r.Tables) != 3 {
		t.Errorf("tables %+v", r.Tables)
	}
}

// A cold certctl's memory climbs through a short soak's second half: that is its warm-up, not a leak,
// so a run shorter than MemoryWarmup leaves memory unjudged and says so. Judged over its second half
// alone, as before MemoryWarmup, the same run breaches (a 40-second soak did, in CI).
func TestWarmupIsNotJudged(t *testing.T) {
	climb := func(s float64) float64 { return 5 + s/4 } // 5 → 20 MB in a minute, as certctl's did at 10/s
	dir, sum := fakeRun(t, 1, func(float64) float64 { return 10 }, climb)
	b := Budgets{Window: 10 * time.Second, P95Drift: 1.5, MemoryPctPerHour: 10}
	r := Analyze(dir, sum, b)
	why := strings.Join(r.Reasons, ";")
	if r.Verdict != "inconclusive" || !strings.Contains(why, "certctl-server: memory not judged: 1m of load") || strings.Contains(why, "grows") {
		t.Fatalf("verdict %s %v", r.Verdict, r.Reasons)
	}
	for _, m := range r.Memory {
		if m.Service == Judged && (m.SecondHalf != nil || m.Breach || m.EndMB < 19) {
			t.Errorf("certctl-server %+v", m)
		}
	}
	// The same climb past the warm-up still breaches: the rule moves the start, not the budget.
	dir, sum = fakeRun(t, 9, func(float64) float64 { return 10 }, climb)
	if r := Analyze(dir, sum, budgets); r.Verdict != "breach" || !strings.Contains(strings.Join(r.Reasons, ";"), "certctl-server: memory still grows") {
		t.Fatalf("9 minutes of climb: verdict %s %v", r.Verdict, r.Reasons)
	}
}

// Too short a run for its windows judges nothing, and says so.
func TestTooShortIsInconclusive(t *testing.T) {
	dir, sum := fakeRun(t, 3, func(float64) float64 { return 10 }, func(float64) float64 { return 50 })
	r := Analyze(dir, sum, budgets)
	if r.Verdict != "inconclusive" || r.Scenarios[0].P95 != nil || !strings.Contains(strings.Join(r.Reasons, ";"), "at least three") {
		t.Fatalf("verdict %s %v", r.Verdict, r.Reasons)
	}
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"soak.json", "soak.txt", "soak-p95.svg", "soak-memory.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
