// Package cli is the loadtest command: `run` drives a load test, `report` re-renders a saved run.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"certctl-loadtest/internal/docs"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/report"
	"certctl-loadtest/internal/results"
)

var usage = `usage:
  loadtest help | -h | --help   this text; loadtest <command> --help: the same
  loadtest version           the harness's build and the k6 and certctl it pins
  loadtest run               run the tiers in TIER against certctl (configuration from the environment,
                             see docs/configuration.md); exits with one of the codes below
  loadtest run --segments N  the same, each scenario as N k6 processes, each an execution segment of its
                             load, merged into one record: percentiles and thresholds from the pooled
                             samples (SEGMENTS=N does the same); see docs/distributed.md
  loadtest seed-external     TARGET=external: create the base rows the scenarios reference on that certctl,
                             through its API (CONFIRM=yes); clean-external archives and deletes what the
                             harness left there, rows named lt-… only
  loadtest collect <dir>     merge the records k6 processes wrote elsewhere (k6-operator runners: their
                             results volume copied back) into a run: summary.json, summary.txt, verdict
  loadtest k8s --out DIR [--namespace NS]
                             write the k6-operator TestRuns (SEGMENTS runners each), their k6 archives,
                             the results volume and a kustomization.yaml that run the selected scenarios
                             against CERTCTL_URL from a Kubernetes cluster; loadtest collect reads back
                             what the runners wrote
  loadtest spotcheck         like run, but the operator spot checks (k6/spotcheck/*.js, one after
                             another) instead of the tiers; see docs/performance-baselines.md
  loadtest report [--write] <run-dir>
                             print a saved run's summary, rendered afresh from its records, and exit with
                             its verdict; nothing is written (a downloaded artifact stays as it came)
                             unless --write, which rewrites its summary.json, summary.txt and index.html
  loadtest report --format markdown <run-dir> [exit-code]
                             print the run's summary as Markdown (the workflow's job summary); the exit
                             code bin/loadtest run returned stands in when the run wrote no summary.json;
                             exits 0 whatever it finds
  loadtest capacity          search SCENARIO's knee: the highest arrival rate at which its budget holds
                             (ramp ×CAPACITY_FACTOR, then bisection; a breach counts when a repeat
                             breaches too), each step an ordinary run of CAPACITY_STEP; results in
                             results/<RUN_ID>/ (capacity.json, .txt, .svg and each step's run); see
                             docs/capacity.md
  loadtest findings [--only id,...]
                             run the reproductions of certctl's findings (docs/findings/repro) against
                             the stack's certctl, or TARGET=external's, and print id, outcome, seconds;
                             results/<RUN_ID>/findings.{json,txt}; exits 1 when one differs from the
                             catalogue for the build that ran (docs/certctl-findings.md)
  loadtest findings --issue ID
                             print one finding as an issue body for certctl: what happens, the impact,
                             the code at each build, the reproduction script whole
  loadtest findings --measure ID
                             run one measurement of what a finding costs (docs/findings/cost/ID.sh)
                             against the stack's certctl; its table also in results/<RUN_ID>/measure-ID.txt
  loadtest overhead          what the run's own instruments cost certctl: the load the environment
                             configures with every instrument on, and with each in OVERHEAD switched off
                             in turn, OVERHEAD_RUNS rounds in alternating order (ABBA), each an ordinary
                             run; then compare per instrument (off → on) into results/<RUN_ID>/
                             overhead.json, .txt, .md; exits 1 when every instrument on moves a
                             scenario's p50 beyond the noise against all off (the scenarios judged as
                             one family: each at 1 − 0.05/n); see docs/diagnosis.md
  loadtest compare [--format text|markdown|json] [--noise F] [--tolerance F] [--confidence F] [--out DIR] OLD NEW
                             set two sets of runs side by side, scenario by scenario: percentiles and
                             error rate with 95 % intervals (--confidence; bootstrap over runs and 10 s blocks of
                             requests from raw/), ~ for a change inside the noise (default 0.10), and
                             the diagnosis's cause; OLD and NEW are each [label=]run-dir[,run-dir...];
                             exits 1 when a metric is significantly worse by more than the tolerance
                             (default 0), 2 on bad input; --out writes compare.json, .txt and .md
  loadtest baseline [--name NAME] [--build BUILD] <run-dir>
                             record a finished run as docs/baselines/<build>/<name>.json (its summary and
                             who recorded it from what) with its samples trimmed to <name>.raw/, then
                             regenerate the docs' tables; <build> is the certctl build or image tag
  loadtest trend fetch --out DIR [--weeks N] [--exclude RUN_ID]
                             the weekly workflow's previous scheduled runs' loadtest-* artifacts, through
                             GitHub's REST API (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_REF_NAME)
  loadtest trend report --current DIR --out DIR [--history DIR] [--baselines DIR] [--tolerance F]
                             this week's runs against last week's and the baselines, and each scenario's
                             p95 and achieved rate over the weeks: trend.md, trend.json, trend-*.svg;
                             exits 1 on a regression
  loadtest check             validate the configuration and print the plan: each selected scenario's
                             load as k6 inspect resolves it, and the load's wall time
  loadtest docs [--check]    regenerate the tables the docs carry from the code (--check: fail if stale)

exit codes of run and spotcheck:
` + results.ExitCodeText()

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
	// Euid and Egid are the process's; with SUDO_UID they say whose the results are.
	Euid, Egid int
}

