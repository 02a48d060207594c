package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// calibrateCmd: loadtest calibrate [--json] prints the machine's calibration, as a run records it.
func calibrateCmd(ctx context.Context, e Env, args []string) int {
	asJSON := false
	for _, a := range args {
		if a != "--json" {
			return badArgs(e, "calibrate", "unknown argument %q (only --json)", a)
		}
		asJSON = true
	}
	if e.Calibrate == nil {
		fmt.Fprintln(e.Stderr, "loadtest: calibrate: this build measures nothing (no calibration wired in)")
		return results.ExitEnvironment
	}
	c := e.Calibrate(ctx, harness.FsyncDir(dockerRoot(ctx, e), "."))
	if ctx.Err() != nil {
		return results.ExitInterrupted
	}
	if asJSON {
		b, _ := output.Marshal(c)
		e.Stdout.Write(b)
		return results.ExitOK
	}
	fmt.Fprintf(e.Stdout, "testbed: %s\nfsync measured in %s; calibrated in %.1f s\n", c, c.FsyncDir, c.DurationS)
	return results.ExitOK
}

// dockerRoot is the engine's data directory, "" without an engine that answers.
func dockerRoot(ctx context.Context, e Env) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	if c, _ := e.Exec(ctx, harness.Cmd{Name: "docker", Args: []string{"info", "--format", "{{.DockerRootDir}}"}, Env: e.Environ, Stdout: &out, Stderr: io.Discard}); c != 0 {
		return ""
	}
	return strings.TrimSpace(out.String())
}
