package faultproxy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadConfigDefaults(t *testing.T) {
	// Blank values count as unset, as compose's ${VAR:-} produces them.
	for _, env := range []map[string]string{{}, {"FAULT_LATENCY": " ", "FAULT_ERROR_RATE": "", "FAULT_ROUTE": "  "}} {
		cfg, err := LoadConfig(getenvFrom(env))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Listen != ":8443" || cfg.Upstream.String() != "https://certctl-server:8443" ||
			cfg.CAFile != "/tls/ca.crt" || cfg.CertFile != "/tls/server.crt" || cfg.KeyFile != "/tls/server.key" ||
			cfg.Latency != 0 || cfg.ErrorRate != 0 || cfg.Routes != nil {
			t.Errorf("defaults = %+v", cfg)
		}
		if cfg.FaultsActive() || cfg.Faults() != "none" {
			t.Errorf("faults = %v %q, want none", cfg.FaultsActive(), cfg.Faults())
		}
	}
}

func TestLoadConfigValues(t *testing.T) {
	cfg, err := LoadConfig(getenvFrom(map[string]string{
		"FAULT_LISTEN":     "0.0.0.0:9443",
		"FAULT_UPSTREAM":   "https://certctl:8443",
		"FAULT_CA":         "/ca.pem",
		"FAULT_TLS_CERT":   "/c.pem",
		"FAULT_TLS_KEY":    "/k.pem",
		"FAULT_LATENCY":    "150ms",
		"FAULT_ERROR_RATE": "0.25",
		"FAULT_ROUTE":      "GET /api/v1/certificates$, POST,POST /acme/",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /api/v1/certificates$", "POST", "POST /acme/"}
	if cfg.Listen != "0.0.0.0:9443" || cfg.Upstream.Host != "certctl:8443" || cfg.CAFile != "/ca.pem" ||
		cfg.CertFile != "/c.pem" || cfg.KeyFile != "/k.pem" || cfg.Latency != 150*time.Millisecond ||
		cfg.ErrorRate != 0.25 || !reflect.DeepEqual(cfg.Routes, want) {
		t.Errorf("cfg = %+v", cfg)
	}
	if got := cfg.Faults(); got != `latency=150ms error_rate=0.25 body_rate=0 on "GET /api/v1/certificates$,POST,POST /acme/"` {
		t.Errorf("Faults() = %s", got)
	}
	cfg.Routes = nil
	if got := cfg.Faults(); !strings.Contains(got, "all routes except /health and /ready") {
		t.Errorf("Faults() = %s", got)
	}
}

func TestLoadConfigRejects(t *testing.T) {
	for _, tc := range []struct{ name, value, accepted string }{
		{"FAULT_LISTEN", "8443", "[host]:port"},
		{"FAULT_LISTEN", ":https", "numeric port"},
		{"FAULT_LISTEN", ":70000", "numeric port"},
		{"FAULT_LISTEN", ":0", "numeric port"},
		{"FAULT_UPSTREAM", "ftp://certctl-server:8443", "https URL"},
		{"FAULT_UPSTREAM", "https://", "with a host"},
		{"FAULT_UPSTREAM", "certctl-server:8443", "https URL"},
		{"FAULT_UPSTREAM", "https://certctl server", "https URL"},
		{"FAULT_LATENCY", "-1s", "non-negative Go duration"},
		{"FAULT_LATENCY", "150", "non-negative Go duration"},
		{"FAULT_LATENCY", "slow", "non-negative Go duration"},
		{"FAULT_ERROR_RATE", "1.5", "between 0 and 1"},
		{"FAULT_ERROR_RATE", "-0.1", "between 0 and 1"},
		{"FAULT_ERROR_RATE", "NaN", "between 0 and 1"},
		{"FAULT_ERROR_RATE", "20%", "between 0 and 1"},
		{"FAULT_ERROR_RATE", "Inf", "between 0 and 1"},
		{"FAULT_BODY_RATE", "2", "between 0 and 1"},
		{"FAULT_BODY_RATE", "half", "between 0 and 1"},
		{"FAULT_ROUTE", "/api/v1/certificates", "METHOD /path-prefix"},
		{"FAULT_ROUTE", "get /api/v1/certificates", "METHOD /path-prefix"},
		{"FAULT_ROUTE", "GET /api/v1/$certificates", "METHOD /exact/path$"},
		{"FAULT_ROUTE", "GET api/v1", "METHOD /path-prefix"},
		{"FAULT_ROUTE", "GET$", "METHOD /path-prefix"},
		{"FAULT_ROUTE", "POST /a,", "comma-separated"},
		{"FAULT_ROUTE", "POST /a,bogus route", "comma-separated"},
		{"FAULT_BEARER", "lt-key", "/path-prefix token"},
		{"FAULT_BEARER", "/auth/", "/path-prefix token"},
		{"FAULT_BEARER", "auth lt-key", "/path-prefix token"},
	} {
		_, err := LoadConfig(getenvFrom(map[string]string{tc.name: tc.value}))
		if err == nil {
			t.Errorf("%s=%q accepted", tc.name, tc.value)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, tc.name+": ") || !strings.Contains(msg, tc.accepted) || strings.Contains(msg, "\n") {
			t.Errorf("%s=%q: error %q should name the variable and say %q on one line", tc.name, tc.value, msg, tc.accepted)
		}
		if !errors.As(err, new(configError)) {
			t.Errorf("%s=%q: %v is not a configError (exit status 2)", tc.name, tc.value, err)
		}
	}
}

func TestFaulted(t *testing.T) {
	for _, tc := range []struct {
		routes       string
		method, path string
		want         bool
	}{
		{"", "GET", "/api/v1/certificates", true},
		{"", "POST", "/acme/new-order", true},
		{"", "GET", "/health", false},
		{"", "HEAD", "/ready", false},
		{"GET", "GET", "/health", false},
		{"GET /", "GET", "/ready", false},
		{"GET /api/v1/certificates", "GET", "/api/v1/certificates", true},
		{"GET /api/v1/certificates", "GET", "/api/v1/certificates/abc/versions", true},
		{"GET /api/v1/certificates", "POST", "/api/v1/certificates", false},
		{"GET /api/v1/certificates", "GET", "/api/v1/agents", false},
		{"GET /api/v1/certificates$", "GET", "/api/v1/certificates", true},
		{"GET /api/v1/certificates$", "GET", "/api/v1/certificates/abc", false},
		{"GET /api/v1/certificates$", "GET", "/api/v1/certificates/", false},
		{"POST", "POST", "/api/v1/certificates", true},
		{"POST", "POST", "/acme/profile/p/new-order", true},
		{"POST", "GET", "/api/v1/certificates", false},
		{"POST", "POSTX", "/x", false},
		{"POST /api/v1/certificates, GET /api/v1/certificates$", "GET", "/api/v1/certificates", true},
		{"POST /api/v1/certificates, GET /api/v1/certificates$", "POST", "/api/v1/certificates/bulk-revoke", true},
		{"POST /api/v1/certificates, GET /api/v1/certificates$", "GET", "/api/v1/certificates/x", false},
		{"HEAD /acme/new-nonce,POST /acme/", "HEAD", "/acme/new-nonce", true},
		{"HEAD /acme/new-nonce,POST /acme/", "GET", "/acme/new-nonce", false},
	} {
		cfg, err := LoadConfig(getenvFrom(map[string]string{"FAULT_ROUTE": tc.routes, "FAULT_LATENCY": "1s"}))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Faulted(tc.method, tc.path); got != tc.want {
			t.Errorf("FAULT_ROUTE=%q: Faulted(%s %s) = %v, want %v", tc.routes, tc.method, tc.path, got, tc.want)
		}
	}
}
