package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/overhead"
	"certctl-loadtest/internal/results"
)

// overheadCmd measures what the run's own instruments cost certctl: the load the environment configures,
// run with every instrument on and with each configuration of OVERHEAD off, OVERHEAD_RUNS rounds in
// alternating order, each an ordinary run into results/<RUN_ID>/; then compare per configuration.
func overheadCmd(ctx context.Context, e Env, cmd string, args []string) int {
	if len(args) > 0 {
		return badArgs(e, cmd, "takes no arguments (got %q): its configuration is the environment's, OVERHEAD and OVERHEAD_RUNS with the run's own knobs", strings.Join(args, " "))
	}
	m := measure{e, cmd}
	offs, err := overhead.Parse(m.knob("OVERHEAD"))
	if err != nil {
		return m.fail("%v", err)
	}
	rounds, err := strconv.Atoi(m.knob("OVERHEAD_RUNS"))
	if err != nil || rounds < 2 || rounds > 20 {
		return m.fail("OVERHEAD_RUNS=%q: runs a side, 2 to 20 (each a whole run)", m.knob("OVERHEAD_RUNS"))
	}
	if err := harness.CheckEnvironment(e.Root, e.Environ); err != nil {
		return m.fail("%v", err)
	}

	base := e.Getenv("RUN_ID")
	if base == "" {
		base = "ovh-" + e.Now().UTC().Format("0102-150405")
	}
	dir, err := measurementDir(e, base)
	if err != nil {
		return m.fail("%v", err)
	}
	settings := map[string]map[string]string{overhead.On: {}}
	for _, o := range offs {
		settings[o.Name] = o.Settings
	}
	configure := func(name string, round int) (harness.Config, Env, error) {
		// Each run's record repeats that run alone: make loadtest with its settings.
		over := map[string]string{"RUN_ID": fmt.Sprintf("%s-%s-%d", base, name, round+1), "RESULTS_DIR": dir, "LOADTEST_GOAL": "loadtest"}
		for k, v := range settings[name] {
			over[k] = v
		}
		return overridden(e, over, slices.Collect(maps.Keys(over))...)
	}
	// Every run's configuration is checked before the first starts.
	for name := range settings {
		c, _, err := configure(name, 0)
		if err != nil {
			return m.fail("%v", err)
		}
		switch {
		case c.External != nil:
			return m.fail("TARGET=external: the instruments sample the harness's own stack; there is none to measure")
		case len(harness.OneAfterAnother(c)) > 1:
			return m.fail("TIER=%s runs its scenarios one after another, each a run of its own: measure one run's load (SCENARIOS=one of them, or another tier)", strings.Join(c.Tiers, ","))
		case name == overhead.On && !(c.Collector && c.Containers && c.ProgressEvery > 0 && c.Env["COLLECT_STATEMENTS"] == "on"):
			// The baseline is the run as users get it: every instrument on. A knob that switches one off
			// in every run would make both sides of its comparison the same.
			return m.fail("DIAGNOSIS=%s PG_STAT_STATEMENTS=%s PROGRESS_INTERVAL=%s switch an instrument off in every run: unset them (the baseline runs every instrument; OVERHEAD says which to switch off)",
				m.knob("DIAGNOSIS"), m.knob("PG_STAT_STATEMENTS"), m.knob("PROGRESS_INTERVAL"))
		}
	}
	if !m.makeDir(dir) {
		return results.ExitEnvironment
	}

	res := overhead.Result{Schema: overhead.Schema, RunID: base, Command: commandLine("overhead", e.Getenv, e.Environ),
		Rounds: rounds, Order: overhead.Schedule(offs, rounds), Runs: map[string][]string{}}
	save := func() {
		if err := overhead.Write(dir, res); err != nil {
			m.say("writing %s: %v", dir, err)
		}
	}
	total := rounds * (len(offs) + 1)
	var names []string
	for _, o := range offs {
		names = append(names, o.Name)
	}
	m.say("%d runs (%d rounds, alternating: every instrument on, then %s off), each DURATION=%s on a stack of its own; results in %s",
		total, rounds, strings.Join(names, ", "), m.knob("DURATION"), dir)
	code := results.ExitOK
	n := 0
run:
	for round, order := range res.Order {
		for _, name := range order {
			n++
			c, env, err := configure(name, round)
			if err != nil {
				res.Problem = err.Error()
				code = results.ExitBadInput
				break run
			}
			m.say("run %d of %d: %s (%s)", n, total, describe(name, settings[name]), c.RunID)
			env.Stdout = io.Discard // each run's summary is in its directory; the comparison is printed
			rc := runOne(ctx, env, "run", c)
			// A breached budget or a taken machine is a figure to compare; a run without results is not.
			if _, err := results.Load(c.RunDir()); err != nil {
				res.Problem = fmt.Sprintf("run %s exited %d without a record: %v", c.RunID, rc, err)
				code = rc
				if code == results.ExitOK || code == results.ExitThresholds {
					code = results.ExitNoResults
				}
				break run
			}
			rel, _ := filepath.Rel(dir, c.RunDir())
			res.Runs[name] = append(res.Runs[name], rel)
			save()
			if ctx.Err() != nil {
				res.Problem = "interrupted"
				code = results.ExitInterrupted
				break run
			}
		}
	}
	res.Complete = res.Problem == ""
	res.Measure(offs, func(off, on []string, confidence float64) (compare.Result, error) {
		abs := func(ds []string) []string {
			var out []string
			for _, d := range ds {
				out = append(out, filepath.Join(dir, d))
			}
			return out
		}
		return compare.Compare(compare.Side{Label: "off", Dirs: abs(off)}, compare.Side{Label: "on", Dirs: abs(on)}, compare.Options{Confidence: confidence})
	})
	save()
	fmt.Fprint(e.Stdout, overhead.Text(res))
	switch {
	case code != results.ExitOK:
		return code
	case !res.Budget.Judged:
		m.say("the budget (%s) was not judged: OVERHEAD has no %s", res.Budget.Rule, overhead.All)
		return ExitRegressed
	case !res.Budget.Held:
		m.say("the budget is broken (%s): %s", res.Budget.Rule, strings.Join(res.Budget.Breaches, "; "))
		return ExitRegressed
	}
	return results.ExitOK
}

func describe(name string, s map[string]string) string {
	if name == overhead.On {
		return "every instrument on"
	}
	var kv []string
	for k, v := range s {
		kv = append(kv, k+"="+v)
	}
	return name + " off (" + strings.Join(kv, " ") + ")"
}
