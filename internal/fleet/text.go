package fleet

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"certctl-loadtest/internal/output"
)

// Text is fleet.txt: the answer in a sentence, how it was found, the runs, and the load at the answer.
func Text(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "fleet %s at %g-day rotation: %s", r.Fleet.Name, r.Fleet.RotationDays, r.Verdict)
	if r.Testbed != nil {
		fmt.Fprintf(&b, " on this testbed (%s)", r.Testbed)
	}
	b.WriteString(".\n")
	if g := givesWay(r); g != "" {
		b.WriteString(g + "\n")
	}
	if r.Build != "" {
		fmt.Fprintf(&b, "certctl %s.\n", r.Build)
	}
	fmt.Fprintf(&b, "\nBracket: %s.\n", r.Plan.From)
	for _, p := range r.Plan.Predicted {
		fmt.Fprintf(&b, "  %-20s p95 reaches %g ms at about %s certificates\n", p.Scenario, p.BudgetMS, SizeText(p.Size))
	}
	b.WriteString("\nRuns, each a fresh stack seeded with that many certificates' year of history:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  size\trole\tverdict\ttook\trun")
	for _, t := range r.Tries {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%.0f s\t%s\n", SizeText(t.Size), t.Role, t.Verdict(), t.TookS, t.RunID)
	}
	tw.Flush()
	first := true
	for _, t := range r.Tries {
		if t.Decided() && !t.Holds {
			if first {
				b.WriteString("\nWhat broke, and the diagnosis' cause:\n")
				first = false
			}
			fmt.Fprintf(&b, "  %s (%s): %s\n", SizeText(t.Size), t.RunID, brokeText(t))
		}
	}
	if len(r.Mix) > 0 {
		fmt.Fprintf(&b, "\nThe load at %s certificates (the busiest hour):\n", SizeText(r.Answer))
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  scenario\twhat\tderived\trun as\tfrom")
		for _, o := range r.Mix {
			fmt.Fprintf(tw, "  %s\t%s\t%.3g/s\t%s\t%s\n", o.Scenario, o.What, o.PerSecond, o.RunAs(), o.Formula)
		}
		tw.Flush()
	}
	fmt.Fprintf(&b, "\n%d runs, %.0f min.\n", len(r.Tries), r.TookS/60)
	return b.String()
}

// Write writes fleet.json, fleet.txt and fleet.html into dir.
func Write(dir string, r Result) error {
	page, err := Index(r)
	if err != nil {
		return err
	}
	return output.Files(dir, output.File{Name: "fleet.json", JSON: r}, output.File{Name: "fleet.txt", Text: Text(r)},
		output.File{Name: "fleet.html", Text: page})
}

// RunAs is the rate as run: "12/m", with the floor's reason when MinIterations raised it.
func (o Op) RunAs() string {
	s := fmt.Sprintf("%d/%s", o.Rate, o.Unit)
	if o.Raised {
		s += fmt.Sprintf(" (raised: %d a run at least)", MinIterations)
	}
	return s
}

// Breach is what broke in the try, and the diagnosis' cause.
func (t Try) Breach() string { return brokeText(t) }

// Verdict is the try in a few words: held, which scenarios broke, or undecided and why.
func (t Try) Verdict() string {
	switch {
	case !t.Decided():
		return "undecided: " + t.Problem
	case !t.Holds && len(t.Broke) > 0:
		var scs []string
		for _, b := range t.Broke {
			if sc, _, ok := strings.Cut(b, ": "); ok && !slices.Contains(scs, sc) {
				scs = append(scs, sc)
			}
		}
		n := fmt.Sprintf("%d thresholds", len(t.Broke))
		if len(t.Broke) == 1 {
			n = "1 threshold"
		}
		return fmt.Sprintf("broke: %s (%s)", n, strings.Join(scs, ", "))
	case !t.Holds:
		return "broke: " + brokeText(t)
	}
	return "held"
}

// Detail is the try whole: held, or every threshold that broke and the diagnosis' cause.
func (t Try) Detail() string {
	if t.Decided() && !t.Holds {
		return "broke: " + brokeText(t)
	}
	return t.Verdict()
}

// givesWay is the sentence naming what broke first beyond the answer; "" when there is no answer.
func givesWay(r Result) string {
	if g := r.GivesWay; g != nil && r.Answer > 0 {
		return fmt.Sprintf("The first thing to give way beyond it, at %s certificates: %s.", SizeText(g.Size), brokeText(*g))
	}
	return ""
}
