package harness

import (
	"bytes"
	"certctl-loadtest/internal/golden"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A reading of a real k6 (k6 stats of k6 v2.2.0 running 20 requests/s, one in five answered 404) and
// variations of it: each line in testdata/progress.golden is what a user sees.
func TestProgressLines(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "k6-stats.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	real, err := ParseStats(b)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := real.get("iterations", "count"); n == 0 {
		t.Fatalf("iterations not read from k6 stats: %v", real["iterations"])
	}
	// A later reading, 20 s on: the rate shown is the one over those 20 s.
	later := Stats{}
	for k, v := range real {
		later[k] = map[string]float64{}
		for f, x := range v {
			later[k][f] = x
		}
	}
	later["iterations"]["count"] += 300
	later["dropped_iterations"] = map[string]float64{"count": 12}
	handshakes := Stats{
		"iterations":          {"count": 40, "rate": 0.66},
		"connection_duration": {"p(95)": 212.4},
		"checks":              {"rate": 0.975},
		// The connector scenarios make a request on each connection: its latency is not what they are judged by.
		"http_reqs":         {"count": 40},
		"http_req_duration": {"p(95)": 1.2},
	}
	later60 := Stats{"iterations": {"count": 73}, "connection_duration": {"p(95)": 11.3}, "checks": {"rate": 1}}
	lines := []string{
		Progress{Scenario: "list_certificates", Elapsed: 6 * time.Second, Planned: 5 * time.Minute, Now: real}.Line(),
		Progress{Scenario: "list_certificates", Elapsed: 26 * time.Second, Planned: 5 * time.Minute, Now: later, Prev: real, Window: 20 * time.Second}.Line(),
		Progress{Scenario: "nginx", Elapsed: time.Minute, Planned: 5 * time.Minute, Now: handshakes, PerMinute: true}.Line(),
		Progress{Scenario: "nginx", Elapsed: 80 * time.Second, Planned: 5 * time.Minute, Now: later60, Prev: handshakes, Window: 20 * time.Second, PerMinute: true}.Line(),
		Progress{Scenario: "inventory_walk", Elapsed: 90 * time.Second, Now: Stats{"iterations": {"count": 0, "rate": 0}}}.Line(),
	}
	got := strings.Join(lines, "\n") + "\n"
	golden.Check(t, "progress.golden", got)
}

func TestParseStatsRefusesGarbage(t *testing.T) {
	if _, err := ParseStats([]byte("{not: [yaml")); err == nil {
		t.Error("ParseStats accepted a broken reading")
	}
}

// every calls its func on each tick and not after stop returns.
func TestEveryStops(t *testing.T) {
	var n atomic.Int32
	stop := Every(context.Background(), time.Millisecond, func(context.Context) { n.Add(1) })
	time.Sleep(20 * time.Millisecond)
	stop()
	after := n.Load()
	time.Sleep(10 * time.Millisecond)
	if after == 0 || n.Load() != after {
		t.Errorf("calls: %d before stop, %d after", after, n.Load())
	}
}

// k6's per-request warnings stay in the scenario's log; the console gets their count by kind.
func TestRequestFailuresCounted(t *testing.T) {
	var console bytes.Buffer
	got, first := RequestFailures{}, FirstFailures{}
	f := newFailureFilter(&console, func(k, e string) {
		if got[k] == 0 {
			first[k] = e
		}
		got[k]++
	})
	f.Write([]byte(`time="2026-11-27T12:00:00Z" level=warning msg="Request Failed" error="Get \"https://certctl-server:8443/api/v1/certificates\": request timeout"` + "\n" +
		`time="2026-11-27T12:00:00Z" level=warning msg="Request Failed" error="Post \"https://certctl-server:8443/api/v1/certificates\": dial tcp 172.18.0.3:8443: connect: connection refused"` + "\n" +
		"list_certificates: 499 requests\n" +
		`time="2026-11-27T12:00:01Z" level=warning msg="Request Failed" error="Get \"https://x/\": request timeout"`))
	f.Flush()
	if console.String() != "list_certificates: 499 requests\n" {
		t.Errorf("console: %q", console.String())
	}
	if got.String() != "2 timeout, 1 refused" {
		t.Errorf("counts: %q", got.String())
	}
	line := Progress{Scenario: "list_certificates", Elapsed: time.Minute, Now: Stats{"iterations": {"count": 10, "rate": 1}}, Failures: got}.Line()
	if !strings.HasSuffix(line, "  not completed: 2 timeout, 1 refused") {
		t.Errorf("progress line %q", line)
	}
	if d := got.Detail(first); d != `2 timeout (first: Get "https://certctl-server:8443/api/v1/certificates": request timeout); 1 refused (first: Post "https://certctl-server:8443/api/v1/certificates": dial tcp 172.18.0.3:8443: connect: connection refused)` {
		t.Errorf("detail %q", d)
	}
}
