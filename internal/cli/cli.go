// Package cli is the loadtest command: `run` drives a load test, `report` re-renders a saved run.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/plan"
	"certctl-loadtest/internal/report"
	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/testbed"
)

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
	// Calibrate measures the machine (testbed.Measure) before each run and for `loadtest calibrate`;
	// nil: runs record no testbed and calibrate refuses (the unit tests).
	Calibrate func(ctx context.Context, fsyncDir string) testbed.Calibration
	// Euid and Egid are the process's; with SUDO_UID they say whose the results are.
	Euid, Egid int
	// CPUs is the machine's: the gate sizes its load by it (0: unknown, the load of a 4-CPU runner).
	CPUs int
	// built are the images of ours this invocation has built, shared by every run it starts.
	built *harness.OwnBuilds
}

// Main runs the command and returns its exit code. Every stack the command starts shares one set of
// built images: each image of ours is built once an invocation.
func Main(ctx context.Context, e Env) int {
	e.built = &harness.OwnBuilds{}
	return commands().main(ctx, e)
}

// main answers help, refuses what is no command, then runs the command e.Args name.
func (r registry) main(ctx context.Context, e Env) int {
	if len(e.Args) == 0 {
		fmt.Fprint(e.Stderr, r.overview())
		return results.ExitBadInput
	}
	cmd, args := e.Args[0], e.Args[1:]
	if isHelp(cmd) || cmd == "help" {
		if len(args) == 0 || (cmd != "help" && slices.ContainsFunc(args, isHelp)) {
			fmt.Fprint(e.Stdout, r.overview())
			return results.ExitOK
		}
		name := args[0]
		if isHelp(name) {
			name = "help"
		}
		c, ok := r.lookup(name)
		if !ok {
			fmt.Fprintf(e.Stderr, "loadtest: help %q: no such command%s\n%s", args[0], suggestNear(args[0], r.names()), shortUsage(""))
			return results.ExitBadInput
		}
		fmt.Fprint(e.Stdout, c.page())
		return results.ExitOK
	}
	c, ok := r.lookup(cmd)
	if !ok {
		fmt.Fprintf(e.Stderr, "loadtest: unknown command %q%s\n%s", cmd, suggestNear(cmd, r.names()), shortUsage(""))
		return results.ExitBadInput
	}
	if slices.ContainsFunc(args, isHelp) {
		fmt.Fprint(e.Stdout, c.page())
		return results.ExitOK
	}
	if e.Root == "" && !c.anywhere {
		fmt.Fprintf(e.Stderr, "loadtest: %s: not inside the certctl-loadtest repository (no docker-compose.yml and k6/ above the working directory): run it from a clone\n", cmd)
		return results.ExitBadInput
	}
	return c.run(ctx, e, cmd, args)
}

// runArgs is run, check and spotcheck's command line: --segments (not spotcheck's) and nothing else.
func runArgs(ctx context.Context, e Env, cmd string, args []string) int {
	if cmd != "spotcheck" {
		// --segments is the one flag: the rest of the configuration is the environment's.
		var err error
		if e, args, err = segmentsFlag(e, args); err != nil {
			return badArgs(e, cmd, "%v", err)
		}
	}
	if len(args) > 0 {
		// Configuration comes from the environment only: an argument would be silently ignored.
		return badArgs(e, cmd, "takes no arguments (got %q): set its configuration in the environment, e.g. TIER=api DURATION=1m; see docs/configuration.md", strings.Join(args, " "))
	}
	return runCmd(ctx, e, cmd)
}

// badArgs reports a command's wrong arguments, then its short usage, and exits 2.
func badArgs(e Env, cmd, format string, a ...any) int {
	fmt.Fprintf(e.Stderr, "loadtest: %s: %s\n%s", cmd, fmt.Sprintf(format, a...), shortUsage(cmd))
	return results.ExitBadInput
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
	if e.Root == "" {
		// Outside a clone the binary still knows what it is; the pins live in the repository's .env.
		fmt.Fprintln(e.Stdout, "pins: not inside the certctl-loadtest repository (its .env holds IMAGE_K6 and CERTCTL_IMAGE)")
		return results.ExitOK
	}
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
	if rev == "dev" && e.Root != "" {
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
	p, err := configure(e, cmd)
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
		if cmd != "check" && p.cfg.RunID != "" {
			// As after a run: the last line names the run, so nobody reads an older one's results.
			meaning, _ := results.ExitMeaning(results.ExitBadInput)
			fmt.Fprintf(e.Stderr, "loadtest: exit %d (%s): no run directory was created for run %s\n", results.ExitBadInput, meaning, p.cfg.RunID)
		}
		return results.ExitBadInput
	}
	if cmd == "check" {
		return checkCmd(ctx, e, p.cfg)
	}
	if len(p.seq) > 1 {
		return runEach(ctx, e, cmd, p)
	}
	return runOne(ctx, e, cmd, p.cfg)
}

