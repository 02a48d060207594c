package weekly

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/history"
	"certctl-loadtest/internal/output"
)

// Options say where this week, the previous weeks and the baselines are.
type Options struct {
	Current   string // this run's artifacts, as downloaded
	History   string // what Fetch wrote; may be missing (a failed fetch)
	Baselines string // docs/baselines/weekly: <label>.json (+ <label>.raw/)
	Out       string
	Tolerance float64
	Now       time.Time
	// Store is the history (internal/history) this week is judged against and then added to; "" judges
	// pairwise only, this week against the last and the baselines.
	Store string
	// Week names this week in the history ("#41 2026-11-16").
	Week string
	// Detect finds change points (history.OtavaDetector), when Store is set.
	Detect history.Detector
}

// Output is trend.json.
type Output struct {
	Schema      string       `json:"schema"`
	Verdict     string       `json:"verdict"` // regressed | no regression
	Notes       []string     `json:"notes"`
	Comparisons []Comparison `json:"comparisons"`
	Trend       Trend        `json:"trend"`
	// Series are each run label's change points on this week's testbed, with a store: then the
	// verdict is theirs, and the comparisons are shown, not judged.
	Series []history.Verdict `json:"series,omitempty"`
}

// Report compares this week with last week and with the baselines, writes trend.md, trend.json and the
// plots into Out, and says whether anything regressed.
func Report(o Options) (Output, error) {
	out := Output{Schema: "certctl-loadtest/trend@1", Verdict: "no regression", Notes: []string{}, Comparisons: []Comparison{}}
	cur, err := LoadWeek(o.Current, "this run", o.Now)
	if err != nil {
		return out, fmt.Errorf("this run's results: %w", err)
	}
	if len(cur.Runs) == 0 {
		return out, fmt.Errorf("%s holds no loadtest-<label>-<id>-<attempt> folder: no run of this week to compare", o.Current)
	}
	history, err := LoadHistory(o.History)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		out.Notes = append(out.Notes, "no previous weeks were fetched (see the fetch step): compared with the baselines only")
	case err != nil:
		return out, err
	}
	labels := make([]string, 0, len(cur.Runs))
	for l := range cur.Runs {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, label := range labels {
		dir := cur.Runs[label]
		var prev *Week
		for i := len(history) - 1; i >= 0; i-- {
			if history[i].Runs[label] != "" {
				prev = &history[i]
				break
			}
		}
		if prev == nil {
			out.Notes = append(out.Notes, fmt.Sprintf("%s: no earlier week ran it", label))
		} else {
			out.Comparisons = append(out.Comparisons, compareOne(label, "last week ("+prev.Label+")", prev.Runs[label], dir, o))
		}
		base := filepath.Join(o.Baselines, label+".json")
		if _, err := os.Stat(base); err != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("%s: no committed baseline (%s): record one with make baseline RUN=<this run's folder> BUILD=%s NAME=%s", label, base, filepath.Base(o.Baselines), label))
		} else {
			out.Comparisons = append(out.Comparisons, compareOne(label, "baseline "+base, base, dir, o))
		}
	}
	judged := map[string]bool{} // labels the series judged: their comparisons are shown, not judged
	if o.Store != "" {
		if err := judgeSeries(&out, o, cur, labels, judged); err != nil {
			return out, err
		}
	}
	for _, c := range out.Comparisons {
		if c.Verdict == "regressed" && !judged[c.Run] {
			out.Verdict = "regressed"
		}
	}
	out.Trend = Build(append(history, cur))
	return out, write(o.Out, out)
}

// judgeSeries judges this week's runs against the store's series of their testbeds, then adds them to
// it: a week is judged once, against the weeks before it.
func judgeSeries(out *Output, o Options, cur Week, labels []string, judged map[string]bool) error {
	stored, err := history.Load(o.Store)
	if err != nil {
		return err
	}
	var entries []history.Entry
	for _, label := range labels {
		s, err := readSummary(cur.Runs[label])
		if err != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("%s: no summary.json (%v): not added to the history", label, err))
			continue
		}
		entries = append(entries, history.FromSummary(s, label, o.Week, o.Now))
	}
	out.Series, err = history.Judge(stored, entries, o.Detect, o.Tolerance)
	if err != nil {
		return err
	}
	for _, v := range out.Series {
		if v.Note != "" {
			// Too short a series, or a testbed's first week: the comparisons judge, as without a store.
			continue
		}
		judged[v.Label] = true
		if len(v.Regressed) > 0 {
			out.Verdict = "regressed"
		}
	}
	if len(judged) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("the verdict of %s is the series' (change points on its testbed, %d weeks in the history before this one); their comparisons with last week and the baselines are shown, not judged",
			strings.Join(sortedKeys(judged), ", "), countWeeks(stored)))
	}
	return history.Append(o.Store, entries...)
}

func countWeeks(entries []history.Entry) int {
	weeks := map[string]bool{}
	for _, e := range entries {
		weeks[e.Week] = true
	}
	return len(weeks)
}

func compareOne(label, against, old, new string, o Options) Comparison {
	c := Comparison{Run: label, Against: against, Regressed: []string{}, Warnings: []string{}}
	r, err := compare.Compare(compare.Side{Label: strings.SplitN(against, " (", 2)[0], Dirs: []string{old}}, compare.Side{Label: "this week", Dirs: []string{new}},
		compare.Options{Tolerance: o.Tolerance})
	if err != nil {
		c.Verdict, c.Error = "not compared", err.Error()
		return c
	}
	c.Verdict, c.Regressed, c.Warnings, c.Result = r.Verdict, r.Regressed, r.Warnings, &r
	return c
}

func write(dir string, out Output) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := []output.File{{Name: "trend.json", JSON: out}, {Name: "trend.md", Text: Markdown(out)}}
	for name, svg := range SVGs(out.Trend) {
		files = append(files, output.File{Name: name, Text: svg})
	}
	return output.Files(dir, files...)
}

// Markdown is trend.md, the job summary: the verdict, each comparison, the trend table.
func Markdown(out Output) string {
	var b strings.Builder
	icon := "✅"
	if out.Verdict == "regressed" {
		icon = "❌"
	}
	fmt.Fprintf(&b, "## %s Weekly trend: %s\n\n", icon, out.Verdict)
	for _, c := range out.Comparisons {
		line := fmt.Sprintf("- **%s** against %s: %s", c.Run, c.Against, c.Verdict)
		switch {
		case c.Verdict == compare.VerdictNotComparable && c.Result != nil:
			// Another machine's week: its difference is the machines', not a regression.
			line += ": " + strings.Join(c.Result.NotComparable, "; ")
		case len(c.Regressed) > 0:
			line += ": " + strings.Join(c.Regressed, "; ")
		}
		if c.Error != "" {
			line += ": " + c.Error
		}
		b.WriteString(line + "\n")
	}
	for _, n := range out.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	b.WriteString("\n")
	b.WriteString(SeriesMarkdown(out.Series))
	b.WriteString(TrendMarkdown(out.Trend))
	b.WriteString("\nPlots: `trend-p95.svg` and `trend-rate.svg` in this job's artifact.\n")
	for _, c := range out.Comparisons {
		if c.Result == nil {
			continue
		}
		fmt.Fprintf(&b, "\n<details><summary>%s against %s: %s</summary>\n\n%s\n</details>\n", c.Run, c.Against, c.Verdict, compare.Markdown(*c.Result))
	}
	return b.String()
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
