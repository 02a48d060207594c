package harness

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"certctl-loadtest/internal/report"
	"certctl-loadtest/internal/segments"
)

// Runner performs one run. Everything that touches the outside world is a field, so tests can replace it.
type Runner struct {
	Cfg     Config
	Exec    Executor
	Env     []string
	Stdout  io.Writer
	Stderr  io.Writer
	Now     func() time.Time
	Command string // how the run was invoked, for run.json
	Harness string // this harness's revision, for run.json
	// Owner owns the run directory and everything in it, k6's records included (k6 runs as this user):
	// the invoking user, also when the harness runs as root through sudo.
	Owner Owner
	// Created is set once the run's directory exists: from then on it holds a summary.
	Created bool
}

// index.html says what a run's exit code means; report cannot import this package.
func init() { report.ExitMeanings = ExitMeaning }

func (r *Runner) logf(format string, a ...any) {
	fmt.Fprintf(r.Stderr, "loadtest: "+format+"\n", a...)
}

// Run executes the whole run and returns the process exit code. Whatever happens after the run
// directory exists, run.json, summary.json and summary.txt are written before it returns.
func (r *Runner) Run(ctx context.Context) int {
	dir := r.Cfg.RunDir()
	if _, err := os.Lstat(dir); err == nil {
		r.logf("%s already exists: results of a run are never overwritten; pick another RUN_ID (or leave it unset)", dir)
		return ExitBadInput
	}
	// The collector writes into the run directory as its owner, like k6.
	compose := Compose{Cfg: r.Cfg, Exec: r.Exec, Env: append(slices.Clone(r.Env), "LT_OWNER="+r.Owner.String())}
	run := report.Run{
		RunID: r.Cfg.RunID, StartedAt: r.Now().UTC(), Command: r.Command, Tiers: r.Cfg.Tiers,
		Config: r.Cfg.Redacted(), Host: r.host(ctx),
	}

	// Checks that need no stack: bad input and a missing image fail here, in seconds.
	svcs, code, err := r.preflight(ctx, &compose, &run)
	if err != nil {
		r.logf("%v", err)
		return code
	}
	if err := makeRunDir(dir, r.Owner, r.extraK6Dirs()...); err != nil {
		r.logf("cannot create the results directory: %v", err)
		return ExitEnvironment
	}
	r.Created = true
	defer r.Owner.chownTree(r.Cfg.ResultsDir, dir)
	run.Images = svcs.Images()
	run.ImagePins = ImagePins(r.Cfg.Root, r.Cfg.Offline, compose.Env)

	// From here on the stack may exist: tear it down whatever happens, after the summary is written.
	defer r.tearDown(compose, dir)
	if problem := r.startStack(ctx, compose, svcs, dir, &run); problem != "" {
		return r.writeSummary(dir, &run, ExitEnvironment, problem)
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
	var in Interrupted
	switch {
	case errors.As(context.Cause(ctx), &in) || ctx.Err() != nil:
		if in.Signal == "" {
			in.Signal = "a signal"
		}
		if in.At.IsZero() {
			in.At = loadEnd
		}
		return r.writeSummary(dir, &run, ExitInterrupted, fmt.Sprintf("the run was %s at %s into the load%s: k6 stopped early, and the figures up to then are kept",
			in.Error(), clock(in.At.Sub(loadStart).Seconds()), during(in.At, run.Scenarios)))
	case len(run.Faults) > 0:
		code = ExitStackFault
	}
	return r.writeSummary(dir, &run, code, "")
}

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
func (r *Runner) afterLoad(compose Compose, dir string, run *report.Run, running map[string]bool, stopWatching func() ([]report.StackEvent, error)) {
	states, err := compose.States(context.Background())
	if err != nil {
		r.logf("reading the state of the stack after the load: %v", err)
	}
	for _, s := range states {
		run.AfterLoad = append(run.AfterLoad, report.ServiceState{Service: s.Service, State: s.State, Health: s.Health, ExitCode: s.ExitCode})
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
	stack := slices.DeleteFunc(slices.Clone(events), func(e report.StackEvent) bool { return e.Service == collectorService })
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

// rawFile describes raw/<name>.json.gz: a gzip stream read to its end is complete; one that stops
// short was cut off where its k6 stopped.
func rawFile(dir, name string) *report.RawFile {
	rel := filepath.Join("raw", name+".json.gz")
	f, err := os.Open(filepath.Join(dir, rel))
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	rf := &report.RawFile{Path: rel, Bytes: st.Size()}
	if zr, err := gzip.NewReader(f); err == nil {
		_, err = io.Copy(io.Discard, zr)
		rf.Complete = err == nil
	}
	return rf
}

func (r *Runner) k6Container(scenario string) string {
	return r.Cfg.Project + "-k6-" + strings.ReplaceAll(scenario, "_", "-")
}

// extraK6Dirs are the run directory's folders k6 writes to besides the ones every run has.
func (r *Runner) extraK6Dirs() []string {
	if r.Cfg.Segments > 1 {
		// Each segment's record, raw samples and dashboard, beside the merged ones.
		dirs := []string{"scenarios/" + segmentsDir, "raw/" + segmentsDir, "dashboard/" + segmentsDir}
		if r.Cfg.Diagnosis {
			dirs = append(dirs, "server")
		}
		return dirs
	}
	if r.Cfg.Spotcheck {
		return []string{"spotchecks"} // each spot check's own record (k6/spotcheck)
	}
	if r.Cfg.Diagnosis {
		return []string{"server"} // the collector's samples: it runs as the owner too
	}
	return nil
}

// startStack brings up certctl and what it depends on, then the services of the selected tiers. It
// returns a sentence on failure, once the stack's logs are saved.
func (r *Runner) startStack(ctx context.Context, compose Compose, svcs Services, dir string, run *report.Run) string {
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
	if problem == "" && r.Cfg.Observability {
		r.logf("live view: Grafana http://127.0.0.1:%s/d/%s (k6's dashboard, testid %s), Prometheus http://127.0.0.1:%s; both stop with the stack",
			envOr(r.Env, "GRAFANA_PORT", "3000"), grafanaDashboard, r.Cfg.RunID, envOr(r.Env, "PROMETHEUS_PORT", "9090"))
	}
	if problem != "" {
		r.logf("%s", problem)
		r.saveStackLogs(compose, dir)
	}
	return problem
}

// collect judges the scenarios by how their k6 processes ended and by the records they left. k6's
// codes the harness does not document become its own: a killed k6 (137) is a stack fault, and any
// other code without a record (255 on a full disk) is no results.
func collect(dir string, runs []report.ScenarioRun) int {
	for i, sc := range runs {
		// k6 exits 0 even when handleSummary cannot write its file, and a full disk leaves it empty:
		// no results is not a pass.
		ok := recordWritten(filepath.Join(dir, "scenarios", sc.Name+".json"))
		switch c := sc.ExitCode; {
		case c == 137:
			runs[i].ExitCode = ExitStackFault
		case c == ExitThresholds || c == ExitScriptError || c == ExitAborted, c > 128 && c < 160:
			// k6's own verdicts, and a docker compose run stopped by the harness's signal (an interrupted run)
		case !ok:
			runs[i].ExitCode = ExitNoResults
		}
	}
	return verdict(runs)
}

// recordWritten reports whether a scenario record is there and whole (a full disk leaves 0 bytes).
func recordWritten(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && json.Valid(b)
}

// writeSummary finishes run.json with the verdict, renders summary.json and summary.txt from the run
// directory, prints the text and points results/latest at the run. It returns code. The verdict is
// printed whatever can be written: on a full disk the text on stdout is all that is left.
func (r *Runner) writeSummary(dir string, run *report.Run, code int, problem string) int {
	run.EndedAt = r.Now().UTC()
	run.DurationS = run.EndedAt.Sub(run.StartedAt).Round(time.Millisecond).Seconds()
	run.ExitCode = code
	run.Error = problem
	var failed []string
	if err := writeJSON(filepath.Join(dir, "run.json"), run); err != nil {
		failed = append(failed, fmt.Sprintf("run.json (%v)", err))
	}
	s := report.Assemble(dir, *run)
	if err := report.Write(dir, s); err != nil {
		failed = append(failed, fmt.Sprintf("the summary (%v)", err))
	}
	if len(failed) > 0 {
		// The verdict stands; what is lost is the record of it.
		msg := fmt.Sprintf("the results could not be written to %s: %s; the summary below is the only copy", dir, strings.Join(failed, "; "))
		r.logf("%s", msg)
		s.FailedChecks = append(s.FailedChecks, msg)
		if s.ExitCode == ExitOK {
			s.ExitCode, code = ExitNoResults, ExitNoResults
		}
		s.Passed = false
	}
	fmt.Fprint(r.Stdout, "\n"+report.Text(s))
	updateLatest(r.Cfg.ResultsDir, r.Cfg.RunID)
	r.logf("results in %s", dir)
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err == nil {
		r.logf("open %s: every scenario's figures, dashboard, record and log", filepath.Join(dir, "index.html"))
	}
	return code
}

// tearDown removes the stack, logging to logs/down.log; a failure leaves the command to run by hand.
func (r *Runner) tearDown(compose Compose, dir string) {
	var w io.Writer = io.Discard
	if logf, err := createFile(filepath.Join(dir, "logs", "down.log")); err == nil {
		defer logf.Close()
		w = logf
	}
	if err := compose.Down(w); err != nil {
		r.logf("tearing the stack down failed (%v): run `docker compose -p %s down -v`", err, r.Cfg.Project)
	}
}

// Verdict combines exit codes as a run does: an error beats a breached threshold, which beats a pass.
func Verdict(codes []int) int {
	runs := make([]report.ScenarioRun, len(codes))
	for i, c := range codes {
		runs[i].ExitCode = c
	}
	return verdict(runs)
}

// verdict combines the k6 exit codes: an error beats a breached threshold, which beats a pass.
func verdict(runs []report.ScenarioRun) int {
	code := ExitOK
	for _, s := range runs {
		switch {
		case s.ExitCode == ExitOK:
		case s.ExitCode == ExitThresholds:
			if code == ExitOK {
				code = ExitThresholds
			}
		default:
			if code == ExitOK || code == ExitThresholds {
				code = s.ExitCode
			}
		}
	}
	return code
}

// preflight checks the engine, the compose configuration and every image before anything starts, and
// builds our own images. It returns the services of the resolved configuration.
func (r *Runner) preflight(ctx context.Context, compose *Compose, run *report.Run) (Services, int, error) {
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := r.checkEngine(pctx); err != nil {
		return nil, ExitEnvironment, err
	}
	if r.Cfg.Dist != "" && r.Cfg.External == nil {
		if err := r.packageDist(ctx, compose); err != nil {
			return nil, ExitEnvironment, err
		}
	}
	if _, err := compose.Output(pctx, "--profile", "k6", "config", "--quiet"); err != nil {
		return nil, ExitBadInput, fmt.Errorf("the compose configuration is invalid: %v", err)
	}
	svcs, err := compose.Services(ctx)
	if err != nil {
		return nil, ExitEnvironment, err
	}
	if err := r.buildOwnImages(ctx, *compose, svcs); err != nil {
		return nil, ExitEnvironment, err
	}
	defer r.identifyCertctl(ctx, *compose, svcs, run)
	code, err := r.checkImages(ctx, *compose, svcs, run)
	return svcs, code, err
}

// checkEngine makes sure a Docker engine answers and has the Compose v2 plugin.
func (r *Runner) checkEngine(ctx context.Context) error {
	var out, errb bytes.Buffer
	code, err := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"version", "--format", "{{.Server.Version}}"}, Env: r.Env, Stdout: &out, Stderr: &errb})
	if err != nil || code != 0 {
		return fmt.Errorf("cannot reach the Docker engine (%s): start dockerd, or set DOCKER_HOST", firstLine(errb.String(), err))
	}
	out.Reset()
	errb.Reset()
	code, err = r.Exec(ctx, Cmd{Name: "docker", Args: []string{"compose", "version", "--short"}, Env: r.Env, Stdout: &out, Stderr: &errb})
	if err != nil || code != 0 {
		return fmt.Errorf("the Docker Compose v2 plugin is missing (docker compose version: %s): install it, see README.md", firstLine(errb.String(), err))
	}
	return nil
}

