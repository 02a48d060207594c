package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"certctl-loadtest/internal/collector"
	"certctl-loadtest/internal/output"
)

// startCollectors starts what records the server side during the load (DIAGNOSIS): the collector
// container and the containers' CPU (their cgroups, else a `docker stats` stream), writing to server/. It waits
// for the collector's first samples, so the load's first seconds are in them. The returned stop ends
// both, the collector with SIGTERM so it takes its "after" samples. Nothing here fails the run: a
// collector that does not start is named in the diagnosis, and the load goes on.
func (r *Runner) startCollectors(ctx context.Context, compose Compose, dir string) (stop func()) {
	server := filepath.Join(dir, "server")
	stopStats := func() {}
	if r.Cfg.Containers {
		stopStats = r.sampleContainers(server)
	}
	if !r.Cfg.Collector {
		return stopStats
	}
	logf, err := output.Append(filepath.Join(dir, "logs", "up.log"))
	if err != nil {
		return stopStats
	}
	defer logf.Close()
	uctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	code, err := compose.Run(uctx, logf, logf, "up", "--detach", "--no-deps", collectorService)
	if err != nil || code != 0 {
		r.logf("the collector did not start (docker compose up exit %d%s): the run goes on without database and metrics samples; see logs/up.log", code, errSuffix(err))
		writeCollectorFailure(server, fmt.Sprintf("the collector container did not start (docker compose up exit %d); see logs/up.log and logs/stack.log", code))
	} else if !waitFile(uctx, filepath.Join(server, collectorReady)) {
		r.logf("the collector took no first sample within a minute: the load starts anyway; its log is in logs/stack.log")
	}
	os.Remove(filepath.Join(server, collectorReady))
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		compose.Run(sctx, io.Discard, io.Discard, "stop", "--timeout", "30", collectorService)
		stopStats()
	}
}

// collectorReady is the file the collector writes in server/ once it has its first samples
// (COLLECT_READY_FILE in docker-compose.yml).
const collectorReady = "collector.ready"

func waitFile(ctx context.Context, path string) bool {
	for {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// writeCollectorFailure leaves a collector.json that says why there are no database or metrics samples.
func writeCollectorFailure(server, reason string) {
	st := collector.Status{StartedAt: time.Now().UTC(), EndedAt: time.Now().UTC()}
	for _, n := range []string{"pg_activity", "pg_database", "pg_statements", "pg_tables", "certctl_metrics"} {
		st.Sources = append(st.Sources, collector.SourceStatus{Name: n, Reason: reason})
	}
	output.JSON(filepath.Join(server, collector.StatusFile), st)
}

// HostFile is where the machine's own CPU samples go, under server/.
const HostFile = "host.jsonl"

// sampleContainers records every container's CPU and memory into server/containers.jsonl: from the
// cgroup files where the host has them (sampleCgroups), else by streaming `docker stats`, which works
// wherever docker does (Docker Desktop too) but costs the engine more.
func (r *Runner) sampleContainers(server string) (stop func()) {
	f, err := output.Create(filepath.Join(server, collector.ContainersFile))
	if err != nil {
		r.logf("cannot record the containers' CPU: %v", err)
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	lw := &lockedWriter{w: f}
	// The machine's own CPU beside the containers' (server/host.jsonl): only where the cgroups are read
	// on the engine's own machine; docker stats may report a VM's containers to another machine.
	var hw *lockedWriter
	hf, herr := output.Create(filepath.Join(server, HostFile))
	if herr == nil {
		hw = &lockedWriter{w: hf}
	}
	var host io.Writer
	if hw != nil {
		host = hw
	}
	if ok, n := r.sampleCgroups(ctx, lw, host); ok {
		return func() {
			cancel()
			lw.Lock()
			defer lw.Unlock()
			lw.closed = true
			f.Close()
			if hw != nil {
				hw.Lock()
				hw.closed = true
				hf.Close()
				hw.Unlock()
			}
			if *n == 0 {
				r.logf("the containers' cgroups gave no sample: the diagnosis has no CPU figures")
			}
		}
	}
	if hw != nil {
		hf.Close()
		os.Remove(filepath.Join(server, HostFile))
	}
	w := &statsWriter{out: f, project: r.Cfg.Project, now: r.Now}
	done := make(chan struct{})
	var errb bytes.Buffer
	go func() {
		defer close(done)
		r.Exec(ctx, Cmd{Name: "docker", Args: []string{"stats", "--no-trunc", "--format", "{{json .}}"}, Env: r.Env, Stdout: w, Stderr: &errb})
	}()
	return func() {
		cancel()
		<-done
		w.flush()
		f.Close()
		if w.samples == 0 {
			r.logf("docker stats gave no sample of the stack's containers (%s): the diagnosis has no CPU figures", firstLine(errb.String(), nil))
		}
	}
}

// statsWriter turns docker stats' lines into ContainerSample lines. Between refreshes docker stats
// writes terminal control sequences, even to a pipe.
type statsWriter struct {
	out     io.Writer
	project string
	now     func() time.Time
	buf     []byte
	samples int
	refresh int
	mu      sync.Mutex
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

func (s *statsWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, b...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		s.line(s.buf[:i])
		s.buf = s.buf[i+1:]
	}
	return len(b), nil
}

func (s *statsWriter) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.line(s.buf)
	s.buf = nil
}

func (s *statsWriter) line(b []byte) {
	// Each refresh starts by homing the cursor.
	if bytes.Contains(b, []byte("\x1b[H")) {
		s.refresh++
	}
	smp, ok := ParseStatsLine(ansiRE.ReplaceAll(b, nil), s.project, s.now().UTC())
	if !ok {
		return
	}
	smp.Refresh = s.refresh
	if out, err := json.Marshal(smp); err == nil {
		s.out.Write(append(out, '\n'))
		s.samples++
	}
}

// ParseStatsLine reads one `docker stats --format '{{json .}}'` line of the project's containers.
func ParseStatsLine(b []byte, project string, at time.Time) (ContainerSample, bool) {
	var v struct{ Name, CPUPerc, MemUsage string }
	if json.Unmarshal(bytes.TrimSpace(b), &v) != nil || !strings.HasPrefix(v.Name, project+"-") {
		return ContainerSample{}, false
	}
	cpu, err := strconv.ParseFloat(strings.TrimSuffix(v.CPUPerc, "%"), 64)
	if err != nil {
		return ContainerSample{}, false // "--" while a container starts or stops
	}
	used, _, _ := strings.Cut(v.MemUsage, "/")
	return ContainerSample{At: at, Service: serviceOf(v.Name, project), Container: v.Name, CPUPct: cpu, MemBytes: parseBytes(strings.TrimSpace(used))}, true
}

// parseBytes reads docker's human sizes: 512B, 1.5KiB, 120MiB, 2GiB (and the decimal kB/MB/GB).
func parseBytes(s string) int64 {
	units := []struct {
		suffix string
		mul    float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
			if err != nil {
				return 0
			}
			return int64(v * u.mul)
		}
	}
	return 0
}
