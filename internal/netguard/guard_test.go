//go:build linux

package netguard

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
)

// fakeKernel is a routing table that answers the way *netlink.Handle does: a dump keeps the main table
// unless the filter asks for every table, a lookup takes the longest matching prefix, an unreachable route
// answers EHOSTUNREACH, no route ENETUNREACH (kernel_test.go asks the real kernel).
type fakeKernel struct {
	routes      []netlink.Route
	noIPv6      bool  // dumps and lookups for IPv6 fail with EAFNOSUPPORT
	changeErr   error // every change fails with it
	interrupted int   // this many dumps answer part of the table and ErrDumpInterrupted
	calls       []string
}

func (k *fakeKernel) RouteListFiltered(family int, filter *netlink.Route, mask uint64) ([]netlink.Route, error) {
	if family == netlink.FAMILY_V6 && k.noIPv6 {
		return nil, syscall.EAFNOSUPPORT
	}
	allTables := filter != nil && mask&netlink.RT_FILTER_TABLE != 0 && filter.Table == syscall.RT_TABLE_UNSPEC
	var out []netlink.Route
	for _, r := range k.routes {
		if r.Family == family && (allTables || r.Table == syscall.RT_TABLE_MAIN) {
			out = append(out, r)
		}
	}
	if k.interrupted > 0 {
		k.interrupted--
		return out[:len(out)/2], netlink.ErrDumpInterrupted
	}
	return out, nil
}

func (k *fakeKernel) RouteReplace(r *netlink.Route) error {
	k.calls = append(k.calls, "add "+describe(*r))
	if k.changeErr != nil {
		return k.changeErr
	}
	k.routes = append(k.routes, *r)
	return nil
}

func (k *fakeKernel) RouteDel(r *netlink.Route) error {
	k.calls = append(k.calls, "delete "+describe(*r))
	if k.changeErr != nil {
		return k.changeErr
	}
	for i, have := range k.routes {
		if reflect.DeepEqual(have, *r) {
			k.routes = append(k.routes[:i], k.routes[i+1:]...)
			return nil
		}
	}
	return syscall.ESRCH
}

func (k *fakeKernel) RouteGet(ip net.IP) ([]netlink.Route, error) {
	a, _ := addrOf(ip)
	if a.Is6() && k.noIPv6 {
		return nil, syscall.EAFNOSUPPORT
	}
	best, found := netlink.Route{}, false
	for _, r := range k.routes {
		if p := prefixOf(r.Dst); p.Contains(a) && (!found || p.Bits() > prefixOf(best.Dst).Bits()) {
			best, found = r, true
		}
	}
	switch {
	case !found:
		return nil, syscall.ENETUNREACH
	case best.Type == syscall.RTN_UNREACHABLE:
		return nil, syscall.EHOSTUNREACH
	}
	// The kernel answers with the address asked about as the destination, as `ip route get` shows it.
	best.Dst = &net.IPNet{IP: ip, Mask: net.CIDRMask(a.BitLen(), a.BitLen())}
	return []netlink.Route{best}, nil
}

// route is a route as the library reads it from the kernel: the destination of a default route is
// 0.0.0.0/0 or ::/0, addresses are 4 or 16 bytes.
func route(typ int, table int, proto netlink.RouteProtocol, dst, gw string, oif, prio int) netlink.Route {
	p := netip.MustParsePrefix(dst)
	r := netlink.Route{
		Family: familyOf(p.Addr()), Type: typ, Table: table, Protocol: proto, LinkIndex: oif, Priority: prio,
		Dst: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())},
	}
	if gw != "" {
		r.Gw = netip.MustParseAddr(gw).AsSlice()
	}
	return r
}

const mainTable = syscall.RT_TABLE_MAIN

var (
	dockerDefault = route(syscall.RTN_UNICAST, mainTable, syscall.RTPROT_BOOT, "0.0.0.0/0", "172.18.0.1", 12, 0)
	dockerSubnet  = func() netlink.Route {
		r := route(syscall.RTN_UNICAST, mainTable, syscall.RTPROT_KERNEL, "172.18.0.0/16", "", 12, 0)
		r.Scope = netlink.SCOPE_LINK
		return r
	}()
	v6Default = route(syscall.RTN_UNICAST, mainTable, syscall.RTPROT_BOOT, "::/0", "fd00::1", 12, 1024)
	v6Subnet  = route(syscall.RTN_UNICAST, mainTable, syscall.RTPROT_KERNEL, "fd00::/64", "", 12, 256)
)

func newGuard(t *testing.T, k *fakeKernel) Guard {
	return Guard{NL: k, State: filepath.Join(t.TempDir(), "gateways"), IfName: func(i int) string {
		if i == 12 {
			return "eth0"
		}
		return ""
	}}
}

