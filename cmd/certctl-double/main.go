// Command certctl-double stands in for the certctl server in the load-test
// harness's own tests. It reads certctl's environment (CERTCTL_*), the
// double's fault knobs (DOUBLE_*), and certctl's --migrate-only flag; see
// README.md beside this file.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"certctl-loadtest/internal/double"
)

func main() {
	cfg, err := double.LoadConfig(os.Getenv, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "certctl-double: refusing to start:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := double.Run(ctx, cfg, double.RunOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, "certctl-double:", err)
		stop()
		os.Exit(1)
	}
}