// Main runs the command and returns its exit code.
func Main(ctx context.Context, e Env) int {
	if len(e.Args) == 0 {
		fmt.Fprint(e.Stderr, usage)
		return results.ExitBadInput
	}
	cmd, args := e.Args[0], e.Args[1:]
	if isHelp(cmd) || cmd == "help" || slices.ContainsFunc(args, isHelp) {
		fmt.Fprint(e.Stdout, usage)
		return results.ExitOK
	}
	switch cmd {
	case "version":
		return versionCmd(e)
	case "run", "check", "spotcheck":
		if cmd != "spotcheck" {
			// --segments is the one flag: the rest of the configuration is the environment's.
			var err error
			if e, args, err = segmentsFlag(e, args); err != nil {
				fmt.Fprintf(e.Stderr, "loadtest: %s: %v\n", cmd, err)
				return results.ExitBadInput
			}
		}
		if len(args) > 0 {
			// Configuration comes from the environment only: an argument would be silently ignored.
			fmt.Fprintf(e.Stderr, "loadtest: %s takes no arguments (got %q): set its configuration in the environment, e.g. TIER=api DURATION=1m; see docs/configuration.md\n", cmd, strings.Join(args, " "))
			return results.ExitBadInput
		}
		return runCmd(ctx, e, cmd)
	case "report":
		return reportCmd(e, args)
	case "collect":
		return collectCmd(e, args)
	case "k8s":
		return k8sCmd(ctx, e, args)
	case "seed-external", "clean-external":
		if len(args) > 0 {
			fmt.Fprintf(e.Stderr, "loadtest: %s takes no arguments: TARGET=external's CERTCTL_URL and CERTCTL_API_KEY, and CONFIRM=yes, come from the environment\n", cmd)
			return results.ExitBadInput
		}
		if cmd == "seed-external" {
			return externalScriptCmd(ctx, e, "seed", "creates the harness's base rows (team, owner, profile, renewal policy, issuer; ids LT_*_ID) where they are missing")
		}
		return externalScriptCmd(ctx, e, "clean", "archives the certificates and deletes the agents whose id or name starts with lt-, then the base rows seed-external created")
	case "docs":
		return docsCmd(ctx, e, args)
	case "overhead":
		if len(args) > 0 {
			fmt.Fprintf(e.Stderr, "loadtest: overhead takes no arguments (got %q): its configuration is the environment's, OVERHEAD and OVERHEAD_RUNS with the run's own knobs\n", strings.Join(args, " "))
			return results.ExitBadInput
		}
		return overheadCmd(ctx, e)
	case "findings":
		return findingsCmd(ctx, e, args)
	case "compare":
		return compareCmd(e, args)
	case "baseline":
		return baselineCmd(ctx, e, args)
	case "trend":
		return trendCmd(ctx, e, args)
	case "capacity":
		if len(args) > 0 {
			fmt.Fprintf(e.Stderr, "loadtest: capacity takes no arguments (got %q): set SCENARIO and the CAPACITY_* knobs in the environment; see docs/capacity.md\n", strings.Join(args, " "))
			return results.ExitBadInput
		}
		if err := harness.CheckScenarioVars(e.Root, e.Environ); err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
			return results.ExitBadInput
		}
		return capacityCmd(ctx, e)
	default:
		fmt.Fprintf(e.Stderr, "loadtest: unknown command %q\n%s", cmd, usage)
		return results.ExitBadInput
	}
}

