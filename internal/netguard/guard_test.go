//go:build linux

package netguard

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fakeKernel is a routing table that answers lookups the way the kernel does: the longest matching
// prefix wins, an unreachable route answers EHOSTUNREACH, no route ENETUNREACH.
type fakeKernel struct {
	routes    []Route
	noIPv6    bool  // Routes and Lookup for IPv6 fail with EAFNOSUPPORT
	changeErr error // every Add and Delete fails with it
	calls     []string
}

func (k *fakeKernel) Routes(family uint8) ([]Route, error) {
	if family == syscall.AF_INET6 && k.noIPv6 {
		return nil, syscall.EAFNOSUPPORT
	}
	var out []Route
	for _, r := range k.routes {
		if r.Family == family {
			out = append(out, r)
		}
	}
	return out, nil
}

func (k *fakeKernel) Add(r Route) error {
	k.calls = append(k.calls, "add "+r.String())
	if k.changeErr != nil {
		return k.changeErr
	}
	k.routes = append(k.routes, r)
	return nil
}

func (k *fakeKernel) Delete(r Route) error {
	k.calls = append(k.calls, "delete "+r.String())
	if k.changeErr != nil {
		return k.changeErr
	}
	for i, have := range k.routes {
		if have == r {
			k.routes = append(k.routes[:i], k.routes[i+1:]...)
			return nil
		}
	}
	return syscall.ESRCH
}

func (k *fakeKernel) Lookup(a netip.Addr) (Route, error) {
	if a.Is6() && k.noIPv6 {
		return Route{}, syscall.EAFNOSUPPORT
	}
	best, found := Route{}, false
	for _, r := range k.routes {
		if r.Dst.Contains(a) && (!found || r.Dst.Bits() > best.Dst.Bits()) {
			best, found = r, true
		}
	}
	switch {
	case !found:
		return Route{}, syscall.ENETUNREACH
	case best.Type == syscall.RTN_UNREACHABLE:
		return Route{}, syscall.EHOSTUNREACH
	}
	return best, nil
}

var (
	dockerSubnet = Route{Family: syscall.AF_INET, Type: syscall.RTN_UNICAST, Table: syscall.RT_TABLE_MAIN,
		Protocol: syscall.RTPROT_KERNEL, Scope: syscall.RT_SCOPE_LINK, Dst: netip.MustParsePrefix("172.18.0.0/16"), OIF: 12}
	v6Default = Route{Family: syscall.AF_INET6, Type: syscall.RTN_UNICAST, Table: syscall.RT_TABLE_MAIN,
		Protocol: syscall.RTPROT_BOOT, Dst: netip.MustParsePrefix("::/0"), Gateway: netip.MustParseAddr("fd00::1"), OIF: 12, Priority: 1024}
	v6Subnet = Route{Family: syscall.AF_INET6, Type: syscall.RTN_UNICAST, Table: syscall.RT_TABLE_MAIN,
		Protocol: syscall.RTPROT_KERNEL, Dst: netip.MustParsePrefix("fd00::/64"), OIF: 12, Priority: 256}
)

func newGuard(t *testing.T, k *fakeKernel) Guard {
	return Guard{NL: k, State: filepath.Join(t.TempDir(), "gateways"), IfName: func(i uint32) string {
		if i == 12 {
			return "eth0"
		}
		return ""
	}}
}

