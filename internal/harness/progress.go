package harness

import (
	"bytes"
	"certctl-loadtest/internal/results"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// k6Listen is where each k6 serves its REST API: in its own container, on the stack's internal
// network (no port is published), where the harness reads the figures so far over HTTP from the host
// (k6Metrics). k6API is the same API as `k6 stats` reaches it inside the container: the way on a
// machine whose host cannot reach the containers (Docker Desktop, a remote engine).
const (
	k6Port   = "6565"
	k6Listen = "0.0.0.0:" + k6Port
	k6API    = "127.0.0.1:" + k6Port
)

// Stats is what a k6 has measured so far: each metric's sample (count, rate, p(95), value, …) by name,
// as `k6 stats` prints them.
type Stats map[string]map[string]float64

// ParseStats reads the YAML `k6 stats` prints.
func ParseStats(b []byte) (Stats, error) {
	var list []struct {
		Name   string             `yaml:"name"`
		Sample map[string]float64 `yaml:"sample"`
	}
	if err := yaml.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("k6 stats: %v", err)
	}
	s := Stats{}
	for _, m := range list {
		s[m.Name] = m.Sample
	}
	return s, nil
}

func (s Stats) get(metric, field string) (float64, bool) {
	v, ok := s[metric][field]
	return v, ok
}

// Progress is one line about a running scenario. Prev is the scenario's previous reading, so the rate
// is the one achieved since then (nil: k6's own, over the whole run so far).
type Progress struct {
	Scenario string
	Elapsed  time.Duration
	Planned  time.Duration // 0: no fixed length (spot checks)
	Now      Stats
	Prev     Stats
	Window   time.Duration
	// PerMinute: the scenario's rate is set per minute (the connector tier), so its line says so too.
	PerMinute bool
	// Failures are the requests k6 could not complete so far (no answer, refused, a certificate that did
	// not verify), by kind, from k6's warnings: the scenario's log has each, the console this count.
	Failures RequestFailures
}

// Line renders the progress line: elapsed against planned, the rate achieved, dropped iterations,
// errors and the p95 so far. The figures are k6's own: the run's record is the verdict, this is a
// glance at whether it is going well.
func (p Progress) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s", p.Scenario, clock(p.Elapsed.Seconds()))
	if p.Planned > 0 {
		fmt.Fprintf(&b, " of %s", clock(p.Planned.Seconds()))
	}
	iters, _ := p.Now.get("iterations", "count")
	rate, _ := p.Now.get("iterations", "rate")
	if prev, ok := p.Prev.get("iterations", "count"); ok && p.Window > 0 {
		rate = (iters - prev) / p.Window.Seconds()
	}
	if p.PerMinute {
		fmt.Fprintf(&b, "  %s it/min (%d so far)", rate1(60*rate), int64(iters))
	} else {
		fmt.Fprintf(&b, "  %s it/s (%d so far)", rate1(rate), int64(iters))
	}
	if d, _ := p.Now.get("dropped_iterations", "count"); d > 0 {
		fmt.Fprintf(&b, "  %d dropped", int64(d))
	}
	// The latency a scenario is judged by: a fresh connection's (the connector tier), else its requests'.
	if p95, ok := p.Now.get("connection_duration", "p(95)"); ok {
		if pass, ok := p.Now.get("checks", "rate"); ok {
			fmt.Fprintf(&b, "  failed checks %s%%", pct(1-pass))
		}
		fmt.Fprintf(&b, "  connection p95 %s ms", ms1(p95))
	} else if reqs, _ := p.Now.get("http_reqs", "count"); reqs > 0 {
		failed, _ := p.Now.get("http_req_failed", "rate")
		fmt.Fprintf(&b, "  errors %d (%s%%)", int64(math.Round(failed*reqs)), pct(failed))
		p95, ok := p.Now.get("http_req_duration{expected_response:true}", "p(95)")
		if !ok {
			p95, _ = p.Now.get("http_req_duration", "p(95)")
		}
		fmt.Fprintf(&b, "  p95 %s ms", ms1(p95))
	}
	if f := p.Failures.String(); f != "" {
		fmt.Fprintf(&b, "  not completed: %s", f)
	}
	return b.String()
}

func rate1(v float64) string { return fmt.Sprintf("%.1f", v) }

