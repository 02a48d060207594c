package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"certctl-loadtest/internal/docs"
	"certctl-loadtest/internal/report"
	"certctl-loadtest/internal/results"
)

// reportCmd renders a saved run: as text (rewriting its summary files), or as Markdown.
func reportCmd(e Env, args []string) int {
	flags := flag.NewFlagSet("report", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	format := flags.String("format", "text", "")
	write := flags.Bool("write", false, "")
	pos, err := parseInterleaved(flags, args)
	if err != nil {
		return badArgs(e, "report", "%v", err)
	}
	if *format != "text" && *format != "markdown" && *format != "junit" {
		return badArgs(e, "report", "--format %q: use text, markdown or junit", *format)
	}
	dir := filepath.Join(e.Root, "results", "latest")
	if len(pos) > 0 {
		dir = pos[0]
	} else if _, err := os.Stat(dir); err != nil {
		return badArgs(e, "report", "no run directory given, and no results/latest: no run has finished in this clone yet")
	}
	switch n := len(pos); {
	case *format == "text" && n <= 1:
		return reportText(e, dir, *write)
	case *format == "junit" && n <= 1:
		return reportJUnit(e, dir)
	case *format == "markdown" && n <= 2:
		step := ""
		if n == 2 {
			step = pos[1]
		}
		return reportMarkdown(e, dir, step)
	}
	return badArgs(e, "report", "takes one run directory (got %d arguments: %s)", len(pos), strings.Join(pos, " "))
}

// reportText prints a saved run's summary and exits with the run's own code, so a script can judge a
// downloaded artifact as it would the run.
func reportText(e Env, dir string, write bool) int {
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	s, err := results.Load(dir)
	if err == nil && write {
		err = report.Write(dir, s)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
		return results.ExitBadInput
	}
	fmt.Fprint(e.Stdout, report.Text(s))
	return s.ExitCode
}

// reportJUnit prints a saved run as JUnit XML (junit.xml, as the run wrote it) and exits with the run's
// code.
func reportJUnit(e Env, dir string) int {
	s, err := results.Load(dir)
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
		return results.ExitBadInput
	}
	fmt.Fprint(e.Stdout, report.JUnit(s))
	return s.ExitCode
}

// reportMarkdown prints the job summary. It exits 0 whatever it finds, a missing or empty directory
// included: the workflow's last step carries the verdict, and a summary that cannot be written must
// not hide it.
func reportMarkdown(e Env, dir, stepCode string) int {
	d, s := results.OpenRunDir(dir)
	fmt.Fprint(e.Stdout, report.Markdown(s, d, stepCode))
	return results.ExitOK
}

// docsCmd regenerates the tables the docs carry from the code, or with --check reports stale ones.
func docsCmd(ctx context.Context, e Env, args []string) int {
	inspect := func(script string) ([]byte, error) {
		var out, errb strings.Builder
		code, err := e.Exec(ctx, k6Cmd(e, []string{"inspect", script}, &out, &errb))
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d: %s", code, errb.String())
		}
		return []byte(out.String()), err
	}
	blocks, err := docs.Blocks(e.Root, inspect)
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
		return results.ExitBadInput
	}
	check := len(args) > 0 && args[0] == "--check"
	stale, err := docs.Sync(e.Root, blocks, docs.Documents, !check)
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
		return results.ExitBadInput
	}
	for _, s := range stale {
		verb := "updated"
		if check {
			verb = "out of date"
		}
		fmt.Fprintf(e.Stdout, "%s: %s\n", verb, s)
	}
	if check && len(stale) > 0 {
		return 1
	}
	return results.ExitOK
}