func TestHold(t *testing.T) {
	// As the library reads it: the next hops in MultiPath, no Gw.
	multipath := route(syscall.RTN_UNICAST, mainTable, syscall.RTPROT_BOOT, "0.0.0.0/0", "", 0, 0)
	multipath.MultiPath = []*netlink.NexthopInfo{
		{LinkIndex: 12, Gw: net.IP{172, 18, 0, 1}}, {LinkIndex: 13, Gw: net.IP{172, 19, 0, 1}},
	}
	for _, tc := range []struct {
		name      string
		kernel    fakeKernel
		wantCalls []string
		wantState string
		wantLog   string
		wantErr   string
	}{
		{
			name:      "a container on a Docker bridge network, IPv6 off",
			kernel:    fakeKernel{routes: []netlink.Route{dockerDefault, dockerSubnet}},
			wantCalls: []string{"delete default via 172.18.0.1", "add unreachable 172.18.0.1/32"},
			wantState: "172.18.0.1\n",
			wantLog:   "deleted default via 172.18.0.1 dev eth0; added unreachable 172.18.0.1/32; no IPv6 default route",
		},
		{
			name:      "a kernel without IPv6",
			kernel:    fakeKernel{routes: []netlink.Route{dockerDefault, dockerSubnet}, noIPv6: true},
			wantCalls: []string{"delete default via 172.18.0.1", "add unreachable 172.18.0.1/32"},
			wantState: "172.18.0.1\n",
			wantLog:   "no IPv6 default route",
		},
		{
			name:   "IPv6 on: both families lose their default route",
			kernel: fakeKernel{routes: []netlink.Route{dockerDefault, dockerSubnet, v6Default, v6Subnet}},
			wantCalls: []string{"delete default via 172.18.0.1", "delete default via fd00::1",
				"add unreachable 172.18.0.1/32", "add unreachable fd00::1/128"},
			wantState: "172.18.0.1\nfd00::1\n",
			wantLog:   "added unreachable fd00::1/128",
		},
		{
			name: "two default routes via one gateway: both go, one block",
			kernel: fakeKernel{routes: []netlink.Route{dockerDefault, dockerSubnet,
				route(syscall.RTN_UNICAST, mainTable, 0, "0.0.0.0/0", "172.18.0.1", 12, 100)}},
			wantCalls: []string{"delete default via 172.18.0.1", "delete default via 172.18.0.1", "add unreachable 172.18.0.1/32"},
			wantState: "172.18.0.1\n",
		},
		{
			// The library reads the main table unless asked for all; policy routing could use another.
			name: "a default route in a table other than main goes too",
			kernel: fakeKernel{routes: []netlink.Route{dockerDefault, dockerSubnet,
				route(syscall.RTN_UNICAST, 100, syscall.RTPROT_BOOT, "0.0.0.0/0", "172.18.0.1", 12, 0)}},
			wantCalls: []string{"delete default via 172.18.0.1", "delete default via 172.18.0.1", "add unreachable 172.18.0.1/32"},
			wantState: "172.18.0.1\n",
		},
		{
			name:      "a dump the kernel marks interrupted is read again",
			kernel:    fakeKernel{routes: []netlink.Route{dockerSubnet, dockerDefault}, interrupted: 1},
			wantCalls: []string{"delete default via 172.18.0.1", "add unreachable 172.18.0.1/32"},
			wantState: "172.18.0.1\n",
		},
		{
			name:    "a dump interrupted every time is an error, not half a table",
			kernel:  fakeKernel{routes: []netlink.Route{dockerSubnet, dockerDefault}, interrupted: dumpTries},
			wantErr: "reading the IPv4 routes: results may be incomplete or inconsistent",
		},
		{
			name:      "without NET_ADMIN the kernel refuses, and the error says what is missing",
			kernel:    fakeKernel{routes: []netlink.Route{dockerDefault, dockerSubnet}, changeErr: syscall.EPERM},
			wantCalls: []string{"delete default via 172.18.0.1"},
			wantErr:   "deleting the route default via 172.18.0.1: operation not permitted: netguard needs the NET_ADMIN capability",
		},
		{
			name:    "no default route: nothing says which address is the host's",
			kernel:  fakeKernel{routes: []netlink.Route{dockerSubnet}},
			wantErr: "found no IPv4 default route with a gateway",
		},
		{
			name:    "a default route without a gateway: no address to block",
			kernel:  fakeKernel{routes: []netlink.Route{dockerSubnet, route(syscall.RTN_UNICAST, mainTable, syscall.RTPROT_BOOT, "0.0.0.0/0", "", 12, 0)}},
			wantErr: "found no IPv4 default route with a gateway",
		},
		{
			name:    "a multipath default route is refused: its gateways are next hops, not one to block",
			kernel:  fakeKernel{routes: []netlink.Route{dockerSubnet, multipath}},
			wantErr: "several next hops",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := tc.kernel
			g := newGuard(t, &k)
			did, err := g.Hold()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Hold: %v; want an error containing %q", err, tc.wantErr)
				}
				if _, err := os.Stat(g.State); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a failed hold left %s behind, which check would trust", g.State)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.wantCalls != nil && strings.Join(k.calls, "\n") != strings.Join(tc.wantCalls, "\n") {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(k.calls, "\n"), strings.Join(tc.wantCalls, "\n"))
			}
			if !strings.Contains(did, tc.wantLog) {
				t.Errorf("log line %q does not say %q", did, tc.wantLog)
			}
			if tc.wantState != "" {
				b, _ := os.ReadFile(g.State)
				if string(b) != tc.wantState {
					t.Errorf("state file %q, want %q", b, tc.wantState)
				}
			}
		})
	}
}