// segmentsFlag takes `--segments N` off the arguments and into the environment (SEGMENTS=N), so the
// run records it like every other knob.
func segmentsFlag(e Env, args []string) (Env, []string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		v, ok := strings.CutPrefix(a, "--segments=")
		if a == "--segments" {
			if i+1 == len(args) {
				return e, nil, fmt.Errorf("--segments needs a number of k6 processes per scenario")
			}
			v, ok = args[i+1], true
			i++
		}
		if !ok {
			rest = append(rest, a)
			continue
		}
		get := e.Getenv
		e.Getenv = func(k string) string {
			if k == "SEGMENTS" {
				return v
			}
			return get(k)
		}
		e.Environ = append(append([]string(nil), e.Environ...), "SEGMENTS="+v)
	}
	return e, rest, nil
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

// versionCmd prints the harness's revision (from the Go build) and the pins in .env.
func versionCmd(e Env) int {
	fmt.Fprintf(e.Stdout, "loadtest %s\n", revision(e))
	pins, err := harness.ReadEnvFile(filepath.Join(e.Root, ".env"))
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
		return results.ExitEnvironment
	}
	for _, k := range []string{"IMAGE_K6", "CERTCTL_IMAGE"} {
		fmt.Fprintf(e.Stdout, "%s=%s\n", k, pins[k])
	}
	return results.ExitOK
}

// revision is the harness's git revision: the Go build's stamp, else the checkout's; "-dirty" when
// either says so.
func revision(e Env) string {
	rev, dirty := "dev", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = s.Value[:12]
			}
			if s.Key == "vcs.modified" && s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "dev" {
		// Built with -buildvcs=false (a GOFLAGS default on some machines): ask the checkout.
		var out strings.Builder
		if c, err := e.Exec(context.Background(), harness.Cmd{Name: "git", Args: []string{"-C", e.Root, "rev-parse", "--short=12", "HEAD"}, Env: e.Environ, Stdout: &out, Stderr: io.Discard}); err == nil && c == 0 {
			rev = strings.TrimSpace(out.String())
		}
	}
	return rev + dirty
}

// runCmd reads the configuration and, unless cmd is check, hands it to the harness.
func runCmd(ctx context.Context, e Env, cmd string) int {
	if err := harness.CheckScenarioVars(e.Root, e.Environ); err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
		return results.ExitBadInput
	}
	load := harness.Load
	if cmd == "spotcheck" {
		load = harness.LoadSpotchecks
	}
	cfg, err := load(e.Root, e.Getenv, e.Now())
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
		return results.ExitBadInput
	}
	if cmd == "check" {
		return checkCmd(ctx, e, cfg)
	}
	if seq := harness.OneAfterAnother(cfg); len(seq) > 1 {
		return runEach(ctx, e, cmd, cfg, seq)
	}
	return runOne(ctx, e, cmd, cfg)
}

// runOne runs one configuration and ends with the line naming the run and its code.
func runOne(ctx context.Context, e Env, cmd string, cfg harness.Config) int {
	if cfg.External != nil {
		// Someone else's server: say what it is about to receive, and for how long, before any of it.
		if rows, err := planRows(ctx, e, cfg); err == nil {
			fmt.Fprintf(e.Stderr, "loadtest: TARGET=external: this load goes to %s, %s per scenario:\n%s", cfg.External.URL, cfg.Duration, docs.Plan(rows, false, true))
		} else {
			fmt.Fprintf(e.Stderr, "loadtest: TARGET=external: this load goes to %s, %s per scenario, at each scenario's rate (k6 inspect failed: %v)\n", cfg.External.URL, cfg.Duration, err)
		}
	}
	r := &harness.Runner{
		Cfg: cfg, Exec: e.Exec, Env: append(append([]string(nil), e.Environ...), envList(cfg.Env)...),
		Stdout: e.Stdout, Stderr: e.Stderr, Now: e.Now, Command: commandLine(cmd, e.Getenv, e.Environ), Settings: harness.InForce(e.Environ),
		Owner: harness.InvokingUser(e.Getenv, e.Euid, e.Egid), Harness: revision(e),
	}
	code := r.Run(ctx)
	// The last line names the run just attempted, so nobody reads an older one's results/latest.
	meaning, _ := results.ExitMeaning(code)
	if r.Created {
		fmt.Fprintf(e.Stderr, "loadtest: exit %d (%s); run %s: %s\n", code, meaning, cfg.RunID, cfg.RunDir())
	} else {
		fmt.Fprintf(e.Stderr, "loadtest: exit %d (%s): no run directory was created for run %s\n", code, meaning, cfg.RunID)
	}
	return code
}

