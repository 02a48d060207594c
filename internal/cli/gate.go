package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/gate"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/results"
)

// plan is a command's defaults: what runs when the environment does not say.
type gatePlan struct {
	tier, duration string
	runs           int
	tolerance      float64
	// rates are RATE_<SCENARIO> defaults the environment may override: on perCPU CPUs or more; on fewer,
	// their share (0: whatever the machine).
	rates  map[string]string
	perCPU int
	// judged are the metrics that can fail it; family, when set, the confidence for all their rows at
	// once, else confidence each row's (gate.Options).
	judged             []string
	family, confidence float64
}

// The gate's plan, from measurement (docs/comparing.md#the-pull-request-gate): two runs a side (A B B A)
// of a minute each, at the API and ACME tiers' own rates on a 4-CPU runner and a share of them on fewer
// CPUs (half on 2), so that the runner is never the limit: at the full rates a 2-CPU machine's stack held
// both CPUs 94 % busy and every p95 was ×30–60 the half rates': the figures were the queue's, not
// certctl's. Judged on medians, error rates and throughput, at 95 % for all those rows at once: a
// minute's p95 rests on 75 requests a run, its p99 on 15, and an A/A sitting read at 99 % a row over p95s
// and p99s too came out regressed (an ACME endpoint's p99 +60 %). The database's time per request is
// shown, not judged: one figure a run, setup's statements and all, it called the same build +48 % slower
// in 20-second runs beside other stacks.
var gateDefaults = gatePlan{tier: "api,acme", duration: "1m", runs: 2, tolerance: 0.25, perCPU: 4,
	judged: []string{"p50", "error rate", compare.ThroughputMetric}, family: 0.95,
	rates: map[string]string{"RATE_LIST_CERTIFICATES": "50", "RATE_ISSUANCE_ACCEPTANCE": "50", "RATE_ACME_FLOW": "100"}}

// compare-builds' plan: the release compare, three runs a side of the tiers' own load, every row judged
// at 99 %.
var releaseDefaults = gatePlan{tier: "api,acme", duration: "2m", runs: 3, tolerance: 0, confidence: 0.99}

// A run's stacks start and stop in about 25 s on 2 CPUs beside its load (21-22 s measured a run of
// `make compare-builds`, images built, 2026-11-28), a deploy stack in about 100 s (its agents' polls).
const (
	stackCostS       = 25
	deployStackCostS = 100
)

