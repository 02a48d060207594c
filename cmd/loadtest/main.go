// Command loadtest drives certctl load-test runs; the Makefile calls it. See internal/cli.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"certctl-loadtest/internal/cli"
	"certctl-loadtest/internal/harness"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root, err := cli.RepoRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadtest: %v\n", err)
		os.Exit(harness.ExitBadInput)
	}
	os.Exit(cli.Main(ctx, cli.Env{
		Args: os.Args[1:], Getenv: os.Getenv, Environ: os.Environ(), Stdout: os.Stdout, Stderr: os.Stderr,
		Root: root, Exec: harness.OSExec, Now: time.Now,
	}))
}