// checkImages records the id of every image the run uses and pulls the missing ones, where pulling
// is allowed; an image still missing fails the run before any container starts.
func (r *Runner) checkImages(ctx context.Context, compose Compose, svcs Services, run *report.Run) (int, error) {
	// The builds before may have taken minutes: these checks get their own 30 s.
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	imgs, err := compose.Images(qctx)
	if err != nil {
		return ExitBadInput, err
	}
	var missing []string
	run.ImageIDs = map[string]string{}
	for _, img := range imgs {
		var id bytes.Buffer
		c, _ := r.Exec(qctx, Cmd{Name: "docker", Args: []string{"image", "inspect", "--format", "{{.Id}}", img}, Env: r.Env, Stdout: &id, Stderr: io.Discard})
		if c != 0 {
			missing = append(missing, img)
			continue
		}
		run.ImageIDs[img] = strings.TrimSpace(id.String())
	}
	// Our own names are built here and never pulled: anyone could register certctl-loadtest/* on a
	// public registry, and a pull would run their image as the stack.
	var ours, upstream []string
	for _, img := range missing {
		if strings.HasPrefix(img, OwnImagePrefix) {
			ours = append(ours, img)
		} else {
			upstream = append(upstream, img)
		}
	}
	if len(upstream) > 0 && !r.Cfg.Offline && r.pullAllowed() {
		upstream = r.pull(ctx, compose, svcs, upstream)
	}
	missing = append(ours, upstream...)
	if len(ours) > 0 {
		return ExitEnvironment, fmt.Errorf("image(s) not available: %s: %s* images are built on this machine, never pulled: run `make images` (the offline stand-ins), "+
			"or set CERTCTL_DIST to a certctl build to package", strings.Join(missing, ", "), OwnImagePrefix)
	}
	if len(missing) == 0 {
		return ExitOK, nil
	}
	hint := "pull them, or on a machine without a registry run `make images` and add IMAGES=offline"
	if r.Cfg.Offline {
		hint = "run `make images` to build the offline stand-ins"
	}
	hint += "; CERTCTL_IMAGE names the certctl server image, or CERTCTL_DIST a certctl build to package"
	return ExitEnvironment, fmt.Errorf("image(s) not available: %s: %s", strings.Join(missing, ", "), hint)
}

