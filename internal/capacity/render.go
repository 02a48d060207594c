package capacity

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"certctl-loadtest/internal/chart"
	"certctl-loadtest/internal/output"
)

// Curve is the steps by rate, one per rate: the deciding one (a confirmed breach's first run, a
// cleared breach's repeat).
func Curve(r Result) []Step {
	by := map[float64]Step{}
	for _, s := range r.Steps {
		prev, seen := by[s.Rate]
		// A repeat that held clears the breach; a repeat that breached confirms the first run's account.
		if !seen || (s.Attempt == 2 && s.Passed) || (prev.Problem != "" && s.Problem == "") {
			by[s.Rate] = s
		}
	}
	out := make([]Step, 0, len(by))
	for _, s := range by {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rate < out[j].Rate })
	return out
}

// Text is capacity.txt.
func Text(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "capacity: %s, steps of %gs, ramp ×%g from %g/%s (at most %g), bisection to %.0f %%\n", r.Scenario, r.StepS, r.Factor, r.Start, r.Unit, r.Max, r.Precision*100)
	fmt.Fprintf(&b, "  a breach counts when a repeat at the same rate breaches too; each step is an ordinary run (its directory below)\n\n")
	fmt.Fprintf(&b, "%s\n", r.Verdict)
	if k := r.KneeStep; k != nil {
		fmt.Fprintf(&b, "  at the knee, %g/%s: p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, %.1f/s achieved\n", k.Rate, r.Unit, k.P50, k.P95, k.P99, k.Achieved)
		if k.Server != "" {
			fmt.Fprintf(&b, "    server: %s\n", k.Server)
		}
	}
	if s := r.BreakStep; s != nil {
		fmt.Fprintf(&b, "  what broke first at %g/%s:\n", s.Rate, r.Unit)
		for _, x := range s.Broke {
			fmt.Fprintf(&b, "    %s: %s", x.Kind, x.Threshold)
			if x.Measured != "" {
				fmt.Fprintf(&b, " (measured %s)", x.Measured)
			}
			b.WriteString("\n")
		}
		if s.Server != "" {
			fmt.Fprintf(&b, "    server: %s\n", s.Server)
		}
	}
	b.WriteString("\ncurve:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "rate/%s\tresult\tp50 ms\tp95 ms\tp99 ms\tachieved/s\tdropped\terrors\t\trun\t\n", r.Unit)
	for _, s := range r.Steps {
		res := "held"
		switch {
		case s.Problem != "":
			res = "no verdict"
		case !s.Passed:
			res = "breached"
		}
		if s.Attempt == 2 {
			res += " (repeat)"
		}
		if s.StoppedS > 0 {
			// ABORT_ON_FAIL ended it once its budget broke: the verdict was settled.
			res += fmt.Sprintf(", stopped at %.0f s", s.StoppedS)
		}
		fmt.Fprintf(tw, "%g\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%g\t%.2f %%\t\t%s\t\n", s.Rate, res, s.P50, s.P95, s.P99, s.Achieved, s.Dropped, s.Errors*100, s.RunDir)
	}
	tw.Flush()
	fmt.Fprintf(&b, "\n%d steps in %s\n", len(r.Steps), (time.Duration(r.TookS) * time.Second).String())
	return b.String()
}

// SVG is capacity.svg: the curve, rate against p50/p95/p99, the p95 budget and the knee.
func SVG(r Result) string {
	c := chart.Chart{Title: fmt.Sprintf("%s: latency against arrival rate (each step %gs)", r.Scenario, r.StepS),
		XLabel: "arrival rate, per " + map[string]string{"s": "second", "m": "minute"}[r.Unit], YLabel: "ms (log)", LogY: true}
	curve := Curve(r)
	var p50, p95, p99, budget []chart.Point
	for _, s := range curve {
		if s.Problem != "" {
			continue
		}
		p50 = append(p50, chart.Point{X: s.Rate, Y: s.P50})
		p95 = append(p95, chart.Point{X: s.Rate, Y: s.P95})
		p99 = append(p99, chart.Point{X: s.Rate, Y: s.P99})
		if s.BudgetP95 > 0 {
			budget = append(budget, chart.Point{X: s.Rate, Y: s.BudgetP95})
		}
	}
	c.Series = []chart.Series{{Name: "p50", Points: p50}, {Name: "p95", Points: p95}, {Name: "p99", Points: p99}}
	if len(budget) > 0 {
		c.Series = append(c.Series, chart.Series{Name: "p95 budget", Points: budget, Dashed: true})
	}
	if r.Knee > 0 {
		c.Marks = append(c.Marks, chart.Mark{X: r.Knee, Label: fmt.Sprintf("knee %g/%s", r.Knee, r.Unit)})
	}
	if r.Ceiling > 0 {
		c.Marks = append(c.Marks, chart.Mark{X: r.Ceiling, Label: "breach"})
	}
	return chart.SVG(c)
}

// Write puts capacity.json, capacity.txt and capacity.svg in dir; it is called after every step, so an interrupted
// search keeps what it measured.
func Write(dir string, r Result) error {
	return output.Files(dir, output.File{Name: "capacity.json", JSON: r}, output.File{Name: "capacity.txt", Text: Text(r)},
		output.File{Name: "capacity.svg", Text: SVG(r)})
}
