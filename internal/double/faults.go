package double

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// faultInjector applies DOUBLE_LATENCY and DOUBLE_ERROR_RATE. It sits after
// authentication, so injected faults look like a slow or failing handler
// (and the database behind it), not like a broken proxy.
type faultInjector struct {
	f      Faults
	random func() float64 // in [0,1); injectable for tests
}

func (fi *faultInjector) applies(r *http.Request) bool {
	if r.URL.Path == "/health" || r.URL.Path == "/ready" {
		return false
	}
	if fi.f.Route == "" {
		return true
	}
	// Method and path only: a route of "GET /api/v1/certificates" must
	// match "GET /api/v1/certificates?per_page=50". A comma separates
	// routes, so one run can fault several endpoints but not the probe. A
	// trailing "$" matches the path exactly, so the list can be faulted
	// without its sub-resources (.../{id}/versions) that setup() reads.
	req := r.Method + " " + r.URL.Path
	for _, route := range strings.Split(fi.f.Route, ",") {
		route = strings.TrimSpace(route)
		if exact, ok := strings.CutSuffix(route, "$"); ok {
			if req == exact {
				return true
			}
			continue
		}
		if route != "" && strings.HasPrefix(req, route) {
			return true
		}
	}
	return false
}

func (fi *faultInjector) middleware(next http.Handler) http.Handler {
	if !fi.f.Active() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !fi.applies(r) {
			next.ServeHTTP(w, r)
			return
		}
		if fi.f.Latency > 0 {
			t := time.NewTimer(fi.f.Latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return // the client is gone; nobody reads an answer
			}
		}
		if fi.f.ErrorRate > 0 && fi.random() < fi.f.ErrorRate {
			handlerError(w, r, http.StatusInternalServerError, "Injected fault (DOUBLE_ERROR_RATE)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func newFaultInjector(f Faults) *faultInjector {
	return &faultInjector{f: f, random: rand.Float64}
}

// scheduleExit arranges for exit(1) once d has passed, simulating certctl
// crashing mid-run (DOUBLE_EXIT_AFTER). d <= 0 schedules nothing. The
// returned function cancels the exit if it has not happened yet.
func scheduleExit(d time.Duration, exit func(int), logf func(format string, args ...any)) (cancel func() bool) {
	if d <= 0 {
		return func() bool { return false }
	}
	t := time.AfterFunc(d, func() {
		logf("DOUBLE_EXIT_AFTER=%s elapsed: exiting with status 1 to simulate a crash", d)
		exit(1)
	})
	return t.Stop
}