// Hold proves its own result: a kernel that keeps the default route (a delete that "succeeds" but
// changes nothing) must not pass.
func TestHoldChecksTheResult(t *testing.T) {
	k := &stubbornKernel{fakeKernel{routes: []netlink.Route{dockerDefault, dockerSubnet}}}
	g := newGuard(t, &k.fakeKernel)
	g.NL = k
	if _, err := g.Hold(); err == nil || !strings.Contains(err.Error(), "after the change: the namespace has a default route again: default via 172.18.0.1 dev eth0") {
		t.Fatalf("Hold: %v", err)
	}
}

type stubbornKernel struct{ fakeKernel }

func (k *stubbornKernel) RouteDel(*netlink.Route) error { return nil }

func TestCheck(t *testing.T) {
	blocked := route(syscall.RTN_UNREACHABLE, mainTable, syscall.RTPROT_STATIC, "172.18.0.1/32", "", 0, 0)
	for _, tc := range []struct {
		name    string
		state   string // "": no state file
		kernel  fakeKernel
		wantErr string
	}{
		{name: "guarded", state: "172.18.0.1\n", kernel: fakeKernel{routes: []netlink.Route{dockerSubnet, blocked}}},
		{name: "guarded, no IPv6 in the kernel", state: "172.18.0.1\n", kernel: fakeKernel{routes: []netlink.Route{dockerSubnet, blocked}, noIPv6: true}},
		{name: "hold has not run", kernel: fakeKernel{routes: []netlink.Route{dockerSubnet, blocked}}, wantErr: "has not finished"},
		{name: "an empty record", state: "\n", kernel: fakeKernel{routes: []netlink.Route{dockerSubnet, blocked}}, wantErr: "names no gateway"},
		{name: "a garbled record", state: "172.18.0\n", kernel: fakeKernel{routes: []netlink.Route{dockerSubnet, blocked}}, wantErr: "172.18.0"},
		{
			name: "the default route is back", state: "172.18.0.1\n",
			kernel:  fakeKernel{routes: []netlink.Route{dockerSubnet, blocked, dockerDefault}},
			wantErr: "default route again: default via 172.18.0.1 dev eth0",
		},
		{
			// The subnet route still covers the gateway: only the recorded address shows it is the host's.
			name: "the unreachable route was deleted", state: "172.18.0.1\n",
			kernel:  fakeKernel{routes: []netlink.Route{dockerSubnet}},
			wantErr: "172.18.0.1 is reachable: the kernel routes it via 172.18.0.1/32 dev eth0",
		},
		{
			name: "a route off the link that is not a default route", state: "172.18.0.1\n",
			kernel: fakeKernel{routes: []netlink.Route{dockerSubnet, blocked,
				route(syscall.RTN_UNICAST, mainTable, syscall.RTPROT_BOOT, "192.0.0.0/8", "172.18.0.1", 12, 0)}},
			wantErr: "192.0.2.1 is reachable: the kernel routes it via 192.0.2.1/32 via 172.18.0.1 dev eth0",
		},
		{
			name: "an IPv6 default route", state: "172.18.0.1\n",
			kernel:  fakeKernel{routes: []netlink.Route{dockerSubnet, blocked, v6Default}},
			wantErr: "default via fd00::1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := tc.kernel
			g := newGuard(t, &k)
			if tc.state != "" {
				if err := os.WriteFile(g.State, []byte(tc.state), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := g.Check()
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Check: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Check: %v; want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
