//go:build linux

// Command netguard holds a network namespace with no way out: `hold` deletes its default routes and makes
// the gateways (the host) unreachable, `check` is the healthcheck, `dial` a TCP probe. See internal/netguard.
package main

import (
	"context"
	"net"
	"os"
	"os/signal"
	"syscall"

	"certctl-loadtest/internal/netguard"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	guard := netguard.Guard{NL: &netguard.RTNetlink{}, State: netguard.StateFile, IfName: ifName}
	code := netguard.Main(ctx, os.Args[1:], guard, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func ifName(i uint32) string {
	if ifc, err := net.InterfaceByIndex(int(i)); err == nil {
		return ifc.Name
	}
	return ""
}
