package faultproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLatencyOnlyOnMatchingRoutes(t *testing.T) {
	const latency = 150 * time.Millisecond
	h := start(t, setup{env: map[string]string{"FAULT_LATENCY": "150ms", "FAULT_ROUTE": "GET /slow"}})
	h.do("GET", "/warm-up", nil) // the TLS handshake must not count as latency
	timed := func(method, path string) time.Duration {
		t0 := time.Now()
		if r := h.do(method, path, nil); r.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d", method, path, r.StatusCode)
		}
		return time.Since(t0)
	}
	if d := timed("GET", "/slow/x?q=1"); d < latency || d > latency+3*time.Second {
		t.Errorf("GET /slow/x took %s, want about %s", d, latency)
	}
	for _, req := range [][2]string{{"GET", "/fast"}, {"POST", "/slow/x"}} {
		if d := timed(req[0], req[1]); d >= latency {
			t.Errorf("%s %s took %s: delayed but not in FAULT_ROUTE", req[0], req[1], d)
		}
	}
	if s := h.stats(); s != (Stats{Forwarded: 4, Delayed: 1}) {
		t.Errorf("stats = %+v", s)
	}
}

func TestHealthAndReadyNeverFaulted(t *testing.T) {
	var waits atomic.Int64
	h := start(t, setup{
		env: map[string]string{"FAULT_LATENCY": "1h", "FAULT_ERROR_RATE": "1"},
		opts: Options{Wait: func(_ context.Context, d time.Duration) bool {
			if d != time.Hour {
				t.Errorf("waited %s, want FAULT_LATENCY", d)
			}
			waits.Add(1)
			return true
		}},
	})
	for _, req := range [][2]string{{"GET", "/health"}, {"HEAD", "/ready"}, {"GET", "/ready"}} {
		if r := h.do(req[0], req[1], nil); r.StatusCode != http.StatusOK || r.Header.Get("X-Upstream-Method") != req[0] {
			t.Errorf("%s %s: %d %s, want forwarded", req[0], req[1], r.StatusCode, r.body)
		}
	}
	if r := h.do("GET", "/api/v1/certificates", nil); r.StatusCode != http.StatusInternalServerError {
		t.Errorf("GET /api/v1/certificates: %d, want the injected 500", r.StatusCode)
	}
	if waits.Load() != 1 || h.hits.Load() != 3 {
		t.Errorf("waits = %d, upstream hits = %d; want 1, 3", waits.Load(), h.hits.Load())
	}
}

func TestUntimedRequestsNeverFaulted(t *testing.T) {
	h := start(t, setup{env: map[string]string{"FAULT_LATENCY": "1h", "FAULT_ERROR_RATE": "1"},
		opts: Options{Wait: func(context.Context, time.Duration) bool { t.Error("an untimed request waited"); return true }}})
	r := h.doWith("POST", "/api/v1/certificates/bulk-revoke", nil, http.Header{UntimedHeader: {"cleanup"}})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("untimed request: %d %s, want forwarded", r.StatusCode, r.body)
	}
	if got := r.Header.Get("X-Upstream-Saw-Untimed"); got != "" {
		t.Errorf("certctl saw %s: %q; the proxy must remove it", UntimedHeader, got)
	}
	if s := h.stats(); s != (Stats{Forwarded: 1}) {
		t.Errorf("stats = %+v", s)
	}
}

// The k6 library marks its untimed requests with the header this proxy honours: one name on both sides.
func TestK6MarksUntimedRequestsWithThisHeader(t *testing.T) {
	b, err := os.ReadFile("../../k6/lib/certctl.js")
	if err != nil {
		t.Fatal(err)
	}
	if want := "export const UNTIMED_HEADER = '" + UntimedHeader + "';"; !strings.Contains(string(b), want) {
		t.Errorf("k6/lib/certctl.js does not say %s", want)
	}
}

