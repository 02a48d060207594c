package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"certctl-loadtest/internal/output"
)

// Files are compare.json, compare.txt and compare.md: what Write writes, and the gate beside its own.
func Files(r Result) []output.File {
	return []output.File{{Name: "compare.json", JSON: r}, {Name: "compare.txt", Text: Text(r)}, {Name: "compare.md", Text: Markdown(r)}}
}

// Write writes Files into dir.
func Write(dir string, r Result) error { return output.Files(dir, Files(r)...) }

// changeText is a change as people read it: a factor from ×2 up (or down to ÷2), a percentage below.
func changeText(r Row) string {
	if r.Metric == "error rate" {
		return fmt.Sprintf("%+.2f pp", r.Change*100)
	}
	return factorText(r.Change)
}

func factorText(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0) || f == 0:
		return "?"
	case f >= 2:
		return "×" + num(f)
	case f <= 0.5:
		return "÷" + num(1/f)
	default:
		return fmt.Sprintf("%+.0f %%", (f-1)*100)
	}
}

func intervalText(r Row) string {
	if r.Low == nil || r.High == nil {
		return ""
	}
	if r.Metric == "error rate" {
		return fmt.Sprintf("%+.2f … %+.2f pp", *r.Low*100, *r.High*100)
	}
	return factorText(*r.Low) + " … " + factorText(*r.High)
}

func valueText(r Row, v float64) string {
	if r.Metric == "error rate" {
		return fmt.Sprintf("%.2f %%", v*100)
	}
	if r.Metric == ThroughputMetric {
		return num(v) + "/s"
	}
	return num(v) + " ms"
}

// num prints a figure with three significant digits at most, as the summaries do.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func runsText(s SideInfo) string {
	if len(s.Runs) == 1 {
		return s.Label + " (1 run)"
	}
	return fmt.Sprintf("%s (%d runs)", s.Label, len(s.Runs))
}

func verdictText(r Result) string {
	switch r.Verdict {
	case VerdictNotComparable:
		return "NOT COMPARABLE: " + strings.Join(r.NotComparable, ": ") + "; the rows are the machines' difference as much as certctl's (docs/methodology.md#testbeds)"
	case "regressed":
		return "REGRESSED: " + strings.Join(r.Regressed, "; ")
	case "changed":
		return "changed, nothing worse beyond the tolerance"
	}
	return "no significant change"
}

// Text is the comparison for a terminal: benchstat's layout, one row per scenario and metric.
func Text(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "compare: %s → %s\n", runsText(r.Old), runsText(r.New))
	if r.Verdict == VerdictNotComparable {
		fmt.Fprintf(&b, "  %s\n", verdictText(r))
	}
	fmt.Fprintf(&b, "  %s\n\n", method(r))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\tmetric\t%s\t%s\tchange\t%s %% interval\t\n", r.Old.Label, r.New.Label, r.level())
	last := ""
	for _, row := range r.Rows {
		name := row.Scenario
		if name == last {
			name = ""
		}
		last = row.Scenario
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", name, row.Metric, valueText(row, row.Old), valueText(row, row.New), rowChange(row), intervalText(row))
	}
	tw.Flush()
	if len(r.Loads) > 0 {
		b.WriteString("\nloads (target → achieved, dropped iterations):\n")
		for _, l := range r.Loads {
			fmt.Fprintf(&b, "  %-22s %s: %s   %s: %s\n", l.Scenario, r.Old.Label, loadText(l.Old), r.New.Label, loadText(l.New))
		}
	}
	if c := r.Cause; c != nil {
		b.WriteString("\nwhere the time went (the runs' diagnosis):\n")
		for _, side := range []struct {
			label string
			f     []string
		}{{r.Old.Label, c.Old}, {r.New.Label, c.New}} {
			for i, f := range side.f {
				lead := strings.Repeat(" ", len(side.label)+1)
				if i == 0 {
					lead = side.label + ":"
				}
				fmt.Fprintf(&b, "  %s %s\n", lead, f)
			}
		}
		if len(c.Statements) > 0 {
			fmt.Fprintf(&b, "  statements (%s):\n", statementsBasis(c.Statements[0].Basis))
			for _, s := range c.Statements {
				fmt.Fprintf(&b, "    %s\n", statementText(s))
			}
		}
		if len(c.CPU) > 0 {
			parts := []string{}
			for _, x := range c.CPU {
				parts = append(parts, fmt.Sprintf("%s %.0f → %.0f", x.Service, x.Old, x.New))
			}
			fmt.Fprintf(&b, "  CPU, %% of one CPU: %s\n", strings.Join(parts, "; "))
		}
	}
	if lines := defectLines(r); len(lines) > 0 {
		b.WriteString("\ncertctl's known defects (docs/certctl-findings.md), by side:\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "  - %s\n", w)
		}
	}
	fmt.Fprintf(&b, "\nverdict: %s\n", verdictText(r))
	return b.String()
}

func rowChange(r Row) string {
	switch r.Verdict {
	case "~":
		return changeText(r) + " ~"
	case "no samples":
		return changeText(r) + " (no samples)"
	}
	return changeText(r) + " " + r.Verdict
}

func method(r Result) string {
	judged := ""
	if len(r.Judged) > 0 {
		judged = " (" + strings.Join(r.Judged, ", ") + " only; the other rows are shown, not judged)"
	}
	return fmt.Sprintf("%s %% intervals: bootstrap over runs and %gs blocks of requests; ~ is a change whose interval holds no change or below the %.0f %% noise; fails beyond a %.0f %% tolerance%s",
		r.level(), r.Block, r.Noise*100, r.Tolerance*100, judged)
}

