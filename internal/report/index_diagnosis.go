package report

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"

	"certctl-loadtest/internal/diagnosis"
)

// uplotVersion is the uPlot vendored in assets/uplot (its README says how to update it).
const uplotVersion = "1.6.32"

// The page inlines these rather than linking them: a run's page is read from file:// or an unpacked
// artifact, and must load nothing.
var (
	//go:embed assets/uplot/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uplot/uPlot.min.css
	uplotCSS string
	//go:embed assets/charts.js
	chartsJS string
)

// How many rows of each database table the page shows; summary.json holds them all.
const (
	indexTopWaits      = 8
	indexTopQueries    = 5
	indexTopStatements = 5
	// A statement longer than this is cut on the page; its cell's title holds it whole.
	indexQueryRunes = 240
)

// indexDiagnosis is index.html's Diagnosis section, its figures formatted.
type indexDiagnosis struct {
	Window     string
	Findings   []indexFinding
	Sources    []indexCollector
	Charts     []indexChart
	ChartNote  string
	CPUNote    string
	Containers []indexContainer
	Database   string
	Waits      []indexShare
	MoreWaits  int
	Queries    []indexQuery
	MoreQs     int
	Statements []indexStatement
	MoreStmts  int
}

// indexFinding is a finding's sentence in parts: the rules quote a statement or a name in backticks,
// which the page sets as code.
type indexFinding struct {
	Kind  string
	Parts []indexText
}

type indexText struct {
	Text string
	Code bool
}

type indexCollector struct {
	Name, Status, Reason string
	OK                   bool
}

// indexChart is one chart's place on the page: NoData says why it has none, and then the page says
// so in its place.
type indexChart struct{ ID, Title, Unit, NoData string }

type indexContainer struct{ Service, Mean, P95, Max, Mem string }

type indexShare struct {
	Name, Share string
	Samples     int
}

type indexQuery struct{ Query, Full, Share, Waits string }

type indexStatement struct{ Query, Full, Calls, Total, Mean, Rows, Share string }

// chartData is the page's lt-series block, what assets/charts.js draws: every chart's lines share T.
type chartData struct {
	T      []float64    `json:"t"`
	Charts []chartLines `json:"charts"`
}

type chartLines struct {
	ID    string           `json:"id"`
	Unit  string           `json:"unit"`
	Lines []diagnosis.Line `json:"lines"`
}

// indexCharts are the four charts, in the order a reader follows a stall: the load fell short, latency
// rose, something was busy, the database waited. source is the collector the chart's lines come from
// (none: k6's own samples), whose reason for having no data is the chart's.
var indexCharts = []struct {
	id, title, unit, source, empty string
	lines                          func(*diagnosis.Series) []diagnosis.Line
}{
	{"rate", "Achieved rate per scenario", "iterations/s", "", "no scenario's raw samples counted an iteration",
		func(s *diagnosis.Series) []diagnosis.Line { return s.Rate }},
	{"p95", "p95 latency per scenario", "ms", "", "no scenario's raw samples held its latency metric",
		func(s *diagnosis.Series) []diagnosis.Line { return s.P95MS }},
	{"cpu", "CPU per container", "% of one CPU", "containers", "no container's CPU was sampled",
		func(s *diagnosis.Series) []diagnosis.Line { return s.CPU }},
	{"waits", "Database wait classes", "mean active backends", "postgres", "no active database backend was sampled",
		func(s *diagnosis.Series) []diagnosis.Line { return s.Waits }},
}

