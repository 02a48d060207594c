package report

import (
	"certctl-loadtest/internal/results"
	"fmt"
	"strconv"
	"strings"
)

// Markdown renders a run's job summary ($GITHUB_STEP_SUMMARY): the verdict and what its exit code means,
// summary.txt in a fence, and the files the artifact holds. s is the run's summary.json, nil when it wrote
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
	exit := fmt.Sprintf("**Exit %s**: %s.\n", orUnknown(code), exitMeaning(code))

	if !dir.Exists {
		where := ""
		if dir.Path != "" {
			where = "`" + dir.Path + "` does not exist; "
		}
		fmt.Fprintf(&b, "No results: %sthe run stopped before it created its directory (bad input,\n", where)
		b.WriteString("no Docker engine, a missing image), so there is no artifact either. The run step's log says why.\n\n")
		b.WriteString(exit)
		return b.String()
	}

	var text string
	if s != nil {
		text = Text(*s)
		headline, _, _ := strings.Cut(text, "\n")
		fmt.Fprintf(&b, "**%s**\n", headline)
	} else {
		fmt.Fprintf(&b, "**No summary.json in `%s`**: the run ended before its summary was written (the step timed out or was\n", dir.Path)
		b.WriteString("cancelled, or the summary writer failed). Whatever the run did save is in the artifact.\n")
	}
	b.WriteString("\n" + exit)
	if s != nil && stepCode != "" && stepCode != code {
		fmt.Fprintf(&b, "(`bin/loadtest run` itself exited %s.)\n", stepCode)
	}
	b.WriteString("\n")
	if s != nil {
		diagnosisMarkdown(&b, s.Diagnosis)
	}

	if text != "" {
		f := fence(text)
		b.WriteString(f + "text\n" + text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
		b.WriteString(f + "\n\n")
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
