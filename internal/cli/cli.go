// Package cli is the loadtest command: `run` drives a load test, `report` re-renders a saved run.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"certctl-loadtest/internal/docs"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/report"
)

const usage = `usage:
  loadtest run               run the tiers in TIER against certctl (configuration from the environment,
                             see docs/configuration.md); exit 0 green, 99 thresholds breached, 2 bad input,
                             3 environment (docker, images, stack start), 4 k6 wrote no results
  loadtest spotcheck         like run, but the operator spot checks (k6/spotcheck/*.js, one after
                             another) instead of the tiers; see docs/performance-baselines.md
  loadtest report <run-dir>  rewrite summary.json and summary.txt of a saved run and print the text
  loadtest check             validate the configuration only
  loadtest docs [--check]    regenerate the tables the docs carry from the code (--check: fail if stale)
`

// Env is what the command reads from its process; tests supply their own.
type Env struct {
	Args    []string
	Getenv  func(string) string
	Environ []string
	Stdout  io.Writer
	Stderr  io.Writer
	Root    string
	Exec    harness.Executor
	Now     func() time.Time
}

// Main runs the command and returns its exit code.
func Main(ctx context.Context, e Env) int {
	if len(e.Args) == 0 {
		fmt.Fprint(e.Stderr, usage)
		return harness.ExitBadInput
	}
	switch e.Args[0] {
	case "run", "check", "spotcheck":
		load := harness.Load
		if e.Args[0] == "spotcheck" {
			load = harness.LoadSpotchecks
		}
		cfg, err := load(e.Root, e.Getenv, e.Now())
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
			return harness.ExitBadInput
		}
		if e.Args[0] == "check" {
			target := "CERTCTL_IMAGE"
			if cfg.Dist != "" {
				target = "the certctl build in " + cfg.Dist
			}
			if cfg.Faults {
				target += ", behind the fault proxy"
			}
			fmt.Fprintf(e.Stdout, "ok: tiers %s, %d scenarios, certctl %s, duration %s\n", strings.Join(cfg.Tiers, ","), len(cfg.Scenarios), target, cfg.Duration)
			return harness.ExitOK
		}
		r := &harness.Runner{
			Cfg: cfg, Exec: e.Exec, Env: append(append([]string(nil), e.Environ...), envList(cfg.Env)...),
			Stdout: e.Stdout, Stderr: e.Stderr, Now: e.Now, Command: commandLine(e.Args[0], e.Getenv),
		}
		return r.Run(ctx)
	case "report":
		if len(e.Args) != 2 {
			fmt.Fprint(e.Stderr, usage)
			return harness.ExitBadInput
		}
		dir := e.Args[1]
		if resolved, err := filepath.EvalSymlinks(dir); err == nil {
			dir = resolved
		}
		s, err := report.Load(dir)
		if err == nil {
			err = report.Write(dir, s)
		}
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
			return harness.ExitBadInput
		}
		fmt.Fprint(e.Stdout, report.Text(s))
		return harness.ExitOK
	case "docs":
		inspect := func(script string) ([]byte, error) {
			var out, errb strings.Builder
			code, err := e.Exec(ctx, harness.Cmd{Name: "go", Args: []string{"tool", "k6", "inspect", script}, Env: docs.CleanEnv(e.Environ), Stdout: &out, Stderr: &errb})
			if err == nil && code != 0 {
				err = fmt.Errorf("exit %d: %s", code, errb.String())
			}
			return []byte(out.String()), err
		}
		blocks, err := docs.Blocks(e.Root, inspect)
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
			return harness.ExitBadInput
		}
		check := len(e.Args) > 1 && e.Args[1] == "--check"
		stale, err := docs.Sync(e.Root, blocks, docs.Documents, !check)
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
			return harness.ExitBadInput
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
		return harness.ExitOK
	default:
		fmt.Fprintf(e.Stderr, "loadtest: unknown command %q\n%s", e.Args[0], usage)
		return harness.ExitBadInput
	}
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// commandLine records how to repeat the run: the make goal and the harness variables that were set.
func commandLine(sub string, getenv func(string) string) string {
	var parts []string
	for _, k := range []string{"TIER", "SCENARIOS", "DURATION", "IMAGES", "CERTCTL_DIST", "CERTCTL_IMAGE", "CERTCTL_RATE_LIMIT_ENABLED", "MAX_VUS", "FAULT_LATENCY", "FAULT_ERROR_RATE", "FAULT_ROUTE"} {
		if v := getenv(k); v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	cmd := "loadtest " + sub
	if goal := getenv("LOADTEST_GOAL"); goal != "" {
		cmd = "make " + goal
	}
	return strings.TrimSpace(cmd + " " + strings.Join(parts, " "))
}

// RepoRoot finds the repository from the working directory upwards (docker-compose.yml and k6/).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "k6")); err == nil && st.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, "docker-compose.yml")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside the certctl-loadtest repository (no docker-compose.yml and k6/ above %s)", dir)
		}
		dir = parent
	}
}