func loadText(l Load) string {
	target, achieved := l.Record().RateCells()
	s := target + " → " + achieved
	if l.Dropped > 0 {
		s += fmt.Sprintf(", %g dropped", l.Dropped)
	}
	return s
}

func statementsBasis(b string) string {
	if b == "pg_stat_statements" {
		return "pg_stat_statements: mean per call, share of the database's time"
	}
	return "share of the sampled active backends"
}

func statementText(s StatementChange) string {
	q := s.Query
	if len(q) > 60 {
		q = q[:57] + "..."
	}
	if s.Basis == "pg_stat_statements" {
		f := ""
		if s.OldMeanMS > 0 && s.NewMeanMS > 0 {
			f = "  " + factorText(s.NewMeanMS/s.OldMeanMS)
		}
		return fmt.Sprintf("%-60s %s ms (%.0f %%) → %s ms (%.0f %%)%s", q, num(s.OldMeanMS), s.OldShare*100, num(s.NewMeanMS), s.NewShare*100, f)
	}
	return fmt.Sprintf("%-60s %.0f %% → %.0f %%", q, s.OldShare*100, s.NewShare*100)
}

// Markdown is the comparison for a pull request comment or a job summary.
func Markdown(r Result) string {
	var b strings.Builder
	icon := "✅"
	switch r.Verdict {
	case "regressed":
		icon = "❌"
	case VerdictNotComparable:
		icon = "⚠️"
	}
	fmt.Fprintf(&b, "### %s Compare: %s → %s\n\n**%s**\n\n", icon, md(runsText(r.Old)), md(runsText(r.New)), md(verdictText(r)))
	fmt.Fprintf(&b, "| scenario | metric | %s | %s | change | %s %% interval |\n|---|---|---:|---:|---|---|\n", md(r.Old.Label), md(r.New.Label), r.level())
	for _, row := range r.Rows {
		ch := rowChange(row)
		if row.Fails {
			ch = "**" + ch + "**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", md(row.Scenario), row.Metric, valueText(row, row.Old), valueText(row, row.New), ch, intervalText(row))
	}
	fmt.Fprintf(&b, "\n<sub>%s</sub>\n", md(method(r)))
	if c := r.Cause; c != nil {
		b.WriteString("\n**Where the time went** (the runs' diagnosis)\n\n")
		for _, side := range []struct {
			label string
			f     []string
		}{{r.Old.Label, c.Old}, {r.New.Label, c.New}} {
			for _, f := range side.f {
				fmt.Fprintf(&b, "- %s: %s\n", md(side.label), md(f))
			}
		}
		if len(c.Statements) > 0 {
			fmt.Fprintf(&b, "\n| statement (%s) | %s | %s |\n|---|---:|---:|\n", statementsBasis(c.Statements[0].Basis), md(r.Old.Label), md(r.New.Label))
			for _, s := range c.Statements {
				if s.Basis == "pg_stat_statements" {
					fmt.Fprintf(&b, "| `%s` | %s ms (%.0f %%) | %s ms (%.0f %%) |\n", strings.ReplaceAll(s.Query, "`", "'"), num(s.OldMeanMS), s.OldShare*100, num(s.NewMeanMS), s.NewShare*100)
				} else {
					fmt.Fprintf(&b, "| `%s` | %.0f %% | %.0f %% |\n", strings.ReplaceAll(s.Query, "`", "'"), s.OldShare*100, s.NewShare*100)
				}
			}
		}
	}
	if lines := defectLines(r); len(lines) > 0 {
		b.WriteString("\n**certctl's known defects**, by side:\n\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "- %s\n", md(l))
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "> ⚠️ %s\n>\n", md(w))
		}
	}
	return b.String()
}

// defectLines say, per side, its new breaches, the known defects it met and the ones that did not
// appear; nothing when neither side has any.
func defectLines(r Result) []string {
	var out []string
	for _, d := range r.Defects {
		var parts []string
		if len(d.New) > 0 {
			parts = append(parts, "new: "+strings.Join(d.New, "; "))
		}
		if len(d.Known) > 0 {
			parts = append(parts, "known: "+strings.Join(d.Known, ", "))
		}
		if len(d.NotAppearing) > 0 {
			parts = append(parts, "not appearing: "+strings.Join(d.NotAppearing, ", "))
		}
		if len(parts) > 0 {
			out = append(out, d.Label+": "+strings.Join(parts, " · "))
		}
	}
	return out
}

// md escapes what would turn a figure or a name into Markdown, outside `code spans` (which show a
// backslash as it is).
func md(s string) string {
	esc := strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;")
	parts := strings.Split(s, "`")
	for i := range parts {
		if i%2 == 0 || i == len(parts)-1 {
			parts[i] = esc.Replace(parts[i])
		} else {
			parts[i] = strings.ReplaceAll(parts[i], "|", `\|`)
		}
	}
	return strings.Join(parts, "`")
}

// level is the intervals' confidence in percent: 95, or 99.2 for a family of six rows.
func (r Result) level() string {
	c := r.Confidence
	if c == 0 {
		c = 0.95 // a comparison saved before the level was recorded
	}
	return Percent(c)
}

// Percent is a confidence level as the tables print it: 0.95 → "95", 0.99167 → "99.2".
func Percent(c float64) string { return strconv.FormatFloat(math.Round(c*1000)/10, 'f', -1, 64) }

// ChangeText is the row's change, its verdict and its interval, in one phrase.
func (r Row) ChangeText() string {
	s := rowChange(r)
	if iv := intervalText(r); iv != "" {
		s += " [" + iv + "]"
	}
	return s
}

// ShortChange is the row's change alone (×3.2, +38 %, +0.50 pp), as the regressed list gives it.
func (r Row) ShortChange() string { return changeText(r) }
