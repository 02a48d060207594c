package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"certctl-loadtest/internal/diagnosis"
)

// diagnosisText is summary.txt's diagnosis section: the findings, then the evidence behind them.
func diagnosisText(b *strings.Builder, d *diagnosis.Diagnosis) {
	secs := d.Window.To.Sub(d.Window.From).Seconds()
	fmt.Fprintf(b, "\ndiagnosis (over %s: %s)\n", d.Window.Basis, clockText(secs))
	for _, f := range d.Findings {
		fmt.Fprintf(b, "  - %s\n", f.Sentence)
	}
	var srcs, off []string
	for _, s := range d.Sources {
		switch s.Status {
		case "ok":
			srcs = append(srcs, fmt.Sprintf("%s %d", s.Name, s.Samples))
		case diagnosis.StatusOff:
			off = append(off, s.Name)
		}
	}
	if len(srcs) > 0 {
		fmt.Fprintf(b, "  samples: %s (server/)\n", strings.Join(srcs, ", "))
	}
	if len(off) > 0 {
		fmt.Fprintf(b, "  switched off by DIAGNOSIS: %s\n", strings.Join(off, ", "))
	}
	if len(d.Containers) > 0 {
		var parts []string
		for _, c := range d.Containers {
			parts = append(parts, fmt.Sprintf("%s %.0f/%.0f/%.0f", c.Service, c.CPUMeanPct, c.CPUP95Pct, c.CPUMaxPct))
		}
		fmt.Fprintf(b, "  CPU, %% of one CPU (mean/p95/max), %d CPUs: %s\n", d.HostCPUs, strings.Join(parts, ", "))
	}
	if m := d.Machine; m != nil {
		fmt.Fprintf(b, "  the machine, %% of all its CPUs (mean): busy %.1f: the stack %.1f, k6 %.1f, outside the run %.1f, steal %.1f\n",
			m.BusyPct, m.StackPct, m.LoadGenPct, m.OutsidePct, m.StealPct)
		fmt.Fprintf(b, "  the run's own instruments, %% of the machine: %s\n", InstrumentsText(m))
	}
	if len(d.Waits) > 0 {
		var parts []string
		for _, w := range d.Waits {
			if w.Share < 0.005 {
				continue // rounds to 0 %
			}
			parts = append(parts, fmt.Sprintf("%s %.0f %%", w.Name, w.Share*100))
		}
		fmt.Fprintf(b, "  database: %.2f active backends on average over %d samples; waits: %s\n", d.ActiveBackends, d.ActivitySample, strings.Join(parts, ", "))
	} else if d.ActivitySample > 0 {
		fmt.Fprintf(b, "  database: no active backend in %d samples\n", d.ActivitySample)
	}
	if len(d.Statements) > 0 {
		b.WriteString("  top statements by total time\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "    share\ttotal ms\tcalls\tmean ms\tstatement\n")
		for i, s := range d.Statements {
			if i == 5 {
				break
			}
			fmt.Fprintf(tw, "    %.0f %%\t%.0f\t%.0f\t%.3g\t%s\n", s.TimeShare*100, s.TotalMS, s.Calls, s.MeanMS, s.Query)
		}
		tw.Flush()
	}
}

// InstrumentsText is the share of the machine the run's own instruments took: the collector's
// container, the harness with its docker commands, the engine (healthchecks, execs, logs: the stack's
// as much as the instruments'), and what answering the collector cost PostgreSQL and certctl at most.
func InstrumentsText(m *diagnosis.MachineShare) string {
	total := m.CollectorPct
	parts := []string{fmt.Sprintf("collector %.2f", m.CollectorPct)}
	if m.HarnessPct != nil && m.EnginePct != nil {
		total += *m.HarnessPct
		parts = append(parts, fmt.Sprintf("harness and its docker commands %.2f", *m.HarnessPct), fmt.Sprintf("engine %.2f (healthchecks, execs, logs)", *m.EnginePct))
	} else {
		parts = append(parts, "harness and engine not read")
	}
	if q := m.CollectorQueriesPct; q != nil {
		parts = append(parts, fmt.Sprintf("PostgreSQL and certctl answering the collector ≤ %.2f", *q))
	}
	return fmt.Sprintf("%.2f without the engine: %s", total, strings.Join(parts, ", "))
}

func clockText(s float64) string {
	n := int(s + 0.5)
	return fmt.Sprintf("%dm%02ds", n/60, n%60)
}

// diagnosisMarkdown is the findings as a list, for a job summary or a PR comment.
func diagnosisMarkdown(b *strings.Builder, d *diagnosis.Diagnosis) {
	if d == nil || len(d.Findings) == 0 {
		return
	}
	fmt.Fprintf(b, "**Diagnosis** (over %s):\n\n", d.Window.Basis)
	for _, f := range d.Findings {
		fmt.Fprintf(b, "- %s\n", f.Sentence)
	}
	b.WriteString("\n")
}