// OwnImagePrefix names the images this repository builds (offline stand-ins, packaged certctl builds,
// the harness's own services).
const OwnImagePrefix = "certctl-loadtest/"

// pull pulls the missing images with `docker compose pull` of the services that use them, its progress
// on the console (a first pull takes minutes), and returns the images still missing afterwards.
func (r *Runner) pull(ctx context.Context, compose Compose, svcs Services, imgs []string) []string {
	var names []string
	for name, s := range svcs {
		if slices.Contains(imgs, s.Image) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	r.logf("pulling %s (for %s)", strings.Join(imgs, ", "), strings.Join(names, ", "))
	lctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	pw := &prefixWriter{prefix: "[pull] ", out: r.Stderr, mu: &sync.Mutex{}}
	compose.Run(lctx, pw, pw, append([]string{"--profile", "k6", "pull", "--ignore-pull-failures"}, names...)...)
	pw.Flush()
	var still []string
	for _, img := range imgs {
		if c, _ := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"image", "inspect", "--format", "{{.Id}}", img}, Env: r.Env, Stdout: io.Discard, Stderr: io.Discard}); c != 0 {
			still = append(still, img)
		}
	}
	return still
}

// packageDist turns the certctl build in CERTCTL_DIST into the images the stack runs
// (images/certctl/build.sh; cached, so seconds when nothing changed) and points CERTCTL_IMAGE at them.
func (r *Runner) packageDist(ctx context.Context, compose *Compose) error {
	r.logf("packaging the certctl build %s into images", r.Cfg.Dist)
	bctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	code, err := r.Exec(bctx, Cmd{Name: filepath.Join(r.Cfg.Root, "images", "certctl", "build.sh"), Args: []string{r.Cfg.Dist},
		Env: compose.Env, Stdout: &out, Stderr: r.Stderr})
	if err != nil || code != 0 {
		return fmt.Errorf("could not package the certctl build in CERTCTL_DIST=%s into images (exit %d%s): see the lines above", r.Cfg.Dist, code, errSuffix(err))
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.HasPrefix(k, "CERTCTL_") {
			compose.Env = append(compose.Env, k+"="+v)
			r.Env = append(r.Env, k+"="+v)
		}
	}
	return nil
}

