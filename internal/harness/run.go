package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// Run executes the whole run and returns the process exit code. Whatever happens after the run
// directory exists, run.json, summary.json and summary.txt are written before it returns.
func (r *Runner) Run(ctx context.Context) int {
	dir := r.Cfg.RunDir()
	if _, err := os.Lstat(dir); err == nil {
		r.logf("%s already exists: results of a run are never overwritten; pick another RUN_ID (or leave it unset)", dir)
		return results.ExitBadInput
	}
	// The collector writes into the run directory as its owner, like k6.
	compose := Compose{Cfg: r.Cfg, Exec: r.Exec, Env: append(slices.Clone(r.Env), "LT_OWNER="+r.Owner.String())}
	run := results.Run{
		RunID: r.Cfg.RunID, StartedAt: r.Now().UTC(), Command: r.Command, Tiers: r.Cfg.Tiers,
		Config: r.Cfg.Redacted(), Settings: SettingsMap(r.Settings), Host: r.host(ctx),
	}

	// Checks that need no stack: bad input and a missing image fail here, in seconds.
	svcs, code, err := r.preflight(ctx, &compose, &run)
	if err != nil {
		r.logf("%v", err)
		return code
	}
	if err := makeRunDir(dir, r.Owner, r.extraK6Dirs()...); err != nil {
		r.logf("cannot create the results directory: %v", err)
		return results.ExitEnvironment
	}
	r.Created = true
	defer r.Owner.chownTree(r.Cfg.ResultsDir, dir)
	r.keepBuildLog(dir)
	if r.Cfg.DefectsRegistry != nil {
		// The run is judged, and renders again, with the registry it was given.
		if err := output.Write(filepath.Join(dir, results.DefectsFile), r.Cfg.DefectsRegistry); err != nil {
			r.logf("cannot keep DEFECTS_REGISTRY in the run directory (%v): the run is judged with the built-in registry", err)
		}
	}
	if r.Calibrate != nil {
		// Before anything of the run starts: the machine as the run found it.
		c := r.Calibrate(ctx, FsyncDir(run.Host.DockerRoot, dir))
		run.Testbed = &c
		r.logf("testbed (calibrated in %.1f s): %s", c.DurationS, c)
	}
	run.Images = svcs.Images()
	run.ImagePins = ImagePins(r.Cfg.Root, r.Cfg.Offline, compose.Env)

	// From here on the stack may exist: tear it down whatever happens, after the summary is written.
	defer r.tearDown(compose, dir)
	if problem := r.startStack(ctx, compose, svcs, dir, &run); problem != "" {
		// A cancelled CI job's SIGTERM can come while the stack starts (its start is most of a short
		// job's timeout on a busy runner): the stack did not fail, the run was stopped before any load.
		if in, ok := interruption(ctx); ok {
			return r.writeSummary(dir, &run, results.ExitInterrupted, fmt.Sprintf("the run was %s while the stack was starting, before any load: there are no figures", in.Error()))
		}
		return r.writeSummary(dir, &run, results.ExitEnvironment, problem)
	}
	run.K6Version = r.k6Version(ctx, compose)
	run.Harness = r.Harness
	running := r.runningServices(compose)
	stopCollectors := r.startCollectors(ctx, compose, dir)
	loadStart := r.Now().UTC()
	run.LoadStartedAt = &loadStart
	stopWatching := r.watchEvents(loadStart)
	run.Scenarios = r.runScenarios(ctx, compose, dir)
	loadEnd := r.Now().UTC()
	r.afterLoad(compose, dir, &run, running, stopWatching)
	stopCollectors()
	r.saveStackLogs(compose, dir)
	code = collect(dir, run.Scenarios)
	in, interrupted := interruption(ctx)
	switch {
	case interrupted:
		if in.At.IsZero() {
			in.At = loadEnd
		}
		return r.writeSummary(dir, &run, results.ExitInterrupted, fmt.Sprintf("the run was %s at %s into the load%s: k6 stopped early, and the figures up to then are kept",
			in.Error(), clock(in.At.Sub(loadStart).Seconds()), scenariosAt(in.At, run.Scenarios)))
	case len(run.Faults) > 0:
		code = results.ExitStackFault
	}
	return r.writeSummary(dir, &run, code, "")
}

// interruption says whether the run's context was stopped, and by what: a cancel without a cause
// (a parent context's) is still an interruption, of "a signal".
func interruption(ctx context.Context) (Interrupted, bool) {
	var in Interrupted
	if !errors.As(context.Cause(ctx), &in) && ctx.Err() == nil {
		return in, false
	}
	if in.Signal == "" {
		in.Signal = "a signal"
	}
	return in, true
}
