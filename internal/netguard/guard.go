//go:build linux

package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Netlink is the part of the routing table the guard uses; the tests fake it, the command uses RTNetlink.
type Netlink interface {
	Routes(family uint8) ([]Route, error)
	Add(Route) error
	Delete(Route) error
	Lookup(netip.Addr) (Route, error)
}

// StateFile is where hold records the gateways it blocked, for check. A file rather than the routing
// table itself: check must remember what the gateway was even if someone deletes the unreachable route,
// and the routing table alone would then forget it and pass.
const StateFile = "/tmp/netguard-gateways"

// offLink are documentation addresses (RFC 5737, RFC 3849) check asks the kernel to route: a route
// lookup sends nothing, and unlike a look at the main table it goes through every policy rule and table.
var offLink = []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")}

// Guard removes and checks the way out of the namespace it runs in.
type Guard struct {
	NL     Netlink
	State  string              // StateFile, or a temporary file in tests
	IfName func(uint32) string // interface index to name, for the log line
}

// plan is what hold changes: every default route goes, and every gateway a default route named gets an
// unreachable host route, so that the host stays out of reach although its address is on the link.
func plan(routes []Route) (del, block []Route, err error) {
	seen := map[netip.Addr]bool{}
	for _, r := range routes {
		if !r.IsDefault() {
			continue
		}
		if r.Multipath {
			return nil, nil, fmt.Errorf("the default route %s has several next hops, which netguard does not read", r)
		}
		del = append(del, r)
		if gw := r.Gateway; gw.IsValid() && !seen[gw] {
			seen[gw] = true
			block = append(block, Route{
				Family: familyOf(gw), Type: syscall.RTN_UNREACHABLE, Table: syscall.RT_TABLE_MAIN,
				Protocol: syscall.RTPROT_STATIC, Scope: syscall.RT_SCOPE_UNIVERSE,
				Dst: netip.PrefixFrom(gw, gw.BitLen()),
			})
		}
	}
	return del, block, nil
}

// routes reads both families. A kernel without IPv6 has no IPv6 routes to worry about.
func (g Guard) routes() ([]Route, error) {
	v4, err := g.NL.Routes(syscall.AF_INET)
	if err != nil {
		return nil, fmt.Errorf("reading the IPv4 routes: %w", err)
	}
	v6, err := g.NL.Routes(syscall.AF_INET6)
	if err != nil && !errors.Is(err, syscall.EAFNOSUPPORT) {
		return nil, fmt.Errorf("reading the IPv6 routes: %w", err)
	}
	return append(v4, v6...), nil
}

// Hold takes the way out: it deletes the default routes, blocks their gateways, records the gateways
// in g.State and checks the result. It returns one line saying what it did.
func (g Guard) Hold() (string, error) {
	routes, err := g.routes()
	if err != nil {
		return "", err
	}
	del, block, err := plan(routes)
	if err != nil {
		return "", err
	}
	hasV4 := false
	for _, r := range del {
		hasV4 = hasV4 || r.Family == syscall.AF_INET
	}
	if !hasV4 || len(block) == 0 {
		// Docker gives every container on a bridge network a default route via the gateway; without one
		// netguard cannot tell which address is the host's, and a guard that blocks nothing must not pass.
		return "", errors.New("found no IPv4 default route with a gateway in this namespace, so no gateway address to block: is the container on a bridge network?")
	}
	var did []string
	for _, r := range del {
		if err := g.NL.Delete(r); err != nil {
			return "", changeError("deleting the route "+r.String(), err)
		}
		did = append(did, fmt.Sprintf("deleted %s dev %s", r, g.ifName(r.OIF)))
	}
	var gws []string
	for _, r := range block {
		if err := g.NL.Add(r); err != nil {
			return "", changeError("adding the route "+r.String(), err)
		}
		did = append(did, fmt.Sprintf("added %s", r))
		gws = append(gws, r.Dst.Addr().String())
	}
	if err := writeAtomic(g.State, strings.Join(gws, "\n")+"\n"); err != nil {
		return "", fmt.Errorf("recording the gateways for check: %w", err)
	}
	if err := g.Check(); err != nil {
		return "", fmt.Errorf("after the change: %w", err)
	}
	if !hasFamily(del, syscall.AF_INET6) {
		did = append(did, "no IPv6 default route")
	}
	return strings.Join(did, "; "), nil
}

// Check passes when the namespace has no default route and the kernel would route neither to any
// gateway hold recorded nor off the link. It only asks the kernel; it sends no packet.
func (g Guard) Check() error {
	b, err := os.ReadFile(g.State)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s does not exist: `netguard hold` has not finished in this container", g.State)
	}
	if err != nil {
		return err
	}
	var gws []netip.Addr
	for _, l := range strings.Fields(string(b)) {
		a, err := netip.ParseAddr(l)
		if err != nil {
			return fmt.Errorf("%s: %w", g.State, err)
		}
		gws = append(gws, a)
	}
	if len(gws) == 0 {
		return fmt.Errorf("%s names no gateway", g.State)
	}
	routes, err := g.routes()
	if err != nil {
		return err
	}
	for _, r := range routes {
		if r.IsDefault() {
			return fmt.Errorf("the namespace has a default route again: %s dev %s", r, g.ifName(r.OIF))
		}
	}
	for _, a := range append(gws, offLink...) {
		r, err := g.NL.Lookup(a)
		switch {
		case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		case a.Is6() && errors.Is(err, syscall.EAFNOSUPPORT):
		case err != nil:
			return fmt.Errorf("route lookup for %s: %w", a, err)
		case r.Type == syscall.RTN_UNREACHABLE, r.Type == syscall.RTN_PROHIBIT, r.Type == syscall.RTN_BLACKHOLE:
		default:
			return fmt.Errorf("%s is reachable: the kernel routes it via %s dev %s", a, r, g.ifName(r.OIF))
		}
	}
	return nil
}

func (g Guard) ifName(i uint32) string {
	if g.IfName != nil {
		if n := g.IfName(i); n != "" {
			return n
		}
	}
	return fmt.Sprintf("#%d", i)
}

func hasFamily(routes []Route, f uint8) bool {
	for _, r := range routes {
		if r.Family == f {
			return true
		}
	}
	return false
}

// changeError names the capability a route change needs when the kernel refuses for want of it.
func changeError(what string, err error) error {
	if errors.Is(err, syscall.EPERM) {
		return fmt.Errorf("%s: %w: netguard needs the NET_ADMIN capability in its container (compose: cap_add: [NET_ADMIN])", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// writeAtomic writes path whole or not at all: a healthcheck may read it at any moment.
func writeAtomic(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".netguard-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