// identifyCertctl records which certctl ran by image reference and id: certctl's official images stamp no
// version (docs/certctl-findings.md#no-version), so what the server reports is not enough.
func (r *Runner) identifyCertctl(ctx context.Context, compose Compose, svcs Services, run *report.Run) {
	if ext := r.Cfg.External; ext != nil {
		// Not ours: its URL is all the harness knows; the version it reports is the summary's.
		run.Certctl = report.Certctl{URL: ext.URL}
		for _, s := range r.Cfg.Skipped {
			run.Unavailable = append(run.Unavailable, report.Unavailable{Scenario: s.Name, Reason: Unavailable(s)})
		}
		run.Unavailable = append(run.Unavailable, report.Unavailable{Scenario: "diagnosis", Reason: ExternalNoDiagnosis})
		return
	}
	for _, kv := range compose.Env {
		if v, ok := strings.CutPrefix(kv, "CERTCTL_IMAGE="); ok {
			run.Certctl.Image = v
		}
	}
	if img := svcs[serverService].Image; img != "" {
		run.Certctl.Image = img
	}
	run.Certctl.ImageID = run.ImageIDs[run.Certctl.Image]
	run.Certctl.Build = r.Cfg.Dist
	if r.Cfg.Faults {
		var f []string
		for _, k := range FaultKnobs {
			if v := r.Cfg.Env[k]; v != "" {
				f = append(f, k+"="+v)
			}
		}
		run.Certctl.Faults = strings.Join(f, " ")
	}
	var out bytes.Buffer
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if c, _ := r.Exec(ictx, Cmd{Name: "docker", Args: []string{"image", "inspect", "--format", `{{ index .Config.Labels "org.certctl-loadtest.certctl-server-sha256" }}`, run.Certctl.Image},
		Env: compose.Env, Stdout: &out, Stderr: io.Discard}); c == 0 {
		if v := strings.TrimSpace(out.String()); v != "" && v != "<no value>" {
			run.Certctl.ServerSHA256 = v
		}
	}
}

