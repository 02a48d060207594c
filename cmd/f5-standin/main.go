// Command f5-standin stands in for an F5 BIG-IP's management interface
// (iControl REST) in the load-test harness's connector tier. It reads
// F5_LISTEN, F5_TLS_CERT, F5_TLS_KEY, F5_USERNAME, F5_PASSWORD,
// F5_SSL_PROFILES and F5_MAX_TOKENS; with --healthcheck it probes a running
// instance and exits 0 or 1. See internal/f5/README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"certctl-loadtest/internal/f5"
)

func main() {
	cfg, err := f5.LoadConfig(os.Getenv, os.Args[1:])
	if err != nil {
		// Exit 1, not 2: Docker reserves 2 for healthcheck commands.
		fmt.Fprintln(os.Stderr, "f5-standin: refusing to start:", err)
		os.Exit(1)
	}
	if cfg.Healthcheck {
		if err := f5.Healthcheck(context.Background(), cfg); err != nil {
			fmt.Fprintln(os.Stderr, "f5-standin: unhealthy:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := f5.Run(ctx, cfg, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "f5-standin:", err)
		stop()
		os.Exit(1)
	}
}
