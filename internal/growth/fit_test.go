package growth

import (
	"certctl-loadtest/internal/diagnosis"
	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/results"
	"math"
	"strings"
	"testing"
)

// Each class is read from points that grow as it says, with a few percent of noise: flat, by a constant
// amount per tenfold (log), as a root (sublinear), in proportion (linear) and as the square (worse).
func TestFitClasses(t *testing.T) {
	sizes := []float64{1e3, 1e4, 1e5, 1e6}
	noise := []float64{1.03, 0.98, 1.02, 0.97}
	for _, c := range []struct {
		name string
		f    func(n float64) float64
		want string
	}{
		{"flat", func(n float64) float64 { return 12 }, Constant},
		{"log", func(n float64) float64 { return 10 + 8*math.Log10(n) }, Logarithmic},
		{"root", func(n float64) float64 { return 0.5 * math.Sqrt(n) }, Sublinear},
		{"linear", func(n float64) float64 { return 2 + n/1000 }, Linear},
		{"square", func(n float64) float64 { return n * n / 1e9 }, Worse},
	} {
		var ps []Point
		for i, n := range sizes {
			ps = append(ps, Point{Size: n, P50: c.f(n) * noise[i]})
		}
		f, err := FitPoints(ps, func(p Point) float64 { return p.P50 })
		if err != nil || f.Class != c.want {
			t.Errorf("%s: %+v, %v; want %s", c.name, f, err, c.want)
		}
	}
}

// Fewer than three sizes with a figure is no growth: said, not guessed.
func TestFitNeedsThreeSizes(t *testing.T) {
	_, err := FitPoints([]Point{{Size: 1e3, P50: 1}, {Size: 1e4, P50: 2}, {Size: 1e5}}, func(p Point) float64 { return p.P50 })
	if err == nil {
		t.Error("two sizes were fitted")
	}
}

// A growth's record from its runs: each scenario's p50/p95 per size, the fit read from them, the runs
// listed; a size that left no summary is listed with its problem and adds no point.
func TestResultText(t *testing.T) {
	r := Result{Schema: Schema, Sizes: []float64{1e3, 1e4, 1e5, 1e6}, Scenarios: []string{"list_certificates"}}
	for i, n := range r.Sizes {
		st := Step{Size: n, RunID: "g-" + SizeText(n), RunDir: "g-" + SizeText(n), TookS: 90}
		if i == 3 {
			st.Problem, st.ExitCode = "no summary.json", 3
			r.Add(st, nil)
			continue
		}
		r.Add(st, nil)
		r.op("list_certificates").Points = append(r.op("list_certificates").Points, Point{Size: n, P50: 2 + n/1000, P95: 4 + 2*n/1000})
	}
	r.Fit()
	txt := Text(r)
	for _, want := range []string{"list_certificates  3 / 6", "102 / 204", "sublinear (×5.83 a tenfold, b 0.77)", "1M: g-1M (exit 3: no summary.json)"} {
		if !strings.Contains(txt, want) {
			t.Errorf("growth.txt lacks %q:\n%s", want, txt)
		}
	}
	if svg := SVG(r); !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, ">100k<") {
		t.Errorf("growth.svg: %.200s", svg)
	}
}

// The statements the diagnosis saw at each size: the busiest at the largest kept, the one whose busy
// backends grew most first, a statement absent at a size counted as zero there.
func TestStatementsThatGrow(t *testing.T) {
	r := Result{Schema: Schema, Sizes: []float64{1e3, 1e4, 1e5}}
	shares := []map[string]float64{
		{"SELECT count(*) FROM managed_certificates": 0.1, "INSERT INTO audit_events": 0.6},
		{"SELECT count(*) FROM managed_certificates": 0.3, "INSERT INTO audit_events": 0.5, "SELECT … FROM certificate_versions WHERE serial_number = $1": 0.1},
		{"SELECT count(*) FROM managed_certificates": 0.5, "INSERT INTO audit_events": 0.2, "SELECT … FROM certificate_versions WHERE serial_number = $1": 0.25},
	}
	for i, n := range r.Sizes {
		d := &diagnosis.Diagnosis{ActiveBackends: 2}
		for q, s := range shares[i] {
			d.Queries = append(d.Queries, diagnosis.QueryShare{Query: q, Share: s})
		}
		r.Add(Step{Size: n}, &results.Summary{Diagnosis: d})
	}
	r.Fit()
	if len(r.Statements) != 3 || r.Statements[0].Query != "SELECT count(*) FROM managed_certificates" {
		t.Fatalf("%+v", r.Statements)
	}
	if got := r.Statements[0].Busy; got[0] != 0.2 || got[2] != 1 {
		t.Errorf("busy %v; want 0.2 … 1 (share × 2 active backends)", got)
	}
	for _, st := range r.Statements {
		if strings.Contains(st.Query, "serial_number") && st.Busy[0] != 0 {
			t.Errorf("absent at 1k: %v", st.Busy)
		}
	}
	if txt := Text(r); !strings.Contains(txt, "busiest statements") || !strings.Contains(txt, "0.2  0.6  1\n") {
		t.Errorf("growth.txt:\n%s", txt)
	}
}

