// The stack: certctl and the selected tiers' services brought up, what became of them during the
// load, their logs, and their removal.

package harness

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// runningServices is the services running when the load starts: the ones whose exit is a fault. nil
// when the engine could not say: then every service's events count (the one-shots exited before the
// load began, so they have none in its window anyway).
func (r *Runner) runningServices(compose Compose) map[string]bool {
	if r.Cfg.External != nil {
		return map[string]bool{} // no stack: only k6 runs, and its events are its own
	}
	states, err := compose.States(context.Background())
	if err != nil || len(states) == 0 {
		r.logf("reading the stack's state as the load starts: %v (every service's events will count)", err)
		return nil
	}
	running := map[string]bool{}
	for _, s := range states {
		if s.State == "running" {
			running[s.Service] = true
		}
	}
	return running
}

// afterLoad records what became of the stack during the load: each service's state, the container
// events, one sentence per fault, and each scenario's raw samples file.
func (r *Runner) afterLoad(compose Compose, dir string, run *results.Run, running map[string]bool, stopWatching func() ([]results.StackEvent, error)) {
	states, err := compose.States(context.Background())
	if err != nil {
		r.logf("reading the state of the stack after the load: %v", err)
	}
	for _, s := range states {
		run.AfterLoad = append(run.AfterLoad, results.ServiceState{Service: s.Service, State: s.State, Health: s.Health, ExitCode: s.ExitCode})
	}
	events, err := stopWatching()
	if err != nil {
		r.logf("reading the stack's events: %v (faults during the load are not named)", err)
	}
	run.Events = events
	k6Names := map[string]string{}
	for _, sc := range run.Scenarios {
		k6Names[r.k6Container(sc.Name)] = sc.Name
		for i := 0; r.Cfg.Segments > 1 && i < r.Cfg.Segments; i++ {
			k6Names[r.k6Container(sc.Name)+"-"+SegmentID(i, r.Cfg.Segments)] = sc.Name + "@" + SegmentID(i, r.Cfg.Segments)
		}
	}
	// The collector's exit is no fault of the stack's: it is stopped after the load, and one that fails is
	// named in the diagnosis.
	stack := slices.DeleteFunc(slices.Clone(events), func(e results.StackEvent) bool { return e.Service == collectorService })
	run.Faults = describeEvents(stack, running, k6Names, run.Scenarios)
	// A paused service still shows as paused: say so even when its pause came before the load.
	for _, s := range states {
		if s.State == "paused" && !mentions(run.Faults, s.Service+" was paused") {
			run.Faults = append(run.Faults, s.Service+" was paused when the load ended: requests to it hung")
		}
	}
	for _, f := range run.Faults {
		r.logf("%s", f)
	}
	for i, sc := range run.Scenarios {
		run.Scenarios[i].Raw = rawFile(dir, sc.Name)
	}
}