func TestClientGoneDuringLatency(t *testing.T) {
	waited := make(chan bool, 1)
	h := start(t, setup{
		env: map[string]string{"FAULT_LATENCY": "10s"},
		opts: Options{Wait: func(ctx context.Context, d time.Duration) bool {
			ok := sleep(ctx, d)
			waited <- ok
			return ok
		}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", h.base+"/api/v1/certificates", strings.NewReader("{}"))
	if resp, err := h.client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("got %d, want the client's timeout", resp.StatusCode)
	}
	select {
	case ok := <-waited:
		if ok {
			t.Fatal("the wait completed although the client left")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait ignored the client leaving")
	}
	time.Sleep(50 * time.Millisecond) // room for a wrongful forward
	if s := h.stats(); h.hits.Load() != 0 || s != (Stats{}) {
		t.Errorf("upstream hits = %d, stats = %+v; want nothing forwarded", h.hits.Load(), s)
	}
}

func TestClientGoneDuringUpstreamCallIsNotAnUpstreamError(t *testing.T) {
	h := start(t, setup{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", h.base+"/api/v1/certificates?hang=1", nil)
	if resp, err := h.client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("got %d, want the client's timeout", resp.StatusCode)
	}
	time.Sleep(100 * time.Millisecond) // room for the proxy's error handler
	if s := h.stats(); s != (Stats{Forwarded: 1}) {
		t.Errorf("stats = %+v; a k6 timeout must not count as an upstream error", s)
	}
}

var injectedBody = regexp.MustCompile(`^\{"error":"Internal Server Error","message":"Injected fault \(FAULT_ERROR_RATE\)","request_id":"([0-9a-f]{32})"\}\n$`)

func TestErrorRateOne(t *testing.T) {
	h := start(t, setup{env: map[string]string{
		"FAULT_ERROR_RATE": "1",
		"FAULT_ROUTE":      "GET /api/v1/certificates$,POST /api/v1/certificates/bulk-revoke",
	}})
	ids := map[string]bool{}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/api/v1/certificates?per_page=50", 500},
		{"GET", "/api/v1/certificates", 500},
		{"GET", "/api/v1/certificates/abc", 200},
		{"POST", "/api/v1/certificates/bulk-revoke", 500},
		{"POST", "/api/v1/certificates", 200},
		{"GET", "/health", 200},
	} {
		r := h.do(tc.method, tc.path, strings.NewReader(`{"x":1}`))
		if r.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, r.StatusCode, tc.want)
			continue
		}
		if tc.want != 500 {
			continue
		}
		m := injectedBody.FindStringSubmatch(r.body)
		if m == nil || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %q %q, want certctl's handler error", tc.method, tc.path, r.Header.Get("Content-Type"), r.body)
			continue
		}
		if r.Header.Get("X-Request-ID") != m[1] || ids[m[1]] {
			t.Errorf("request id %q: header %q, seen before %v", m[1], r.Header.Get("X-Request-ID"), ids[m[1]])
		}
		ids[m[1]] = true
	}
	if s := h.stats(); h.hits.Load() != 3 || s != (Stats{Forwarded: 3, ErrorsInjected: 3}) {
		t.Errorf("upstream hits = %d, stats = %+v", h.hits.Load(), s)
	}
}

func TestErrorRateZeroForwardsAll(t *testing.T) {
	h := start(t, setup{
		env: map[string]string{"FAULT_ERROR_RATE": "0", "FAULT_LATENCY": "0s"},
		opts: Options{Random: func() float64 {
			t.Error("random consulted with FAULT_ERROR_RATE=0")
			return 0
		}},
	})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if r := h.do("GET", "/api/v1/certificates", nil); r.StatusCode != http.StatusOK {
				t.Errorf("status %d", r.StatusCode)
			}
		})
	}
	wg.Wait()
	if s := h.stats(); h.hits.Load() != 20 || s != (Stats{Forwarded: 20}) {
		t.Errorf("upstream hits = %d, stats = %+v", h.hits.Load(), s)
	}
}