// planned is a validated configuration: one run, or for a sequential tier (scale, deploy, pki) each
// scenario's run of its own with the environment that repeats it alone.
type planned struct {
	cfg  harness.Config
	seq  []harness.Scenario
	cfgs []harness.Config
	envs []Env
}

// configure is the one validation of run, check and spotcheck, so that check refuses exactly what run
// would, with the same sentence: the environment's names, the knobs' values, the tiers' mix, each run
// of a sequence and run directories that exist already.
func configure(e Env, cmd string) (planned, error) {
	if err := harness.CheckEnvironment(e.Root, e.Environ); err != nil {
		return planned{}, err
	}
	load := harness.Load
	if cmd == "spotcheck" {
		load = harness.LoadSpotchecks
	}
	cfg, err := load(e.Root, e.Getenv, e.Now())
	if err != nil {
		return planned{}, err
	}
	p := planned{cfg: cfg, seq: harness.OneAfterAnother(cfg)}
	if len(p.seq) < 2 {
		return p, exists(cfg)
	}
	if len(p.seq) != len(cfg.Scenarios) {
		return p, fmt.Errorf("TIER=%s: the %s tier's scenarios run one after another, each on a stack of its own: run the other tiers separately", strings.Join(cfg.Tiers, ","), p.seq[0].Tier)
	}
	base := cfg.RunID
	for _, sc := range p.seq {
		over := map[string]string{"SCENARIOS": sc.Name, "RUN_ID": harness.SequenceRunID(base, sc.Name)}
		getenv := func(k string) string {
			if v, ok := over[k]; ok {
				return v
			}
			return e.Getenv(k)
		}
		c, err := harness.Load(e.Root, getenv, e.Now())
		if err == nil {
			err = exists(c)
		}
		if err != nil {
			return p, fmt.Errorf("%s: %v", sc.Name, err)
		}
		p.cfgs = append(p.cfgs, c)
		// Each run records the command that repeats it alone: SCENARIOS=<it>.
		env := e
		env.Getenv = getenv
		env.Environ = append(append([]string(nil), e.Environ...), "SCENARIOS="+sc.Name)
		p.envs = append(p.envs, env)
	}
	return p, nil
}

func exists(c harness.Config) error {
	if _, err := os.Lstat(c.RunDir()); err == nil {
		return fmt.Errorf("%s already exists: results of a run are never overwritten; pick another RUN_ID (or leave it unset)", c.RunDir())
	}
	return nil
}

