package growth

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"certctl-loadtest/internal/chart"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

const Schema = "certctl-loadtest/growth@1"

// Step is one size's run.
type Step struct {
	Size     float64 `json:"size"`
	RunID    string  `json:"run_id"`
	RunDir   string  `json:"run_dir"`
	ExitCode int     `json:"exit_code"`
	TookS    float64 `json:"took_s"`
	Problem  string  `json:"problem,omitempty"` // a run that left no summary
}

// Op is one operation of the mix (a scenario) across the sizes.
type Op struct {
	Name   string  `json:"name"`
	Points []Point `json:"points"`
	P50    *Fit    `json:"p50_fit,omitempty"`
	P95    *Fit    `json:"p95_fit,omitempty"`
	// NoFit says why a figure has no fit (fewer than three sizes).
	NoFit string `json:"no_fit,omitempty"`
}

// Result is growth.json.
type Result struct {
	Schema    string    `json:"schema"`
	Sizes     []float64 `json:"sizes"`
	Scenarios []string  `json:"scenarios"`
	Steps     []Step    `json:"steps"`
	Ops       []Op      `json:"ops"`
	// Statements are the database statements the load kept busiest, each with how many backends it kept
	// busy on average at every size (the diagnosis's share of active backend samples × active backends);
	// the first is the one whose busy backends grew most from the smallest size to the largest.
	Statements []StatementGrowth `json:"statements,omitempty"`

	busy map[string]map[float64][2]float64 // statement → size → busy backends, share
}

// StatementGrowth is one statement across the sizes.
type StatementGrowth struct {
	Query string `json:"query"`
	// Busy is the mean backends running it at each size of Sizes (0 where it was not sampled).
	Busy []float64 `json:"busy_backends"`
	// Share is its share of the active backend samples at each size.
	Share []float64 `json:"share"`
}

// maxStatements is how many statements growth.json keeps.
const maxStatements = 5

// Add records one size's run and its scenarios' figures.
func (r *Result) Add(st Step, sum *results.Summary) {
	r.Steps = append(r.Steps, st)
	if sum == nil {
		return
	}
	if d := sum.Diagnosis; d != nil {
		if r.busy == nil {
			r.busy = map[string]map[float64][2]float64{}
		}
		for _, q := range d.Queries {
			if r.busy[q.Query] == nil {
				r.busy[q.Query] = map[float64][2]float64{}
			}
			r.busy[q.Query][st.Size] = [2]float64{q.Share * d.ActiveBackends, q.Share}
		}
	}
	for _, sc := range sum.Scenarios {
		if sc.Record == nil {
			continue
		}
		rec := sc.Record
		n := 0
		if rec.LatencySamples != nil {
			n = int(*rec.LatencySamples)
			// No request answered at this size: no latency to plot or fit (its run says why).
			if n == 0 {
				continue
			}
		}
		r.op(sc.Name).Points = append(r.op(sc.Name).Points, Point{Size: st.Size, P50: rec.LatencyMS.P50, P95: rec.LatencyMS.P95, N: n})
	}
}

func (r *Result) op(name string) *Op {
	for i := range r.Ops {
		if r.Ops[i].Name == name {
			return &r.Ops[i]
		}
	}
	r.Ops = append(r.Ops, Op{Name: name})
	return &r.Ops[len(r.Ops)-1]
}

// Fit fits every operation's p50 and p95 against the size, and ranks the statements.
func (r *Result) Fit() {
	r.rankStatements()
	sort.Slice(r.Ops, func(i, j int) bool { return r.Ops[i].Name < r.Ops[j].Name })
	for i := range r.Ops {
		op := &r.Ops[i]
		sort.Slice(op.Points, func(a, b int) bool { return op.Points[a].Size < op.Points[b].Size })
		op.P50, op.P95, op.NoFit = nil, nil, ""
		if f, err := FitPoints(op.Points, func(p Point) float64 { return p.P50 }); err == nil {
			op.P50 = &f
		} else {
			op.NoFit = err.Error()
		}
		if f, err := FitPoints(op.Points, func(p Point) float64 { return p.P95 }); err == nil {
			op.P95 = &f
		}
	}
}

// SizeText is a size as the tables say it: 1k, 100k, 1M.
func SizeText(n float64) string {
	switch {
	case n >= 1e6 && math.Mod(n, 1e6) == 0:
		return fmt.Sprintf("%gM", n/1e6)
	case n >= 1e3 && math.Mod(n, 1e3) == 0:
		return fmt.Sprintf("%gk", n/1e3)
	}
	return fmt.Sprintf("%g", n)
}

func fitText(f *Fit) string {
	if f == nil {
		return "—"
	}
	return fmt.Sprintf("%s (×%g a tenfold, b %.2f)", f.Class, f.PerDecade, f.Exponent)
}

