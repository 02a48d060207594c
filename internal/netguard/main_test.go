//go:build linux

package netguard

import (
	"bytes"
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

func TestMainExitCodes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	open := ln.Addr().String()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()

	for _, tc := range []struct {
		name        string
		args        []string
		kernel      fakeKernel
		code        int
		out, errOut string
	}{
		{name: "no command", code: 2, errOut: "usage:"},
		{name: "unknown command", args: []string{"up"}, code: 2, errOut: `unknown command or wrong arguments: ["up"]`},
		{name: "check takes no argument", args: []string{"check", "now"}, code: 2, errOut: "usage:"},
		{name: "dial connects", args: []string{"dial", open}, code: 0, out: "connected to " + open},
		{name: "dial refused", args: []string{"dial", refused, "1s"}, code: 1, errOut: "connection refused"},
		{name: "dial needs an address", args: []string{"dial"}, code: 2, errOut: "usage:"},
		{name: "dial with a bad timeout", args: []string{"dial", open, "soon"}, code: 2, errOut: `timeout "soon" is not a positive duration`},
		{name: "check before hold", args: []string{"check"}, code: 1, errOut: "netguard: check: "},
		{
			name: "hold without NET_ADMIN", args: []string{"hold"}, code: 1,
			kernel: fakeKernel{routes: []netlink.Route{dockerDefault, dockerSubnet}, changeErr: syscall.EPERM},
			errOut: "netguard: hold: deleting the route default via 172.18.0.1: operation not permitted: netguard needs the NET_ADMIN capability",
		},
		{
			// The context is already over: hold sets up, logs, and returns at once.
			name: "hold, then stop", args: []string{"hold"}, code: 0,
			kernel: fakeKernel{routes: []netlink.Route{dockerDefault, dockerSubnet}},
			errOut: "netguard: holding a namespace with no way out: deleted default via 172.18.0.1 dev eth0; added unreachable 172.18.0.1/32; no IPv6 default route\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := tc.kernel
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if len(tc.args) > 0 && tc.args[0] == "dial" {
				ctx = context.Background()
			}
			var out, errOut bytes.Buffer
			code := Main(ctx, tc.args, newGuard(t, &k), &out, &errOut)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, errOut.String())
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("stdout %q, want %q in it", out.String(), tc.out)
			}
			if !strings.Contains(errOut.String(), tc.errOut) {
				t.Errorf("stderr %q, want %q in it", errOut.String(), tc.errOut)
			}
		})
	}
}

// hold is the namespace holder: it must keep running until it is told to stop.
func TestHoldWaitsForTheSignal(t *testing.T) {
	k := &fakeKernel{routes: []netlink.Route{dockerDefault, dockerSubnet}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		var out, errOut bytes.Buffer
		done <- Main(ctx, []string{"hold"}, newGuard(t, k), &out, &errOut)
	}()
	select {
	case code := <-done:
		t.Fatalf("hold returned %d before it was stopped", code)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("hold exit %d after SIGTERM, want 0", code)
	}
}