// runOne runs one configuration and ends with the line naming the run and its code.
func runOne(ctx context.Context, e Env, cmd string, cfg harness.Config) int {
	if cfg.External != nil {
		// Someone else's server: say what it is about to receive, and for how long, before any of it.
		if rows, err := planRows(ctx, e, cfg); err == nil {
			fmt.Fprintf(e.Stderr, "loadtest: TARGET=external: this load goes to %s, %s per scenario:\n%s", cfg.External.URL, cfg.Duration, plan.Text(rows, false, true))
		} else {
			fmt.Fprintf(e.Stderr, "loadtest: TARGET=external: this load goes to %s, %s per scenario, at each scenario's rate (k6 inspect failed: %v)\n", cfg.External.URL, cfg.Duration, err)
		}
	}
	r := e.runner(cmd, cfg)
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

// runner is the one way a command gets the harness's runner for cfg: the run's environment (e's, the
// configuration's, then stackEnv), how to repeat it as cmd, the knobs in force, whose its files are,
// this harness's revision and e's calibration of the machine.
func (e Env) runner(cmd string, cfg harness.Config, stackEnv ...string) *harness.Runner {
	return &harness.Runner{
		Cfg: cfg, Exec: e.Exec, Env: append(append(append([]string(nil), e.Environ...), envList(cfg.Env)...), stackEnv...),
		Stdout: e.Stdout, Stderr: e.Stderr, Now: e.Now, Command: commandLine(cmd, e.Getenv, e.Environ), Settings: harness.InForce(e.Environ),
		Owner: harness.InvokingUser(e.Getenv, e.Euid, e.Egid), Harness: revision(e), Calibrate: e.Calibrate,
		Built: e.built,
	}
}

// runEach runs each scale scenario as a run of its own, one after another, each on a fresh stack
// (certctl's scale paths would contend for one server's CPU and database otherwise). Every
// configuration is checked before the first starts; a signal stops the sequence.
func runEach(ctx context.Context, e Env, cmd string, p planned) int {
	seq, cfgs, envs := p.seq, p.cfgs, p.envs
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
	images := harness.EffectiveImages(e.Root, cfg.Offline, append(append([]string(nil), e.Environ...), envList(cfg.Env)...))
	target := images["CERTCTL_IMAGE"]
	if cfg.Dist != "" {
		target = distImage(cfg.Dist) + " (packaged from " + cfg.Dist + ")"
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
	fmt.Fprintf(e.Stdout, "ok: tiers %s, %d scenarios, certctl %s, duration %s\n", strings.Join(cfg.Tiers, ","), len(cfg.Scenarios), target, cfg.Duration)
	if cfg.External == nil {
		fmt.Fprintf(e.Stdout, "images: k6 %s, postgres %s (IMAGES=%s)\n", images["IMAGE_K6"], images["IMAGE_POSTGRES"], map[bool]string{true: "offline", false: "upstream"}[cfg.Offline])
	}
	fmt.Fprintln(e.Stdout)
	fmt.Fprint(e.Stdout, plan.Text(rows, len(harness.OneAfterAnother(cfg)) > 1, cfg.External != nil))
	if cfg.Segments > 1 {
		fmt.Fprintf(e.Stdout, "each scenario runs as %d k6 processes, an execution segment each (%s …); their records are merged from the pooled samples\n",
			cfg.Segments, strings.Join(harness.SegmentArgs(0, cfg.Segments), " "))
	}
	return results.ExitOK
}

// distImage is the server image images/certctl/build.sh packages a certctl build as.
func distImage(dist string) string {
	name := strings.ToLower(filepath.Base(dist))
	name = regexp.MustCompile(`[^a-z0-9_.-]+`).ReplaceAllString(name, "-")
	name = strings.TrimLeft(name, ".-")
	if len(name) > 100 {
		name = name[:100]
	}
	return "certctl-loadtest/certctl-server:" + name + "-local"
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
	return plan.Stacks(rows, len(harness.OneAfterAnother(cfg)) > 1), nil
}

// planRows is each selected scenario's load as k6 inspect resolves it with the run's knobs.
func planRows(ctx context.Context, e Env, cfg harness.Config) ([]plan.Row, error) {
	// What the run gives each k6 (k6 inspect reads no system variable unless told).
	if err := k6Ready(ctx, e); err != nil {
		return nil, err
	}
	args := []string{"inspect"}
	for _, kv := range envList(cfg.Env) {
		if k, _, _ := strings.Cut(kv, "="); harness.K6Env(k) {
			args = append(args, "-e", kv)
		}
	}
	first := true
	inspect := func(script string) ([]byte, error) {
		var out, errb strings.Builder
		var stop func()
		if first && e.Getenv("K6_BIN") == "" {
			// The first `go tool k6` of a clone compiles k6 (minutes with a cold Go cache), silently.
			first = false
			began := time.Now()
			stop = harness.Every(ctx, 15*time.Second, func(context.Context) {
				d := time.Since(began)
				fmt.Fprintf(e.Stderr, "loadtest: k6 inspect is waiting for go tool to compile k6, %s so far (once per clone: it stays in Go's build cache; 75 s on 2 CPUs with a cold build cache, longer when Go must download the modules too)\n", d.Round(time.Second))
			})
		}
		code, err := e.Exec(ctx, k6Cmd(e, append(slices.Clone(args), script), &out, &errb))
		if stop != nil {
			stop()
		}
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d: %s", code, strings.TrimSpace(errb.String()))
		}
		return []byte(out.String()), err
	}
	var rows []plan.Row
	for _, sc := range cfg.Scenarios {
		got, err := plan.Inspect(sc.Tier, sc.Path, inspect)
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	return rows, nil
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
