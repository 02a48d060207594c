//go:build linux

package netguard

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
)

// A relay passes a connection's bytes both ways, and a half-closed request still gets its answer.
func TestRelayForwardsBothWays(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c) // until the client's half-close
				c.Write([]byte(strings.ToUpper(string(b))))
			}()
		}
	}()
	addr := make(chan string, 1)
	listen := func(network, _ string) (net.Listener, error) {
		ln, err := net.Listen(network, "127.0.0.1:0")
		if err == nil {
			addr <- ln.Addr().String()
		}
		return ln, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Relay(ctx, []Route{{Port: 1, Upstream: up.Addr().String()}}, listen, io.Discard) }()
	c, err := net.Dial("tcp", <-addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("select 1"))
	c.(*net.TCPConn).CloseWrite()
	got, _ := bufio.NewReader(c).ReadString(0)
	c.Close()
	if got != "SELECT 1" {
		t.Errorf("answer %q, want SELECT 1", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Relay: %v", err)
	}
}

func TestParseRoutesRefusesBadArguments(t *testing.T) {
	for _, args := range [][]string{nil, {"8443"}, {"0=a:1"}, {"8443=certctl-server"}, {"1=a:1", "1=b:2"}, {"x=a:1"}} {
		if _, err := ParseRoutes(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	r, err := ParseRoutes([]string{"8443=certctl-server:8443", "5432=postgres:5432"})
	if err != nil || len(r) != 2 || r[1].Port != 5432 || r[1].Upstream != "postgres:5432" {
		t.Errorf("%+v %v", r, err)
	}
}