// index.html: the table, the plot inline, the statements and a link to each size's run page; nothing
// from the network.
func TestIndexGolden(t *testing.T) {
	r := Result{Schema: Schema, Sizes: []float64{1e3, 1e4, 1e5}, Scenarios: []string{"list_certificates"}}
	for i, n := range r.Sizes {
		st := Step{Size: n, RunID: "g-" + SizeText(n), RunDir: "g-" + SizeText(n), TookS: 90}
		d := &diagnosis.Diagnosis{ActiveBackends: 1, Queries: []diagnosis.QueryShare{{Query: "SELECT count(*)\n  FROM managed_certificates", Share: 0.2 * float64(i+1)}}}
		r.Add(st, &results.Summary{Diagnosis: d})
		r.op("list_certificates").Points = append(r.op("list_certificates").Points, Point{Size: n, P50: 2 + n/1000, P95: 4 + 2*n/1000})
	}
	r.Fit()
	page, err := Index(r)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "index.html", page)
	if strings.Contains(page, "http://") && !strings.Contains(page, "http://www.w3.org/2000/svg") {
		t.Error("index.html links the network")
	}
}

// docs/growth.md's table of recorded sweeps: each build's row per operation, the sizes of every sweep,
// and — where a build has no answered request at a size.
func TestMarkdownGolden(t *testing.T) {
	sweep := func(slope float64, sizes ...float64) Result {
		r := Result{Schema: Schema, Sizes: sizes, Scenarios: []string{"list_certificates", "stats_summary"}}
		for _, n := range sizes {
			r.Add(Step{Size: n, RunID: "g-" + SizeText(n), RunDir: "g-" + SizeText(n), TookS: 90}, nil)
			r.op("list_certificates").Points = append(r.op("list_certificates").Points, Point{Size: n, P50: 2 + slope*n/1000, P95: 4 + 2*slope*n/1000, N: 100})
			// Past 10k the summary answered nothing: Add keeps no point.
			if n < 1e5 {
				r.op("stats_summary").Points = append(r.op("stats_summary").Points, Point{Size: n, P50: 50 * n / 1000, P95: 60 * n / 1000, N: 4})
			}
		}
		r.Fit()
		return r
	}
	golden.Check(t, "markdown.md", Markdown([]Recorded{
		{Build: "main-151107c", Result: sweep(2, 1e3, 1e4, 1e5)},
		{Build: "v2.1.7", Result: sweep(1, 1e3, 1e4, 1e5, 1e6)},
	}))
}

// A size where a scenario answered no request (every call timed out) gives it no point: a p50 of 0 is
// no latency, and the fit uses the sizes that answered.
func TestAddSkipsUnanswered(t *testing.T) {
	var r Result
	zero, some := 0.0, 40.0
	r.Add(Step{Size: 1e5}, &results.Summary{Scenarios: []results.Scenario{
		{Name: "stats_summary", Record: &results.Record{LatencySamples: &zero}},
		{Name: "list_certificates", Record: &results.Record{LatencySamples: &some, LatencyMS: results.Latency{P50: 61, P95: 270}}},
	}})
	if len(r.Ops) != 1 || r.Ops[0].Name != "list_certificates" || r.Ops[0].Points[0].N != 40 {
		t.Errorf("ops: %+v", r.Ops)
	}
}
