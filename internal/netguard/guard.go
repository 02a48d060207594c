//go:build linux

// Package netguard takes the way out of the network namespace it runs in. On Docker 20.10 a container on
// an internal network still has a default route to the bridge gateway, and the gateway is the host itself:
// only iptables stops forwarded traffic, and a host service on 0.0.0.0 answers. netguard deletes the
// default routes and makes each former gateway unreachable, then holds the namespace for the containers
// that join it (docker-compose.yml: stack-net). The routing table is read and changed over rtnetlink with
// github.com/vishvananda/netlink rather than messages of our own (issue 29), and rather than iproute2's
// `ip`: the image stays one static binary, and errors stay errnos the guard can tell apart.
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vishvananda/netlink"
)

// Netlink is the part of *netlink.Handle the guard calls; the tests fake it, so they need no NET_ADMIN.
type Netlink interface {
	RouteListFiltered(family int, filter *netlink.Route, filterMask uint64) ([]netlink.Route, error)
	RouteDel(*netlink.Route) error
	RouteReplace(*netlink.Route) error
	RouteGet(net.IP) ([]netlink.Route, error)
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
	State  string           // StateFile, or a temporary file in tests
	IfName func(int) string // interface index to name, for the log line
}

// isDefault reports whether r forwards traffic for every destination of its family. The library gives a
// default route the destination 0.0.0.0/0 or ::/0, as iproute2 shows it.
func isDefault(r netlink.Route) bool {
	if r.Dst == nil || r.Type != syscall.RTN_UNICAST {
		return false
	}
	ones, _ := r.Dst.Mask.Size()
	return ones == 0
}

// describe is a route as the log lines and errors name it, in iproute2's words ("default via 172.18.0.1",
// "unreachable 172.18.0.1/32"); netlink.Route's own String prints every field.
func describe(r netlink.Route) string {
	s := "?"
	if r.Dst != nil {
		s = prefixOf(r.Dst).String()
	}
	if isDefault(r) {
		s = "default"
	}
	if r.Type == syscall.RTN_UNREACHABLE {
		s = "unreachable " + s
	}
	if gw, ok := addrOf(r.Gw); ok {
		s += " via " + gw.String()
	}
	return s
}

// addrOf reads an address the library hands out as a slice: 4 bytes for IPv4, 16 for IPv6.
func addrOf(ip net.IP) (netip.Addr, bool) {
	a, ok := netip.AddrFromSlice(ip)
	return a.Unmap(), ok
}

func prefixOf(n *net.IPNet) netip.Prefix {
	a, _ := addrOf(n.IP)
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a, ones)
}

func familyOf(a netip.Addr) int {
	if a.Is4() {
		return netlink.FAMILY_V4
	}
	return netlink.FAMILY_V6
}

// plan is what hold changes: every default route goes, and every gateway a default route named gets an
// unreachable host route, so that the host stays out of reach although its address is on the link.
func plan(routes []netlink.Route) (del, block []netlink.Route, err error) {
	seen := map[netip.Addr]bool{}
	for _, r := range routes {
		if !isDefault(r) {
			continue
		}
		if len(r.MultiPath) > 0 {
			// Its gateways are next hops, not r.Gw: refused rather than left unblocked.
			return nil, nil, fmt.Errorf("the default route %s has several next hops, which netguard does not read", describe(r))
		}
		del = append(del, r)
		if gw, ok := addrOf(r.Gw); ok && !seen[gw] {
			seen[gw] = true
			block = append(block, netlink.Route{
				Family: familyOf(gw), Type: syscall.RTN_UNREACHABLE, Table: syscall.RT_TABLE_MAIN,
				Protocol: syscall.RTPROT_STATIC, Scope: netlink.SCOPE_UNIVERSE,
				Dst: &net.IPNet{IP: gw.AsSlice(), Mask: net.CIDRMask(gw.BitLen(), gw.BitLen())},
			})
		}
	}
	return del, block, nil
}

// dumpTries bounds the re-reads of a dump the kernel marked interrupted (the table changed while it was
// read): nothing else changes routes in this namespace, so a second read is consistent.
const dumpTries = 3

// routes reads both families, every table. A kernel without IPv6 has no IPv6 routes to worry about.
func (g Guard) routes() ([]netlink.Route, error) {
	v4, err := g.dump(netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("reading the IPv4 routes: %w", err)
	}
	v6, err := g.dump(netlink.FAMILY_V6)
	if err != nil && !errors.Is(err, syscall.EAFNOSUPPORT) {
		return nil, fmt.Errorf("reading the IPv6 routes: %w", err)
	}
	return append(v4, v6...), nil
}

func (g Guard) dump(family int) ([]netlink.Route, error) {
	for try := 1; ; try++ {
		// Table 0 with RT_FILTER_TABLE is every table: without the filter the library keeps the main
		// table only, and a default route in another table (policy routing) would still be a way out.
		routes, err := g.NL.RouteListFiltered(family, &netlink.Route{Table: syscall.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
		if errors.Is(err, netlink.ErrDumpInterrupted) && try < dumpTries {
			continue
		}
		return routes, err
	}
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
		if err := g.NL.RouteDel(&r); err != nil {
			return "", changeError("deleting the route "+describe(r), err)
		}
		did = append(did, fmt.Sprintf("deleted %s dev %s", describe(r), g.ifName(r.LinkIndex)))
	}
	var gws []string
	for _, r := range block {
		if err := g.NL.RouteReplace(&r); err != nil {
			return "", changeError("adding the route "+describe(r), err)
		}
		did = append(did, fmt.Sprintf("added %s", describe(r)))
		gws = append(gws, prefixOf(r.Dst).Addr().String())
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
		if isDefault(r) {
			return fmt.Errorf("the namespace has a default route again: %s dev %s", describe(r), g.ifName(r.LinkIndex))
		}
	}
	for _, a := range append(gws, offLink...) {
		r, err := g.lookup(a)
		switch {
		case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		case a.Is6() && errors.Is(err, syscall.EAFNOSUPPORT):
		case err != nil:
			return fmt.Errorf("route lookup for %s: %w", a, err)
		case r.Type == syscall.RTN_UNREACHABLE, r.Type == syscall.RTN_PROHIBIT, r.Type == syscall.RTN_BLACKHOLE:
		default:
			return fmt.Errorf("%s is reachable: the kernel routes it via %s dev %s", a, describe(r), g.ifName(r.LinkIndex))
		}
	}
	return nil
}

// lookup asks the kernel how it would route a packet to a (`ip route get`); no packet is sent. With no
// route the error is the errno a connect would get (ENETUNREACH, EHOSTUNREACH).
func (g Guard) lookup(a netip.Addr) (netlink.Route, error) {
	routes, err := g.NL.RouteGet(a.AsSlice())
	if err != nil {
		return netlink.Route{}, err
	}
	if len(routes) != 1 {
		return netlink.Route{}, fmt.Errorf("route lookup for %s answered %d routes", a, len(routes))
	}
	return routes[0], nil
}

func (g Guard) ifName(i int) string {
	if g.IfName != nil {
		if n := g.IfName(i); n != "" {
			return n
		}
	}
	return fmt.Sprintf("#%d", i)
}

func hasFamily(routes []netlink.Route, f int) bool {
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
