package weekly

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"certctl-loadtest/internal/chart"
	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/results"
)

// Week is one workflow run's results: its runs' directories by label.
type Week struct {
	Label   string            `json:"label"` // "#41 2026-11-16", or "this run"
	At      time.Time         `json:"at"`
	HeadSHA string            `json:"head_sha,omitempty"`
	Runs    map[string]string `json:"runs"` // label → run directory
}

// LoadHistory reads what Fetch wrote, oldest week first.
func LoadHistory(dir string) ([]Week, error) {
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return nil, err
	}
	var idx Index
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "index.json"), err)
	}
	var weeks []Week
	for i := len(idx.Runs) - 1; i >= 0; i-- {
		r := idx.Runs[i]
		if r.Skipped != "" {
			continue
		}
		w, err := LoadWeek(filepath.Join(dir, r.Dir), fmt.Sprintf("#%d %s", r.Number, r.CreatedAt.Format("2006-01-02")), r.CreatedAt)
		if err != nil {
			return nil, err
		}
		w.HeadSHA = r.HeadSHA
		weeks = append(weeks, w)
	}
	return weeks, nil
}

// LoadWeek reads a folder of artifacts (loadtest-<label>-<id>-<attempt>/, as downloaded).
func LoadWeek(dir, label string, at time.Time) (Week, error) {
	w := Week{Label: label, At: at, Runs: map[string]string{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return w, err
	}
	for _, e := range entries {
		if l := Label(e.Name()); l != "" && e.IsDir() {
			w.Runs[l] = filepath.Join(dir, e.Name())
		}
	}
	return w, nil
}

// Trend is each scenario's figures over the weeks: trend.json.
type Trend struct {
	Weeks []string `json:"weeks"`
	Rows  []Row    `json:"rows"`
}

// Row is one scenario of one run label; a week without it is null.
type Row struct {
	Run      string     `json:"run"`
	Scenario string     `json:"scenario"`
	P50      []*float64 `json:"p50_ms"`
	P95      []*float64 `json:"p95_ms"`
	P99      []*float64 `json:"p99_ms"`
	Achieved []*float64 `json:"achieved_per_s"`
	Target   []*float64 `json:"target_per_s"`
	Status   []string   `json:"status"`
}

// Build reads every week's summaries.
func Build(weeks []Week) Trend {
	t := Trend{Weeks: []string{}, Rows: []Row{}}
	rows := map[string]*Row{}
	n := len(weeks)
	for i, w := range weeks {
		t.Weeks = append(t.Weeks, w.Label)
		for label, dir := range w.Runs {
			s, err := readSummary(dir)
			if err != nil {
				continue
			}
			for _, sc := range s.Scenarios {
				key := label + "/" + sc.Name
				r := rows[key]
				if r == nil {
					r = &Row{Run: label, Scenario: sc.Name, P50: make([]*float64, n), P95: make([]*float64, n), P99: make([]*float64, n),
						Achieved: make([]*float64, n), Target: make([]*float64, n), Status: make([]string, n)}
					rows[key] = r
				}
				r.Status[i] = sc.Status
				if rec := sc.Record; rec != nil {
					r.P50[i], r.P95[i], r.P99[i] = ptr(rec.LatencyMS.P50), ptr(rec.LatencyMS.P95), ptr(rec.LatencyMS.P99)
					r.Achieved[i], r.Target[i] = ptr(rec.AchievedRatePerS), ptr(rec.TargetRatePerS)
				}
			}
		}
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, *r)
	}
	sort.Slice(t.Rows, func(i, j int) bool {
		if t.Rows[i].Run != t.Rows[j].Run {
			return t.Rows[i].Run < t.Rows[j].Run
		}
		return t.Rows[i].Scenario < t.Rows[j].Scenario
	})
	return t
}

func readSummary(dir string) (results.Summary, error) {
	var s results.Summary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

func ptr(v float64) *float64 { return &v }

const bars = "▁▂▃▄▅▆▇█"

// Sparkline draws values as bars between their minimum and maximum; a missing week is a space.
func Sparkline(vals []*float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if v != nil {
			lo, hi = math.Min(lo, *v), math.Max(hi, *v)
		}
	}
	r := []rune(bars)
	var b strings.Builder
	for _, v := range vals {
		switch {
		case v == nil:
			b.WriteRune(' ')
		case hi == lo:
			b.WriteRune(r[3])
		default:
			b.WriteRune(r[int(math.Round((*v-lo)/(hi-lo)*float64(len(r)-1)))])
		}
	}
	return b.String()
}

func last(vals []*float64) string {
	if len(vals) == 0 || vals[len(vals)-1] == nil {
		return "–"
	}
	return chart.Num(*vals[len(vals)-1])
}

func first(vals []*float64) string {
	for _, v := range vals {
		if v != nil {
			return chart.Num(*v)
		}
	}
	return "–"
}

// TrendMarkdown is the table of the job summary.
func TrendMarkdown(t Trend) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| run | scenario | p95 ms over %d weeks | first → this week | achieved / target per s | status |\n|---|---|---|---|---|---|\n", len(t.Weeks))
	for _, r := range t.Rows {
		status := r.Status[len(r.Status)-1]
		if status == "" {
			status = "not run"
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s → %s | %s / %s | %s |\n", r.Run, strings.ReplaceAll(r.Scenario, "_", `\_`), Sparkline(r.P95), first(r.P95), last(r.P95), last(r.Achieved), last(r.Target), status)
	}
	return b.String()
}

// SVGs are the plots: p95 and achieved rate per scenario over the weeks.
func SVGs(t Trend) map[string]string {
	ticks := make([]chart.Tick, len(t.Weeks))
	for i, w := range t.Weeks {
		ticks[i] = chart.Tick{X: float64(i), Label: w}
	}
	plot := func(title, y string, get func(Row) []*float64, logY bool) string {
		c := chart.Chart{Title: title, XLabel: "weekly run", YLabel: y, XTicks: ticks, LogY: logY}
		for _, r := range t.Rows {
			s := chart.Series{Name: r.Run + "/" + r.Scenario}
			for i, v := range get(r) {
				y := math.NaN()
				if v != nil {
					y = *v
				}
				s.Points = append(s.Points, chart.Point{X: float64(i), Y: y})
			}
			c.Series = append(c.Series, s)
		}
		return chart.SVG(c)
	}
	return map[string]string{
		"trend-p95.svg":  plot("p95 latency per scenario, week by week", "ms (log)", func(r Row) []*float64 { return r.P95 }, true),
		"trend-rate.svg": plot("achieved rate per scenario, week by week", "per second", func(r Row) []*float64 { return r.Achieved }, false),
	}
}

// Comparison is one of this week's runs against an earlier one.
type Comparison struct {
	Run       string          `json:"run"`
	Against   string          `json:"against"` // "last week (#41 …)" or "baseline docs/baselines/weekly/all.json"
	Verdict   string          `json:"verdict"`
	Regressed []string        `json:"regressed"`
	Warnings  []string        `json:"warnings"`
	Result    *compare.Result `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
}
