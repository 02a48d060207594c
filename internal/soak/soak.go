// Package soak reads a long run for what only time shows: latency that drifts, memory that keeps
// growing, tables that bloat and autovacuum that falls behind. It works on an ordinary run directory
// (k6's raw samples, server/containers.jsonl, server/pg_tables.jsonl) and judges two budgets: the p95
// drift of each scenario and the growth of certctl's memory.
package soak

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/samples"
)

const Schema = "certctl-loadtest/soak@1"

// Budgets are what a soak may do before it breaches.
type Budgets struct {
	Window time.Duration `json:"-"`
	// P95Drift is the most the fitted p95 may grow over the judged windows, as a ratio (1.5: +50 %).
	P95Drift float64 `json:"p95_drift"`
	// MemoryPctPerHour is the most certctl's memory may grow per hour over the run's second half, in
	// percent of its mean there.
	MemoryPctPerHour float64 `json:"memory_pct_per_hour"`
}

// Judged is the service whose memory is judged: certctl, the system under test. PostgreSQL's memory is
// reported beside it but not judged: its shared buffers fill as the tables are read, up to their bound.
const Judged = "certctl-server"

// MemoryWarmup is the load after which memory is judged at the earliest: the second half of a run, or
// from here if that is later. A cold certctl's memory climbs while its pools fill and its heap finds its
// size, and over a short second half that climb reads as thousands of percent an hour: 4.8 to 16.4 MB
// in its first 25 s at 10 list requests a second, and 17.2 to 19 MB over the 30 s after a 6-second
// climb at 40 a second (v2.1.7, 2026-12-01); a 40-second soak judged that as +254 MB/h and breached
// (CI, stop 64). Both recorded 30-minute soaks (docs/growth/soak/) climbed within their first 5-minute
// window and were flat or falling after it.
const MemoryWarmup = 5 * time.Minute

// Result is soak.json.
type Result struct {
	Schema    string     `json:"schema"`
	RunID     string     `json:"run_id"`
	WindowS   float64    `json:"window_s"`
	Budgets   Budgets    `json:"budgets"`
	LoadS     float64    `json:"load_s"`
	Verdict   string     `json:"verdict"` // steady, breach or inconclusive
	Reasons   []string   `json:"reasons,omitempty"`
	Scenarios []Scenario `json:"scenarios"`
	Memory    []Memory   `json:"memory"`
	Tables    []Table    `json:"tables"`
	// TablesNote says why there are no table figures (a run without the collector).
	TablesNote string `json:"tables_note,omitempty"`
}

// Window is one scenario's figures over one window of the load.
type Window struct {
	FromS    float64 `json:"from_s"`
	N        int     `json:"n"`
	P50      float64 `json:"p50_ms"`
	P95      float64 `json:"p95_ms"`
	Failed   int     `json:"failed"`
	Requests int     `json:"requests"`
}

// Trend is a least-squares line through figures over time, with its slope's 95 % interval.
type Trend struct {
	SlopePerH float64 `json:"slope_per_h"`
	Low       float64 `json:"slope_low"`
	High      float64 `json:"slope_high"`
	Start     float64 `json:"fitted_start"`
	End       float64 `json:"fitted_end"`
	Points    int     `json:"points"`
}

// Scenario is one scenario's drift.
type Scenario struct {
	Name    string   `json:"name"`
	Windows []Window `json:"windows"`
	// Judged is the p95's trend over the windows after the first (the warm-up), nil with fewer than three.
	P95    *Trend  `json:"p95_trend,omitempty"`
	Drift  float64 `json:"drift,omitempty"` // fitted end over fitted start
	Breach bool    `json:"breach"`
	Note   string  `json:"note,omitempty"`
}

