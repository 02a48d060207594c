package weekly

import (
	"fmt"
	"strings"

	"certctl-loadtest/internal/history"
)

// SeriesMarkdown is the job summary's account of the series: per run label, its weeks on this testbed,
// the steps this week confirmed the worse way (the verdict), the figures whose newest week alone
// stands apart, and every change point of the series; "" without a history.
func SeriesMarkdown(vs []history.Verdict) string {
	if len(vs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Change points, per testbed\n\n")
	for _, v := range vs {
		fmt.Fprintf(&b, "- **%s**: %d weeks on this testbed", v.Label, v.Weeks)
		if v.Apart > 0 {
			fmt.Fprintf(&b, " (%d on others, left out)", v.Apart)
		}
		switch {
		case v.Note != "":
			fmt.Fprintf(&b, ": %s\n", v.Note)
			continue
		case len(v.Regressed) > 0:
			b.WriteString(": **regressed**: " + steps(v.Regressed))
		case len(v.Steps) == 0:
			b.WriteString(": no change point")
		default:
			b.WriteString(": no new step the worse way")
		}
		b.WriteString("\n")
		if len(v.Suspect) > 0 {
			fmt.Fprintf(&b, "  - this week alone stands apart (a noisy week, or a step's first: the next week says which): %s\n", steps(v.Suspect))
		}
	}
	var rows []string
	for _, v := range vs {
		for _, s := range v.Steps {
			state := "earlier"
			switch {
			case s.Weeks < history.Confirm:
				state = "this week alone"
			case s.New && s.Worse && s.Held:
				state = "**new, worse**"
			case s.New && !s.Held:
				state = "new, not every week since past the tolerance"
			case s.New:
				state = "new, better"
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s → %s | %+.0f %% | %.4f | %s |", v.Label, s.Scenario, s.Metric, s.Week,
				num(s.Before), num(s.After), s.Change*100, s.PValue, state))
		}
	}
	if len(rows) > 0 {
		b.WriteString("\n| run | scenario | figure | from week | mean before → after | change | p-value | |\n|---|---|---|---|---|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n")
	}
	fmt.Fprintf(&b, "\nChange points by Apache Otava (e-divisive, p < %g, a step counted once %d weeks stand behind it, every one past the tolerance the same way); weeks on another testbed or PostgreSQL major are another series.\n\n", history.MaxPValue, history.Confirm)
	return b.String()
}

func steps(ss []history.Step) string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%s %s from %s (%s → %s, %+.0f %%)", s.Scenario, s.Metric, s.Week, num(s.Before), num(s.After), s.Change*100))
	}
	return strings.Join(out, "; ")
}

func num(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
