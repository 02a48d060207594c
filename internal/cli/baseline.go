package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

var baselineNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{0,39}$`)

// baselineCmd records a finished run as docs/baselines/<build>/<name>.json: its summary with a
// "recorded" block (harness revision, when, from where), its raw samples trimmed to what compare reads
// beside it (<name>.raw/), and the docs' baseline tables regenerated.
func baselineCmd(ctx context.Context, e Env, args []string) int {
	flags := flag.NewFlagSet("baseline", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	name := flags.String("name", "", "")
	build := flags.String("build", "", "")
	pos, err := parseInterleaved(flags, args)
	if err != nil {
		return badArgs(e, "baseline", "%v", err)
	}
	if len(pos) != 1 {
		return badArgs(e, "baseline", "takes one run directory (got %d)", len(pos))
	}
	dir := pos[0]
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: baseline: %s has no summary.json: only a run that finished can be a baseline\n", dir)
		return results.ExitBadInput
	}
	var sum results.Summary
	var doc map[string]any
	if err := json.Unmarshal(b, &sum); err != nil || json.Unmarshal(b, &doc) != nil || sum.Schema != results.SummarySchema {
		fmt.Fprintf(e.Stderr, "loadtest: baseline: %s/summary.json is not a summary (%v)\n", dir, err)
		return results.ExitBadInput
	}
	if *build == "" {
		*build = buildLabel(sum.Run.Certctl)
	}
	if *name == "" {
		*name = strings.Join(sum.Run.Tiers, "-")
		if len(sum.Scenarios) == 1 && sum.Scenarios[0].Tier == "scale" {
			*name = "scale-" + strings.ReplaceAll(sum.Scenarios[0].Name, "_", "-")
		}
	}
	for what, v := range map[string]string{"--name": *name, "--build": *build} {
		if !baselineNameRE.MatchString(v) {
			fmt.Fprintf(e.Stderr, "loadtest: baseline: %s %q: lower-case letters, digits, dots and dashes\n", what, v)
			return results.ExitBadInput
		}
	}
	for _, sc := range sum.Scenarios {
		if sc.Record == nil {
			fmt.Fprintf(e.Stderr, "loadtest: baseline: %s has no results for %s: a baseline must hold every scenario it ran\n", dir, sc.Name)
			return results.ExitBadInput
		}
	}
	dest := filepath.Join(e.Root, "docs", "baselines", *build)
	rawDir := filepath.Join(dest, *name+".raw")
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: baseline: %v\n", err)
		return results.ExitEnvironment
	}
	kept := []string{}
	for _, sc := range sum.Scenarios {
		src := filepath.Join(dir, "raw", sc.Name+".json.gz")
		if _, err := os.Stat(src); err != nil {
			continue
		}
		if err := compare.TrimRaw(src, filepath.Join(rawDir, sc.Name+".json.gz"), sc.Record.LatencyMetric); err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: baseline: %v\n", err)
			return results.ExitEnvironment
		}
		kept = append(kept, sc.Name)
	}
	harnessRev := sum.Run.Harness
	if harnessRev == "" {
		harnessRev = "unknown (the run predates run.json's harness field)"
	}
	doc["recorded"] = map[string]any{
		"at": e.Now().UTC().Format("2006-01-02T15:04:05Z"), "from": sum.RunID, "run_harness": harnessRev, "recorder": revision(e),
		"command": sum.Run.Command, "host": sum.Run.Host, "testbed": sum.Run.Testbed, "certctl": sum.Run.Certctl, "k6": sum.Run.K6Version,
		"samples": *name + ".raw/", "samples_of": kept,
	}
	file := filepath.Join(dest, *name+".json")
	if err := output.JSON(file, doc); err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: baseline: %v\n", err)
		return results.ExitEnvironment
	}
	rel, _ := filepath.Rel(e.Root, file)
	fmt.Fprintf(e.Stdout, "baseline: %s (run %s, certctl %s, %d CPUs; samples of %s)\n", rel, sum.RunID, *build, sum.Run.Host.CPUs, strings.Join(kept, ", "))
	return docsCmd(ctx, e, nil)
}

// buildLabel is the name a build's baselines go under: the build folder (CERTCTL_DIST) or the image tag.
func buildLabel(c results.Certctl) string {
	if c.Build != "" {
		return filepath.Base(c.Build)
	}
	if i := strings.LastIndex(c.Image, ":"); i >= 0 {
		return c.Image[i+1:]
	}
	return "unknown"
}
