package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/results"
)

// Markdown renders a run's job summary ($GITHUB_STEP_SUMMARY) as Markdown a reviewer reads: the verdict
// once, what ran, the scenarios' figures, the thresholds that broke (new or known, with the defect that
// explains a known one), the known defects met and not met, the diagnosis's first findings; then
// summary.txt and the artifact's files folded away. s is the run's summary.json, nil when it wrote
// none. stepCode is what `bin/loadtest run` returned, "" when it never ran: it stands in for the
// summary's exit code only when there is no summary, so a run that never got a directory still gets
// a verdict.
func Markdown(s *results.Summary, dir results.RunDir, stepCode string) string {
	code := stepCode
	if s != nil {
		code = strconv.Itoa(s.ExitCode)
	}
	verdict := "FAILED"
	switch code {
	case "0":
		verdict = "PASSED"
	case strconv.Itoa(results.ExitInconclusive):
		verdict = "INCONCLUSIVE"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## certctl load test: %s (exit %s)\n\n", verdict, orUnknown(code))
	fmt.Fprintf(&b, "**Exit %s**: %s.", orUnknown(code), exitMeaning(code))
	if s != nil && stepCode != "" && stepCode != code {
		fmt.Fprintf(&b, " (`bin/loadtest run` itself exited %s.)", stepCode)
	}
	b.WriteString("\n\n")

	if !dir.Exists {
		where := ""
		if dir.Path != "" {
			where = "`" + dir.Path + "` does not exist; "
		}
		fmt.Fprintf(&b, "No results: %sthe run stopped before it created its directory (bad input,\n", where)
		b.WriteString("no Docker engine, a missing image), so there is no artifact either. The run step's log says why.\n")
		return b.String()
	}
	if s == nil {
		fmt.Fprintf(&b, "**No summary.json in `%s`**: the run ended before its summary was written (the step timed out or was\n", dir.Path)
		b.WriteString("cancelled, or the summary writer failed). Whatever the run did save is in the artifact.\n\n")
	} else {
		markdownAbout(&b, *s)
		markdownScenarios(&b, *s)
		markdownThresholds(&b, *s)
		markdownDefects(&b, s.Breaches)
		diagnosisMarkdown(&b, s.Diagnosis)
		text := Text(*s)
		f := fence(text)
		fmt.Fprintf(&b, "<details><summary>summary.txt of run %s</summary>\n\n%stext\n%s", s.Run.RunID, f, text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
		b.WriteString(f + "\n\n</details>\n\n")
	}
	if len(dir.Files) == 0 {
		b.WriteString("The run directory is empty.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "<details><summary>Files of run %s (in the artifact)</summary>\n\n", dir.Name)
	for _, f := range dir.Files {
		fmt.Fprintf(&b, "- `%s`\n", f)
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// markdownAbout is what ran, where and how, a line each.
func markdownAbout(b *strings.Builder, s results.Summary) {
	for _, l := range aboutLines(s) {
		if cmd, ok := strings.CutPrefix(l, "command: "); ok {
			l = "command: `" + cmd + "`"
		}
		fmt.Fprintf(b, "- %s\n", mdEscape(l))
	}
	b.WriteString("\n")
}

// markdownScenarios is the figures table of summary.txt, one row a scenario.
func markdownScenarios(b *strings.Builder, s results.Summary) {
	if len(s.Scenarios) == 0 {
		return
	}
	cols := append(append([]string{"scenario", "tier"}, figureColumns...), "result")
	b.WriteString("| " + strings.Join(cols, " | ") + " |\n|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, sc := range s.Scenarios {
		cells := append(append([]string{sc.Name, sc.Tier}, figures(sc)...), resultCell(sc.Status))
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
}

func resultCell(status string) string {
	if status == "passed" {
		return status
	}
	return "**" + status + "**"
}

// markdownThresholds lists the thresholds that broke, with what was measured and whether a known defect
// of certctl explains the breach; then the run's other reasons to fail.
func markdownThresholds(b *strings.Builder, s results.Summary) {
	known := map[string]string{}
	if s.Breaches != nil {
		for _, g := range []struct {
			label string
			ks    []defects.Known
		}{{"known", s.Breaches.Known}, {"known, worse than recorded (new)", s.Breaches.Worse}, {"known, size unjudged", s.Breaches.Unjudged}} {
			for _, k := range g.ks {
				known[k.Scenario+"\x00"+k.Threshold] = g.label + ": `" + strings.Join(k.Defects, "`, `") + "`"
			}
		}
	}
	var rows []string
	for _, sc := range s.Scenarios {
		if sc.Record == nil {
			continue
		}
		ts, unjudged := judgedThresholds(sc.Record)
		if unjudged {
			continue
		}
		for _, t := range ts {
			if t.OK {
				continue
			}
			breach := "new"
			if k, ok := known[sc.Name+"\x00"+t.Key()]; ok {
				breach = k
			}
			metric := strings.TrimSuffix(t.Key(), " "+t.Expression) // without the scenario's own tag
			rows = append(rows, fmt.Sprintf("| %s | `%s` | `%s` | %s | %s |", sc.Name, metric, t.Expression, orDash(t.Measured()), breach))
		}
	}
	if len(rows) > 0 {
		b.WriteString("**Thresholds that broke**\n\n| scenario | metric | threshold | measured | breach |\n|---|---|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n\n")
	}
	var other []string
	for _, f := range s.FailedChecks {
		if !strings.Contains(f, ": threshold ") {
			other = append(other, f)
		}
	}
	if len(other) > 0 {
		b.WriteString("**Also failed**\n\n")
		for _, f := range other {
			fmt.Fprintf(b, "- %s\n", mdEscape(f))
		}
		b.WriteString("\n")
	}
}

// markdownDefects names the known defects the run met, and those of this build it did not meet.
func markdownDefects(b *strings.Builder, v *defects.Verdict) {
	if v == nil || len(v.Known)+len(v.NotAppearing) == 0 {
		return
	}
	met := map[string][]string{}
	var ids []string
	for _, k := range v.Known {
		for _, id := range k.Defects {
			if _, ok := met[id]; !ok {
				ids = append(ids, id)
			}
			if !slices.Contains(met[id], k.Scenario) {
				met[id] = append(met[id], k.Scenario)
			}
		}
	}
	if len(ids) > 0 {
		b.WriteString("**Known defects of certctl met** (docs/certctl-findings.md; each has a script that shows it without the harness, docs/findings/repro/&lt;id&gt;.sh)\n\n")
		for _, id := range ids {
			fmt.Fprintf(b, "- `%s`: %s\n", id, strings.Join(met[id], ", "))
		}
		b.WriteString("\n")
	}
	if len(v.NotAppearing) > 0 {
		build := v.Build
		if build == "" {
			build = "this build"
		}
		fmt.Fprintf(b, "**Known defects not met** (seen on %s before; fixed?)\n\n", build)
		for _, a := range v.NotAppearing {
			fmt.Fprintf(b, "- `%s` (%s): %s ran without it\n", a.Defect, mdEscape(a.Title), strings.Join(a.Scenarios, ", "))
		}
		b.WriteString("\n")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mdEscape keeps a line of the text report from being read as Markdown markup (a pipe in a table, an
// underscore or asterisk as emphasis).
func mdEscape(s string) string {
	return strings.NewReplacer("|", "\\|", "*", "\\*", "_", "\\_", "<", "&lt;").Replace(s)
}

// fence is a code fence longer than any run of backticks in text, so that the text cannot close it
// (a command line or a k6 error may hold some).
func fence(text string) string {
	longest, run := 2, 0
	for _, c := range text {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", longest+1)
}

func exitMeaning(code string) string {
	if code == "" {
		return "no code was recorded: the run never started (an earlier step failed) or did not finish (timed out, cancelled)"
	}
	// "00" or "+0" is no code the harness returns, whatever Atoi makes of it.
	if n, err := strconv.Atoi(code); err == nil && strconv.Itoa(n) == code {
		if m, ok := results.ExitMeaning(n); ok {
			return m
		}
	}
	return "unexpected code; see the run step's log"
}
