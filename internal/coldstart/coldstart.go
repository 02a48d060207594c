// Package coldstart measures what a restart costs certctl: the time from starting its process to a
// healthy answer, and the latency of the first requests after it against the same requests warm; and
// the same restart while a steady load runs, with the requests it failed.
package coldstart

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"certctl-loadtest/internal/growth"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/samples"
)

// Requests is how many requests after a start are "the first": the hundred.
const Requests = 100

// ListPath is the request measured: the API tier's listing, the call whose cost grows with the
// inventory (k6/lib/certctl.js listCertificates).
const ListPath = "/api/v1/certificates?per_page=50&page=1"

// Target is how the host reaches certctl (harness.StackAccess).
type Target struct {
	URL, Key, CAFile string
	// ConnectTo is curl's host:port:addr:port: the URL's host reached at another address.
	ConnectTo string
}

// Client is an HTTP client for the target: its CA trusted, its name dialled at ConnectTo's address,
// a fresh connection after every failure so a restarted server is reached anew.
func Client(t Target) (*http.Client, error) {
	pem, err := os.ReadFile(t.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no certificate", t.CAFile)
	}
	dial := (&net.Dialer{Timeout: 2 * time.Second}).DialContext
	if t.ConnectTo != "" {
		parts := strings.Split(t.ConnectTo, ":")
		if len(parts) != 4 {
			return nil, fmt.Errorf("ConnectTo %q: want host:port:addr:port", t.ConnectTo)
		}
		from, to := net.JoinHostPort(parts[0], parts[1]), net.JoinHostPort(parts[2], parts[3])
		inner := dial
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == from {
				addr = to
			}
			return inner(ctx, network, addr)
		}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: 8,
	}}, nil
}

// Figures are a run of requests' latencies.
type Figures struct {
	N       int     `json:"n"`
	Failed  int     `json:"failed"`
	FirstMS float64 `json:"first_ms"`
	P50     float64 `json:"p50_ms"`
	P95     float64 `json:"p95_ms"`
	Max     float64 `json:"max_ms"`
}

func figures(ms []float64, failed int) Figures {
	f := Figures{N: len(ms), Failed: failed}
	if len(ms) == 0 {
		return f
	}
	f.FirstMS = round(ms[0])
	s := append([]float64(nil), ms...)
	sort.Float64s(s)
	f.P50, f.P95, f.Max = round(samples.Quantile(s, 0.5)), round(samples.Quantile(s, 0.95)), round(s[len(s)-1])
	return f
}

func round(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }

// get is one request: its latency in ms and whether certctl answered 200.
func get(ctx context.Context, c *http.Client, t Target, path string) (float64, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(t.URL, "/")+path, nil)
	if err != nil {
		return 0, false
	}
	if t.Key != "" {
		req.Header.Set("Authorization", "Bearer "+t.Key)
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		c.CloseIdleConnections()
		return float64(time.Since(start).Microseconds()) / 1000, false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return float64(time.Since(start).Microseconds()) / 1000, resp.StatusCode == http.StatusOK
}

// sequential sends n listing requests one after another.
func sequential(ctx context.Context, c *http.Client, t Target, n int) Figures {
	var ms []float64
	failed := 0
	for i := 0; i < n && ctx.Err() == nil; i++ {
		d, ok := get(ctx, c, t, ListPath)
		if !ok {
			failed++
			continue
		}
		ms = append(ms, d)
	}
	return figures(ms, failed)
}

