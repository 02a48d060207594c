// Package faultproxy is a TLS-terminating reverse proxy that sits in front
// of the real certctl server and injects faults (latency, HTTP 500s) into
// chosen routes, so load scripts can exercise their failure handling
// against the real server instead of a hand-written double.
package faultproxy

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Config is everything the proxy reads from its environment.
type Config struct {
	Listen   string
	Upstream *url.URL
	// Plain is an http:// upstream: the proxy then listens in plain HTTP too, with no certificate, as the
	// slow challenge responder in front of the HTTP-01 server needs (certctl's validator fetches port 80).
	Plain     bool
	CAFile    string
	CertFile  string
	KeyFile   string
	Latency   time.Duration
	ErrorRate float64
	// BodyRate is the share of faulted requests whose 2xx answer reaches the client with its body
	// replaced by an empty JSON object: status and headers as certctl sent them, so only a check of
	// the body can notice.
	BodyRate float64
	// Routes is FAULT_ROUTE split on commas; empty means every route.
	Routes []string
	// Bearer, with BearerPath, is FAULT_BEARER: "<path prefix> <token>". A request under the prefix
	// that carries no Authorization gets this API key. The auth tier's back-channel logout goes through it
	// (docs/certctl-findings.md#auth-routes-behind-auth): Keycloak posts no credential, and certctl's
	// API-only server refuses /auth/* without one.
	BearerPath, Bearer string
}

// configError marks failures the operator fixes in the environment (exit
// status 2) as opposed to runtime failures (exit status 1).
type configError struct{ error }

func badConfig(format string, args ...any) error {
	return configError{fmt.Errorf(format, args...)}
}

// routeRE is the grammar the harness's tests already use for the double's
// DOUBLE_FAULT_ROUTE; the same strings must work for both.
var routeRE = regexp.MustCompile(`^[A-Z]+( /[^$]*\$?)?$`)

// LoadConfig reads FAULT_* from getenv. It is strict: a typo in a fault
// knob must fail the run, never run it silently without the fault.
func LoadConfig(getenv func(string) string) (Config, error) {
	env := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	cfg := Config{
		Listen:   env("FAULT_LISTEN", ":8443"),
		CAFile:   env("FAULT_CA", "/tls/ca.crt"),
		CertFile: env("FAULT_TLS_CERT", "/tls/server.crt"),
		KeyFile:  env("FAULT_TLS_KEY", "/tls/server.key"),
	}
	// The healthcheck dials localhost on this port, so it must be numeric.
	_, port, err := net.SplitHostPort(cfg.Listen)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 1 || n > 65535 {
		return cfg, badConfig("FAULT_LISTEN: %q is not [host]:port with a numeric port (e.g. :8443)", cfg.Listen)
	}

	up := env("FAULT_UPSTREAM", "https://certctl-server:8443")
	cfg.Upstream, err = url.Parse(up)
	if err != nil || (cfg.Upstream.Scheme != "https" && cfg.Upstream.Scheme != "http") || cfg.Upstream.Host == "" {
		return cfg, badConfig("FAULT_UPSTREAM: %q is not an https URL with a host (e.g. https://certctl-server:8443), or an http one for a plain proxy (e.g. http://challenge-responder:80)", up)
	}
	cfg.Plain = cfg.Upstream.Scheme == "http"

	lat := env("FAULT_LATENCY", "0s")
	if cfg.Latency, err = time.ParseDuration(lat); err != nil || cfg.Latency < 0 {
		return cfg, badConfig("FAULT_LATENCY: %q is not a non-negative Go duration (e.g. 150ms, 2s)", lat)
	}
	rate := env("FAULT_ERROR_RATE", "0")
	cfg.ErrorRate, err = strconv.ParseFloat(rate, 64)
	// The explicit NaN check matters: NaN fails both range comparisons.
	if err != nil || math.IsNaN(cfg.ErrorRate) || cfg.ErrorRate < 0 || cfg.ErrorRate > 1 {
		return cfg, badConfig("FAULT_ERROR_RATE: %q is not a number between 0 and 1 (e.g. 0.2)", rate)
	}
	body := env("FAULT_BODY_RATE", "0")
	cfg.BodyRate, err = strconv.ParseFloat(body, 64)
	if err != nil || math.IsNaN(cfg.BodyRate) || cfg.BodyRate < 0 || cfg.BodyRate > 1 {
		return cfg, badConfig("FAULT_BODY_RATE: %q is not a number between 0 and 1 (e.g. 0.5)", body)
	}
	if v := strings.TrimSpace(getenv("FAULT_BEARER")); v != "" {
		path, token, ok := strings.Cut(v, " ")
		token = strings.TrimSpace(token)
		if !ok || !strings.HasPrefix(path, "/") || token == "" || strings.ContainsAny(token, " \r\n") {
			return cfg, badConfig("FAULT_BEARER: want \"/path-prefix token\" (e.g. \"/auth/ lt-…\"), got a value of %d characters", len(v))
		}
		cfg.BearerPath, cfg.Bearer = path, token
	}
	if v := getenv("FAULT_ROUTE"); strings.TrimSpace(v) != "" {
		for _, route := range strings.Split(v, ",") {
			route = strings.TrimSpace(route)
			if !routeRE.MatchString(route) {
				return cfg, badConfig("FAULT_ROUTE: %q is not \"METHOD\", \"METHOD /path-prefix\" or \"METHOD /exact/path$\", comma-separated (e.g. \"GET /api/v1/certificates$,POST /api/v1/certificates\")", route)
			}
			cfg.Routes = append(cfg.Routes, route)
		}
	}
	return cfg, nil
}

// Faulted reports whether a request with this method and path (query
// excluded) gets the configured faults.
func (c Config) Faulted(method, path string) bool {
	// Healthchecks and readiness must reflect the real server.
	if path == "/health" || path == "/ready" {
		return false
	}
	if len(c.Routes) == 0 {
		return true
	}
	req := method + " " + path
	for _, route := range c.Routes {
		if exact, ok := strings.CutSuffix(route, "$"); ok {
			if req == exact {
				return true
			}
		} else if !strings.Contains(route, " ") {
			if method == route {
				return true
			}
		} else if strings.HasPrefix(req, route) {
			return true
		}
	}
	return false
}

// FaultsActive reports whether any request can be faulted at all.
func (c Config) FaultsActive() bool { return c.Latency > 0 || c.ErrorRate > 0 || c.BodyRate > 0 }

// Faults describes the effective faults for the start-up log line.
func (c Config) Faults() string {
	if !c.FaultsActive() {
		return "none"
	}
	where := "all routes except /health and /ready"
	if len(c.Routes) > 0 {
		where = fmt.Sprintf("%q", strings.Join(c.Routes, ","))
	}
	return fmt.Sprintf("latency=%s error_rate=%g body_rate=%g on %s", c.Latency, c.ErrorRate, c.BodyRate, where)
}
