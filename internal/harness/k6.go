// The k6 processes: one container per scenario (or per execution segment), started together, their
// output on the console and in their logs, their segment records merged once all have ended.

package harness

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// rawFile describes raw/<name>.json.gz: a gzip stream read to its end is complete; one that stops
// short was cut off where its k6 stopped.
func rawFile(dir, name string) *results.RawFile {
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
	rf := &results.RawFile{Path: rel, Bytes: st.Size()}
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
		if r.Cfg.Diagnosis() {
			dirs = append(dirs, "server")
		}
		return dirs
	}
	if r.Cfg.Spotcheck {
		return []string{"spotchecks"} // each spot check's own record (k6/spotcheck)
	}
	if r.Cfg.Diagnosis() {
		return []string{"server"} // the collector's samples: it runs as the owner too
	}
	return nil
}

// runScenarios starts one k6 container per scenario, all at once (spot checks: one after another),
// and waits for every one. With SEGMENTS=N each scenario is N containers, each an execution segment of
// its load, whose records are merged into the scenario's once all have ended.
func (r *Runner) runScenarios(ctx context.Context, compose Compose, dir string) []results.ScenarioRun {
	d := r.Cfg.Length
	// Bounded in time whatever k6 does: the run, setup, graceful stop and a margin.
	sctx, cancel := context.WithTimeout(ctx, d+5*time.Minute)
	defer cancel()

	n := max(r.Cfg.Segments, 1)
	st := newK6Runs(len(r.Cfg.Scenarios), n)
	stopProgress := r.showProgress(sctx, st)
	defer stopProgress()
	var wg sync.WaitGroup
	for i, sc := range r.Cfg.Scenarios {
		logPath := filepath.Join("logs", sc.Name+".log")
		st.runs[i] = results.ScenarioRun{Tier: sc.Tier, Name: sc.Name, Script: sc.Path, Log: logPath}
		logf, err := output.Create(filepath.Join(dir, logPath))
		if err != nil {
			st.runs[i].ExitCode = results.ExitEnvironment
			continue
		}
		defer logf.Close()
		shared := &lockedWriter{w: logf}
		for seg := 0; seg < n; seg++ {
			p := r.k6Process(sc, seg, n)
			r.logf("scenario %s: k6 run %s", p.name, strings.Join(append([]string{sc.Path}, p.segmentArgs...), " "))
			wg.Add(1)
			go func(i, slot int) {
				defer wg.Done()
				r.runK6(sctx, compose, dir, st, i, slot, p, shared)
			}(i, i*n+seg)
		}
		if r.Cfg.Spotcheck {
			wg.Wait() // spot checks are latency measurements, not load: one at a time
		}
	}
	wg.Wait()
	if n > 1 {
		for i := range st.runs {
			if st.runs[i].ExitCode == 0 {
				st.runs[i].ExitCode = r.mergeSegments(dir, st.runs[i].Name, st.codes[i])
			}
		}
	}
	return st.runs
}

// runK6 runs one k6 process to its end: its output in the scenario's log (each line marked with its
// segment, when the scenario has several) and on the console (marked with its name).
func (r *Runner) runK6(ctx context.Context, compose Compose, dir string, st *k6Runs, i, slot int, p k6Process, log io.Writer) {
	var w io.Writer = log
	if p.segment != "" {
		w = newPrefixWriter("["+p.segment+"] ", w, &sync.Mutex{})
	}
	pw := newPrefixWriter("["+p.name+"] ", r.Stderr, &r.console)
	console := newFailureFilter(pw, func(kind, e string) { st.failed(slot, kind, e) })
	out := io.MultiWriter(w, console)
	st.started(i, slot, liveScenario{name: p.name, container: p.container, perMinute: perMinute(p.scenario.Tier), started: r.Now().UTC()})
	code, err := compose.Run(ctx, out, out, r.k6Args(dir, p)...)
	st.stopped(slot)
	if ctx.Err() != nil {
		// docker compose returns when it is told to stop, before k6 has written its record.
		r.awaitK6(p.container)
	}
	ended := r.Now().UTC()
	console.Flush()
	pw.Flush()
	if f, ok := w.(*prefixWriter); ok {
		f.Flush()
	}
	if err != nil && code == 0 {
		code = results.ExitEnvironment
	}
	failures, first := st.ended(i, slot, p.segment, code, ended)
	if len(failures) > 0 {
		r.logf("scenario %s: k6 exited %d; requests k6 could not complete: %s; each is in %s", p.name, code, failures.Detail(first), filepath.Join("logs", p.scenario.Name+".log"))
		return
	}
	r.logf("scenario %s: k6 exited %d", p.name, code)
}

// k6Process is scenario sc's process for segment seg of n: its container and name carry the segment.
func (r *Runner) k6Process(sc Scenario, seg, n int) k6Process {
	p := k6Process{scenario: sc, container: r.k6Container(sc.Name), name: sc.Name}
	if n > 1 {
		p.segment = SegmentID(seg, n)
		p.container += "-" + p.segment
		p.name += "@" + p.segment
		p.segmentArgs = SegmentArgs(seg, n)
	}
	return p
}

const segmentsDir = results.SegmentsDir

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
		// The REST API, on the stack's network only, is what the progress lines read (readStats).
		r.k6Service(), "run", "--quiet", "--no-color", "--address", k6Listen, "--out", "json=/results/raw/"+files+".json.gz")
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

// mergeSegments merges a scenario's segment records (results.MergeSegments) and returns its exit code: a
// segment's own failure (k6's script error, an abort) first, then the thresholds judged on the
// pooled samples, whatever each segment judged on its part.
func (r *Runner) mergeSegments(dir, name string, codes map[string]int) int {
	worst := results.ExitOK
	var ids []string
	for id, c := range codes {
		ids = append(ids, id)
		if c != results.ExitOK && c != results.ExitThresholds {
			worst = results.Verdict(worst, c)
		}
	}
	sort.Strings(ids)
	segs, ok, err := results.MergeSegments(dir, name, codes)
	if err != nil {
		r.logf("scenario %s: its %d segments cannot be merged: %v", name, len(codes), err)
		if worst == results.ExitOK {
			worst = results.ExitNoResults
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
	if worst != results.ExitOK {
		return worst
	}
	if !ok {
		return results.ExitThresholds
	}
	return results.ExitOK
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
