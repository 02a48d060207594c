// The machine a run ran on, for run.json.

package harness

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"certctl-loadtest/internal/results"
)

func (r *Runner) host(ctx context.Context) results.Host {
	h := results.Host{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH}
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
	if c, _ := r.Exec(ictx, Cmd{Name: "docker", Args: []string{"info", "--format", "{{.NCPU}} {{.MemTotal}} {{.ServerVersion}} {{.DockerRootDir}}"}, Env: r.Env, Stdout: &out, Stderr: io.Discard}); c == 0 {
		f := strings.Fields(out.String())
		if len(f) >= 3 {
			h.DockerCPUs, _ = strconv.Atoi(f[0])
			h.MemoryBytes, _ = strconv.ParseInt(f[1], 10, 64)
			h.DockerVersion = f[2]
		}
		if len(f) == 4 {
			h.DockerRoot = f[3]
		}
	}
	return h
}

// FsyncDir is where a calibration times fdatasync: the engine's volumes directory, where PostgreSQL's
// data volume lives, when this process can write there (a local engine, as root); else fallback (the run
// directory), which the calibration names, so a reader sees it measured another disk.
func FsyncDir(dockerRoot, fallback string) string {
	if dockerRoot != "" {
		d := filepath.Join(dockerRoot, "volumes")
		if f, err := os.CreateTemp(d, ".loadtest-probe-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return d
		}
	}
	return fallback
}