// indexDiagnosisSection is the page's Diagnosis section and the data of its charts, nil when no chart has
// a line to draw: then the page carries no script at all.
func indexDiagnosisSection(d *diagnosis.Diagnosis) (*indexDiagnosis, *chartData) {
	if d == nil {
		return nil, nil
	}
	out := &indexDiagnosis{Window: indexWindow(d.Window)}
	for _, f := range d.Findings {
		out.Findings = append(out.Findings, indexFinding{f.Kind, indexSentence(f.Sentence)})
	}
	unavailable := map[string]string{}
	for _, s := range d.Sources {
		status := s.Status
		if s.Status == "ok" && s.Samples > 0 {
			status = fmt.Sprintf("ok, %d samples", s.Samples)
		}
		out.Sources = append(out.Sources, indexCollector{Name: s.Name, Status: status, Reason: s.Reason, OK: s.Status == "ok"})
		if s.Status != "ok" {
			unavailable[s.Name] = fmt.Sprintf("%s %s: %s", s.Name, s.Status, orUnknown(s.Reason))
		}
	}

	var data *chartData
	for _, c := range indexCharts {
		chart := indexChart{ID: c.id, Title: c.title, Unit: c.unit}
		var lines []diagnosis.Line
		if d.Series != nil && len(d.Series.T) > 0 {
			lines = indexDrawable(c.lines(d.Series), len(d.Series.T))
		}
		switch {
		case len(lines) > 0:
			if data == nil {
				data = &chartData{T: d.Series.T}
			}
			data.Charts = append(data.Charts, chartLines{c.id, c.unit, lines})
		case unavailable[c.source] != "":
			chart.NoData = unavailable[c.source]
		case d.Series == nil || len(d.Series.T) == 0:
			chart.NoData = "the diagnosis holds no time series (summary.json has no diagnosis.series)"
		default:
			chart.NoData = c.empty
		}
		out.Charts = append(out.Charts, chart)
	}
	if data != nil {
		out.ChartNote = "Seconds into the load on every chart"
		if d.Series.StepS > 0 {
			out.ChartNote += fmt.Sprintf(", one point per %g s", d.Series.StepS)
		}
		out.ChartNote += ", gaps where nothing was sampled. The cursor shows on every chart at once; drag across one to zoom them all, double-click to zoom out."
	}

	if len(d.Containers) > 0 {
		out.CPUNote = "CPU in % of one CPU"
		if d.HostCPUs > 0 {
			out.CPUNote += fmt.Sprintf(": the host has %d CPUs, %d %% in all", d.HostCPUs, d.HostCPUs*100)
		}
		out.CPUNote += "; over the window, busiest first."
	}
	for _, c := range d.Containers {
		out.Containers = append(out.Containers, indexContainer{c.Service, indexPct(c.CPUMeanPct), indexPct(c.CPUP95Pct), indexPct(c.CPUMaxPct),
			fmt.Sprintf("%.0f", float64(c.MemMaxBytes)/(1<<20))})
	}
	switch {
	case d.ActivitySample > 0 && len(d.Waits) > 0:
		out.Database = fmt.Sprintf("%.2f active backends on average over %d samples of pg_stat_activity.", d.ActiveBackends, d.ActivitySample)
	case d.ActivitySample > 0:
		out.Database = fmt.Sprintf("No active backend in %d samples of pg_stat_activity.", d.ActivitySample)
	}

	waits := indexByShare(d.Waits, func(w diagnosis.Share) float64 { return w.Share })
	for i, w := range waits {
		if i == indexTopWaits {
			out.MoreWaits = len(waits) - i
			break
		}
		out.Waits = append(out.Waits, indexShare{w.Name, indexSharePct(w.Share), w.Samples})
	}
	queries := indexByShare(d.Queries, func(q diagnosis.QueryShare) float64 { return q.Share })
	for i, q := range queries {
		if i == indexTopQueries {
			out.MoreQs = len(queries) - i
			break
		}
		var ws []string
		for _, w := range indexByShare(q.Waits, func(w diagnosis.Share) float64 { return w.Share }) {
			ws = append(ws, w.Name+" "+indexSharePct(w.Share))
		}
		short, full := indexCutQuery(q.Query)
		out.Queries = append(out.Queries, indexQuery{short, full, indexSharePct(q.Share), strings.Join(ws, ", ")})
	}
	stmts := indexByShare(d.Statements, func(s diagnosis.Statement) float64 { return s.TimeShare })
	for i, s := range stmts {
		if i == indexTopStatements {
			out.MoreStmts = len(stmts) - i
			break
		}
		short, full := indexCutQuery(s.Query)
		out.Statements = append(out.Statements, indexStatement{short, full, fmt.Sprintf("%.0f", s.Calls), ms(s.TotalMS), ms(s.MeanMS),
			fmt.Sprintf("%.0f", s.Rows), indexSharePct(s.TimeShare)})
	}
	return out, data
}

