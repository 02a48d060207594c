//go:build linux

package netguard

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"certctl-loadtest/internal/testenv"
)

// The fake kernel answers as the tests believe the library does; this test asks the real one, so that
// what hold deletes, adds and looks up also holds for the messages the library builds. It runs in a fresh
// network namespace with a Docker-like eth0 and skips where it may not create one (no CAP_SYS_ADMIN).
func TestHoldAgainstTheKernel(t *testing.T) {
	state := filepath.Join(t.TempDir(), "gateways")
	done := make(chan error)
	go func() {
		// Never unlocked: the thread ends with this goroutine and its namespace with it, so the
		// machine's own routes are never touched.
		runtime.LockOSThread()
		done <- inFreshNamespace(t, state)
	}()
	if err := <-done; err != nil {
		if errors.Is(err, errNoNamespace) {
			testenv.SkipOrFailInCI(t, err.Error())
		}
		t.Fatal(err)
	}
}

var errNoNamespace = errors.New("no new network namespace for this test")

func inFreshNamespace(t *testing.T, state string) error {
	ns, err := netns.New()
	if err != nil {
		return errors.Join(errNoNamespace, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandle(syscall.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer h.Close()

	// eth0 as Docker leaves it: 172.18.0.2/16, default via 172.18.0.1, and the same way out again in a
	// policy-routing table the library would not read unless asked; where the kernel has IPv6, also
	// fd00::2/64 via fd00::1, as Docker with IPv6 on (the e2e stack runs without). A veth pair, as
	// Docker's: kernels without the dummy module still have veth.
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth0"}, PeerName: "bridge0"}); err != nil {
		return err
	}
	eth0, err := h.LinkByName("eth0")
	if err != nil {
		return err
	}
	peer, err := h.LinkByName("bridge0")
	if err != nil {
		return err
	}
	addr, _ := netlink.ParseAddr("172.18.0.2/16")
	gw := net.IP{172, 18, 0, 1}
	addr6, _ := netlink.ParseAddr("fd00::2/64")
	addr6.Flags = syscall.IFA_F_NODAD // usable at once, not tentative
	gw6 := net.ParseIP("fd00::1")
	defaultRoute := &netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: gw}
	for _, err := range []error{
		h.LinkSetUp(peer),
		h.LinkSetUp(eth0),
		h.AddrAdd(eth0, addr),
		h.RouteAdd(defaultRoute),
		h.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: gw, Table: 100}),
	} {
		if err != nil {
			return err
		}
	}
	want := []string{"deleted default via 172.18.0.1 dev eth0; deleted default via 172.18.0.1 dev eth0",
		"added unreachable 172.18.0.1/32"}
	gws := []net.IP{gw}
	if err := h.AddrAdd(eth0, addr6); err != nil {
		t.Logf("IPv4 only: adding %s: %v", addr6, err)
		want = append(want, "no IPv6 default route")
	} else if err := h.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: gw6}); err != nil {
		return err
	} else {
		want = append(want, "deleted default via fd00::1 dev eth0", "added unreachable fd00::1/128")
		gws = append(gws, gw6)
	}

	g := Guard{NL: h, State: state, IfName: func(i int) string {
		if l, err := h.LinkByIndex(i); err == nil {
			return l.Attrs().Name
		}
		return ""
	}}
	did, err := g.Hold()
	if err != nil {
		return err
	}
	for _, w := range want {
		if !strings.Contains(did, w) {
			t.Errorf("hold said %q, nothing about %q", did, w)
		}
	}
	for _, a := range gws {
		if _, err := h.RouteGet(a); !errors.Is(err, syscall.EHOSTUNREACH) {
			t.Errorf("after hold the kernel routes the gateway %s: %v, want EHOSTUNREACH", a, err)
		}
	}

	// Undone by hand, the guard is no longer in place, and check says how.
	blocked, err := h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Type: syscall.RTN_UNREACHABLE}, netlink.RT_FILTER_TYPE)
	if err != nil {
		return err
	}
	if len(blocked) != 1 {
		return fmt.Errorf("unreachable routes after hold: %v", blocked)
	}
	if err := h.RouteDel(&blocked[0]); err != nil {
		return err
	}
	if err := g.Check(); err == nil || !strings.Contains(err.Error(), "172.18.0.1 is reachable: the kernel routes it via 172.18.0.1/32 dev eth0") {
		t.Errorf("check with the gateway reachable: %v", err)
	}
	if err := h.RouteAdd(defaultRoute); err != nil {
		return err
	}
	if err := g.Check(); err == nil || !strings.Contains(err.Error(), "the namespace has a default route again: default via 172.18.0.1 dev eth0") {
		t.Errorf("check with the default route back: %v", err)
	}
	return nil
}
