package faultproxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/syncbuf"
)

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return port
}

func runMain(t *testing.T, ctx context.Context, args []string, env map[string]string) (int, string) {
	t.Helper()
	var stderr syncbuf.Buffer
	code := Main(ctx, args, getenvFrom(env), &stderr)
	return code, stderr.String()
}

func TestHealthcheckExitCodes(t *testing.T) {
	h := start(t, setup{})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(h.base, "https://"))
	env := map[string]string{"FAULT_LISTEN": ":" + port, "FAULT_CA": h.env["FAULT_CA"]}

	if code, out := runMain(t, context.Background(), []string{"--healthcheck"}, env); code != 0 || out != "" {
		t.Errorf("healthy proxy: exit %d, %q", code, out)
	}
	if s := h.stats(); s.Forwarded != 0 {
		t.Errorf("the healthcheck was forwarded: %+v", s)
	}

	other := pkiEnv(t, newTestCA(t))
	code, out := runMain(t, context.Background(), []string{"-healthcheck"}, map[string]string{"FAULT_LISTEN": ":" + port, "FAULT_CA": other["FAULT_CA"]})
	if code != 1 || !strings.Contains(out, "certificate") {
		t.Errorf("proxy certificate from another CA: exit %d, %q", code, out)
	}

	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	code, out = runMain(t, context.Background(), []string{"--healthcheck"}, env)
	if code != 1 || !strings.HasPrefix(out, "fault-proxy: unhealthy: ") || strings.Count(out, "\n") != 1 {
		t.Errorf("stopped proxy: exit %d, %q", code, out)
	}
}

func TestHealthcheckNon200(t *testing.T) {
	// A server answering 503 on the stats path stands in for a sick proxy.
	ca := newTestCA(t)
	env := pkiEnv(t, ca)
	port := freePort(t)
	env["FAULT_LISTEN"] = "127.0.0.1:" + port
	cfg, err := LoadConfig(getenvFrom(env))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Addr: cfg.Listen, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "sick", http.StatusServiceUnavailable)
	})}
	go func() { _ = srv.ListenAndServeTLS(cfg.CertFile, cfg.KeyFile) }()
	defer srv.Close()
	waitFor(t, "the sick server", func() bool {
		c, err := net.Dial("tcp", cfg.Listen)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	if err := Healthcheck(cfg); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("Healthcheck = %v, want the 503", err)
	}
}

func TestMainRejectsBadInput(t *testing.T) {
	pki := pkiEnv(t, newTestCA(t))
	missing := t.TempDir() + "/missing.pem"
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		mention string
	}{
		{"unknown flag", []string{"--verbose"}, pki, `"--verbose"`},
		{"extra argument", []string{"--healthcheck", "now"}, pki, `"now"`},
		{"bad knob", nil, map[string]string{"FAULT_ERROR_RATE": "0.2x"}, "FAULT_ERROR_RATE"},
		{"bad knob with healthcheck", []string{"--healthcheck"}, map[string]string{"FAULT_LATENCY": "-5s"}, "FAULT_LATENCY"},
		{"missing CA", nil, map[string]string{"FAULT_CA": missing, "FAULT_TLS_CERT": pki["FAULT_TLS_CERT"], "FAULT_TLS_KEY": pki["FAULT_TLS_KEY"]}, "FAULT_CA"},
		{"CA without PEM", nil, map[string]string{"FAULT_CA": pki["FAULT_TLS_KEY"], "FAULT_TLS_CERT": pki["FAULT_TLS_CERT"], "FAULT_TLS_KEY": pki["FAULT_TLS_KEY"]}, "no PEM certificate"},
		{"missing cert", nil, map[string]string{"FAULT_CA": pki["FAULT_CA"], "FAULT_TLS_CERT": missing, "FAULT_TLS_KEY": pki["FAULT_TLS_KEY"]}, "FAULT_TLS_CERT"},
		{"key not matching", nil, map[string]string{"FAULT_CA": pki["FAULT_CA"], "FAULT_TLS_CERT": pki["FAULT_CA"], "FAULT_TLS_KEY": pki["FAULT_TLS_KEY"]}, "FAULT_TLS_KEY"},
	} {
		code, out := runMain(t, context.Background(), tc.args, tc.env)
		if code != 2 || !strings.HasPrefix(out, "fault-proxy: refusing to start: ") || !strings.Contains(out, tc.mention) || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: exit %d, %q; want 2 and one line mentioning %s", tc.name, code, out, tc.mention)
		}
	}
}