func TestHold(t *testing.T) {
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
			kernel:    fakeKernel{routes: []Route{dockerDefault, dockerSubnet}},
			wantCalls: []string{"delete default via 172.18.0.1", "add unreachable 172.18.0.1/32"},
			wantState: "172.18.0.1\n",
			wantLog:   "deleted default via 172.18.0.1 dev eth0; added unreachable 172.18.0.1/32; no IPv6 default route",
		},
		{
			name:      "a kernel without IPv6",
			kernel:    fakeKernel{routes: []Route{dockerDefault, dockerSubnet}, noIPv6: true},
			wantCalls: []string{"delete default via 172.18.0.1", "add unreachable 172.18.0.1/32"},
			wantState: "172.18.0.1\n",
			wantLog:   "no IPv6 default route",
		},
		{
			name:   "IPv6 on: both families lose their default route",
			kernel: fakeKernel{routes: []Route{dockerDefault, dockerSubnet, v6Default, v6Subnet}},
			wantCalls: []string{"delete default via 172.18.0.1", "delete default via fd00::1",
				"add unreachable 172.18.0.1/32", "add unreachable fd00::1/128"},
			wantState: "172.18.0.1\nfd00::1\n",
			wantLog:   "added unreachable fd00::1/128",
		},
		{
			name: "two default routes via one gateway: both go, one block",
			kernel: fakeKernel{routes: []Route{dockerDefault, dockerSubnet,
				{Family: syscall.AF_INET, Type: syscall.RTN_UNICAST, Table: syscall.RT_TABLE_MAIN, Dst: netip.MustParsePrefix("0.0.0.0/0"),
					Gateway: netip.MustParseAddr("172.18.0.1"), OIF: 12, Priority: 100}}},
			wantCalls: []string{"delete default via 172.18.0.1", "delete default via 172.18.0.1", "add unreachable 172.18.0.1/32"},
			wantState: "172.18.0.1\n",
		},
		{
			name:      "without NET_ADMIN the kernel refuses, and the error says what is missing",
			kernel:    fakeKernel{routes: []Route{dockerDefault, dockerSubnet}, changeErr: syscall.EPERM},
			wantCalls: []string{"delete default via 172.18.0.1"},
			wantErr:   "deleting the route default via 172.18.0.1: operation not permitted: netguard needs the NET_ADMIN capability",
		},
		{
			name:    "no default route: nothing says which address is the host's",
			kernel:  fakeKernel{routes: []Route{dockerSubnet}},
			wantErr: "found no IPv4 default route with a gateway",
		},
		{
			name: "a default route without a gateway: no address to block",
			kernel: fakeKernel{routes: []Route{dockerSubnet, {Family: syscall.AF_INET, Type: syscall.RTN_UNICAST,
				Table: syscall.RT_TABLE_MAIN, Dst: netip.MustParsePrefix("0.0.0.0/0"), OIF: 12}}},
			wantErr: "found no IPv4 default route with a gateway",
		},
		{
			name: "a multipath default route is refused, not half-read",
			kernel: fakeKernel{routes: []Route{dockerSubnet, {Family: syscall.AF_INET, Type: syscall.RTN_UNICAST,
				Table: syscall.RT_TABLE_MAIN, Dst: netip.MustParsePrefix("0.0.0.0/0"), Multipath: true}}},
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
	k := &stubbornKernel{fakeKernel{routes: []Route{dockerDefault, dockerSubnet}}}
	g := newGuard(t, &k.fakeKernel)
	g.NL = k
	if _, err := g.Hold(); err == nil || !strings.Contains(err.Error(), "after the change: the namespace has a default route again: default via 172.18.0.1 dev eth0") {
		t.Fatalf("Hold: %v", err)
	}
}

type stubbornKernel struct{ fakeKernel }

func (k *stubbornKernel) Delete(Route) error { return nil }

func TestCheck(t *testing.T) {
	blocked := Route{Family: syscall.AF_INET, Type: syscall.RTN_UNREACHABLE, Table: syscall.RT_TABLE_MAIN,
		Protocol: syscall.RTPROT_STATIC, Dst: netip.MustParsePrefix("172.18.0.1/32")}
	for _, tc := range []struct {
		name    string
		state   string // "": no state file
		kernel  fakeKernel
		wantErr string
	}{
		{name: "guarded", state: "172.18.0.1\n", kernel: fakeKernel{routes: []Route{dockerSubnet, blocked}}},
		{name: "guarded, no IPv6 in the kernel", state: "172.18.0.1\n", kernel: fakeKernel{routes: []Route{dockerSubnet, blocked}, noIPv6: true}},
		{name: "hold has not run", kernel: fakeKernel{routes: []Route{dockerSubnet, blocked}}, wantErr: "has not finished"},
		{name: "an empty record", state: "\n", kernel: fakeKernel{routes: []Route{dockerSubnet, blocked}}, wantErr: "names no gateway"},
		{name: "a garbled record", state: "172.18.0\n", kernel: fakeKernel{routes: []Route{dockerSubnet, blocked}}, wantErr: "172.18.0"},
		{
			name: "the default route is back", state: "172.18.0.1\n",
			kernel:  fakeKernel{routes: []Route{dockerSubnet, blocked, dockerDefault}},
			wantErr: "default route again: default via 172.18.0.1 dev eth0",
		},
		{
			// The subnet route still covers the gateway: only the recorded address shows it is the host's.
			name: "the unreachable route was deleted", state: "172.18.0.1\n",
			kernel:  fakeKernel{routes: []Route{dockerSubnet}},
			wantErr: "172.18.0.1 is reachable: the kernel routes it via 172.18.0.0/16 dev eth0",
		},
		{
			name: "a route off the link that is not a default route", state: "172.18.0.1\n",
			kernel: fakeKernel{routes: []Route{dockerSubnet, blocked, {Family: syscall.AF_INET, Type: syscall.RTN_UNICAST,
				Table: syscall.RT_TABLE_MAIN, Dst: netip.MustParsePrefix("192.0.0.0/8"), Gateway: netip.MustParseAddr("172.18.0.1"), OIF: 12}}},
			wantErr: "192.0.2.1 is reachable",
		},
		{
			name: "an IPv6 default route", state: "172.18.0.1\n",
			kernel:  fakeKernel{routes: []Route{dockerSubnet, blocked, v6Default}},
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