func mentions(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// startStack brings up certctl and what it depends on, then the services of the selected tiers. It
// returns a sentence on failure, once the stack's logs are saved.
func (r *Runner) startStack(ctx context.Context, compose Compose, svcs Services, dir string, run *results.Run) string {
	if ext := r.Cfg.External; ext != nil {
		r.logf("run %s: tiers %s against the external certctl at %s, %s per scenario; no stack is started", r.Cfg.RunID, strings.Join(r.Cfg.Tiers, ","), ext.URL, r.Cfg.Duration)
		for _, s := range r.Cfg.Skipped {
			r.logf("scenario %s is unavailable against an external certctl: %s", s.Name, Unavailable(s))
		}
		r.logf("the diagnosis is unavailable against an external certctl: %s", ExternalNoDiagnosis)
		if problem := r.checkExternal(ctx); problem != "" {
			r.logf("%s", problem)
			return problem
		}
		return ""
	}
	if r.Cfg.Spotcheck {
		r.logf("run %s: spot checks against %s, one at a time; starting the stack", r.Cfg.RunID, run.Certctl.Image)
	} else {
		r.logf("run %s: tiers %s against %s, %s per scenario; starting the stack", r.Cfg.RunID, strings.Join(r.Cfg.Tiers, ","), run.Certctl.Image, r.Cfg.Duration)
	}
	problem := r.up(ctx, compose, svcs, dir, run)
	if problem == "" {
		problem = r.upTierServices(ctx, compose, svcs, dir, run)
	}
	if problem == "" && r.Cfg.Observability && r.Cfg.Offline {
		r.logf("live view: Prometheus http://127.0.0.1:%s (k6's metrics by remote write, testid %s); no Grafana offline (the kit has none: docs/observability.md); it stops with the stack",
			envOr(r.Env, "PROMETHEUS_PORT", "9090"), r.Cfg.RunID)
	} else if problem == "" && r.Cfg.Observability {
		r.logf("live view: Grafana http://127.0.0.1:%s/d/%s (k6's dashboard, testid %s), Prometheus http://127.0.0.1:%s; both stop with the stack",
			envOr(r.Env, "GRAFANA_PORT", "3000"), grafanaDashboard, r.Cfg.RunID, envOr(r.Env, "PROMETHEUS_PORT", "9090"))
	}
	if problem != "" {
		r.logf("%s", problem)
		r.saveStackLogs(compose, dir)
	}
	return problem
}

// tearDown removes the stack, logging to logs/down.log; a failure leaves the command to run by hand.
func (r *Runner) tearDown(compose Compose, dir string) {
	var w io.Writer = io.Discard
	if logf, err := output.Create(filepath.Join(dir, "logs", "down.log")); err == nil {
		defer logf.Close()
		w = logf
	}
	if err := compose.Down(w); err != nil {
		r.logf("tearing the stack down failed (%v): run `docker compose -p %s down -v`", err, r.Cfg.Project)
	}
}

// up starts certctl and everything it depends on (compose's depends_on) and waits for certctl to be
// healthy. It returns a sentence on failure.
func (r *Runner) up(ctx context.Context, compose Compose, svcs Services, dir string, run *results.Run) string {
	logf, err := output.Create(filepath.Join(dir, "logs", "up.log"))
	if err != nil {
		return err.Error()
	}
	defer logf.Close()
	secs := int(r.Cfg.StartTimeout.Seconds())
	uctx, cancel := context.WithTimeout(ctx, r.Cfg.StartTimeout+30*time.Second)
	defer cancel()
	began := time.Now() // a console figure only: the records' times come from r.Now
	stop := r.showStart(uctx, compose, "starting "+serverService)
	code, err := compose.Run(uctx, logf, logf, "up", "--detach", "--wait", "--wait-timeout", strconv.Itoa(secs), serverService)
	stop()
	states, _ := compose.States(context.Background())
	// `up --wait` has been seen to return 0 with certctl-server still unhealthy: believe the state.
	if err == nil && code == 0 && serverHealthy(states) {
		r.logf("%s is healthy after %s", serverService, clock(time.Since(began).Seconds()))
		return ""
	}
	for _, s := range states {
		run.StackState = append(run.StackState, fmt.Sprintf("%s: %s %s exit %d", s.Service, s.State, s.Health, s.ExitCode))
	}
	// Name the first thing that went wrong, in start order, and show its log.
	for _, svc := range svcs.StartOrder(serverService) {
		for _, s := range states {
			if s.Service != svc {
				continue
			}
			failed := (s.State == "exited" && s.ExitCode != 0) || s.Health == "unhealthy" ||
				(svc == serverService && s.Health != "healthy")
			if !failed {
				continue
			}
			r.showLog(compose, svc)
			if svc == serverService && s.State == "running" {
				return fmt.Sprintf("%s did not become healthy within %ds (START_TIMEOUT): its log is above and in %s", serverService, secs, filepath.Join(dir, "logs", "stack.log"))
			}
			return fmt.Sprintf("the stack did not start: %s %s (exit %d); its log is above and in %s", svc, s.State, s.ExitCode, filepath.Join(dir, "logs", "stack.log"))
		}
	}
	return fmt.Sprintf("the stack did not start (docker compose up exit %d): see %s", code, filepath.Join(dir, "logs", "up.log"))
}

// upTierServices starts the services `up` left out, k6 aside: those of the selected tiers' profiles (the
// connector sidecars, the scale seeder, the fault proxy). A sidecar that does not come up is reported
// and left to fail its own scenario, so the other targets still run; a required one (the seeder)
// failing stops the run before k6 starts.
func (r *Runner) upTierServices(ctx context.Context, compose Compose, svcs Services, dir string, run *results.Run) string {
	started := map[string]bool{k6Service: true, collectorService: true}
	for _, svc := range svcs.StartOrder(serverService) {
		started[svc] = true
	}
	var extra []string
	for svc := range svcs {
		if !started[svc] {
			extra = append(extra, svc)
		}
	}
	if len(extra) == 0 {
		return ""
	}
	sort.Strings(extra)
	logf, err := output.Append(filepath.Join(dir, "logs", "up.log"))
	if err != nil {
		return err.Error()
	}
	defer logf.Close()
	uctx, cancel := context.WithTimeout(ctx, r.Cfg.StartTimeout+30*time.Second)
	defer cancel()
	// --no-recreate: the stack that is up stays as it is. Without it, an image another run rebuilt
	// meanwhile (same tag, new id) made compose recreate stack-net and postgres under a running
	// certctl-server, which lost its network namespace and refused every connection after.
	args := append([]string{"up", "--detach", "--no-recreate", "--wait", "--wait-timeout", strconv.Itoa(int(r.Cfg.StartTimeout.Seconds()))}, extra...)
	r.logf("starting %s", strings.Join(extra, ", "))
	stop := r.showStart(uctx, compose, "starting "+strings.Join(extra, ", "))
	code, err := compose.Run(uctx, logf, logf, args...)
	stop()
	if err == nil && code == 0 && !svcs.anyRequired(extra) {
		return ""
	}
	// `up --wait` counts a one-shot service as up while it still runs: a large seed (75,000
	// certificates take seconds) would still be writing when k6's setup() lists the rows.
	began := time.Now()
	stop = Every(uctx, stackStartEvery, func(pctx context.Context) {
		r.logf("%s", SeedLine(strings.Join(extra, ", "), time.Since(began), r.seededRows(pctx, compose)))
	})
	states := r.waitRequired(uctx, compose, svcs, extra)
	stop()
	for _, s := range states {
		if _, ok := svcs[s.Service]; !ok || started[s.Service] {
			continue
		}
		required := svcs[s.Service].Labels[RequiredLabel] == "true"
		switch {
		case required && s.State == "exited" && s.ExitCode == 0:
		case required:
			r.showLog(compose, s.Service)
			return fmt.Sprintf("%s failed (%s, exit %d) before any load: its error is above; nothing was run", s.Service, s.State, s.ExitCode)
		case s.State != "running" || (s.Health != "" && s.Health != "healthy"):
			msg := fmt.Sprintf("%s is not up (%s %s): its scenarios will fail; the others run", s.Service, s.State, s.Health)
			r.logf("%s", msg)
			run.StackState = append(run.StackState, msg)
		}
	}
	return ""
}

// seededRows counts what a seeder has written so far: certificates and agents, as PostgreSQL sees them
// (-1 when it cannot say).
func (r *Runner) seededRows(ctx context.Context, compose Compose) [2]int {
	rows := [2]int{-1, -1}
	out, err := compose.Output(ctx, "exec", "-T", "postgres", "psql", "-U", "certctl", "-d", "certctl", "-tAc",
		"SELECT (SELECT count(*) FROM managed_certificates) || ' ' || (SELECT count(*) FROM agents)")
	if err == nil {
		fmt.Sscanf(strings.TrimSpace(out), "%d %d", &rows[0], &rows[1])
	}
	return rows
}

// SeedLine is the heartbeat of a seeder's wait: how long, and the rows it wrote so far.
func SeedLine(what string, elapsed time.Duration, rows [2]int) string {
	line := fmt.Sprintf("waiting for %s, %s so far", what, clock(elapsed.Seconds()))
	if rows[0] >= 0 {
		line += fmt.Sprintf(": %d certificates and %d agents in certctl's database", rows[0], rows[1])
	}
	return line
}

// showLog prints the last lines of a service's log, where its own error usually is.
func (r *Runner) showLog(compose Compose, svc string) {
	tail, _ := compose.Output(context.Background(), "logs", "--no-color", "--no-log-prefix", "--tail", "25", svc)
	fmt.Fprintf(r.Stderr, "---- last lines of %s ----\n%s---- end of %s ----\n", svc, tail, svc)
}

func serverHealthy(states []ServiceState) bool {
	for _, s := range states {
		if s.Service == serverService {
			return s.State == "running" && s.Health == "healthy"
		}
	}
	return false
}

func (r *Runner) saveStackLogs(compose Compose, dir string) {
	f, err := output.Create(filepath.Join(dir, "logs", "stack.log"))
	if err != nil {
		return
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	compose.Run(ctx, f, f, "logs", "--no-color", "--timestamps")
}

// anyRequired reports whether one of these services must finish before the load (the seeder).
func (s Services) anyRequired(names []string) bool {
	for _, n := range names {
		if s[n].Labels[RequiredLabel] == "true" {
			return true
		}
	}
	return false
}

// waitRequired polls the stack until every required service among names has exited (or ctx ends) and
// returns the last states it read.
func (r *Runner) waitRequired(ctx context.Context, compose Compose, svcs Services, names []string) []ServiceState {
	for {
		states, _ := compose.States(context.Background())
		running := false
		for _, st := range states {
			if slices.Contains(names, st.Service) && svcs[st.Service].Labels[RequiredLabel] == "true" && st.State != "exited" && st.State != "dead" {
				running = true
			}
		}
		if !running {
			return states
		}
		select {
		case <-ctx.Done():
			return states
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// grafanaDashboard is the uid of k6's dashboard as fixtures/observability provisions it.
const grafanaDashboard = "ccbb2351-2ae2-462f-ae0e-f2c893ad1028"

// envOr is the last value of name in env, or def.
func envOr(env []string, name, def string) string {
	v := def
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name && val != "" {
			v = val
		}
	}
	return v
}
