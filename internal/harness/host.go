// The machine a run ran on, for run.json.

package harness

import (
	"bytes"
	"context"
	"io"
	"os"
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
