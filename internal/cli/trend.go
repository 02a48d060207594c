package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/history"
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
		store := flags.String("store", "", "")
		week := flags.String("week", "", "")
		if err := trendArgs(flags, args[1:], "current", "out"); err != nil {
			return badArgs(e, "trend", "report: %v", err)
		}
		if *week == "" {
			*week = strings.TrimSpace("#" + e.Getenv("GITHUB_RUN_NUMBER") + " " + e.Now().UTC().Format("2006-01-02"))
		}
		res, err := weekly.Report(weekly.Options{Current: *current, History: *history, Baselines: *baselines, Out: *out, Tolerance: *tolerance, Now: e.Now(),
			Store: *store, Week: *week, Detect: otava(ctx, e)})
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

// otava runs Apache Otava's change points (tools/otava/changepoints.py) with the interpreter OTAVA_PYTHON
// names (a virtual environment with tools/otava/requirements.txt; scripts/install-deps.sh makes one).
func otava(ctx context.Context, e Env) history.Detector {
	python := e.Getenv("OTAVA_PYTHON")
	if python == "" {
		python = harness.KnobDefault("OTAVA_PYTHON")
	}
	return history.OtavaDetector(func(req []byte) ([]byte, error) {
		f, err := os.CreateTemp("", "changepoints-*.json")
		if err != nil {
			return nil, err
		}
		defer os.Remove(f.Name())
		if _, err := f.Write(req); err != nil {
			f.Close()
			return nil, err
		}
		f.Close()
		var out, errb bytes.Buffer
		code, err := e.Exec(ctx, harness.Cmd{Name: python, Args: []string{filepath.Join(e.Root, "tools", "otava", "changepoints.py"), f.Name()},
			Env: e.Environ, Stdout: &out, Stderr: &errb})
		if err != nil || code != 0 {
			if err != nil {
				return nil, fmt.Errorf("%s tools/otava/changepoints.py: %v (OTAVA_PYTHON names an interpreter with tools/otava/requirements.txt)", python, err)
			}
			lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
			return nil, fmt.Errorf("%s tools/otava/changepoints.py: exit %d: %s (OTAVA_PYTHON names an interpreter with tools/otava/requirements.txt)", python, code, strings.Join(lines[max(0, len(lines)-5):], " / "))
		}
		return out.Bytes(), nil
	})
}