// gateCmd: loadtest gate|compare-builds [--plan] [--runs N] [--tolerance F] [--reference B] --candidate B
// [--reference-knob K=V]… [--candidate-knob K=V]…: the two builds alternating on fresh stacks, compared
// and judged (internal/gate).
func gateCmd(ctx context.Context, e Env, cmd string, args []string) int {
	defaults := gateDefaults
	if cmd == "compare-builds" {
		defaults = releaseDefaults
	}
	flags := flag.NewFlagSet(cmd, flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	planOnly := flags.Bool("plan", false, "")
	rejudge := flags.String("rejudge", "", "")
	runs := flags.Int("runs", defaults.runs, "")
	tolerance := flags.Float64("tolerance", defaults.tolerance, "")
	refBuild := flags.String("reference", "", "")
	candBuild := flags.String("candidate", "", "")
	var refKnobs, candKnobs knobList
	flags.Var(&refKnobs, "reference-knob", "")
	flags.Var(&candKnobs, "candidate-knob", "")
	pos, err := parseInterleaved(flags, args)
	if err != nil {
		return badArgs(e, cmd, "%v", err)
	}
	if len(pos) > 0 {
		return badArgs(e, cmd, "takes no arguments (got %q): the builds are --reference and --candidate, the load the environment's knobs", strings.Join(pos, " "))
	}
	m := measure{e, cmd}
	if *rejudge != "" {
		return rejudgeGate(e, cmd, *rejudge, defaults)
	}
	if *runs < 1 || *runs > 20 {
		return m.fail("--runs %d: runs a side, 1 to 20 (each a whole run on a fresh stack)", *runs)
	}
	if *tolerance < 0 {
		return m.fail("--tolerance %g: a share ≥ 0 (0.25 = 25 %%)", *tolerance)
	}
	if err := harness.CheckEnvironment(e.Root, e.Environ); err != nil {
		return m.fail("%v", err)
	}
	if *candBuild == "" {
		return m.fail("--candidate is required: the certctl build to judge (a CERTCTL_DIST directory: server, agent, migrations/, LICENSE) or a server image")
	}
	if *refBuild == "" {
		// The release the harness pins (.env's CERTCTL_IMAGE): what the candidate is judged against when
		// the caller builds no reference of its own.
		pins, err := harness.ReadEnvFile(filepath.Join(e.Root, ".env"))
		if err != nil {
			return m.fail("%v", err)
		}
		*refBuild = pins["CERTCTL_IMAGE"]
	}
	sides := [2]gate.Side{{Build: *refBuild, Knobs: refKnobs}, {Build: *candBuild, Knobs: candKnobs}}
	for i := range sides {
		var err error
		if sides[i].Label, sides[i].Build, err = buildSide(sides[i].Build); err != nil {
			return m.fail("--%s: %v", []string{gate.Reference, gate.Candidate}[i], err)
		}
	}
	if sides[0].Label == sides[1].Label {
		// The same build on both sides (the A/A self-test), or two of one name: the sides by their roles.
		sides[0].Label, sides[1].Label = sides[0].Label+" (reference)", sides[1].Label+" (candidate)"
	}
	base := e.Getenv("RUN_ID")
	if base == "" {
		base = map[string]string{"gate": "gate-", "compare-builds": "cmp-"}[cmd] + e.Now().UTC().Format("0102-150405")
	}
	if cmd == "compare-builds" && e.Getenv("FLEET") != "" {
		return fleetBuilds(ctx, m, sides, base, *planOnly)
	}
	if len(base) > 37 {
		// Each run is <RUN_ID>-r1, -c1 …: RUN_ID's 40 characters less three.
		return m.fail("RUN_ID=%q: at most 37 characters here (each run adds -r1, -c1, …)", base)
	}
	dir, err := measurementDir(e, base)
	if err != nil {
		return m.fail("%v", err)
	}
	rates := scaledRates(defaults, e.CPUs)
	p := gate.Plan{Reference: sides[0], Candidate: sides[1], RunsASide: *runs, Order: gate.Schedule(*runs),
		Tier: m.envOr("TIER", defaults.tier), Scenarios: e.Getenv("SCENARIOS"), Duration: m.envOr("DURATION", defaults.duration), Tolerance: *tolerance,
		Judged: defaults.judged, Family: defaults.family, Confidence: defaults.confidence, Rates: map[string]string{},
		AcrossTestbeds: e.Getenv("MACHINE_CHECK") == "false"}
	for k := range rates {
		p.Rates[k] = m.envOr(k, rates[k])
	}
	sideRun := func(side gate.Side, id string) (planned, Env, error) {
		// Each run's record repeats that run alone: make loadtest with its build and load.
		over := map[string]string{"RUN_ID": id, "RESULTS_DIR": dir, "LOADTEST_GOAL": "loadtest", "TIER": p.Tier, "DURATION": p.Duration}
		for k, v := range rates {
			over[k] = m.envOr(k, v)
		}
		sideKnobs(side, over)
		_, env, err := overridden(e, over)
		if err != nil {
			return planned{}, env, err
		}
		// The run's record names only what is set: an empty CERTCTL_DIST is the image's side.
		env.Environ = slices.DeleteFunc(env.Environ, func(kv string) bool {
			k, _, _ := strings.Cut(kv, "=")
			_, ok := over[k]
			return ok
		})
		for k, v := range over {
			if v != "" && k != "RESULTS_DIR" && k != "LOADTEST_GOAL" {
				env.Environ = append(env.Environ, k+"="+v)
			}
		}
		slices.Sort(env.Environ)
		env.Stdout = io.Discard // each run's summary is in its directory; the gate's verdict is printed
		pl, err := configure(env, "run")
		return pl, env, err
	}
	// Both sides' runs are checked before the first starts: a typo costs seconds, not a sitting.
	first, _, err := sideRun(sides[0], base+"-r1")
	if err != nil {
		return m.fail("%s: %v", gate.Reference, err)
	}
	if _, _, err := sideRun(sides[1], base+"-c1"); err != nil {
		return m.fail("%s: %v", gate.Candidate, err)
	}
	if first.cfg.External != nil {
		return m.fail("TARGET=external: the gate runs both builds on stacks of its own")
	}
	p.Stacks = max(1, len(first.seq))
	d := first.cfg.Length
	cost := stackCostS
	if slices.Contains(first.cfg.Tiers, harness.DeployTier) {
		cost = deployStackCostS
	}
	p.RunS = p.Stacks * (int(d/time.Second) + cost)
	p.WallS = p.RunS * len(p.Order)
	m.say("%s", p.Text())
	if *planOnly {
		fmt.Fprintln(e.Stdout, p.Text())
		return results.ExitOK
	}
	if !m.makeDir(dir) {
		return results.ExitEnvironment
	}
	// The line that repeats it is the command itself: its flags are not make variables.
	res := gate.Result{Schema: gate.Schema, RunID: base, Command: harness.RepeatCommand(cmd, e.Environ) + gateFlags(args), Plan: p, Runs: []gate.Run{}}
	save := func() {
		if err := gate.Write(dir, res); err != nil {
			m.say("writing %s: %v", dir, err)
		}
	}
	failed := results.ExitOK
	var dirs [2][]string
	count := map[string]int{}
	for i, side := range p.Order {
		count[side]++
		s := sides[0]
		letter := "r"
		if side == gate.Candidate {
			s, letter = sides[1], "c"
		}
		id := fmt.Sprintf("%s-%s%d", base, letter, count[side])
		pl, env, err := sideRun(s, id)
		if err != nil {
			res.Problem, failed = err.Error(), results.ExitBadInput
			break
		}
		m.say("run %d of %d: %s, %s (%s)", i+1, len(p.Order), side, s.Label, id)
		var code int
		if len(pl.seq) > 1 {
			code = runEach(ctx, env, "run", pl)
		} else {
			code = runOne(ctx, env, "run", pl.cfg)
		}
		run := gate.Run{Side: side, RunID: id, Code: code}
		var sums []results.Summary
		cfgs := pl.cfgs // a sequence's runs are its scenarios'
		if len(cfgs) == 0 {
			cfgs = []harness.Config{pl.cfg}
		}
		for _, c := range cfgs {
			sum, err := results.Load(c.RunDir())
			if err != nil {
				continue
			}
			sums = append(sums, sum)
			rel, _ := filepath.Rel(dir, c.RunDir())
			run.Dirs = append(run.Dirs, rel)
		}
		run.New, run.Known, run.Machine = gate.Breaches(sums)
		run.Outside = gate.MachineDecided(sums)
		res.Runs = append(res.Runs, run)
		save()
		// A breached budget or a taken machine is a figure to compare; a run without results is not.
		if len(run.Dirs) == 0 || (code != results.ExitOK && code != results.ExitThresholds && code != results.ExitInconclusive) {
			res.Problem, failed = fmt.Sprintf("run %s (%s) exited %d: see %s", id, s.Label, code, filepath.Join(dir, id)), code
			break
		}
		k := 0
		if side == gate.Candidate {
			k = 1
		}
		for _, d := range run.Dirs {
			dirs[k] = append(dirs[k], filepath.Join(dir, d))
		}
		if ctx.Err() != nil {
			res.Problem, failed = "interrupted", results.ExitInterrupted
			break
		}
	}
	res.Complete = res.Problem == ""
	judgeGate(&res, dirs, failed)
	save()
	fmt.Fprint(e.Stdout, gate.Text(res))
	m.say("exit %d: %s; results in %s", res.Code, res.Sentence, dir)
	return res.Code
}

// judgeGate compares the two sides' runs (dirs: the reference's, the candidate's) as the plan says and
// sets the verdict.
func judgeGate(res *gate.Result, dirs [2][]string, failed int) {
	p := res.Plan
	if res.Complete {
		c, err := gate.Compare(compare.Side{Label: p.Reference.Label, Dirs: dirs[0]}, compare.Side{Label: p.Candidate.Label, Dirs: dirs[1]},
			gate.Options{Tolerance: p.Tolerance, Judged: p.Judged, Family: p.Family, Confidence: p.Confidence, AcrossTestbeds: p.AcrossTestbeds})
		if err != nil {
			res.Problem, failed = "the compare of the two sides failed: "+err.Error(), results.ExitNoResults
		} else {
			res.Compare = &c
		}
	}
	gate.Judge(res, failed)
}

// rejudgeGate judges a gate's runs again with this harness's rules (a finished gate's directory, or a
// downloaded artifact of one) and prints the verdict; nothing is written, as results are never
// overwritten.
func rejudgeGate(e Env, cmd, dir string, defaults gatePlan) int {
	res, err := gate.Read(dir)
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %s --rejudge: %v\n", cmd, err)
		return results.ExitBadInput
	}
	if !res.Complete {
		fmt.Fprintf(e.Stderr, "loadtest: %s --rejudge: %s was cut short (%s): nothing to judge\n", cmd, dir, res.Problem)
		return results.ExitBadInput
	}
	res.Plan.Judged, res.Plan.Family, res.Plan.Confidence = defaults.judged, defaults.family, defaults.confidence
	var dirs [2][]string
	for _, run := range res.Runs {
		k := 0
		if run.Side == gate.Candidate {
			k = 1
		}
		for _, d := range run.Dirs {
			dirs[k] = append(dirs[k], filepath.Join(dir, d))
		}
	}
	judgeGate(&res, dirs, results.ExitOK)
	fmt.Fprint(e.Stdout, gate.Text(res))
	return res.Code
}

