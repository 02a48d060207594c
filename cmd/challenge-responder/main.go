// Command challenge-responder answers certctl's ACME HTTP-01 validation on the harness's stack and lets
// k6 publish its challenges (internal/responder). It reads RESPONDER_HTTP01 and RESPONDER_MANAGEMENT;
// with --healthcheck it probes a running instance and exits 0 or 1.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"certctl-loadtest/internal/responder"
)

func main() {
	cfg, err := responder.LoadConfig(os.Getenv, os.Args[1:])
	if err != nil {
		// Exit 1, not 2: Docker reserves 2 for healthcheck commands.
		fmt.Fprintln(os.Stderr, "challenge-responder: refusing to start:", err)
		os.Exit(1)
	}
	if cfg.Healthcheck {
		if err := responder.Healthcheck(context.Background(), cfg); err != nil {
			fmt.Fprintln(os.Stderr, "challenge-responder: unhealthy:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := responder.Run(ctx, cfg, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "challenge-responder:", err)
		stop()
		os.Exit(1)
	}
}
