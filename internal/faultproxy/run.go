package faultproxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"
)

// ShutdownTimeout bounds the graceful stop; requests still waiting out an
// injected latency are cut off after it.
const ShutdownTimeout = 5 * time.Second

// Main is the whole fault-proxy command behind cmd/fault-proxy, returning
// the exit status: 0 ok, 1 runtime or healthcheck failure, 2 bad arguments
// or configuration. It lives here, not in package main, so that the exit
// statuses are tested.
func Main(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	healthcheck, err := parseArgs(args)
	var cfg Config
	if err == nil {
		cfg, err = LoadConfig(getenv)
	}
	switch {
	case err != nil:
	case healthcheck:
		if err := Healthcheck(cfg); err != nil {
			fmt.Fprintln(stderr, "fault-proxy: unhealthy:", err)
			return 1
		}
		return 0
	default:
		err = Run(ctx, cfg, Options{Logger: log.New(stderr, "fault-proxy: ", log.LstdFlags)})
	}
	if errors.As(err, new(configError)) {
		fmt.Fprintln(stderr, "fault-proxy: refusing to start:", err)
		return 2
	} else if err != nil {
		fmt.Fprintln(stderr, "fault-proxy:", err)
		return 1
	}
	return 0
}

func parseArgs(args []string) (healthcheck bool, err error) {
	for _, a := range args {
		if a != "--healthcheck" && a != "-healthcheck" {
			return false, badConfig("unexpected argument %q: the only flag is --healthcheck, settings come from FAULT_* variables", a)
		}
		healthcheck = true
	}
	return healthcheck, nil
}

// Run serves the proxy until ctx ends, then shuts down gracefully.
func Run(ctx context.Context, cfg Config, opts Options) error {
	p, err := New(cfg, opts)
	if err != nil {
		return err
	}
	logger := p.opts.Logger
	var cert tls.Certificate
	if !cfg.Plain {
		if cert, err = tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile); err != nil {
			return badConfig("FAULT_TLS_CERT/FAULT_TLS_KEY: cannot load the serving certificate %s with key %s: %v", cfg.CertFile, cfg.KeyFile, err)
		}
	}
	ln := opts.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return fmt.Errorf("FAULT_LISTEN: %w", err)
		}
	}
	// k6 talks h2 to certctl, so the proxy must offer it too; certctl's HTTP-01 validator speaks
	// HTTP/1.1 in plain.
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(!cfg.Plain)
	srv := &http.Server{
		Handler:           p,
		Protocols:         protocols,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          logger,
	}
	serveErr := make(chan error, 1)
	if cfg.Plain {
		logger.Printf("listening on %s (plain HTTP/1.1), forwarding to %s, faults: %s", ln.Addr(), cfg.Upstream, cfg.Faults())
		go func() { serveErr <- srv.Serve(ln) }()
	} else {
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		logger.Printf("listening on %s (TLS 1.2+, h2 and http/1.1), forwarding to %s, faults: %s", ln.Addr(), cfg.Upstream, cfg.Faults())
		go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	}
	select {
	case err := <-serveErr:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Printf("graceful shutdown incomplete (%v); closing", err)
		_ = srv.Close()
	}
	<-serveErr
	s := p.Stats()
	logger.Printf("stopped: forwarded=%d delayed=%d errors_injected=%d bodies_replaced=%d upstream_errors=%d", s.Forwarded, s.Delayed, s.ErrorsInjected, s.BodiesReplaced, s.UpstreamErrors)
	return nil
}

// Healthcheck asks a running proxy for its stats, as compose does: the
// image has no curl. It verifies the proxy's certificate against
// Config.CAFile for the name localhost.
func Healthcheck(cfg Config) error {
	_, port, _ := net.SplitHostPort(cfg.Listen) // validated by LoadConfig
	tr := &http.Transport{DisableKeepAlives: true}
	url := "http://localhost:" + port + StatsPath
	if !cfg.Plain {
		pool, err := loadCA(cfg.CAFile)
		if err != nil {
			return err
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
		url = "https://localhost:" + port + StatsPath
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: tr} // compose's healthcheck timeout is 3s
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