// gateFlags are the command's own flags, for the line that repeats it.
func gateFlags(args []string) string {
	var out []string
	for _, a := range args {
		if strings.ContainsAny(a, " '\"") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return ""
	}
	return " " + strings.Join(out, " ")
}

// buildSide reads a build: a directory holding certctl's server (CERTCTL_DIST), labelled by its folder,
// or an image reference, labelled by its tag.
func buildSide(b string) (label, build string, err error) {
	label, b = splitLabel(b)
	if st, err := os.Stat(b); err == nil && st.IsDir() {
		abs, _ := filepath.Abs(b)
		if _, err := os.Stat(filepath.Join(abs, "server")); err != nil {
			return "", "", fmt.Errorf("%s is a directory without certctl's server: a build holds server, agent, migrations/ and LICENSE", b)
		}
		if label == "" {
			label = filepath.Base(abs)
		}
		return label, abs, nil
	}
	if strings.Contains(b, "/") && !strings.Contains(b, ":") || strings.HasPrefix(b, ".") || strings.HasPrefix(b, "/") {
		return "", "", fmt.Errorf("%s is neither a build directory nor an image reference (registry/name:tag)", b)
	}
	if label == "" {
		label = b[strings.LastIndex(b, "/")+1:]
		if _, tag, ok := strings.Cut(label, ":"); ok {
			label = tag
		}
	}
	return label, b, nil
}