// waitHealthy polls /health every 50 ms until certctl answers 200, and returns how long that took.
func waitHealthy(ctx context.Context, c *http.Client, t Target, since time.Time, limit time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		if _, ok := get(ctx, c, t, "/health"); ok {
			return time.Since(since), nil
		}
		select {
		case <-ctx.Done():
			return time.Since(since), fmt.Errorf("certctl answered no /health within %s", limit)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Compose runs `docker compose <args>` on the stack.
type Compose func(ctx context.Context, args ...string) error

// Size is one inventory size's measurement.
type Size struct {
	Size    float64 `json:"size"`
	RunDir  string  `json:"run_dir"`
	Problem string  `json:"problem,omitempty"`
	// Cold: certctl stopped, then started; ToHealthyS from the start command to the first /health 200.
	StopS float64 `json:"stop_s"`
	// StartCmdS is how long starting the stopped server took the engine (`docker compose restart`): a
	// part of ToHealthyS.
	StartCmdS  float64 `json:"start_cmd_s"`
	ToHealthyS float64 `json:"to_healthy_s"`
	First      Figures `json:"first"` // the first Requests listings after healthy, one after another
	Warm       Figures `json:"warm"`  // the next Requests: the same requests warm
	// UnderLoad: certctl restarted while listings arrive at LoadRate a second.
	UnderLoad *UnderLoad `json:"under_load,omitempty"`
}

// UnderLoad is a restart during a steady load.
type UnderLoad struct {
	RatePerS float64 `json:"rate_per_s"`
	// ToFirstOKS is from the restart command to the first listing answered after the outage.
	ToFirstOKS float64 `json:"to_first_ok_s"`
	// RestartCmdS is how long `docker compose restart` took to return.
	RestartCmdS float64 `json:"restart_cmd_s"`
	// Drained is how many listings sent after the restart command the old process still answered.
	Drained int `json:"drained"`
	// Failed is how many listings failed from the first failure after the restart to the first answer.
	Failed int `json:"failed"`
	// FailedAfter is how many failed once certctl answered again.
	FailedAfter int     `json:"failed_after"`
	Before      Figures `json:"before"` // the listings before the restart
	After       Figures `json:"after"`  // the first Requests answered after the outage
}

// Config is a measurement's settings.
type Config struct {
	Server       string        // the compose service (certctl-server)
	StartTimeout time.Duration // the longest a start may take to healthy
	LoadRate     float64       // listings a second during the restart under load
	// Before is how long the load runs before the restart (10 s when zero): the figures it is read against.
	Before time.Duration
}

// Measure restarts certctl cold and then under load, and reports both.
func Measure(ctx context.Context, t Target, compose Compose, cfg Config, logf func(string, ...any)) Size {
	var s Size
	c, err := Client(t)
	if err != nil {
		s.Problem = err.Error()
		return s
	}
	if _, ok := get(ctx, c, t, "/health"); !ok {
		s.Problem = "certctl does not answer /health before the restart"
		return s
	}
	began := time.Now()
	if err := compose(ctx, "stop", "--timeout", "30", cfg.Server); err != nil {
		s.Problem = "docker compose stop: " + err.Error()
		return s
	}
	s.StopS = roundS(time.Since(began))
	c.CloseIdleConnections()
	began = time.Now()
	// restart, not start: start would run the one-shot services it depends on again (tls-init, the
	// migrations and seeds), and time them; restart starts the stopped container alone.
	if err := compose(ctx, "restart", "--no-deps", cfg.Server); err != nil {
		s.Problem = "docker compose restart (of the stopped server): " + err.Error()
		return s
	}
	s.StartCmdS = roundS(time.Since(began))
	d, err := waitHealthy(ctx, c, t, began, cfg.StartTimeout)
	s.ToHealthyS = roundS(d)
	if err != nil {
		s.Problem = err.Error()
		return s
	}
	s.First = sequential(ctx, c, t, Requests)
	s.Warm = sequential(ctx, c, t, Requests)
	logf("cold start: healthy %.2f s after start; first %d listings p50 %g ms p95 %g ms (warm p50 %g p95 %g)", s.ToHealthyS, Requests, s.First.P50, s.First.P95, s.Warm.P50, s.Warm.P95)
	u, err := restartUnderLoad(ctx, c, t, compose, cfg)
	if err != nil {
		s.Problem = err.Error()
	}
	s.UnderLoad = u
	return s
}

func roundS(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

// answer is one listing of the load: when it was sent, its latency, and whether it was answered 200.
type answer struct {
	sent time.Time
	ms   float64
	ok   bool
}

// phases reads a restart's answers in the order they were sent: before the restart command; after it,
// still answered by the old process (drained); failed, from the first failure to the first answer;
// and answered after the outage (those that fail then count apart).
func phases(answers []answer, restartAt time.Time, rate float64) UnderLoad {
	sort.Slice(answers, func(i, j int) bool { return answers[i].sent.Before(answers[j].sent) })
	u := UnderLoad{RatePerS: rate}
	var before, after []float64
	beforeFailed := 0
	outage, back := false, false
	for _, a := range answers {
		switch {
		case a.sent.Before(restartAt):
			if a.ok {
				before = append(before, a.ms)
			} else {
				beforeFailed++
			}
		case !outage && a.ok:
			u.Drained++
		case !back && !a.ok:
			outage = true
			u.Failed++
		case !a.ok:
			u.FailedAfter++
		default:
			if !back {
				back = true
				u.ToFirstOKS = roundS(a.sent.Add(time.Duration(a.ms * float64(time.Millisecond))).Sub(restartAt))
			}
			if len(after) < Requests {
				after = append(after, a.ms)
			}
		}
	}
	u.Before, u.After = figures(before, beforeFailed), figures(after, 0)
	return u
}

// restartUnderLoad sends listings at cfg.LoadRate (each in its own goroutine: a slow answer does not
// delay the next arrival), restarts certctl after cfg.Before, and stops once Requests listings have
// been answered after the outage.
func restartUnderLoad(ctx context.Context, c *http.Client, t Target, compose Compose, cfg Config) (*UnderLoad, error) {
	var mu sync.Mutex
	var answers []answer
	// The listings run to their answer (the client's timeout) when the measurement ends.
	reqCtx := ctx
	limit := cfg.StartTimeout + 2*time.Minute
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var wg sync.WaitGroup
	var restartAt time.Time
	restarted := make(chan error, 1)
	var restartTook atomic.Int64
	tick := time.NewTicker(time.Duration(float64(time.Second) / cfg.LoadRate))
	defer tick.Stop()
	start := time.Now()
	before := cfg.Before
	if before == 0 {
		before = 10 * time.Second
	}
	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			err = fmt.Errorf("the restart under load did not see %d listings answered within %s", Requests, limit)
			break loop
		case e := <-restarted:
			if e != nil {
				err = e
				break loop
			}
		case now := <-tick.C:
			if restartAt.IsZero() && now.Sub(start) >= before {
				restartAt = now
				go func() {
					err := compose(ctx, "restart", "--no-deps", "--timeout", "30", cfg.Server)
					restartTook.Store(int64(time.Since(restartAt)))
					restarted <- err
				}()
			}
			if !restartAt.IsZero() {
				mu.Lock()
				u := phases(answers, restartAt, cfg.LoadRate)
				mu.Unlock()
				if u.After.N >= Requests {
					break loop
				}
			}
			wg.Add(1)
			go func(sent time.Time) {
				defer wg.Done()
				ms, ok := get(reqCtx, c, t, ListPath)
				mu.Lock()
				answers = append(answers, answer{sent, ms, ok})
				mu.Unlock()
			}(now)
		}
	}
	wg.Wait()
	cancel()
	u := phases(answers, restartAt, cfg.LoadRate)
	u.RestartCmdS = roundS(time.Duration(restartTook.Load()))
	return &u, err
}

const Schema = "certctl-loadtest/coldstart@1"

// Result is coldstart.json.
type Result struct {
	Schema string `json:"schema"`
	Build  string `json:"build,omitempty"`
	Sizes  []Size `json:"sizes"`
}

// Text is coldstart.txt.
func Text(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cold start%s: certctl stopped and started at each inventory size, then restarted under %s listings/s\n\n", buildText(r.Build), rateText(r))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "certificates\tto healthy s (compose)\tfirst %d listings: first / p50 / p95 / max ms\twarm p50 / p95 ms\tunder load: to answer s (compose)\tdrained / failed\tafter: p50 / p95 / max ms\n", Requests)
	for _, s := range r.Sizes {
		line := fmt.Sprintf("%s\t%g (%g)\t%g / %g / %g / %g\t%g / %g", growth.SizeText(s.Size), s.ToHealthyS, s.StartCmdS, s.First.FirstMS, s.First.P50, s.First.P95, s.First.Max, s.Warm.P50, s.Warm.P95)
		if u := s.UnderLoad; u != nil {
			line += fmt.Sprintf("\t%g (%g)\t%d / %d\t%g / %g / %g", u.ToFirstOKS, u.RestartCmdS, u.Drained, u.Failed, u.After.P50, u.After.P95, u.After.Max)
		} else {
			line += "\t—\t—\t—"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	for _, s := range r.Sizes {
		if s.Problem != "" {
			fmt.Fprintf(&b, "%s: %s\n", growth.SizeText(s.Size), s.Problem)
		}
	}
	return b.String()
}

func buildText(b string) string {
	if b == "" {
		return ""
	}
	return " of " + b
}

func rateText(r Result) string {
	for _, s := range r.Sizes {
		if s.UnderLoad != nil {
			return fmt.Sprintf("%g", s.UnderLoad.RatePerS)
		}
	}
	return "steady"
}

// Write saves coldstart.json and coldstart.txt in dir.
func Write(dir string, r Result) error {
	return output.Files(dir, output.File{Name: "coldstart.json", JSON: r}, output.File{Name: "coldstart.txt", Text: Text(r)})
}
