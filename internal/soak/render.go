package soak

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"certctl-loadtest/internal/chart"
	"certctl-loadtest/internal/output"
)

func num(v float64) string { return chart.Num(v) }

func mb(bytes int64) string { return chart.Num(math.Round(float64(bytes)/(1<<20)*10) / 10) }

// Text is soak.txt: the verdict and why, each scenario's p95 per window with its drift, each service's
// memory, and the tables that grew.
func Text(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "soak %s: %s over %s of load, windows of %s\n", r.RunID, strings.ToUpper(r.Verdict), dur(r.LoadS), dur(r.WindowS))
	for _, why := range r.Reasons {
		fmt.Fprintf(&b, "  %s\n", why)
	}
	fmt.Fprintf(&b, "budgets: p95 drift ×%g at most (the fitted p95 over the windows after the first); %s's memory +%g %%/h at most over the second half, from %s of load at the earliest\n\n",
		r.Budgets.P95Drift, Judged, r.Budgets.MemoryPctPerHour, dur(MemoryWarmup.Seconds()))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := "p95 ms per window"
	if len(r.Scenarios) > 0 {
		for _, w := range r.Scenarios[0].Windows {
			head += "\t" + dur(w.FromS)
		}
	}
	fmt.Fprintln(tw, head+"\tslope ms/h [95 %]\tdrift\tfailed")
	for _, sc := range r.Scenarios {
		line := sc.Name
		failed, reqs := 0, 0
		for _, w := range sc.Windows {
			line += "\t" + num(w.P95)
			failed, reqs = failed+w.Failed, reqs+w.Requests
		}
		if sc.P95 != nil {
			line += fmt.Sprintf("\t%s [%s … %s]\t×%g", num(sc.P95.SlopePerH), num(sc.P95.Low), num(sc.P95.High), sc.Drift)
		} else {
			line += "\t—\t—"
		}
		if sc.Breach {
			line += " BREACH"
		}
		fmt.Fprintln(tw, line+fmt.Sprintf("\t%d of %d", failed, reqs))
	}
	tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "memory MB\tstart\tend\tmax\tsecond half MB/h [95 %]\t%/h")
	for _, m := range r.Memory {
		line := fmt.Sprintf("%s\t%s\t%s\t%s", m.Service, num(m.StartMB), num(m.EndMB), num(m.MaxMB))
		if m.SecondHalf != nil {
			line += fmt.Sprintf("\t%s [%s … %s]\t%g", num(m.SecondHalf.SlopePerH), num(m.SecondHalf.Low), num(m.SecondHalf.High), m.PctPerHour)
		} else {
			line += "\t—\t—"
		}
		if m.Judged {
			line += " (judged)"
		}
		if m.Breach {
			line += " BREACH"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	b.WriteString("\n")
	if r.TablesNote != "" {
		b.WriteString(r.TablesNote + "\n")
		return b.String()
	}
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "table (largest at the end)\tMB start\tMB end\trows start\trows end\tdead at end\tautovacuums\tautoanalyzes")
	for i, t := range r.Tables {
		if i == 12 {
			fmt.Fprintf(tw, "… %d more in soak.json\n", len(r.Tables)-i)
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n", t.Name, mb(t.StartBytes), mb(t.EndBytes), t.StartRows, t.EndRows, t.EndDead, t.Autovacuums, t.Autoanalyzes)
	}
	tw.Flush()
	return b.String()
}

func dur(s float64) string {
	switch {
	case s >= 3600 && math.Mod(s, 60) == 0:
		return fmt.Sprintf("%dh%02dm", int(s)/3600, int(s)%3600/60)
	case s >= 60 && math.Mod(s, 60) == 0:
		return fmt.Sprintf("%dm", int(s)/60)
	case s >= 60:
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%gs", math.Round(s))
}

// SVGs are soak-p95.svg (each scenario's p95 per window) and soak-memory.svg (each service's mean
// memory per window), both against minutes of load.
func SVGs(r Result) (p95, memory string) {
	c := chart.Chart{Title: "p95 per window", XLabel: "minutes of load", YLabel: "p95 ms", Width: 720, Height: 320}
	for _, sc := range r.Scenarios {
		se := chart.Series{Name: sc.Name}
		for _, w := range sc.Windows {
			y := w.P95
			if w.N == 0 {
				y = math.NaN()
			}
			se.Points = append(se.Points, chart.Point{X: (w.FromS + r.WindowS/2) / 60, Y: y})
		}
		c.Series = append(c.Series, se)
	}
	p95 = chart.SVG(c)
	c = chart.Chart{Title: "memory per window", XLabel: "minutes of load", YLabel: "MB", Width: 720, Height: 320}
	for _, m := range r.Memory {
		if m.Service != Judged && m.Service != "postgres" {
			continue
		}
		se := chart.Series{Name: m.Service}
		for i, v := range m.WindowsMB {
			y := math.NaN()
			if v != nil {
				y = *v
			}
			se.Points = append(se.Points, chart.Point{X: (float64(i) + 0.5) * r.WindowS / 60, Y: y})
		}
		c.Series = append(c.Series, se)
	}
	return p95, chart.SVG(c)
}

// Write saves soak.json, soak.txt and the two plots in dir.
func Write(dir string, r Result) error {
	p95, memory := SVGs(r)
	return output.Files(dir, output.File{Name: "soak.json", JSON: r}, output.File{Name: "soak.txt", Text: Text(r)},
		output.File{Name: "soak-p95.svg", Text: p95}, output.File{Name: "soak-memory.svg", Text: memory})
}
