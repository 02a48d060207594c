package double

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })

func serveFault(f Faults, method, target string) (*httptest.ResponseRecorder, time.Duration) {
	h := withRequestID(newFaultInjector(f).middleware(okHandler))
	rec := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec, time.Since(start)
}

func TestFaultLatency(t *testing.T) {
	rec, took := serveFault(Faults{Latency: 150 * time.Millisecond}, "GET", "/api/v1/certificates")
	if rec.Code != 200 || took < 150*time.Millisecond {
		t.Errorf("status %d after %s, want 200 after ≥150ms", rec.Code, took)
	}
	_, took = serveFault(Faults{Latency: 150 * time.Millisecond}, "GET", "/health")
	if took > 100*time.Millisecond {
		t.Errorf("/health delayed by %s: faults must never apply to probes", took)
	}
}

func TestFaultErrorRate(t *testing.T) {
	rec, _ := serveFault(Faults{ErrorRate: 1}, "POST", "/api/v1/certificates")
	if rec.Code != 500 {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	var body handlerErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.Error != "Internal Server Error" || body.RequestID == "" || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("not certctl's handler error: %s %q", rec.Header().Get("Content-Type"), rec.Body.String())
	}
	for _, p := range []string{"/ready", "/health"} {
		if rec, _ := serveFault(Faults{ErrorRate: 1}, "GET", p); rec.Code != 200 {
			t.Errorf("%s got %d with error rate 1", p, rec.Code)
		}
	}

	// A fractional rate compares against the injected random source.
	fi := newFaultInjector(Faults{ErrorRate: 0.5})
	vals := []float64{0.1, 0.9}
	fi.random = func() float64 { v := vals[0]; vals = vals[1:]; return v }
	h := withRequestID(fi.middleware(okHandler))
	var codes []int
	for i := 0; i < 2; i++ {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/certificates", nil))
		codes = append(codes, rec.Code)
	}
	if codes[0] != 500 || codes[1] != 200 {
		t.Errorf("codes %v, want [500 200] for draws 0.1, 0.9 at rate 0.5", codes)
	}
}

func TestFaultRouteFilter(t *testing.T) {
	f := Faults{ErrorRate: 1, Route: "GET /api/v1/certificates"}
	for _, tc := range []struct {
		method, target string
		want           int
	}{
		{"GET", "/api/v1/certificates?per_page=50", 500},
		{"GET", "/api/v1/certificates", 500},
		{"POST", "/api/v1/certificates", 200},
		{"GET", "/api/v1/stats/summary", 200},
	} {
		if rec, _ := serveFault(f, tc.method, tc.target); rec.Code != tc.want {
			t.Errorf("%s %s → %d, want %d", tc.method, tc.target, rec.Code, tc.want)
		}
	}
	if rec, _ := serveFault(Faults{ErrorRate: 1, Route: "POST"}, "POST", "/api/v1/agents/a1/heartbeat"); rec.Code != 500 {
		t.Errorf("method-only route did not match: %d", rec.Code)
	}
}

func TestScheduleExit(t *testing.T) {
	codes := make(chan int, 1)
	start := time.Now()
	scheduleExit(50*time.Millisecond, func(c int) { codes <- c }, t.Logf)
	select {
	case c := <-codes:
		if c != 1 {
			t.Errorf("exit status %d, want 1", c)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Errorf("exited after %s, before DOUBLE_EXIT_AFTER", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("exit not called")
	}

	cancel := scheduleExit(50*time.Millisecond, func(c int) { codes <- c }, t.Logf)
	if !cancel() {
		t.Error("cancel reported the timer already fired")
	}
	scheduleExit(0, func(c int) { codes <- c }, t.Logf)
	select {
	case c := <-codes:
		t.Fatalf("exit(%d) called with DOUBLE_EXIT_AFTER unset or cancelled", c)
	case <-time.After(150 * time.Millisecond):
	}
}

func TestFaultRouteList(t *testing.T) {
	fi := newFaultInjector(Faults{Route: "POST /api/v1/certificates, GET /api/v1/certificates", ErrorRate: 1})
	for _, c := range []struct {
		method, target string
		want           bool
	}{
		{"POST", "/api/v1/certificates", true},
		{"GET", "/api/v1/certificates?per_page=50", true},
		{"GET", "/api/v1/auth/check", false},
		{"GET", "/health", false},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		if got := fi.applies(r); got != c.want {
			t.Errorf("%s %s: applies=%v, want %v", c.method, c.target, got, c.want)
		}
	}
	exact := newFaultInjector(Faults{Route: "GET /api/v1/certificates$,POST /api/v1/certificates/bulk-revoke", ErrorRate: 1})
	for _, c := range []struct {
		method, target string
		want           bool
	}{
		{"GET", "/api/v1/certificates", true},
		{"GET", "/api/v1/certificates?per_page=500&page=2", true},
		{"GET", "/api/v1/certificates/c1/versions", false},
		{"GET", "/api/v1/certificatesX", false},
		{"POST", "/api/v1/certificates/bulk-revoke", true},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		if got := exact.applies(r); got != c.want {
			t.Errorf("exact route, %s %s: applies=%v, want %v", c.method, c.target, got, c.want)
		}
	}
	if _, err := LoadConfig(func(k string) string {
		return map[string]string{"DOUBLE_FAULT_ROUTE": "POST /a,bogus route", "CERTCTL_SERVER_TLS_CERT_PATH": "x", "CERTCTL_SERVER_TLS_KEY_PATH": "y", "CERTCTL_AUTH_SECRET": "s"}[k]
	}, nil); err == nil {
		t.Error("a malformed route in a list was accepted")
	}
}
