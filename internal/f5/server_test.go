package f5

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/syncbuf"
)

func TestPage(t *testing.T) {
	e := newEnv(t, nil)

	req, _ := http.NewRequest("GET", e.ts.URL+"/", nil)
	req.Close = true // what the handshake scenario sends
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /: %d", resp.StatusCode)
	}
	for _, want := range []string{PageMarker, "f5-test-host"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("page lacks %q: %s", want, body)
		}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type = %q", ct)
	}
	if !resp.Close {
		t.Error("the server did not answer Connection: close with Connection: close")
	}
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("Content-Length %d, body %d bytes", resp.ContentLength, len(body))
	}
	if resp.Proto != "HTTP/1.1" {
		t.Errorf("proto %s", resp.Proto)
	}

	resp, err = e.ts.Client().Head(e.ts.URL + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD /: %v %v", resp, err)
	}
	resp.Body.Close()

	code, m, _ := e.call("POST", "/", nil, "x")
	assertErrShape(t, code, m, 405)
}

func TestPageNeedsNoAuthAndNoLock(t *testing.T) {
	e := newEnv(t, nil)
	// The page must stay fast while the API is busy: hold the API's lock.
	e.api.mu.Lock()
	defer e.api.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, p := range []string{"/", "/healthz"} {
		req, _ := http.NewRequestWithContext(ctx, "GET", e.ts.URL+p, nil)
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			t.Fatalf("GET %s while the API is locked: %v", p, err)
		}
		resp.Body.Close()
	}
}

func TestHealthz(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := e.ts.Client().Get(e.ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok" {
		t.Fatalf("healthz: %d %q", resp.StatusCode, body)
	}
}

func TestTLSVersionsAndALPN(t *testing.T) {
	e := newEnv(t, nil)
	addr := e.ts.Listener.Addr().String()
	roots := x509.NewCertPool()
	roots.AddCert(getCA(t).cert)

	_, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}) //nolint:gosec // checking that the server refuses it
	if err == nil || !strings.Contains(err.Error(), "protocol version") {
		t.Errorf("TLS 1.1 handshake: %v, want a protocol version alert", err)
	}

	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, MaxVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatalf("TLS 1.2: %v", err)
	}
	if p := c.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
		t.Errorf("ALPN chose %q, want http/1.1 (no h2)", p)
	}
	c.Close()

	c, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, NextProtos: []string{"h2"}})
	if err == nil {
		if p := c.ConnectionState().NegotiatedProtocol; p == "h2" {
			t.Error("h2 negotiated")
		}
		c.Close()
	}
}

func TestUnknownPaths(t *testing.T) {
	e := newEnv(t, nil)

	code, m, _ := e.call("GET", "/nothing/here", nil, nil)
	assertErrShape(t, code, m, 404)
	if !strings.Contains(m["message"].(string), "/nothing/here not registered") {
		t.Errorf("message %q", m["message"])
	}

	// restjavad authenticates before it routes.
	code, m, _ = e.call("GET", "/mgmt/tm/ltm/pool", nil, nil)
	assertErrShape(t, code, m, 401)

	code, m = e.authed("GET", "/mgmt/tm/ltm/pool", nil, nil)
	assertErrShape(t, code, m, 404)
	if m["kind"] != ":resterrorresponse" || m["restOperationId"] == nil || m["referer"] != "127.0.0.1" {
		t.Errorf("restjavad fields missing: %v", m)
	}

	code, m = e.authed("GET", "/mgmt/tm/ltm/profile/client-ssl/~Common~nope", nil, nil)
	assertErrShape(t, code, m, 404)
	if want := "01020036:3: The requested Client SSL Profile (/Common/nope) was not found."; m["message"] != want {
		t.Errorf("message %q, want %q", m["message"], want)
	}
	code, m = e.authed("DELETE", "/mgmt/tm/sys/crypto/cert/~Common~nope", nil, nil)
	assertErrShape(t, code, m, 404)
	code, m = e.authed("PUT", loginPath, nil, nil)
	assertErrShape(t, code, m, 405)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestRunHealthcheckAndShutdown(t *testing.T) {
	certFile, keyFile := writeCertFiles(t)
	port := strconv.Itoa(freePort(t))
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"F5_LISTEN": "127.0.0.1:" + port, "F5_TLS_CERT": certFile, "F5_TLS_KEY": keyFile, "F5_PASSWORD": "pw"}[k]
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Healthcheck(context.Background(), cfg); err == nil {
		t.Fatal("healthcheck passed before the server started")
	}

	var stderr syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, &stderr) }()

	deadline := time.Now().Add(5 * time.Second)
	for {
		if err = Healthcheck(context.Background(), cfg); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("never healthy: %v; stderr %q", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Log in through the real listener with the configured password.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: rootsOf(t)}}}
	resp, err := client.Post("https://127.0.0.1:"+port+loginPath, "application/json", strings.NewReader(`{"username":"admin","password":"pw","loginProviderName":"tmos"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("login on the real listener: %d", resp.StatusCode)
	}
	client.CloseIdleConnections()

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	out := stderr.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "listening on https://127.0.0.1:"+port) || strings.Contains(out, "pw") {
		t.Errorf("want one startup line without the password, got %q", out)
	}
}

func rootsOf(t *testing.T) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(getCA(t).cert)
	return p
}

func TestRunRefusesWithoutCertificate(t *testing.T) {
	certFile, _ := writeCertFiles(t)
	for name, cfg := range map[string]Config{
		"no cert": {Listen: "127.0.0.1:0", CertFile: "/nonexistent/starter.crt", KeyFile: "/nonexistent/starter.key"},
		"no key":  {Listen: "127.0.0.1:0", CertFile: certFile, KeyFile: "/nonexistent/starter.key"},
		"garbage": {Listen: "127.0.0.1:0", CertFile: certFile, KeyFile: certFile},
	} {
		err := Run(context.Background(), cfg, io.Discard)
		if err == nil {
			t.Fatalf("%s: Run started", name)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "refusing to start: F5_TLS_") || strings.Contains(msg, "\n") {
			t.Errorf("%s: want one line naming the variable, got %q", name, msg)
		}
	}
	err := Run(context.Background(), Config{Listen: "127.0.0.1:0", CertFile: "/nonexistent/starter.crt", KeyFile: "/x"}, io.Discard)
	if !strings.Contains(err.Error(), "F5_TLS_CERT=/nonexistent/starter.crt: no such file or directory") {
		t.Errorf("message %q", err)
	}
}
