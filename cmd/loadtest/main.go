// Command loadtest drives certctl load-test runs; the Makefile calls it. See internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"certctl-loadtest/internal/cli"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/testbed"
)

func main() {
	// The first SIGINT or SIGTERM (a CI job cancelled, a timeout, Ctrl-C) cancels the run with its name
	// and time: the harness stops k6, keeps its figures and tears the stack down. Later ones are ignored
	// while it does, which takes at most a minute or two.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		name := "SIGTERM"
		if s == os.Interrupt {
			name = "SIGINT"
		}
		cancel(harness.Interrupted{Signal: name, At: time.Now()})
	}()
	// Outside a clone root stays empty: version and help still answer, the rest say where to run them.
	root, _ := cli.RepoRoot()
	os.Exit(cli.Main(ctx, cli.Env{
		Args: os.Args[1:], Getenv: os.Getenv, Environ: os.Environ(), Stdout: os.Stdout, Stderr: os.Stderr,
		Root: root, Exec: harness.OSExec, Now: time.Now, Euid: os.Geteuid(), Egid: os.Getegid(), CPUs: runtime.NumCPU(),
		Calibrate: func(ctx context.Context, dir string) testbed.Calibration {
			return testbed.Measure(ctx, testbed.Options{FsyncDir: dir})
		},
	}))
}
