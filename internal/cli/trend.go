package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/weekly"
)

// trendCmd: loadtest trend fetch | report, the weekly workflow's trend job.
func trendCmd(ctx context.Context, e Env, args []string) int {
	if len(args) == 0 || (args[0] != "fetch" && args[0] != "report") {
		got := "nothing"
		if len(args) > 0 {
			got = fmt.Sprintf("%q", args[0])
		}
		return badArgs(e, "trend", "fetch or report, got %s", got)
	}
	flags := flag.NewFlagSet("trend "+args[0], flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	out := flags.String("out", "", "")
	switch args[0] {
	case "fetch":
		weeks := flags.Int("weeks", 12, "")
		exclude := flags.Int64("exclude", 0, "")
		workflow := flags.String("workflow", "", "")
		if err := trendArgs(flags, args[1:], "out"); err != nil {
			return badArgs(e, "trend", "fetch: %v", err)
		}
		if *weeks < 1 {
			return badArgs(e, "trend", "fetch: --weeks %d: at least one week", *weeks)
		}
		if *workflow == "" {
			// GITHUB_WORKFLOW_REF is owner/repo/.github/workflows/<file>@<ref>.
			ref, _, _ := strings.Cut(e.Getenv("GITHUB_WORKFLOW_REF"), "@")
			*workflow = path.Base(ref)
			if ref == "" {
				*workflow = "loadtest.yml"
			}
		}
		api := e.Getenv("LOADTEST_GITHUB_API_URL") // a mirror, or the tests' stand-in
		if api == "" {
			api = e.Getenv("GITHUB_API_URL")
		}
		if api == "" {
			api = "https://api.github.com"
		}
		branch := e.Getenv("GITHUB_REF_NAME")
		f := weekly.Fetcher{API: api, Token: e.Getenv("GITHUB_TOKEN"), Repo: e.Getenv("GITHUB_REPOSITORY"), Workflow: *workflow,
			Branch: branch, Event: "schedule", Exclude: *exclude, Weeks: *weeks, HTTP: &http.Client{Timeout: 10 * time.Minute}, Log: e.Stderr}
		idx, err := f.Fetch(ctx, *out)
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: trend fetch: %v\n", err)
			return results.ExitEnvironment
		}
		n := 0
		for _, r := range idx.Runs {
			if r.Skipped == "" {
				n++
			}
		}
		fmt.Fprintf(e.Stdout, "fetched %d previous runs of %s on %s into %s\n", n, *workflow, branch, *out)
		return results.ExitOK
	case "report":
		current := flags.String("current", "", "")
		history := flags.String("history", "", "")
		baselines := flags.String("baselines", "docs/baselines/weekly", "")
		tolerance := flags.Float64("tolerance", 0, "")
		if err := trendArgs(flags, args[1:], "current", "out"); err != nil {
			return badArgs(e, "trend", "report: %v", err)
		}
		res, err := weekly.Report(weekly.Options{Current: *current, History: *history, Baselines: *baselines, Out: *out, Tolerance: *tolerance, Now: e.Now()})
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: trend report: %v\n", err)
			return results.ExitBadInput
		}
		fmt.Fprintf(e.Stdout, "trend: %s (%d comparisons, %d weeks); %s/trend.md\n", res.Verdict, len(res.Comparisons), len(res.Trend.Weeks), *out)
		if res.Verdict == "regressed" {
			return ExitRegressed
		}
		return results.ExitOK
	}
	return results.ExitBadInput // unreachable: args[0] is fetch or report
}

// trendArgs parses a trend subcommand's flags, wherever they stand, and names the first required
// flag left empty.
func trendArgs(flags *flag.FlagSet, args []string, required ...string) error {
	pos, err := parseInterleaved(flags, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("takes no arguments but its flags (got %q)", strings.Join(pos, " "))
	}
	for _, name := range required {
		if flags.Lookup(name).Value.String() == "" {
			return fmt.Errorf("--%s DIR is needed", name)
		}
	}
	return nil
}