func pct(v float64) string { return fmt.Sprintf("%.2f", 100*v) }

func ms1(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// ParseMetrics reads k6's REST API answer to GET /v1/metrics: the same figures as `k6 stats`, as JSON:API.
func ParseMetrics(b []byte) (Stats, error) {
	var doc struct {
		Data []struct {
			ID         string `json:"id"`
			Attributes struct {
				Sample map[string]float64 `json:"sample"`
			} `json:"attributes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("k6 /v1/metrics: %v", err)
	}
	s := Stats{}
	for _, m := range doc.Data {
		s[m.ID] = m.Attributes.Sample
	}
	return s, nil
}

// statsPath is how a scenario's figures are read: over HTTP from the host (its address), or with a
// process in its container (viaExec) once HTTP has failed twice where that worked.
type statsPath struct {
	address   string // host:port of the k6 REST API on the stack's network; "" until looked up
	looked    bool
	httpFails int
	viaExec   bool
}

// readStats asks the k6 in container for its figures so far; false while it has none to give (still
// in setup, or gone). Over HTTP where the host reaches the container (the engine on this machine): one
// request and no process, so that reading costs the machine next to nothing; else `docker exec … k6
// stats`, a process in the container each time.
func (r *Runner) readStats(ctx context.Context, container string, path *statsPath) (Stats, bool) {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if !path.looked {
		path.looked = true
		var out bytes.Buffer
		c, err := r.Exec(sctx, Cmd{Name: "docker", Args: []string{"inspect", "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", container}, Env: r.Env, Stdout: &out, Stderr: io.Discard})
		if ip := strings.Fields(out.String()); err == nil && c == 0 && len(ip) > 0 {
			path.address = net.JoinHostPort(ip[0], k6Port)
		}
	}
	if path.address != "" && !path.viaExec {
		if b, err := r.httpGet(sctx, "http://"+path.address+"/v1/metrics"); err == nil {
			s, err := ParseMetrics(b)
			path.httpFails = 0
			return s, err == nil && len(s) > 0
		}
		path.httpFails++
	}
	var out bytes.Buffer
	c, err := r.Exec(sctx, Cmd{Name: "docker", Args: []string{"exec", container, "k6", "stats", "--address", k6API}, Env: r.Env, Stdout: &out, Stderr: io.Discard})
	if err != nil || c != 0 {
		return nil, false
	}
	// k6 answered in its container but not over the network, twice: this host does not reach it.
	if path.httpFails >= 2 && !path.viaExec {
		path.viaExec = true
		r.logf("progress: this host does not reach %s's k6 over the stack's network; its figures are read with docker exec from now on", container)
	}
	s, err := ParseStats(out.Bytes())
	return s, err == nil && len(s) > 0
}

// httpGet is Runner.HTTPGet, or a plain GET whose body must come with a 200.
func (r *Runner) httpGet(ctx context.Context, url string) ([]byte, error) {
	if r.HTTPGet != nil {
		return r.HTTPGet(ctx, url)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	r.statsOnce.Do(func() {
		// One connection per k6 kept between polls, and no proxy: the address is on the stack's network.
		r.statsClient = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}, Timeout: 5 * time.Second}
	})
	resp, err := r.statsClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", url, resp.Status)
	}
	return b, err
}

// liveScenario is a scenario's k6 while it runs, as the progress lines see it.
type liveScenario struct {
	name, container string
	perMinute       bool
	started         time.Time
	done            bool
	prev            Stats
	prevAt          time.Time
	failures        RequestFailures
	first           FirstFailures
	stats           statsPath
}

// showProgress prints, every PROGRESS_INTERVAL, one line per scenario whose k6 runs, until the
// returned func is called.
func (r *Runner) showProgress(ctx context.Context, st *k6Runs) (stop func()) {
	interval := r.Cfg.ProgressEvery
	if interval <= 0 {
		return func() {}
	}
	planned := r.Cfg.Length
	if r.Cfg.Spotcheck {
		planned = 0 // each spot check has its own shape
	}
	return Every(ctx, interval, func(pctx context.Context) {
		st.mu.Lock()
		now := append([]liveScenario(nil), st.live...)
		for i := range now {
			now[i].failures = maps.Clone(now[i].failures)
		}
		st.mu.Unlock()
		for i, l := range now {
			if l.container == "" || l.done {
				continue
			}
			s, ok := r.readStats(pctx, l.container, &l.stats)
			st.mu.Lock()
			st.live[i].stats = l.stats
			st.mu.Unlock()
			if !ok {
				continue
			}
			at := r.Now()
			p := Progress{Scenario: l.name, Elapsed: at.Sub(l.started), Planned: planned, Now: s, Prev: l.prev, Window: at.Sub(l.prevAt), PerMinute: l.perMinute, Failures: l.failures}
			st.mu.Lock()
			done := st.live[i].done
			st.live[i].prev, st.live[i].prevAt = s, at
			st.mu.Unlock()
			if !done {
				r.logf("%s", p.Line())
			}
		}
	})
}

// stackStartEvery is how often a stack that is still starting says so: `up --wait` is silent for up
// to START_TIMEOUT.
const stackStartEvery = 15 * time.Second

// showStart prints, every stackStartEvery until the returned func is called, how far the stack has
// come: each service's state, in compose's words.
func (r *Runner) showStart(ctx context.Context, compose Compose, what string) (stop func()) {
	began := time.Now() // console figures only: the records' times come from r.Now
	return Every(ctx, stackStartEvery, func(pctx context.Context) {
		states, err := compose.States(pctx)
		if err != nil || pctx.Err() != nil {
			return
		}
		r.logf("%s", StartLine(what, time.Since(began), states))
	})
}

// StartLine says what each service of a starting stack is doing.
func StartLine(what string, elapsed time.Duration, states []ServiceState) string {
	var parts []string
	for _, s := range states {
		st := s.State
		switch {
		case s.Health != "":
			st = s.Health
		case s.State == "exited":
			st = fmt.Sprintf("exited %d", s.ExitCode)
		}
		parts = append(parts, s.Service+" "+st)
	}
	if len(parts) == 0 {
		parts = []string{"no container yet"}
	}
	return fmt.Sprintf("%s, %s so far: %s", what, clock(elapsed.Seconds()), strings.Join(parts, ", "))
}

// Every calls fn each interval, on a goroutine of its own, until the returned func is called (which
// waits for a call under way to end).
func Every(ctx context.Context, interval time.Duration, fn func(context.Context)) (stop func()) {
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
				fn(pctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// k6Runs is what the k6 processes of a run share while they run, under its own lock: each scenario's
// run as run.json records it, its segments' exit codes, and the live view the progress lines read. The
// console has the Runner's lock.
type k6Runs struct {
	mu    sync.Mutex
	runs  []results.ScenarioRun
	codes []map[string]int // per scenario: segment → exit code
	live  []liveScenario   // per k6 process: scenario i's segment j at i*segments+j
}

func newK6Runs(scenarios, segments int) *k6Runs {
	st := &k6Runs{runs: make([]results.ScenarioRun, scenarios), codes: make([]map[string]int, scenarios), live: make([]liveScenario, scenarios*segments)}
	for i := range st.codes {
		st.codes[i] = map[string]int{}
	}
	return st
}

// started records a k6 process's start: a scenario started when its first segment did.
func (st *k6Runs) started(i, slot int, l liveScenario) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.runs[i].StartedAt == nil || l.started.Before(*st.runs[i].StartedAt) {
		at := l.started
		st.runs[i].StartedAt = &at
	}
	st.live[slot] = l
}

// ended records a k6 process's end: a scenario ended when its last segment did; a segment's code
// waits for the merge.
func (st *k6Runs) ended(i, slot int, segment string, code int, at time.Time) (RequestFailures, FirstFailures) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.runs[i].EndedAt == nil || at.After(*st.runs[i].EndedAt) {
		st.runs[i].EndedAt = &at
	}
	if segment == "" {
		st.runs[i].ExitCode = code
	} else {
		st.codes[i][segment] = code
	}
	return st.live[slot].failures, st.live[slot].first
}

// failed counts one request of a k6 process that k6 could not complete, keeping each kind's first error.
func (st *k6Runs) failed(slot int, kind, err string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	l := &st.live[slot]
	if l.failures == nil {
		l.failures, l.first = RequestFailures{}, FirstFailures{}
	}
	if l.failures[kind] == 0 {
		l.first[kind] = err
	}
	l.failures[kind]++
}

func (st *k6Runs) stopped(slot int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.live[slot].done = true
}