// indexSentence splits a sentence at its backticks; an unpaired one is left as it stands.
func indexSentence(s string) []indexText {
	segs := strings.Split(s, "`")
	if len(segs)%2 == 0 {
		return []indexText{{Text: s}}
	}
	var out []indexText
	for i, seg := range segs {
		if seg != "" {
			out = append(out, indexText{seg, i%2 == 1})
		}
	}
	return out
}

// indexDrawable are the lines with something to draw, each exactly n values long (uPlot wants every line
// as long as the time axis), a value JSON cannot carry (NaN, ±Inf) a gap.
func indexDrawable(lines []diagnosis.Line, n int) []diagnosis.Line {
	var out []diagnosis.Line
	for _, l := range lines {
		vs := make([]*float64, n)
		some := false
		for i := 0; i < n && i < len(l.Values); i++ {
			if v := l.Values[i]; v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
				vs[i], some = v, true
			}
		}
		if some {
			out = append(out, diagnosis.Line{Name: l.Name, Values: vs})
		}
	}
	return out
}

// indexByShare is a copy of xs, largest share first: the page shows the top few, whatever order the
// summary came in.
func indexByShare[T any](xs []T, share func(T) float64) []T {
	out := append([]T(nil), xs...)
	sort.SliceStable(out, func(i, j int) bool { return share(out[i]) > share(out[j]) })
	return out
}

func indexWindow(w diagnosis.Window) string {
	basis := w.Basis
	if basis == "" || basis == "load" {
		basis = "the load"
	}
	if w.From.IsZero() || w.To.IsZero() {
		return "Over " + basis + "."
	}
	from, to := w.From.UTC(), w.To.UTC()
	layout := "15:04:05"
	if from.YearDay() != to.YearDay() || from.Year() != to.Year() {
		layout = "2006-01-02 15:04:05"
	}
	return fmt.Sprintf("Over %s: %s to %s UTC (%s).", basis, from.Format("2006-01-02 15:04:05"), to.Format(layout), to.Sub(from).Round(time.Second))
}

// indexPct is a share of one CPU: whole percents, but a tenth below 10 % (an idle service is not 0 %).
func indexPct(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func indexSharePct(share float64) string { return indexPct(share*100) + " %" }

func indexCutQuery(q string) (short, full string) {
	full = strings.Join(strings.Fields(q), " ")
	if r := []rune(full); len(r) > indexQueryRunes {
		return string(r[:indexQueryRunes]) + "…", full
	}
	return full, ""
}

// indexScripts are the page's scripts: uPlot and the init that draws the charts, when there are any.
func indexScripts(data *chartData) []template.JS {
	if data == nil {
		return nil
	}
	return []template.JS{template.JS(uplotJS), template.JS(chartsJS)}
}

// contentSecurityPolicy admits exactly the page's own inline scripts, by the SHA-256 of each one's text
// as it stands between <script> and </script>: a script added to the page by anything else, or one of
// these altered, does not run. Styles stay inline (the page's and uPlot's), and nothing else is allowed.
func contentSecurityPolicy(scripts []template.JS) template.HTMLAttr {
	policy := "default-src 'none'; style-src 'unsafe-inline'"
	if len(scripts) > 0 {
		policy += "; script-src"
		for _, s := range scripts {
			sum := sha256.Sum256([]byte(s))
			policy += " 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		}
	}
	// An attribute whole, so the policy's quotes read as quotes in the page's source.
	return template.HTMLAttr(`content="` + policy + `"`)
}
