// Command tlsprobe answers what a TLS target serves (internal/tlsprobe), for the deploy tier's k6.
// PROBE_LISTEN (default :8080), PROBE_CA_FILE (default /tls/ca.crt); --healthcheck probes a running one.
package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"certctl-loadtest/internal/tlsprobe"
)

func main() {
	listen := env("PROBE_LISTEN", ":8080")
	if len(os.Args) > 1 && os.Args[1] == "--healthcheck" {
		_, port, _ := net.SplitHostPort(listen)
		resp, err := http.Get("http://127.0.0.1:" + port + "/healthz")
		if err != nil || resp.StatusCode != http.StatusOK {
			os.Exit(1)
		}
		os.Exit(0)
	}
	caFile := env("PROBE_CA_FILE", "/tls/ca.crt")
	pem, err := os.ReadFile(caFile)
	roots := x509.NewCertPool()
	if err != nil || !roots.AppendCertsFromPEM(pem) {
		fmt.Fprintf(os.Stderr, "tlsprobe: refusing to start: PROBE_CA_FILE=%s holds no certificate (%v)\n", caFile, err)
		os.Exit(1)
	}
	p := &tlsprobe.Prober{Roots: roots, Now: time.Now, Timeout: 5 * time.Second}
	srv := &http.Server{Addr: listen, Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(os.Stderr, "tlsprobe: listening on %s, roots from %s\n", listen, caFile)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "tlsprobe:", err)
		os.Exit(1)
	}
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