func TestFractionalErrorRateDeterministic(t *testing.T) {
	var mu sync.Mutex
	next := 0
	h := start(t, setup{
		env: map[string]string{"FAULT_ERROR_RATE": "0.3", "FAULT_ROUTE": "POST /acme/"},
		opts: Options{Random: func() float64 { // 0.05, 0.15, ... 0.95, 0.05, ...
			mu.Lock()
			defer mu.Unlock()
			next++
			return float64((next-1)%10)/10 + 0.05
		}},
	})
	var got []int
	for range 20 {
		got = append(got, h.do("POST", "/acme/new-order", nil).StatusCode)
		// Not in FAULT_ROUTE: must not consume a random value.
		if r := h.do("GET", "/acme/directory", nil); r.StatusCode != 200 {
			t.Fatalf("GET /acme/directory: %d", r.StatusCode)
		}
	}
	want := []int{500, 500, 500, 200, 200, 200, 200, 200, 200, 200}
	want = append(want, want...)
	if !slices.Equal(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	if s := h.stats(); s != (Stats{Forwarded: 34, ErrorsInjected: 6}) {
		t.Errorf("stats = %+v", s)
	}
}

func TestPassThrough(t *testing.T) {
	h := start(t, setup{})
	proxyHost := strings.TrimPrefix(h.base, "https://")

	r := h.do("HEAD", "/acme/new-nonce", nil)
	if r.StatusCode != 200 || r.Header.Get("Replay-Nonce") != "nonce-1" || r.Header.Get("Cache-Control") != "no-store" ||
		r.Header.Get("X-Upstream-Method") != "HEAD" || r.body != "" {
		t.Errorf("HEAD: %d %v %q", r.StatusCode, r.Header, r.body)
	}

	body := make([]byte, 1<<20)
	_, _ = rand.Read(body)
	req, _ := http.NewRequest("POST", h.base+"/acme/new-order?status=201&x=1", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/jose+json")
	req.Header.Set("Authorization", "Bearer k")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for k, want := range map[string]string{
		"X-Upstream-Method":          "POST",
		"X-Upstream-Query":           "status=201&x=1",
		"X-Upstream-Host":            proxyHost, // ACME URLs must point back at the proxy
		"X-Upstream-XFF":             "",        // certctl's rate limiter keys on client IP
		"X-Upstream-Accept-Encoding": "",        // the proxy must not ask for gzip itself
		"X-Upstream-Proto":           "HTTP/2.0",
		"X-Upstream-Auth":            "Bearer k",
		"X-Upstream-Content-Type":    "application/jose+json",
		"Replay-Nonce":               "nonce-2",
		"Retry-After":                "7",
		"Location":                   "https://certctl.example/acme/order/2",
		"Content-Type":               "application/problem+json",
	} {
		if v := resp.Header.Get(k); v != want {
			t.Errorf("POST: %s = %q, want %q", k, v, want)
		}
	}
	if resp.StatusCode != 201 || !bytes.Equal(got, body) {
		t.Errorf("POST: %d, body intact %v", resp.StatusCode, bytes.Equal(got, body))
	}

	for _, status := range []string{"404", "429", "503"} {
		if r := h.do("GET", "/api/v1/x?status="+status, nil); r.Status[:3] != status {
			t.Errorf("status %s came back as %s", status, r.Status)
		}
	}
}

func TestListenerSpeaksH2AndHTTP1(t *testing.T) {
	h := start(t, setup{})
	if r := h.do("GET", "/api/v1/version", nil); r.ProtoMajor != 2 || r.TLS.NegotiatedProtocol != "h2" {
		t.Errorf("h2 client got %s (ALPN %q)", r.Proto, r.TLS.NegotiatedProtocol)
	}
	h.client = h.newClient(false)
	if r := h.do("GET", "/api/v1/version", nil); r.ProtoMajor != 1 || r.StatusCode != 200 {
		t.Errorf("HTTP/1.1 client got %s %d", r.Proto, r.StatusCode)
	}
	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: h.ca.pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}}}
	if resp, err := old.Get(h.base + "/api/v1/version"); err == nil {
		resp.Body.Close()
		t.Error("a TLS 1.1 client was served")
	}
}

func TestUpstreamDown(t *testing.T) {
	dead := httptest.NewTLSServer(http.NotFoundHandler())
	dead.Close()
	h := start(t, setup{env: map[string]string{"FAULT_UPSTREAM": dead.URL}})
	r := h.do("GET", "/api/v1/certificates", nil)
	assertBadGateway(t, r, dead.URL, "")
	if s := h.stats(); s != (Stats{Forwarded: 1, UpstreamErrors: 1}) {
		t.Errorf("stats = %+v", s)
	}
	if !strings.Contains(h.logs.String(), "upstream error #1 (GET /api/v1/certificates)") {
		t.Errorf("log lacks the upstream error:\n%s", h.logs)
	}
}

func TestUpstreamFromAnotherCARejected(t *testing.T) {
	h := start(t, setup{upstreamCA: newTestCA(t)})
	r := h.do("GET", "/api/v1/certificates", nil)
	assertBadGateway(t, r, h.env["FAULT_UPSTREAM"], "certificate")
	if s := h.stats(); h.hits.Load() != 0 || s.UpstreamErrors != 1 {
		t.Errorf("upstream hits = %d, stats = %+v", h.hits.Load(), s)
	}
}