// runEach runs each scale scenario as a run of its own, one after another, each on a fresh stack
// (certctl's scale paths would contend for one server's CPU and database otherwise). Every
// configuration is checked before the first starts; a signal stops the sequence.
func runEach(ctx context.Context, e Env, cmd string, cfg harness.Config, seq []harness.Scenario) int {
	if len(seq) != len(cfg.Scenarios) {
		fmt.Fprintf(e.Stderr, "loadtest: TIER=%s: the scale tier's scenarios run one after another, each on a stack of its own: run the other tiers separately\n", strings.Join(cfg.Tiers, ","))
		return results.ExitBadInput
	}
	base := cfg.RunID
	cfgs := make([]harness.Config, len(seq))
	envs := make([]Env, len(seq))
	for i, sc := range seq {
		over := map[string]string{"SCENARIOS": sc.Name, "RUN_ID": harness.SequenceRunID(base, sc.Name)}
		getenv := func(k string) string {
			if v, ok := over[k]; ok {
				return v
			}
			return e.Getenv(k)
		}
		c, err := harness.Load(e.Root, getenv, e.Now())
		if err == nil {
			if _, serr := os.Lstat(c.RunDir()); serr == nil {
				err = fmt.Errorf("%s already exists: results of a run are never overwritten; pick another RUN_ID (or leave it unset)", c.RunDir())
			}
		}
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: %s: %v\n", sc.Name, err)
			return results.ExitBadInput
		}
		cfgs[i] = c
		// Each run records the command that repeats it alone: SCENARIOS=<it>.
		envs[i] = e
		envs[i].Getenv = getenv
		envs[i].Environ = append(append([]string(nil), e.Environ...), "SCENARIOS="+sc.Name)
	}
	tier := seq[0].Tier
	fmt.Fprintf(e.Stderr, "loadtest: the %s tier: %d scenarios, one after another, each on a fresh stack\n", tier, len(cfgs))
	codes := make([]int, 0, len(cfgs))
	var lines []string
	for i, c := range cfgs {
		if ctx.Err() != nil {
			lines = append(lines, fmt.Sprintf("  %-14s not run (interrupted)", seq[i].Name))
			continue
		}
		fmt.Fprintf(e.Stderr, "loadtest: %s scenario %d of %d: %s\n", tier, i+1, len(cfgs), seq[i].Name)
		code := runOne(ctx, envs[i], cmd, c)
		codes = append(codes, code)
		meaning, _ := results.ExitMeaning(code)
		lines = append(lines, fmt.Sprintf("  %-14s exit %d (%s): %s", seq[i].Name, code, meaning, c.RunDir()))
	}
	code := results.Verdict(codes...)
	if ctx.Err() != nil {
		code = results.ExitInterrupted
	}
	meaning, _ := results.ExitMeaning(code)
	// The PKI tier's scenarios are points of one curve (issuance at 1, 4, 16 clients) and one CA's
	// figures: set side by side, as a CA benchmark prints them.
	var pki []results.PKIRow
	var found []string
	for _, c := range cfgs {
		if s, err := results.Load(c.RunDir()); err == nil {
			pki = append(pki, s.PKITier...)
			found = append(found, s.Findings...)
		}
	}
	if len(pki) > 0 {
		fmt.Fprintf(e.Stderr, "loadtest: %s", report.PKITable(pki))
		for _, f := range found {
			fmt.Fprintf(e.Stderr, "  - %s\n", f)
		}
	}
	fmt.Fprintf(e.Stderr, "loadtest: the %s tier, exit %d (%s):\n%s\n", tier, code, meaning, strings.Join(lines, "\n"))
	return code
}

