package gate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/output"
)

// Text is gate.txt: the verdict in one sentence first, then the plan, the runs, and compare's table.
func Text(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", r.Sentence)
	fmt.Fprintf(&b, "gate %s: %s\n", r.RunID, r.Plan.Text())
	if r.Command != "" {
		fmt.Fprintf(&b, "  repeat: %s\n", r.Command)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "run\tside\tbuild\texit\tunexplained breaches\t\n")
	for _, run := range r.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", run.RunID, run.Side, r.label(run.Side), run.Code, breachText(run))
	}
	tw.Flush()
	if len(r.Undecided) > 0 {
		fmt.Fprintf(&b, "\nbudgets this runner decides (not the candidate's): %s\n", strings.Join(r.Undecided, "; "))
	}
	if r.Compare != nil {
		b.WriteString("\n")
		b.WriteString(compare.Text(*r.Compare))
	}
	fmt.Fprintf(&b, "\nverdict: %s\n", r.Sentence)
	return b.String()
}

// Markdown is gate.md, the job summary and the pull request's comment: the sentence, then the table.
func Markdown(r Result) string {
	var b strings.Builder
	icon := map[string]string{Pass: "✅", Inconclusive: "⚠️"}[r.Verdict]
	if icon == "" {
		icon = "❌"
	}
	fmt.Fprintf(&b, "### %s certctl load test: %s\n\n%s\n\n", icon, r.Verdict, mdEscape(sentenceBody(r)))
	fmt.Fprintf(&b, "<sub>%s</sub>\n\n", mdEscape(r.Plan.Text()))
	b.WriteString("| run | side | build | exit | unexplained breaches |\n|---|---|---|---:|---|\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s |\n", run.RunID, run.Side, mdEscape(r.label(run.Side)), run.Code, mdEscape(breachText(run)))
	}
	if len(r.Undecided) > 0 {
		fmt.Fprintf(&b, "\nBudgets this runner decides (not the candidate's): %s\n", mdEscape(strings.Join(r.Undecided, "; ")))
	}
	if r.Compare != nil {
		b.WriteString("\n")
		b.WriteString(compare.Markdown(*r.Compare))
	}
	return b.String()
}

// sentenceBody is the sentence without its leading verdict word, which the heading carries.
func sentenceBody(r Result) string {
	// Not capitalised: it may begin with a build's label, spelt as given.
	if s := strings.TrimPrefix(r.Sentence, r.Verdict+": "); s != "" {
		return s + "."
	}
	return ""
}

func (r Result) label(side string) string {
	if side == Reference {
		return r.Plan.Reference.Label
	}
	return r.Plan.Candidate.Label
}

func breachText(run Run) string {
	var parts []string
	if len(run.New) > 0 {
		parts = append(parts, strings.Join(run.New, "; "))
	}
	if len(run.Known) > 0 {
		parts = append(parts, "known: "+strings.Join(run.Known, ", "))
	}
	if run.Machine != "" {
		parts = append(parts, "the machine decided")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " · ")
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;").Replace(s)
}

// Write writes gate.json, gate.txt and gate.md into dir, and compare.json, .txt and .md when there is a
// comparison.
func Write(dir string, r Result) error {
	files := []output.File{{Name: "gate.json", JSON: r}, {Name: "gate.txt", Text: Text(r)}, {Name: "gate.md", Text: Markdown(r)}}
	if r.Compare != nil {
		files = append(files, compare.Files(*r.Compare)...)
	}
	return output.Files(dir, files...)
}

// Read reads gate.json back (the workflow's summary step, a later report).
func Read(dir string) (Result, error) {
	var r Result
	b, err := os.ReadFile(filepath.Join(dir, "gate.json"))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, "gate.json"), err)
	}
	if r.Schema != Schema {
		return r, fmt.Errorf("%s: schema %q, want %q", filepath.Join(dir, "gate.json"), r.Schema, Schema)
	}
	return r, nil
}