func assertBadGateway(t *testing.T, r response, upstream, mentions string) {
	t.Helper()
	var body map[string]string
	if err := json.Unmarshal([]byte(r.body), &body); err != nil || r.StatusCode != http.StatusBadGateway ||
		r.Header.Get("Content-Type") != "application/json" || len(body) != 2 || body["error"] != "Bad Gateway" {
		t.Fatalf("got %d %q %s, want a JSON 502", r.StatusCode, r.Header.Get("Content-Type"), r.body)
	}
	if msg := body["message"]; !strings.HasPrefix(msg, "fault-proxy: upstream "+upstream+": ") || !strings.Contains(msg, mentions) {
		t.Errorf("message %q should name %s and mention %q", msg, upstream, mentions)
	}
}

func TestStatsEndpoint(t *testing.T) {
	h := start(t, setup{env: map[string]string{"FAULT_ERROR_RATE": "1", "FAULT_LATENCY": "1ms", "FAULT_ROUTE": "POST"}})
	h.do("POST", "/api/v1/certificates", nil)
	h.do("POST", "/api/v1/certificates", nil)
	h.do("GET", "/api/v1/certificates", nil)
	// Never forwarded nor faulted, even though FAULT_ROUTE=POST.
	if r := h.do("POST", StatsPath, nil); r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST %s: %d %v", StatsPath, r.StatusCode, r.Header)
	}
	if s := h.stats(); h.hits.Load() != 1 || s != (Stats{Forwarded: 1, Delayed: 2, ErrorsInjected: 2}) {
		t.Errorf("upstream hits = %d, stats = %+v", h.hits.Load(), s)
	}
}

// FAULT_BODY_RATE: a 2xx answer keeps certctl's status and headers and loses its body; errors and
// unmatched routes pass untouched.
func TestBodyRateOne(t *testing.T) {
	h := start(t, setup{env: map[string]string{"FAULT_BODY_RATE": "1", "FAULT_ROUTE": "POST /api/v1/certificates$"}})
	for _, tc := range []struct {
		path, body, want string
		status           int
	}{
		{"/api/v1/certificates", `{"id":"c1"}`, "{}\n", 200},
		{"/api/v1/certificates?status=201", `{"id":"c2"}`, "{}\n", 201},
		{"/api/v1/certificates?status=409", `{"error":"x"}`, `{"error":"x"}`, 409},
		{"/api/v1/certificates/bulk-renew", `{"ids":[]}`, `{"ids":[]}`, 200},
	} {
		r := h.do("POST", tc.path, strings.NewReader(tc.body))
		if r.StatusCode != tc.status || r.body != tc.want {
			t.Errorf("POST %s: %d %q, want %d %q", tc.path, r.StatusCode, r.body, tc.status, tc.want)
		}
		if r.Header.Get("Replay-Nonce") == "" || r.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("POST %s: certctl's headers lost: %v", tc.path, r.Header)
		}
	}
	if s := h.stats(); s != (Stats{Forwarded: 4, BodiesReplaced: 2}) {
		t.Errorf("stats = %+v", s)
	}
}

// FAULT_BEARER: the relay of the auth tier adds the harness's key to Keycloak's back-channel logouts,
// which carry none; a request that has a credential, or lies outside the prefix, goes as it came.
func TestBearerAddedUnderItsPrefixOnly(t *testing.T) {
	h := start(t, setup{env: map[string]string{"FAULT_BEARER": "/auth/ lt-key"}})
	for _, tc := range []struct {
		path, auth, want string
	}{
		{"/auth/oidc/back-channel-logout", "", "Bearer lt-key"},
		{"/auth/oidc/login", "Bearer other", "Bearer other"},
		{"/api/v1/certificates", "", ""},
		{"/authority", "", ""},
	} {
		header := http.Header{}
		if tc.auth != "" {
			header.Set("Authorization", tc.auth)
		}
		if r := h.doWith("GET", tc.path, nil, header); r.Header.Get("X-Upstream-Auth") != tc.want {
			t.Errorf("%s with %q: upstream got %q, want %q", tc.path, tc.auth, r.Header.Get("X-Upstream-Auth"), tc.want)
		}
	}
}