func TestMainListenFailureIsExit1(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	env := pkiEnv(t, newTestCA(t))
	env["FAULT_LISTEN"] = busy.Addr().String()
	if code, out := runMain(t, context.Background(), nil, env); code != 1 || !strings.Contains(out, "FAULT_LISTEN") {
		t.Errorf("exit %d, %q", code, out)
	}
}

func TestMainServesAndStopsGracefully(t *testing.T) {
	ca := newTestCA(t)
	env := pkiEnv(t, ca)
	port := freePort(t)
	env["FAULT_LISTEN"] = "127.0.0.1:" + port
	env["FAULT_LATENCY"] = "300ms"
	env["FAULT_ROUTE"] = "GET /slow"
	up := start(t, setup{ca: ca})
	env["FAULT_UPSTREAM"] = up.env["FAULT_UPSTREAM"]

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncbuf.Buffer
	exit := make(chan int, 1)
	go func() { exit <- Main(ctx, nil, getenvFrom(env), &stderr) }()
	waitFor(t, "the start-up line", func() bool { return strings.Contains(stderr.String(), "listening on") })
	for _, want := range []string{"127.0.0.1:" + port, "forwarding to " + env["FAULT_UPSTREAM"], `faults: latency=300ms error_rate=0 body_rate=0 on "GET /slow"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("start-up line lacks %q:\n%s", want, stderr.String())
		}
	}

	// A request waiting out its latency when SIGTERM arrives completes.
	h := &harness{t: t, ca: ca, base: "https://127.0.0.1:" + port}
	h.client = h.newClient(true)
	status := make(chan int, 1)
	go func() {
		resp, err := h.client.Get(h.base + "/slow")
		if err != nil {
			t.Error(err)
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	if s := <-status; s != http.StatusOK {
		t.Errorf("in-flight request: %d, want 200", s)
	}
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit %d:\n%s", code, stderr.String())
		}
	case <-time.After(ShutdownTimeout + 5*time.Second):
		t.Fatal("no graceful stop")
	}
	if !strings.Contains(stderr.String(), "stopped: forwarded=1 delayed=1 errors_injected=0 bodies_replaced=0 upstream_errors=0") {
		t.Errorf("final counters missing:\n%s", stderr.String())
	}
}

// An http:// upstream makes a plain proxy, with no certificate to load (FAULT_TLS_* point nowhere): the
// slow challenge responder in front of the HTTP-01 server, which certctl's validator fetches in plain
// HTTP/1.1 on port 80 under the name it validates.
func TestPlainProxyDelaysAndKeepsTheHost(t *testing.T) {
	var host string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host = r.Host
		io.WriteString(w, "key-authorization")
	}))
	defer up.Close()
	port := freePort(t)
	env := map[string]string{"FAULT_LISTEN": "127.0.0.1:" + port, "FAULT_UPSTREAM": up.URL, "FAULT_LATENCY": "300ms",
		"FAULT_CA": "/nonexistent", "FAULT_TLS_CERT": "/nonexistent", "FAULT_TLS_KEY": "/nonexistent"}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncbuf.Buffer
	exit := make(chan int, 1)
	go func() { exit <- Main(ctx, nil, getenvFrom(env), &stderr) }()
	defer func() {
		cancel()
		if code := <-exit; code != 0 {
			t.Errorf("exit %d:\n%s", code, stderr.String())
		}
	}()
	waitFor(t, "the start-up line", func() bool { return strings.Contains(stderr.String(), "listening on") })
	if !strings.Contains(stderr.String(), "(plain HTTP/1.1)") {
		t.Errorf("start-up line: %s", stderr.String())
	}
	if code, out := runMain(t, context.Background(), []string{"--healthcheck"}, env); code != 0 {
		t.Errorf("healthcheck of the plain proxy: exit %d, %q", code, out)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+port+"/.well-known/acme-challenge/tok", nil)
	req.Host = "ch-0.challenge.loadtest.example.com"
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("answered in %v, under the 300ms latency", took)
	}
	if resp.StatusCode != http.StatusOK || string(body) != "key-authorization" || host != req.Host {
		t.Errorf("%d %q, upstream saw Host %q; want 200, the upstream's body and Host %q", resp.StatusCode, body, host, req.Host)
	}
}