// knobList is a repeated NAME=value flag, each NAME a knob of the harness.
type knobList []string

func (k *knobList) String() string { return strings.Join(*k, " ") }

func (k *knobList) Set(v string) error {
	name, _, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q is not NAME=value", v)
	}
	if _, known := harness.LookupKnob(name); !known {
		return fmt.Errorf("%s is not a knob of the harness (docs/configuration.md)", name)
	}
	*k = append(*k, v)
	return nil
}

// scaledRates are the plan's rates on a machine of cpus: the plan's own on perCPU or more, their share
// on fewer (whole iterations a second, one at least).
func scaledRates(d gatePlan, cpus int) map[string]string {
	out := map[string]string{}
	for k, v := range d.rates {
		n, _ := strconv.Atoi(v)
		if d.perCPU > 0 && cpus > 0 && cpus < d.perCPU {
			n = max(1, int(math.Round(float64(n)*float64(cpus)/float64(d.perCPU))))
		}
		out[k] = strconv.Itoa(n)
	}
	return out
}

// sideKnobs adds a side's build (CERTCTL_DIST for a directory, CERTCTL_IMAGE for an image, the other
// emptied) and its own knobs to over.
func sideKnobs(side gate.Side, over map[string]string) {
	over["CERTCTL_DIST"], over["CERTCTL_IMAGE"] = "", ""
	if strings.HasPrefix(side.Build, "/") {
		over["CERTCTL_DIST"] = side.Build
	} else {
		over["CERTCTL_IMAGE"] = side.Build
	}
	for _, kv := range side.Knobs {
		k, v, _ := strings.Cut(kv, "=")
		over[k] = v
	}
}
