//go:build linux

// Command netguard holds a network namespace with no way out: `hold` deletes its default routes and makes
// the gateways (the host) unreachable, `check` is the healthcheck, `dial` a TCP probe. See internal/netguard.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"

	"certctl-loadtest/internal/netguard"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	nl, err := netlink.NewHandle(syscall.NETLINK_ROUTE)
	if err == nil {
		// The kernel answers at once: a short bound turns a surprise into an error before the
		// healthcheck's own timeout, where the library's default would wait a minute.
		err = nl.SetSocketTimeout(5 * time.Second)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netguard: netlink socket:", err)
		os.Exit(1)
	}
	guard := netguard.Guard{NL: nl, State: netguard.StateFile, IfName: ifName}
	code := netguard.Main(ctx, os.Args[1:], guard, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func ifName(i int) string {
	if ifc, err := net.InterfaceByIndex(i); err == nil {
		return ifc.Name
	}
	return ""
}
