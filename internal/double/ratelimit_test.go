package double

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestTokenBucket(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := newRateLimiter(50, 100, func() time.Time { return now })
	for i := 0; i < 100; i++ {
		if !l.allow("10.0.0.1") {
			t.Fatalf("request %d refused inside the burst of 100", i+1)
		}
	}
	if l.allow("10.0.0.1") {
		t.Fatal("101st request in the same instant allowed")
	}
	if !l.allow("10.0.0.2") {
		t.Fatal("another client IP shares the bucket")
	}
	now = now.Add(100 * time.Millisecond) // 50 rps → 5 tokens
	for i := 0; i < 5; i++ {
		if !l.allow("10.0.0.1") {
			t.Fatalf("refill: request %d refused", i+1)
		}
	}
	if l.allow("10.0.0.1") {
		t.Fatal("refill gave more than 5 tokens in 100 ms")
	}
	now = now.Add(2 * time.Hour)
	l.allow("10.0.0.3") // triggers the idle sweep
	if _, ok := l.buckets["10.0.0.2"]; ok {
		t.Error("idle bucket not swept after its TTL")
	}
}

func TestRateLimitResponseShape(t *testing.T) {
	l := newRateLimiter(1, 1, nil)
	h := l.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	req := httptest.NewRequest("GET", "/api/v1/certificates", nil)
	req.RemoteAddr = "[::1]:5555"
	h.ServeHTTP(httptest.NewRecorder(), req)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", rec.Code)
	}
	assertRateLimited(t, rec.Result().Header, rec.Body.String())
}

// assertRateLimited checks certctl's 429: a JSON-looking body labelled
// text/plain, with Retry-After: 1.
func assertRateLimited(t *testing.T, h http.Header, body string) {
	t.Helper()
	if body != "{\"error\":\"Rate limit exceeded\"}\n" {
		t.Errorf("429 body %q", body)
	}
	if ct := h.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("429 Content-Type %q, want text/plain (certctl's http.Error)", ct)
	}
	if ra := h.Get("Retry-After"); ra != "1" {
		t.Errorf("429 Retry-After %q, want 1", ra)
	}
}
