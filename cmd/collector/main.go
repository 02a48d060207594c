// Command collector samples certctl's database and metrics beside a load test (internal/collector).
// Settings come from COLLECT_* variables; the only flag is --healthcheck.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"certctl-loadtest/internal/collector"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := collector.Main(ctx, os.Args[1:], os.Getenv, os.Stderr)
	stop()
	os.Exit(code)
}
