package faultproxy

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// StatsPath is answered by the proxy itself so a test can assert that the
// faults it asked for were really applied.
const StatsPath = "/fault-proxy/stats"

// UntimedHeader marks a request no budget judges: a scenario's setup, a spot check's cleanup or
// follow-up. It passes unfaulted, so a fault slows or breaks what is measured and nothing else (a
// bulk revocation's untimed clean-up would otherwise wait FAULT_LATENCY too). The proxy removes it.
const UntimedHeader = "X-Loadtest-Untimed"

// Options are the proxy's injectable dependencies; zero values mean the
// real thing.
type Options struct {
	// Listener replaces listening on Config.Listen (Run only).
	Listener net.Listener
	Logger   *log.Logger
	// Random returns values in [0,1); it must be safe for concurrent use.
	Random func() float64
	// Wait blocks for d and reports false if ctx ended first.
	Wait func(ctx context.Context, d time.Duration) bool
}

// Stats are the counters since start, as served on StatsPath.
type Stats struct {
	Forwarded      int64 `json:"forwarded"`
	Delayed        int64 `json:"delayed"`
	ErrorsInjected int64 `json:"errors_injected"`
	BodiesReplaced int64 `json:"bodies_replaced"`
	UpstreamErrors int64 `json:"upstream_errors"`
}

// Proxy is the fault-injecting http.Handler.
type Proxy struct {
	cfg    Config
	opts   Options
	rp     *httputil.ReverseProxy
	fwd    atomic.Int64
	delay  atomic.Int64
	inject atomic.Int64
	bodies atomic.Int64
	upErr  atomic.Int64
}

// replaceBody marks a request whose 2xx answer gets an empty body (FAULT_BODY_RATE).
type replaceBody struct{}

// New builds the handler and its upstream transport, verifying the
// upstream against Config.CAFile.
func New(cfg Config, opts Options) (*Proxy, error) {
	var pool *x509.CertPool
	if !cfg.Plain {
		var err error
		if pool, err = loadCA(cfg.CAFile); err != nil {
			return nil, err
		}
	}
	if opts.Logger == nil {
		opts.Logger = log.New(io.Discard, "", 0)
	}
	if opts.Random == nil {
		opts.Random = mrand.Float64
	}
	if opts.Wait == nil {
		opts.Wait = sleep
	}
	p := &Proxy{cfg: cfg, opts: opts}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(cfg.Upstream)
			// certctl's ACME server builds its URLs from Host and checks
			// the JWS "url" against it, so it must see the host the client
			// used. TLS verification still uses the upstream's name.
			pr.Out.Host = pr.In.Host
			// No SetXForwarded: certctl's rate limiter keys on client IP.
		},
		ModifyResponse: p.maybeReplaceBody,
		Transport:      upstreamTransport(pool),
		ErrorHandler:   p.upstreamError,
		ErrorLog:       opts.Logger,
	}
	return p, nil
}

func loadCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, badConfig("FAULT_CA: cannot read the CA bundle: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, badConfig("FAULT_CA: %s holds no PEM certificate", path)
	}
	return pool, nil
}

func upstreamTransport(pool *x509.CertPool) *http.Transport {
	return &http.Transport{
		// Explicitly no proxy: the stack has no route out, and a stray
		// HTTPS_PROXY must not divert the traffic under test.
		Proxy:       nil,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig: &tls.Config{
			RootCAs:    pool,
			MinVersion: tls.VersionTLS12,
		},
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
		// Otherwise the transport asks for gzip on the client's behalf and
		// unzips it, changing Content-Length and Content-Encoding.
		DisableCompression:    true,
		ExpectContinueTimeout: time.Second,
		// No ResponseHeaderTimeout: k6 owns request timeouts.
	}
}

// Stats returns a snapshot of the counters.
func (p *Proxy) Stats() Stats {
	return Stats{p.fwd.Load(), p.delay.Load(), p.inject.Load(), p.bodies.Load(), p.upErr.Load()}
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == StatsPath {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "Method Not Allowed", "message": "fault-proxy: " + StatsPath + " answers GET and HEAD only"})
			return
		}
		writeJSON(w, http.StatusOK, p.Stats())
		return
	}
	untimed := r.Header.Get(UntimedHeader) != ""
	r.Header.Del(UntimedHeader)
	if p.cfg.Bearer != "" && strings.HasPrefix(r.URL.Path, p.cfg.BearerPath) && r.Header.Get("Authorization") == "" {
		r.Header.Set("Authorization", "Bearer "+p.cfg.Bearer)
	}
	if !untimed && p.cfg.FaultsActive() && p.cfg.Faulted(r.Method, r.URL.Path) {
		if p.cfg.Latency > 0 {
			if !p.opts.Wait(r.Context(), p.cfg.Latency) {
				return // the client is gone; forwarding would only load certctl
			}
			p.delay.Add(1)
		}
		if p.cfg.ErrorRate > 0 && p.opts.Random() < p.cfg.ErrorRate {
			p.inject.Add(1)
			injectError(w)
			return
		}
		if p.cfg.BodyRate > 0 && p.opts.Random() < p.cfg.BodyRate {
			r = r.WithContext(context.WithValue(r.Context(), replaceBody{}, true))
		}
	}
	p.fwd.Add(1)
	p.rp.ServeHTTP(w, r)
}

// maybeReplaceBody empties the body of a marked request's successful answer. Content-Length is
// corrected; everything else is certctl's.
func (p *Proxy) maybeReplaceBody(res *http.Response) error {
	if res.Request == nil || res.Request.Context().Value(replaceBody{}) == nil || res.StatusCode < 200 || res.StatusCode > 299 {
		return nil
	}
	_ = res.Body.Close()
	const empty = "{}\n"
	res.Body = io.NopCloser(strings.NewReader(empty))
	res.ContentLength = int64(len(empty))
	res.Header.Set("Content-Length", strconv.Itoa(len(empty)))
	res.Header.Del("Content-Encoding")
	p.bodies.Add(1)
	return nil
}

// injectError answers like certctl's handlers fail (handler.ErrorResponse
// through handler.JSON), with the X-Request-ID its middleware would set, so
// clients cannot tell an injected 500 from a real one.
func injectError(w http.ResponseWriter) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	w.Header().Set("X-Request-ID", id)
	writeJSON(w, http.StatusInternalServerError, struct {
		Error     string `json:"error"`
		Message   string `json:"message"`
		RequestID string `json:"request_id"`
	}{"Internal Server Error", "Injected fault (FAULT_ERROR_RATE)", id})
}

func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client gave up (k6 timeout); not the upstream's fault
	}
	// Powers of two only: a dead upstream shows in the log without
	// flooding it at hundreds of requests per second.
	if n := p.upErr.Add(1); n&(n-1) == 0 {
		p.opts.Logger.Printf("upstream error #%d (%s %s): %v", n, r.Method, r.URL.Path, err)
	}
	writeJSON(w, http.StatusBadGateway, map[string]string{
		"error":   "Bad Gateway",
		"message": "fault-proxy: upstream " + p.cfg.Upstream.String() + ": " + err.Error(),
	})
}

// writeJSON mirrors certctl's handler.JSON: plain application/json and the
// encoder's trailing newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