// Memory is one service's memory over the run.
type Memory struct {
	Service   string     `json:"service"`
	WindowsMB []*float64 `json:"windows_mb"` // mean per window; null where none was sampled
	StartMB   float64    `json:"start_mb"`
	EndMB     float64    `json:"end_mb"`
	MaxMB     float64    `json:"max_mb"`
	// SecondHalf is the trend of the minute means (half-window means, if shorter) over the run's second half,
	// or after MemoryWarmup if that is later, in MB per hour; nil with fewer than three means there.
	SecondHalf *Trend  `json:"second_half,omitempty"`
	PctPerHour float64 `json:"pct_per_hour,omitempty"`
	Judged     bool    `json:"judged"`
	Breach     bool    `json:"breach"`
	// Note says why a judged service's memory has no trend.
	Note string `json:"note,omitempty"`
}

// Table is one table at the first and the last sample.
type Table struct {
	Name         string `json:"name"`
	StartBytes   int64  `json:"start_bytes"` // heap and indexes
	EndBytes     int64  `json:"end_bytes"`
	StartRows    int64  `json:"start_rows"`
	EndRows      int64  `json:"end_rows"`
	EndDead      int64  `json:"end_dead"`
	Autovacuums  int64  `json:"autovacuums"` // during the run
	Autoanalyzes int64  `json:"autoanalyzes"`
}

// Analyze reads the run in dir (its summary already loaded) and judges it.
func Analyze(dir string, sum results.Summary, b Budgets) Result {
	r := Result{Schema: Schema, RunID: sum.Run.RunID, WindowS: b.Window.Seconds(), Budgets: b}
	var t0, t1 time.Time
	type raw struct {
		name string
		pts  []samples.Point
	}
	var raws []raw
	for _, sc := range sum.Scenarios {
		if sc.Record == nil {
			continue
		}
		sel := samples.Parse(sc.Record.LatencyMetric)
		var pts []samples.Point
		samples.Read(filepath.Join(dir, "raw", sc.Name+".json.gz"), []string{sel.Name, "http_req_failed"}, func(p samples.Point) {
			if !p.Load() {
				return
			}
			if p.Metric == "http_req_failed" || sel.Matches(p.Tags) {
				pts = append(pts, p)
				if t0.IsZero() || p.Time.Before(t0) {
					t0 = p.Time
				}
				if p.Time.After(t1) {
					t1 = p.Time
				}
			}
		})
		raws = append(raws, raw{sc.Name, pts})
	}
	if t0.IsZero() {
		r.Verdict, r.Reasons = "inconclusive", []string{"no load samples in raw/: nothing to judge"}
		return r
	}
	r.LoadS = round(t1.Sub(t0).Seconds(), 1)
	w := b.Window.Seconds()
	// A last window shorter than half a window is left out: too few samples for its p95.
	n := int(math.Floor(r.LoadS / w))
	if rest := r.LoadS - float64(n)*w; rest >= w/2 {
		n++
	}
	for _, rw := range raws {
		sc := Scenario{Name: rw.name}
		lat := make([][]float64, n)
		failed, reqs := make([]int, n), make([]int, n)
		for _, p := range rw.pts {
			i := int(p.Time.Sub(t0).Seconds() / w)
			if i >= n {
				continue
			}
			if p.Metric == "http_req_failed" {
				reqs[i]++
				if p.Value != 0 {
					failed[i]++
				}
				continue
			}
			lat[i] = append(lat[i], p.Value)
		}
		var xs, ys []float64
		for i := 0; i < n; i++ {
			win := Window{FromS: float64(i) * w, N: len(lat[i]), Failed: failed[i], Requests: reqs[i]}
			if len(lat[i]) > 0 {
				win.P50 = round(samples.Quantile(lat[i], 0.5), 2)
				win.P95 = round(samples.Quantile(lat[i], 0.95), 2)
				if i > 0 {
					xs, ys = append(xs, (float64(i)+0.5)*w/3600), append(ys, win.P95)
				}
			}
			sc.Windows = append(sc.Windows, win)
		}
		if len(xs) < 3 {
			sc.Note = fmt.Sprintf("%d windows after the first: a drift needs at least three (a longer run or a shorter SOAK_WINDOW)", len(xs))
		} else {
			t := fit(xs, ys)
			sc.P95 = &t
			if t.Start > 0 {
				sc.Drift = round(t.End/t.Start, 3)
			}
			sc.Breach = sc.Drift > b.P95Drift && t.Low > 0
			if sc.Breach {
				r.Reasons = append(r.Reasons, fmt.Sprintf("%s: p95 drifted ×%g (%s → %s ms fitted, +%s ms/h [%s … %s]), over the budget ×%g",
					sc.Name, sc.Drift, num(t.Start), num(t.End), num(t.SlopePerH), num(t.Low), num(t.High), b.P95Drift))
			}
		}
		r.Scenarios = append(r.Scenarios, sc)
	}
	r.Memory = memory(filepath.Join(dir, "server", "containers.jsonl"), t0, n, w, b, &r.Reasons)
	r.Tables, r.TablesNote = tables(filepath.Join(dir, "server", "pg_tables.jsonl"))
	r.Verdict = "steady"
	if len(r.Reasons) > 0 {
		r.Verdict = "breach"
	} else {
		for _, sc := range r.Scenarios {
			if sc.P95 == nil {
				r.Verdict, r.Reasons = "inconclusive", append(r.Reasons, sc.Name+": "+sc.Note)
			}
		}
		judged, note := false, "no memory figures for "+Judged+" (server/containers.jsonl: CONTAINERS=false)"
		for _, m := range r.Memory {
			if m.Judged {
				judged, note = m.SecondHalf != nil, Judged+": "+m.Note
			}
		}
		if !judged {
			r.Verdict, r.Reasons = "inconclusive", append(r.Reasons, note)
		}
	}
	return r
}

