package double

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// rateLimiter is certctl's per-key token bucket. certctl places it before
// the auth middleware, so no request has a user yet and every bucket is
// keyed by client IP: all API keys from one load generator share one
// budget (FACTS.md §2).
type rateLimiter struct {
	rate  float64 // tokens per second
	burst float64
	ttl   time.Duration
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	tokens     float64
	lastRefill time.Time
}

func newRateLimiter(rps float64, burst int, now func() time.Time) *rateLimiter {
	if now == nil {
		now = time.Now
	}
	return &rateLimiter{
		rate:      rps,
		burst:     float64(burst),
		ttl:       time.Hour,
		now:       now,
		buckets:   map[string]*bucket{},
		lastSweep: now(),
	}
}

func (l *rateLimiter) allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	// Forget idle clients (certctl sweeps after an hour too) so a long run
	// with churning source addresses cannot grow the map without bound.
	if now.Sub(l.lastSweep) > l.ttl/4 {
		for k, b := range l.buckets {
			if now.Sub(b.lastRefill) > l.ttl {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: l.burst, lastRefill: now}
		l.buckets[key] = b
	}
	b.tokens += now.Sub(b.lastRefill).Seconds() * l.rate
	if b.tokens > l.burst {
		b.tokens = l.burst
	}
	b.lastRefill = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (l *rateLimiter) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !l.allow(clientIP(r)) {
			w.Header().Set("Retry-After", "1")
			middlewareError(w, http.StatusTooManyRequests, `{"error":"Rate limit exceeded"}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clientIP takes the host part of RemoteAddr the way certctl does;
// X-Forwarded-For is deliberately not trusted.
func clientIP(r *http.Request) string {
	host := r.RemoteAddr
	if i := strings.LastIndex(host, ":"); i >= 0 {
		host = host[:i]
	}
	if host == "" {
		host = "unknown"
	}
	return host
}