// checkCmd prints the plan: each selected scenario's load as k6 resolves it with this environment (k6
// inspect: a script that does not load fails here), and about how long the run takes.
func checkCmd(ctx context.Context, e Env, cfg harness.Config) int {
	target := "CERTCTL_IMAGE"
	if cfg.Dist != "" {
		target = "the certctl build in " + cfg.Dist
	}
	if cfg.Faults {
		target += ", behind the fault proxy"
	}
	if cfg.External != nil {
		target = "at " + cfg.External.URL + " (external)"
	}
	rows, err := planRows(ctx, e, cfg)
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
		return results.ExitBadInput
	}
	fmt.Fprintf(e.Stdout, "ok: tiers %s, %d scenarios, certctl %s, duration %s\n\n", strings.Join(cfg.Tiers, ","), len(cfg.Scenarios), target, cfg.Duration)
	fmt.Fprint(e.Stdout, docs.Plan(rows, len(harness.OneAfterAnother(cfg)) > 1, cfg.External != nil))
	if cfg.Segments > 1 {
		fmt.Fprintf(e.Stdout, "each scenario runs as %d k6 processes, an execution segment each (%s …); their records are merged from the pooled samples\n",
			cfg.Segments, strings.Join(harness.SegmentArgs(0, cfg.Segments), " "))
	}
	return results.ExitOK
}

// PlanStacks is what `loadtest run` (or spotcheck) would do with e's environment, without doing it:
// the load each of its stacks carries, as check plans it (k6 inspect of each selected scenario).
func PlanStacks(ctx context.Context, e Env, cmd string) ([]time.Duration, error) {
	load := harness.Load
	if cmd == "spotcheck" {
		load = harness.LoadSpotchecks
	}
	cfg, err := load(e.Root, e.Getenv, e.Now())
	if err != nil {
		return nil, err
	}
	rows, err := planRows(ctx, e, cfg)
	if err != nil {
		return nil, err
	}
	return docs.Stacks(rows, len(harness.OneAfterAnother(cfg)) > 1), nil
}

// planRows is each selected scenario's load as k6 inspect resolves it with the run's knobs.
func planRows(ctx context.Context, e Env, cfg harness.Config) ([]docs.Row, error) {
	// What the run gives each k6 (k6 inspect reads no system variable unless told).
	args := []string{"tool", "k6", "inspect"}
	for _, kv := range envList(cfg.Env) {
		if k, _, _ := strings.Cut(kv, "="); k == "DURATION" || harness.K6Env(k) {
			args = append(args, "-e", kv)
		}
	}
	inspect := func(script string) ([]byte, error) {
		var out, errb strings.Builder
		code, err := e.Exec(ctx, harness.Cmd{Name: "go", Args: append(args, script), Env: docs.CleanEnv(e.Environ), Stdout: &out, Stderr: &errb})
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d: %s", code, strings.TrimSpace(errb.String()))
		}
		return []byte(out.String()), err
	}
	var rows []docs.Row
	for _, sc := range cfg.Scenarios {
		got, err := docs.Inspect(sc.Tier, sc.Path, inspect)
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	return rows, nil
}

// reportCmd renders a saved run: as text (rewriting its summary files), or as Markdown.
func reportCmd(e Env, args []string) int {
	flags := flag.NewFlagSet("report", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	format := flags.String("format", "text", "")
	write := flags.Bool("write", false, "")
	if err := flags.Parse(args); err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: report: %v\n%s", err, usage)
		return results.ExitBadInput
	}
	switch n := flags.NArg(); {
	case *format == "text" && n == 1:
		return reportText(e, flags.Arg(0), *write)
	case *format == "markdown" && (n == 1 || n == 2):
		return reportMarkdown(e, flags.Arg(0), flags.Arg(1))
	case *format != "text" && *format != "markdown":
		fmt.Fprintf(e.Stderr, "loadtest: report --format %q: use text or markdown\n", *format)
		return results.ExitBadInput
	}
	fmt.Fprint(e.Stderr, usage)
	return results.ExitBadInput
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
		code, err := e.Exec(ctx, harness.Cmd{Name: "go", Args: []string{"tool", "k6", "inspect", script}, Env: docs.CleanEnv(e.Environ), Stdout: &out, Stderr: &errb})
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

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// commandLine is how to repeat the run: the make goal (or the subcommand) and every knob in force
// (harness.RepeatCommand).
func commandLine(sub string, getenv func(string) string, environ []string) string {
	cmd := harness.RepeatCommand(sub, environ)
	if goal := getenv("LOADTEST_GOAL"); goal != "" {
		cmd = "make " + goal + strings.TrimPrefix(cmd, "loadtest "+sub)
	}
	return cmd
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
