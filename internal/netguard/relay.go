//go:build linux

package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
)

// Route is one port of a relay: what it listens on and where it forwards.
type Route struct {
	Port     int
	Upstream string // host:port, resolved on the relay's network at each connection
}

// ParseRoutes reads `relay` arguments: PORT=HOST:PORT each.
func ParseRoutes(args []string) ([]Route, error) {
	if len(args) == 0 {
		return nil, errors.New("no route: give PORT=HOST:PORT, e.g. 8443=certctl-server:8443")
	}
	var out []Route
	seen := map[int]bool{}
	for _, a := range args {
		p, up, ok := strings.Cut(a, "=")
		port, err := strconv.Atoi(p)
		if !ok || err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("%q: PORT=HOST:PORT with a port of 1–65535", a)
		}
		if h, pp, err := net.SplitHostPort(up); err != nil || h == "" || pp == "" {
			return nil, fmt.Errorf("%q: the upstream is HOST:PORT", a)
		}
		if seen[port] {
			return nil, fmt.Errorf("port %d twice", port)
		}
		seen[port] = true
		out = append(out, Route{Port: port, Upstream: up})
	}
	return out, nil
}

// Relay forwards TCP connections to each route's upstream until ctx ends. It is how a process on the
// host reaches the guarded namespace (`loadtest findings`): the relay runs on the stack's network outside
// that namespace, and every connection starts from the host's side; certctl gains no way out by it, since
// all it could reach through the relay is itself. listen is net.Listen in production.
func Relay(ctx context.Context, routes []Route, listen func(network, addr string) (net.Listener, error), logw io.Writer) error {
	var lns []net.Listener
	for _, r := range routes {
		ln, err := listen("tcp", ":"+strconv.Itoa(r.Port))
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return err
		}
		lns = append(lns, ln)
	}
	var wg sync.WaitGroup
	for i, ln := range lns {
		wg.Add(1)
		go func(ln net.Listener, up string) {
			defer wg.Done()
			serve(ctx, ln, up, logw)
		}(ln, routes[i].Upstream)
	}
	<-ctx.Done()
	for _, ln := range lns {
		ln.Close()
	}
	wg.Wait()
	return nil
}

func serve(ctx context.Context, ln net.Listener, upstream string, logw io.Writer) {
	var d net.Dialer
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed when ctx ends
		}
		go func() {
			defer c.Close()
			u, err := d.DialContext(ctx, "tcp", upstream)
			if err != nil {
				fmt.Fprintf(logw, "netguard: relay: %s: %v\n", upstream, err)
				return
			}
			defer u.Close()
			done := make(chan struct{}, 2)
			pipe := func(dst, src net.Conn) {
				io.Copy(dst, src)
				// Half-close, so that a request's end reaches the other side while its answer is still coming.
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				done <- struct{}{}
			}
			go pipe(u, c)
			go pipe(c, u)
			select {
			case <-done:
				<-done
			case <-ctx.Done():
			}
		}()
	}
}
