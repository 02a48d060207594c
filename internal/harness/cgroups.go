package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// cgroupFiles are where a container's CPU time and memory are, by the engine's cgroup layout: v2 with
// the systemd driver (GitHub's runners), v2 cgroupfs, v1 cgroupfs (Debian's docker.io here), v1 systemd.
// The CPU file's unit is in its name: cpu.stat's usage_usec, cpuacct.usage's nanoseconds.
var cgroupFiles = []struct{ cpu, mem string }{
	{"/sys/fs/cgroup/system.slice/docker-%s.scope/cpu.stat", "/sys/fs/cgroup/system.slice/docker-%s.scope/memory.current"},
	{"/sys/fs/cgroup/docker/%s/cpu.stat", "/sys/fs/cgroup/docker/%s/memory.current"},
	{"/sys/fs/cgroup/cpuacct/docker/%s/cpuacct.usage", "/sys/fs/cgroup/memory/docker/%s/memory.usage_in_bytes"},
	{"/sys/fs/cgroup/cpuacct/system.slice/docker-%s.scope/cpuacct.usage", "/sys/fs/cgroup/memory/system.slice/docker-%s.scope/memory.usage_in_bytes"},
}

// cgroupCPU is a container's CPU time so far, from its cgroup file.
func cgroupCPU(path string) (time.Duration, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	if strings.HasSuffix(path, "cpuacct.usage") {
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return time.Duration(n), err == nil
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "usage_usec "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Duration(n) * time.Microsecond, err == nil
		}
	}
	return 0, false
}

func readInt(path string) int64 {
	b, _ := os.ReadFile(path)
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

type cgContainer struct {
	name, service string
	cpu, mem      string
	last          time.Duration
	lastAt        time.Time
}

// sampleCgroups reads each of the run's containers' CPU time from its cgroup once a second: no cost to
// speak of, where `docker stats` makes the engine do the same reads and more (about 2 % of a CPU for
// ten containers, measured; docs/diagnosis.md). The container list is refreshed every 5 s, so the k6
// containers are seen as they start. It reports false when the cgroup files are not where the host
// keeps them (Docker Desktop, a remote engine): then docker stats is used.
func (r *Runner) sampleCgroups(ctx context.Context, out, host io.Writer) (ok bool, samples *int) {
	n := 0
	samples = &n
	ids := r.projectContainers(ctx)
	if len(ids) == 0 {
		return false, samples
	}
	layout := -1
	for id := range ids {
		for i, f := range cgroupFiles {
			if _, ok := cgroupCPU(strings.ReplaceAll(f.cpu, "%s", id)); ok {
				layout = i
				break
			}
		}
		if layout >= 0 {
			break // a container that has exited has no cgroup to tell by: another may
		}
	}
	if layout < 0 {
		return false, samples
	}
	go func() {
		known := map[string]*cgContainer{}
		add := func(ids map[string]string) {
			for id, name := range ids {
				if known[id] == nil {
					f := cgroupFiles[layout]
					known[id] = &cgContainer{name: name, service: serviceOf(name, r.Cfg.Project), cpu: strings.ReplaceAll(f.cpu, "%s", id), mem: strings.ReplaceAll(f.mem, "%s", id)}
				}
			}
		}
		add(ids)
		seen := cgroupIDs{pattern: cgroupFiles[layout].cpu, ids: map[string]bool{}}
		seen.fresh()
		// The machine as a whole, read in the same tick: the containers' share of it is the run's.
		hs := &hostSampler{stat: "/proc/stat", pressure: "/proc/pressure/cpu", cpus: runtime.NumCPU(), procs: &procCPU{proc: "/proc", self: os.Getpid()}}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for refresh := 1; ; refresh++ {
			// The engine's cgroup folder is listed, not the engine asked: `docker ps` only when a
			// container appeared (ours, a k6 starting, or another's).
			if refresh%5 == 0 && seen.fresh() {
				add(r.projectContainers(ctx))
			}
			now := time.Now()
			at := r.Now().UTC()
			if h, ok := hs.sample(now, at, refresh); ok && host != nil {
				b, _ := json.Marshal(h)
				host.Write(append(b, '\n'))
			}
			for id, c := range known {
				used, ok := cgroupCPU(c.cpu)
				if !ok {
					delete(known, id) // gone
					continue
				}
				if !c.lastAt.IsZero() {
					pct := float64(used-c.last) / float64(now.Sub(c.lastAt)) * 100
					b, _ := json.Marshal(ContainerSample{At: at, Service: c.service, Container: c.name, CPUPct: float64(int(pct*100+0.5)) / 100, MemBytes: readInt(c.mem), Refresh: refresh})
					out.Write(append(b, '\n'))
					n++
				}
				c.last, c.lastAt = used, now
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return true, samples
}

// cgroupIDs are the container ids the engine's cgroup folder has shown so far.
type cgroupIDs struct {
	pattern string // cgroupFiles' cpu, with %s for the id
	ids     map[string]bool
}

// fresh lists the folder and reports whether it holds an id not seen before.
func (c cgroupIDs) fresh() bool {
	before, after, _ := strings.Cut(c.pattern, "%s")
	paths, _ := filepath.Glob(before + "*" + after)
	found := false
	for _, p := range paths {
		id := strings.TrimSuffix(strings.TrimPrefix(p, before), after)
		if !c.ids[id] {
			c.ids[id], found = true, true
		}
	}
	return found
}

// projectContainers is the run's containers, running or not (a container is in the engine's list
// before its cgroup exists), full id → name.
func (r *Runner) projectContainers(ctx context.Context) map[string]string {
	var out bytes.Buffer
	c, _ := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"ps", "--all", "--no-trunc", "--filter", "label=com.docker.compose.project=" + r.Cfg.Project, "--format", "{{.ID}} {{.Names}}"},
		Env: r.Env, Stdout: &out, Stderr: io.Discard})
	if c != 0 {
		return nil
	}
	m := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if id, name, ok := strings.Cut(strings.TrimSpace(l), " "); ok && filepath.Base(id) == id {
			m[id] = name
		}
	}
	return m
}

// ContainerSample is one line of server/containers.jsonl.
type ContainerSample struct {
	At        time.Time `json:"at"`
	Service   string    `json:"service"`
	Container string    `json:"container"`
	CPUPct    float64   `json:"cpu_pct"` // of one CPU, as docker stats reports it
	MemBytes  int64     `json:"mem_bytes"`
	// Refresh numbers docker stats' screens: the samples of one refresh are one moment of the machine.
	Refresh int `json:"refresh"`
}

var replicaRE = regexp.MustCompile(`-\d+$`)

// serviceOf is the compose service of a container name: <project>-<service>-<n>, or the harness's own
// k6 name <project>-k6-<scenario>, which stays whole.
func serviceOf(name, project string) string {
	s := strings.TrimPrefix(name, project+"-")
	if strings.HasPrefix(s, k6Service+"-") {
		return s
	}
	return replicaRE.ReplaceAllString(s, "")
}