type containerLine struct {
	At       time.Time `json:"at"`
	Service  string    `json:"service"`
	MemBytes int64     `json:"mem_bytes"`
}

func memory(path string, t0 time.Time, n int, w float64, b Budgets, reasons *[]string) []Memory {
	type pt struct{ s, mb float64 }
	by := map[string][]pt{}
	readLines(path, func(line []byte) {
		var l containerLine
		if json.Unmarshal(line, &l) != nil || l.Service == "" || l.MemBytes <= 0 {
			return
		}
		s := l.At.Sub(t0).Seconds()
		if s < 0 || s >= float64(n)*w {
			return
		}
		by[l.Service] = append(by[l.Service], pt{s, float64(l.MemBytes) / (1 << 20)})
	})
	var names []string
	for k := range by {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Memory
	for _, name := range names {
		pts := by[name]
		sort.Slice(pts, func(i, j int) bool { return pts[i].s < pts[j].s })
		m := Memory{Service: name, Judged: name == Judged, StartMB: round(pts[0].mb, 1), EndMB: round(pts[len(pts)-1].mb, 1)}
		sum, cnt := make([]float64, n), make([]int, n)
		minSum, minCnt := map[int]float64{}, map[int]int{}
		half := math.Max(float64(n)*w/2, MemoryWarmup.Seconds())
		// Minute means, or half-window means when the windows are shorter: a short soak still gets points.
		bin := math.Min(60, w/2)
		for _, p := range pts {
			i := int(p.s / w)
			sum[i] += p.mb
			cnt[i]++
			m.MaxMB = math.Max(m.MaxMB, round(p.mb, 1))
			if p.s >= half {
				minSum[int(p.s/bin)] += p.mb
				minCnt[int(p.s/bin)]++
			}
		}
		for i := 0; i < n; i++ {
			var v *float64
			if cnt[i] > 0 {
				mb := round(sum[i]/float64(cnt[i]), 1)
				v = &mb
			}
			m.WindowsMB = append(m.WindowsMB, v)
		}
		var xs, ys []float64
		for k, s := range minSum {
			xs, ys = append(xs, (float64(k)+0.5)*bin/3600), append(ys, s/float64(minCnt[k]))
		}
		if len(xs) < 3 && m.Judged {
			m.Note = fmt.Sprintf("memory not judged: %s of load, and it is judged over the second half, from %s at the earliest (MemoryWarmup: a cold certctl's memory still climbs before), in at least three means of %s; a soak of %s or more judges it",
				dur(float64(n)*w), dur(MemoryWarmup.Seconds()), dur(bin), dur(MemoryWarmup.Seconds()+3*bin))
		} else if len(xs) >= 3 {
			t := fit(xs, ys)
			m.SecondHalf = &t
			mean := 0.0
			for _, y := range ys {
				mean += y
			}
			mean /= float64(len(ys))
			m.PctPerHour = round(100*t.SlopePerH/mean, 1)
			if m.Judged && m.PctPerHour > b.MemoryPctPerHour && t.Low > 0 {
				m.Breach = true
				*reasons = append(*reasons, fmt.Sprintf("%s: memory still grows in the run's second half, +%s MB/h [%s … %s] (%g %%/h of its %s MB), over the budget %g %%/h",
					name, num(t.SlopePerH), num(t.Low), num(t.High), m.PctPerHour, num(mean), b.MemoryPctPerHour))
			}
		}
		out = append(out, m)
	}
	return out
}

type tablesLine struct {
	At     time.Time `json:"at"`
	Tables []struct {
		Name         string `json:"name"`
		TableBytes   int64  `json:"table_bytes"`
		IndexBytes   int64  `json:"index_bytes"`
		Live         int64  `json:"live"`
		Dead         int64  `json:"dead"`
		Autovacuums  int64  `json:"autovacuums"`
		Autoanalyzes int64  `json:"autoanalyzes"`
	} `json:"tables"`
}

func tables(path string) ([]Table, string) {
	var first, last *tablesLine
	readLines(path, func(line []byte) {
		var l tablesLine
		if json.Unmarshal(line, &l) != nil {
			return
		}
		if first == nil {
			first = &l
		}
		last = &l
	})
	if first == nil {
		return nil, "no table samples (server/pg_tables.jsonl): the collector did not run (DIAGNOSIS=false) or could not reach the database"
	}
	start := map[string]int{}
	for i, t := range first.Tables {
		start[t.Name] = i
	}
	var out []Table
	for _, t := range last.Tables {
		tb := Table{Name: t.Name, EndBytes: t.TableBytes + t.IndexBytes, EndRows: t.Live, EndDead: t.Dead}
		if i, ok := start[t.Name]; ok {
			s := first.Tables[i]
			tb.StartBytes, tb.StartRows = s.TableBytes+s.IndexBytes, s.Live
			tb.Autovacuums, tb.Autoanalyzes = t.Autovacuums-s.Autovacuums, t.Autoanalyzes-s.Autoanalyzes
		}
		out = append(out, tb)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].EndBytes > out[j].EndBytes })
	return out, ""
}

// fit is y = a + b·x by least squares (x in hours), with b's 95 % interval from Student's t.
func fit(xs, ys []float64) Trend {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	b := sxy / sxx
	a := my - b*mx
	var sse float64
	for i := range xs {
		e := ys[i] - (a + b*xs[i])
		sse += e * e
	}
	se := math.Sqrt(sse / (n - 2) / sxx)
	half := tQuantile975(int(n)-2) * se
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return Trend{SlopePerH: round(b, 3), Low: round(b-half, 3), High: round(b+half, 3),
		Start: round(a+b*lo, 2), End: round(a+b*hi, 2), Points: len(xs)}
}

// tQuantile975 is Student's t at 97.5 % for df degrees of freedom (a table to 30, the normal's beyond).
func tQuantile975(df int) float64 {
	table := []float64{math.Inf(1), 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df < 1 {
		return math.Inf(1)
	}
	if df < len(table) {
		return table[df]
	}
	return 1.96
}

func readLines(path string, fn func([]byte)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		fn(sc.Bytes())
	}
}

func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}
