package overhead

import (
	"fmt"
	"sort"
	"strings"

	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/output"
)

// Text is overhead.txt: each configuration's significant changes, the budget, then compare's table
// for each.
func Text(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "overhead %s: the same load with every instrument on and with each off in turn, %d round(s) in alternating order\n", r.RunID, r.Rounds)
	if r.Command != "" {
		fmt.Fprintf(&b, "  repeat: %s\n", r.Command)
	}
	if !r.Complete {
		fmt.Fprintf(&b, "  cut short: %s; compared what ran\n", orUnknown(r.Problem))
	}
	b.WriteString("\nwhat each instrument costs (its runs off → every instrument on; a change is the instrument's)\n")
	for _, m := range r.Instruments {
		fmt.Fprintf(&b, "  %s (%s): ", m.Name, settingsText(m.Settings))
		switch {
		case m.Error != "":
			fmt.Fprintf(&b, "not compared: %s\n", m.Error)
		case len(m.Significant) == 0:
			fmt.Fprintf(&b, "no percentile changed beyond the noise (%s)\n", runsText(m.Compare))
		default:
			fmt.Fprintf(&b, "%s (%s)\n", strings.Join(m.Significant, "; "), runsText(m.Compare))
		}
	}
	fmt.Fprintf(&b, "\nbudget: %s: %s\n", r.Budget.Rule, budgetText(r.Budget))
	for _, m := range r.Instruments {
		if m.Compare == nil {
			continue
		}
		fmt.Fprintf(&b, "\n== %s off → on: %s\n", m.Name, m.What)
		b.WriteString(compare.Text(*m.Compare))
	}
	return b.String()
}

// Markdown is overhead.md: the summary table and the budget.
func Markdown(r Result) string {
	var b strings.Builder
	icon := "✅"
	if !r.Budget.Held {
		icon = "❌"
	}
	fmt.Fprintf(&b, "### %s Instruments' overhead: %s\n\n**budget: %s**\n\n", icon, r.RunID, budgetText(r.Budget))
	b.WriteString("| instrument | switched off by | runs a side | significant changes (off → on) |\n|---|---|---:|---|\n")
	for _, m := range r.Instruments {
		ch := strings.Join(m.Significant, "; ")
		switch {
		case m.Error != "":
			ch = "not compared: " + m.Error
		case ch == "":
			ch = "none"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %d | %s |\n", m.Name, settingsText(m.Settings), len(r.Runs[m.Name]), ch)
	}
	if !r.Complete {
		fmt.Fprintf(&b, "\nCut short: %s.\n", orUnknown(r.Problem))
	}
	return b.String()
}

func budgetText(bu Budget) string {
	switch {
	case !bu.Judged:
		return "not judged (the all-off configuration was not measured), so not held"
	}
	pct := compare.Percent(bu.Confidence)
	level := fmt.Sprintf(" (its p50 at %s %%)", pct)
	if bu.Family > 1 {
		level = fmt.Sprintf(" (each p50 at %s %%: %d scenarios judged at once)", pct, bu.Family)
	}
	if bu.Held {
		return "held" + level
	}
	return "broken" + level + ": " + strings.Join(bu.Breaches, "; ")
}

func settingsText(s map[string]string) string {
	var kv []string
	for k, v := range s {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, " ")
}

func runsText(c *compare.Result) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%d vs %d runs", len(c.Old.Runs), len(c.New.Runs))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Files are what Write leaves in the measurement's directory.
const (
	JSONFile     = "overhead.json"
	TextFile     = "overhead.txt"
	MarkdownFile = "overhead.md"
)

// Write writes overhead.json, .txt and .md into dir.
func Write(dir string, r Result) error {
	return output.Files(dir, output.File{Name: JSONFile, JSON: r}, output.File{Name: TextFile, Text: Text(r)}, output.File{Name: MarkdownFile, Text: Markdown(r)})
}