// Text is growth.txt: per operation, p50/p95 at each size and the growth read from them.
func Text(r Result) string {
	var b strings.Builder
	var sizes []string
	for _, s := range r.Sizes {
		sizes = append(sizes, SizeText(s))
	}
	fmt.Fprintf(&b, "growth: %s at %s certificates (a year of a 47-day fleet each: seed/inventory)\n\n", strings.Join(r.Scenarios, ", "), strings.Join(sizes, ", "))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := "operation"
	for _, s := range sizes {
		head += "\t" + s + " p50/p95 ms"
	}
	fmt.Fprintln(tw, head+"\tp50 grows\tp95 grows")
	for _, op := range r.Ops {
		line := op.Name
		at := map[float64]Point{}
		for _, p := range op.Points {
			at[p.Size] = p
		}
		for _, s := range r.Sizes {
			if p, ok := at[s]; ok {
				line += fmt.Sprintf("\t%s / %s", chart.Num(p.P50), chart.Num(p.P95))
			} else {
				line += "\t—"
			}
		}
		fmt.Fprintln(tw, line+"\t"+fitText(op.P50)+"\t"+fitText(op.P95))
	}
	tw.Flush()
	if len(r.Statements) > 0 {
		fmt.Fprintf(&b, "\nbusiest statements (mean backends running each; the first grew most):\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		head := "statement"
		for _, s := range sizes {
			head += "\t" + s
		}
		fmt.Fprintln(tw, head)
		for _, st := range r.Statements {
			line := oneLine(st.Query, 70)
			for _, v := range st.Busy {
				line += "\t" + chart.Num(v)
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}
	b.WriteString("\nruns:\n")
	for _, st := range r.Steps {
		what := fmt.Sprintf("exit %d", st.ExitCode)
		if st.Problem != "" {
			what += ": " + st.Problem
		}
		fmt.Fprintf(&b, "  %s: %s (%s), %.0f s\n", SizeText(st.Size), st.RunDir, what, st.TookS)
	}
	return b.String()
}

// SVG is growth.svg: each operation's p95 against the inventory, both on log scales.
func SVG(r Result) string {
	c := chart.Chart{Title: "p95 against the inventory", XLabel: "certificates (log)", YLabel: "p95 ms (log)", LogY: true, Width: 720, Height: 360}
	for _, s := range r.Sizes {
		c.XTicks = append(c.XTicks, chart.Tick{X: math.Log10(s), Label: SizeText(s)})
	}
	for _, op := range r.Ops {
		se := chart.Series{Name: op.Name}
		for _, p := range op.Points {
			se.Points = append(se.Points, chart.Point{X: math.Log10(p.Size), Y: p.P95})
		}
		c.Series = append(c.Series, se)
	}
	return chart.SVG(c)
}

// Write saves growth.json, growth.txt, growth.svg and index.html in dir.
func Write(dir string, r Result) error {
	page, err := Index(r)
	if err != nil {
		return err
	}
	return output.Files(dir, output.File{Name: "growth.json", JSON: r}, output.File{Name: "growth.txt", Text: Text(r)},
		output.File{Name: "growth.svg", Text: SVG(r)}, output.File{Name: "index.html", Text: page})
}

// rankStatements keeps the statements busiest at the largest size measured, the one whose busy
// backends grew most first.
func (r *Result) rankStatements() {
	if len(r.busy) == 0 {
		return
	}
	var sizes []float64
	for _, st := range r.Steps {
		sizes = append(sizes, st.Size)
	}
	sort.Float64s(sizes)
	first, last := sizes[0], sizes[len(sizes)-1]
	var out []StatementGrowth
	for q, at := range r.busy {
		g := StatementGrowth{Query: q}
		for _, s := range r.Sizes {
			v := at[s]
			g.Busy, g.Share = append(g.Busy, round3(v[0])), append(g.Share, round3(v[1]))
		}
		out = append(out, g)
	}
	busyAt := func(g StatementGrowth, size float64) float64 {
		for i, s := range r.Sizes {
			if s == size {
				return g.Busy[i]
			}
		}
		return 0
	}
	// The busiest at the largest size, then the one that grew most to the front.
	sort.Slice(out, func(i, j int) bool {
		a, b := busyAt(out[i], last), busyAt(out[j], last)
		if a != b {
			return a > b
		}
		return out[i].Query < out[j].Query
	})
	if len(out) > maxStatements {
		out = out[:maxStatements]
	}
	grew := 0
	for i, g := range out {
		if busyAt(g, last)-busyAt(g, first) > busyAt(out[grew], last)-busyAt(out[grew], first) {
			grew = i
		}
	}
	out[0], out[grew] = out[grew], out[0]
	r.Statements = out
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// oneLine is a statement on one line, cut to n characters.
func oneLine(q string, n int) string {
	q = strings.Join(strings.Fields(q), " ")
	if r := []rune(q); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return q
}
