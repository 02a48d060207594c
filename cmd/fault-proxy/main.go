// Command fault-proxy terminates TLS in front of the certctl server and
// injects latency and HTTP 500s into chosen routes for load tests. Settings
// come from FAULT_* variables (see internal/faultproxy); the only flag is
// --healthcheck, which probes a running proxy because the image has no curl.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"certctl-loadtest/internal/faultproxy"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := faultproxy.Main(ctx, os.Args[1:], os.Getenv, os.Stderr)
	stop()
	os.Exit(code)
}
