//go:build linux

package netguard

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"
)

const usage = `usage:
  netguard hold                     delete the default routes, make the gateways unreachable, then wait for SIGTERM
  netguard check                    exit 0 only if this namespace has no way out (the healthcheck)
  netguard dial <host:port> [timeout]  exit 0 if a TCP connection succeeds (timeout default 3s)
  netguard relay PORT=HOST:PORT ...   forward each port to its upstream (the host's way in, outside the namespace)`

// Main is the whole command behind cmd/netguard, returning the exit status: 0 ok, 1 the guard could not
// be set up, is not in place, or the dial failed, 2 bad arguments. guard is used by hold and check; the
// tests pass a fake one.
func Main(ctx context.Context, args []string, guard Guard, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch cmd, rest := args[0], args[1:]; {
	case cmd == "hold" && len(rest) == 0:
		did, err := guard.Hold()
		if err != nil {
			fmt.Fprintln(stderr, "netguard: hold:", err)
			return 1
		}
		fmt.Fprintln(stderr, "netguard: holding a namespace with no way out:", did)
		<-ctx.Done()
		return 0
	case cmd == "check" && len(rest) == 0:
		if err := guard.Check(); err != nil {
			fmt.Fprintln(stderr, "netguard: check:", err)
			return 1
		}
		return 0
	case cmd == "dial" && (len(rest) == 1 || len(rest) == 2):
		timeout := 3 * time.Second
		if len(rest) == 2 {
			d, err := time.ParseDuration(rest[1])
			if err != nil || d <= 0 {
				fmt.Fprintf(stderr, "netguard: dial: timeout %q is not a positive duration (3s)\n", rest[1])
				return 2
			}
			timeout = d
		}
		return dial(ctx, rest[0], timeout, stdout, stderr)
	case cmd == "relay":
		routes, err := ParseRoutes(rest)
		if err != nil {
			fmt.Fprintln(stderr, "netguard: relay:", err)
			return 2
		}
		fmt.Fprintf(stderr, "netguard: relaying %v\n", rest)
		if err := Relay(ctx, routes, net.Listen, stderr); err != nil {
			fmt.Fprintln(stderr, "netguard: relay:", err)
			return 1
		}
		return 0
	default:
		fmt.Fprintf(stderr, "netguard: unknown command or wrong arguments: %q\n%s\n", args, usage)
		return 2
	}
}

// dial is the probe the e2e test runs inside and outside the guarded namespace.
func dial(ctx context.Context, addr string, timeout time.Duration, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, "netguard: dial:", err)
		return 1
	}
	fmt.Fprintf(stdout, "connected to %s from %s\n", c.RemoteAddr(), c.LocalAddr())
	c.Close()
	return 0
}