func errSuffix(err error) string {
	if err != nil {
		return ": " + err.Error()
	}
	return ""
}

func (r *Runner) pullAllowed() bool {
	for _, kv := range r.Env {
		if kv == "PULL_POLICY=never" {
			return false
		}
	}
	return true
}

// up starts certctl and everything it depends on (compose's depends_on) and waits for certctl to be
// healthy. It returns a sentence on failure.
func (r *Runner) up(ctx context.Context, compose Compose, svcs Services, dir string, run *report.Run) string {
	logf, err := createFile(filepath.Join(dir, "logs", "up.log"))
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
func (r *Runner) upTierServices(ctx context.Context, compose Compose, svcs Services, dir string, run *report.Run) string {
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
	logf, err := os.OpenFile(filepath.Join(dir, "logs", "up.log"), os.O_APPEND|os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
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
	states := r.waitRequired(uctx, compose, svcs, extra)
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

func (r *Runner) k6Version(ctx context.Context, compose Compose) string {
	vctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := compose.Output(vctx, "run", "--rm", "--no-deps", "-T", r.k6Service(), "version")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(firstLine(out, nil))
}

// runScenarios starts one k6 container per scenario, all at once (spot checks: one after another),
// and waits for every one. With SEGMENTS=N each scenario is N containers, each an execution segment of
// its load, whose records are merged into the scenario's once all have ended.
func (r *Runner) runScenarios(ctx context.Context, compose Compose, dir string) []report.ScenarioRun {
	d, _ := ParseDuration("DURATION", r.Cfg.Duration)
	// Bounded in time whatever k6 does: the run, setup, graceful stop and a margin.
	sctx, cancel := context.WithTimeout(ctx, d+5*time.Minute)
	defer cancel()

	n := max(r.Cfg.Segments, 1)
	runs := make([]report.ScenarioRun, len(r.Cfg.Scenarios))
	codes := make([]map[string]int, len(r.Cfg.Scenarios))
	var wg sync.WaitGroup
	var mu sync.Mutex // serialises console lines, and guards live, runs and codes
	live := make([]liveScenario, len(r.Cfg.Scenarios)*n)
	stopProgress := r.showProgress(sctx, &mu, live)
	defer stopProgress()
	for i, sc := range r.Cfg.Scenarios {
		logPath := filepath.Join("logs", sc.Name+".log")
		runs[i] = report.ScenarioRun{Tier: sc.Tier, Name: sc.Name, Script: sc.Path, Log: logPath}
		codes[i] = map[string]int{}
		logf, err := createFile(filepath.Join(dir, logPath))
		if err != nil {
			runs[i].ExitCode = ExitEnvironment
			continue
		}
		shared := &lockedWriter{w: logf}
		for seg := 0; seg < n; seg++ {
			p := k6Process{scenario: sc, container: r.k6Container(sc.Name), name: sc.Name}
			if n > 1 {
				p.segment = SegmentID(seg, n)
				p.container += "-" + p.segment
				p.name += "@" + p.segment
				p.segmentArgs = SegmentArgs(seg, n)
			}
			args := r.k6Args(dir, p)
			mu.Lock() // scenarios started before print their lines meanwhile
			r.logf("scenario %s: k6 run %s", p.name, strings.Join(append([]string{sc.Path}, p.segmentArgs...), " "))
			mu.Unlock()
			wg.Add(1)
			go func(i, slot int, p k6Process) {
				defer wg.Done()
				// The segments of a scenario share its log, each line marked with its segment.
				var w io.Writer = shared
				if p.segment != "" {
					w = &prefixWriter{prefix: "[" + p.segment + "] ", out: w, mu: &sync.Mutex{}}
				}
				pw := &prefixWriter{prefix: "[" + p.name + "] ", out: r.Stderr, mu: &mu}
				out := io.MultiWriter(w, pw)
				started := r.Now().UTC()
				mu.Lock()
				if runs[i].StartedAt == nil || started.Before(*runs[i].StartedAt) {
					runs[i].StartedAt = &started
				}
				live[slot] = liveScenario{name: p.name, container: p.container, perMinute: p.scenario.Tier == "connector", started: started}
				mu.Unlock()
				code, err := compose.Run(sctx, out, out, args...)
				mu.Lock()
				live[slot].done = true
				mu.Unlock()
				if sctx.Err() != nil {
					// docker compose returns when it is told to stop, before k6 has written its record.
					r.awaitK6(p.container)
				}
				ended := r.Now().UTC()
				pw.Flush()
				if f, ok := w.(*prefixWriter); ok {
					f.Flush()
				}
				if err != nil && code == 0 {
					code = ExitEnvironment
				}
				mu.Lock() // the other scenarios' lines go to the same stderr
				if runs[i].EndedAt == nil || ended.After(*runs[i].EndedAt) {
					runs[i].EndedAt = &ended
				}
				if p.segment == "" {
					runs[i].ExitCode = code
				} else {
					codes[i][p.segment] = code
				}
				r.logf("scenario %s: k6 exited %d", p.name, code)
				mu.Unlock()
			}(i, i*n+seg, p)
		}
		if r.Cfg.Spotcheck {
			wg.Wait() // spot checks are latency measurements, not load: one at a time
		}
		defer logf.Close()
	}
	wg.Wait()
	if n > 1 {
		for i := range runs {
			if runs[i].ExitCode == 0 {
				runs[i].ExitCode = r.mergeSegments(dir, runs[i].Name, codes[i])
			}
		}
	}
	return runs
}

const segmentsDir = segments.Dir

// k6Service is the compose service k6 runs as: on the stack's network, or, against an external
// certctl, on the network that reaches it.
func (r *Runner) k6Service() string {
	if r.Cfg.External != nil {
		return k6ExternalService
	}
	return k6Service
}

// k6Process is one k6 container of a scenario: the whole load, or one execution segment of it.
type k6Process struct {
	scenario    Scenario
	name        string // the scenario's name, with "@<segment>" for a segment
	container   string
	segment     string // "2of4"; "" for the whole load
	segmentArgs []string
}

// k6Args is the `docker compose run` of one k6 process.
func (r *Runner) k6Args(dir string, p k6Process) []string {
	sc := p.scenario
	args := []string{"run", "--rm", "--no-deps", "-T", "--name", p.container, "--user", r.Owner.String()}
	for k := range r.Cfg.Env {
		if K6Env(k) {
			args = append(args, "-e", k)
		}
	}
	// An output's settings, by name only: compose takes the value from its environment, so a
	// password never shows on a command line.
	for _, kv := range r.Env {
		if k, _, _ := strings.Cut(kv, "="); K6OutputSetting(k) && !slices.Contains(args, k) {
			args = append(args, "-e", k)
		}
	}
	// Each k6 checks in setup() that the results of all of them fit in what is free (k6/lib/scenario.js).
	if free, ok := freeBytes(dir); ok && !r.Cfg.Spotcheck {
		args = append(args, "-e", fmt.Sprintf("LT_RESULTS_FREE_BYTES=%d", free), "-e", fmt.Sprintf("LT_RUN_SCENARIOS=%d", len(r.Cfg.Scenarios)))
	}
	files := sc.Name
	if p.segment != "" {
		args = append(args, "-e", "LT_SEGMENT="+p.segment)
		files = segmentsDir + "/" + sc.Name + "@" + p.segment
	}
	// Each k6 also exports its web-dashboard report (no port opened: -1) and its raw samples.
	args = append(args,
		"-e", "K6_WEB_DASHBOARD=true", "-e", "K6_WEB_DASHBOARD_PORT=-1",
		// The report holds one point per period and is empty for a run shorter than one.
		"-e", "K6_WEB_DASHBOARD_PERIOD=2s",
		"-e", "K6_WEB_DASHBOARD_EXPORT=/results/dashboard/"+files+".html",
		// The REST API, inside the container only, is what the progress lines read (k6 stats).
		r.k6Service(), "run", "--quiet", "--no-color", "--address", k6API, "--out", "json=/results/raw/"+files+".json.gz")
	args = append(args, p.segmentArgs...)
	if len(r.Cfg.K6Outputs) > 0 {
		// Every k6 writes to the same collector: these tags tell the runs, and the processes of one
		// run, apart (vus and vus_max carry no scenario tag of their own).
		args = append(args, "--tag", "testid="+r.Cfg.RunID, "--tag", "lt_scenario="+sc.Name)
		if p.segment != "" {
			args = append(args, "--tag", "lt_segment="+p.segment)
		}
	}
	for _, o := range r.Cfg.K6Outputs {
		args = append(args, strings.ReplaceAll(o, "{scenario}", strings.ReplaceAll(p.name, "@", "-")))
	}
	return append(args, "/"+sc.Path)
}

// mergeSegments merges a scenario's segment records (internal/segments) and returns its exit code: a
// segment's own failure (k6's script error, an abort) first, then the thresholds judged on the
// pooled samples, whatever each segment judged on its part.
func (r *Runner) mergeSegments(dir, name string, codes map[string]int) int {
	worst := ExitOK
	var ids []string
	for id, c := range codes {
		ids = append(ids, id)
		if c != ExitOK && c != ExitThresholds {
			worst = verdict([]report.ScenarioRun{{ExitCode: worst}, {ExitCode: c}})
		}
	}
	sort.Strings(ids)
	segs, ok, err := segments.Merge(dir, name, codes)
	if err != nil {
		r.logf("scenario %s: its %d segments cannot be merged: %v", name, len(codes), err)
		if worst == ExitOK {
			worst = ExitNoResults
		}
		return worst
	}
	var parts []string
	for _, s := range segs {
		parts = append(parts, fmt.Sprintf("%s %s %.0f iterations", s.ID, s.Segment, s.Iterations))
	}
	verdictWord := "thresholds held"
	if !ok {
		verdictWord = "thresholds breached"
	}
	r.logf("scenario %s: merged %d segments (%s): %s on the pooled samples", name, len(segs), strings.Join(parts, "; "), verdictWord)
	if worst != ExitOK {
		return worst
	}
	if !ok {
		return ExitThresholds
	}
	return ExitOK
}

// awaitK6 stops a k6 container the way k6 ends a run early (SIGTERM: it still writes its summary) and
// waits, at most 30 s, until it has exited.
func (r *Runner) awaitK6(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.Exec(ctx, Cmd{Name: "docker", Args: []string{"kill", "--signal", "TERM", name}, Env: r.Env, Stdout: io.Discard, Stderr: io.Discard})
	for {
		var out bytes.Buffer
		c, _ := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"inspect", "--format", "{{.State.Running}}", name}, Env: r.Env, Stdout: &out, Stderr: io.Discard})
		if c != 0 || strings.TrimSpace(out.String()) != "true" {
			return
		}
		select {
		case <-ctx.Done():
			r.logf("%s still runs 30 s after it was told to stop: its record may be missing", name)
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (r *Runner) saveStackLogs(compose Compose, dir string) {
	f, err := createFile(filepath.Join(dir, "logs", "stack.log"))
	if err != nil {
		return
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	compose.Run(ctx, f, f, "logs", "--no-color", "--timestamps")
}

func (r *Runner) host(ctx context.Context) report.Host {
	h := report.Host{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	var out bytes.Buffer
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if c, _ := r.Exec(ictx, Cmd{Name: "docker", Args: []string{"info", "--format", "{{.NCPU}} {{.MemTotal}} {{.ServerVersion}}"}, Env: r.Env, Stdout: &out, Stderr: io.Discard}); c == 0 {
		f := strings.Fields(out.String())
		if len(f) == 3 {
			h.DockerCPUs, _ = strconv.Atoi(f[0])
			h.MemoryBytes, _ = strconv.ParseInt(f[1], 10, 64)
			h.DockerVersion = f[2]
		}
	}
	return h
}

func firstLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if s == "" && err != nil {
		return err.Error()
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// prefixWriter writes complete lines with a prefix, so parallel k6 outputs stay readable.
type prefixWriter struct {
	prefix string
	out    io.Writer
	mu     *sync.Mutex
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		p.emit(p.buf[:i+1])
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}

func (p *prefixWriter) Flush() {
	if len(p.buf) > 0 {
		p.emit(append(p.buf, '\n'))
		p.buf = nil
	}
}

func (p *prefixWriter) emit(line []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := bufio.NewWriter(p.out)
	w.WriteString(p.prefix)
	w.Write(line)
	w.Flush()
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
