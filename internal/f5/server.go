package f5

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// PageMarker is the text the handshake scenario looks for in GET /.
const PageMarker = "certctl-loadtest f5"

// NewHandler is the whole stand-in: the page on "/", /healthz, and the
// iControl REST API under /mgmt/. Everything else is a 404 in BIG-IP's
// error shape.
func NewHandler(api *API, hostname string) http.Handler {
	page := []byte("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + PageMarker + "</title></head>\n" +
		"<body><h1>" + PageMarker + "</h1><p>host: " + html.EscapeString(hostname) + "</p></body></html>\n")
	pageLen := strconv.Itoa(len(page))
	var mgmt http.Handler = api
	if api.calls != nil {
		mgmt = api.calls.wrap(api)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/":
			// The handshake scenario measures TLS plus this exchange, so the
			// answer is prebuilt and does not touch the API's lock.
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				w.Header().Set("Allow", "GET, HEAD")
				api.fail(w, r, methodNotAllowed(r))
				return
			}
			h := w.Header()
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Content-Length", pageLen)
			h.Set("Cache-Control", "no-store")
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusOK)
				return
			}
			_, _ = w.Write(page)
		case p == "/healthz":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Content-Length", "2")
			_, _ = io.WriteString(w, "ok")
		case p == "/mgmt" || strings.HasPrefix(p, "/mgmt/"):
			mgmt.ServeHTTP(w, r)
		default:
			api.fail(w, r, notRegistered(p))
		}
	})
}

// TLSConfig is the management interface's TLS: 1.2 and up (BIG-IP's
// default management profile still allows 1.2) and HTTP/1.1 only, as the
// BIG-IP management httpd does not speak h2.
func TLSConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"http/1.1"},
	}
}

// NewHTTPServer wires handler and TLS. errLog gets net/http's own error
// lines minus TLS handshake failures: a load test produces those by the
// thousand (clients that close early) and they would be per-request logs.
func NewHTTPServer(handler http.Handler, cert tls.Certificate, errLog io.Writer) *http.Server {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	return &http.Server{
		Handler:           handler,
		Protocols:         protocols,
		TLSConfig:         TLSConfig(cert),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		// certctl builds a new HTTP client per deployment and never closes
		// it, so idle keep-alive connections must be reaped here.
		IdleTimeout: 15 * time.Second,
		ErrorLog:    log.New(handshakeFilter{errLog}, "f5-standin: http: ", 0),
	}
}

type handshakeFilter struct{ w io.Writer }

func (f handshakeFilter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "TLS handshake error") {
		return len(p), nil
	}
	return f.w.Write(p)
}

// LoadCert reads the management certificate, with an error that names the
// variables to fix.
func LoadCert(cfg Config) (tls.Certificate, error) {
	for _, f := range []struct{ env, path string }{{"F5_TLS_CERT", cfg.CertFile}, {"F5_TLS_KEY", cfg.KeyFile}} {
		if _, err := os.Stat(f.path); err != nil {
			return tls.Certificate{}, fmt.Errorf("%s=%s: %v", f.env, f.path, errors.Unwrap(err))
		}
	}
	cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("F5_TLS_CERT=%s / F5_TLS_KEY=%s: %v", cfg.CertFile, cfg.KeyFile, err)
	}
	return cert, nil
}

// Run serves until ctx ends, then shuts down gracefully.
func Run(ctx context.Context, cfg Config, stderr io.Writer) error {
	cert, err := LoadCert(cfg)
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	api, err := NewAPI(cfg, cert, nil)
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	if cfg.LogCalls {
		api.calls = &callLog{w: stderr}
	}
	hostname, _ := os.Hostname()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("refusing to start: F5_LISTEN=%s: %v", cfg.Listen, err)
	}
	hs := NewHTTPServer(NewHandler(api, hostname), cert, stderr)
	fmt.Fprintf(stderr, "f5-standin: BIG-IP %s iControl REST stand-in listening on https://%s (TLS 1.2+, HTTP/1.1) %s\n", Version, ln.Addr(), cfg)

	servers := []*http.Server{hs}
	serveErr := make(chan error, 2)
	go func() { serveErr <- hs.ServeTLS(ln, "", "") }()
	if cfg.VirtualListen != "" {
		vln, err := net.Listen("tcp", cfg.VirtualListen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("refusing to start: F5_VIRTUAL_LISTEN=%s: %v", cfg.VirtualListen, err)
		}
		vs := NewVirtualServer(api, cfg.VirtualProfile, hostname)
		vs.ErrorLog = hs.ErrorLog
		servers = append(servers, vs)
		fmt.Fprintf(stderr, "f5-standin: virtual server on https://%s serving client-ssl profile %s\n", vln.Addr(), cfg.VirtualProfile)
		go func() { serveErr <- vs.ServeTLS(vln, "", "") }()
	}
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("shutdown: %w", err)
		}
	}
	return nil
}

// Healthcheck probes a running instance's /healthz over TLS. It skips
// certificate verification because it only ever dials the stand-in's own
// listener from inside its container, where the certificate's names are
// unknown; nothing else in the stand-in does.
func Healthcheck(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback self-probe only, see above
		DisableKeepAlives: true,
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.HealthURL(), nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		return fmt.Errorf("%s answered %d %q", cfg.HealthURL(), resp.StatusCode, body)
	}
	return nil
}
