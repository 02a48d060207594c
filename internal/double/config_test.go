package double

import (
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// baseEnv is the smallest environment the server mode accepts.
func baseEnv() map[string]string {
	return map[string]string{
		"CERTCTL_SERVER_TLS_CERT_PATH": "/tls/server.crt",
		"CERTCTL_SERVER_TLS_KEY_PATH":  "/tls/server.key",
		"CERTCTL_AUTH_SECRET":          "ignored-when-named",
		"CERTCTL_API_KEYS_NAMED":       "loadtest:tok-admin:admin,viewer:tok-view",
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	cfg, err := LoadConfig(envOf(baseEnv()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "127.0.0.1" || cfg.Port != 8080 {
		t.Errorf("listen = %s:%d, want certctl's 127.0.0.1:8080", cfg.Host, cfg.Port)
	}
	if !cfg.RateLimitEnabled || cfg.RateLimitRPS != 50 || cfg.RateLimitBurst != 100 {
		t.Errorf("rate limit = %v %v %v, want certctl's default on, 50 rps, burst 100", cfg.RateLimitEnabled, cfg.RateLimitRPS, cfg.RateLimitBurst)
	}
	if cfg.AuthType != "api-key" || cfg.KeygenMode != "agent" || cfg.MigrateOnly {
		t.Errorf("auth=%q keygen=%q migrate=%v", cfg.AuthType, cfg.KeygenMode, cfg.MigrateOnly)
	}
	want := []APIKey{{"loadtest", "tok-admin", true}, {"viewer", "tok-view", false}}
	if len(cfg.Keys) != 2 || cfg.Keys[0] != want[0] || cfg.Keys[1] != want[1] {
		t.Errorf("keys = %+v, want %+v (the secret is ignored when named keys are set)", cfg.Keys, want)
	}
	if cfg.Faults != (Faults{}) {
		t.Errorf("faults = %+v, want none", cfg.Faults)
	}
	if s := cfg.String(); strings.Contains(s, "tok-admin") {
		t.Errorf("startup summary leaks a key: %s", s)
	}
}

func TestLoadConfigLegacySecretKeysAreReadOnly(t *testing.T) {
	env := baseEnv()
	delete(env, "CERTCTL_API_KEYS_NAMED")
	env["CERTCTL_AUTH_SECRET"] = "a, b"
	cfg, err := LoadConfig(envOf(env), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Keys) != 2 || cfg.Keys[0] != (APIKey{"legacy-key-0", "a", false}) || cfg.Keys[1] != (APIKey{"legacy-key-1", "b", false}) {
		t.Errorf("keys = %+v", cfg.Keys)
	}
}

func TestLoadConfigCertctlBooleans(t *testing.T) {
	for v, want := range map[string]bool{"": true, "true": true, "1": true, "yes": true, "false": false, "TRUE": false, "on": false} {
		env := baseEnv()
		env["CERTCTL_RATE_LIMIT_ENABLED"] = v
		cfg, err := LoadConfig(envOf(env), nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.RateLimitEnabled != want {
			t.Errorf("CERTCTL_RATE_LIMIT_ENABLED=%q → %v, want %v (certctl's getEnvBool)", v, cfg.RateLimitEnabled, want)
		}
	}
}

func TestLoadConfigKnobs(t *testing.T) {
	env := baseEnv()
	env["DOUBLE_LATENCY"] = "250ms"
	env["DOUBLE_ERROR_RATE"] = "0.25"
	env["DOUBLE_FAULT_ROUTE"] = "GET /api/v1/certificates"
	env["DOUBLE_EXIT_AFTER"] = "90s"
	env["DOUBLE_UNHEALTHY"] = "true"
	env["CERTCTL_SOMETHING_ELSE"] = "accepted and ignored"
	cfg, err := LoadConfig(envOf(env), []string{"--migrate-only"})
	if err != nil {
		t.Fatal(err)
	}
	want := Faults{Latency: 250 * time.Millisecond, ErrorRate: 0.25, Route: "GET /api/v1/certificates", ExitAfter: 90 * time.Second, Unhealthy: true}
	if cfg.Faults != want {
		t.Errorf("faults = %+v, want %+v", cfg.Faults, want)
	}
	if !cfg.MigrateOnly {
		t.Error("--migrate-only not seen")
	}
}

func TestLoadConfigRefusals(t *testing.T) {
	cases := []struct {
		name, key, value string
	}{
		{"latency not a duration", "DOUBLE_LATENCY", "250"},
		{"latency negative", "DOUBLE_LATENCY", "-1s"},
		{"error rate above 1", "DOUBLE_ERROR_RATE", "1.5"},
		{"error rate not a number", "DOUBLE_ERROR_RATE", "ten percent"},
		{"route without method", "DOUBLE_FAULT_ROUTE", "/api/v1/certificates"},
		{"route lower-case method", "DOUBLE_FAULT_ROUTE", "get /api/v1/certificates"},
		{"route with $ inside", "DOUBLE_FAULT_ROUTE", "GET /api/v1/$certificates"},
		{"exit after garbage", "DOUBLE_EXIT_AFTER", "soon"},
		{"unhealthy garbage", "DOUBLE_UNHEALTHY", "maybe"},
		{"port", "CERTCTL_SERVER_PORT", "http"},
		{"port range", "CERTCTL_SERVER_PORT", "70000"},
		{"empty secret", "CERTCTL_AUTH_SECRET", ""},
		{"no tls cert", "CERTCTL_SERVER_TLS_CERT_PATH", ""},
		{"no tls key", "CERTCTL_SERVER_TLS_KEY_PATH", ""},
		{"auth type", "CERTCTL_AUTH_TYPE", "jwt"},
		{"named key flag", "CERTCTL_API_KEYS_NAMED", "a:b:root"},
		{"named key shape", "CERTCTL_API_KEYS_NAMED", "justakey"},
		{"named key admin mismatch", "CERTCTL_API_KEYS_NAMED", "a:k1:admin,a:k2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := baseEnv()
			env[tc.key] = tc.value
			_, err := LoadConfig(envOf(env), nil)
			if err == nil {
				t.Fatalf("%s=%q accepted", tc.key, tc.value)
			}
			if !strings.HasPrefix(err.Error(), tc.key+":") {
				t.Errorf("error %q does not start with the variable name %s", err, tc.key)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestLoadConfigMigrateOnlyNeedsNoTLS(t *testing.T) {
	env := baseEnv()
	delete(env, "CERTCTL_SERVER_TLS_CERT_PATH")
	delete(env, "CERTCTL_SERVER_TLS_KEY_PATH")
	if _, err := LoadConfig(envOf(env), []string{"--migrate-only"}); err != nil {
		t.Fatal(err)
	}
}

func TestExpandDatabaseURL(t *testing.T) {
	env := baseEnv()
	env["CERTCTL_DATABASE_URL"] = "postgres://certctl:$(POSTGRES_PASSWORD)@db/certctl"
	env["POSTGRES_PASSWORD"] = "s3cret"
	cfg, err := LoadConfig(envOf(env), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL != "postgres://certctl:s3cret@db/certctl" {
		t.Errorf("url = %q", cfg.DatabaseURL)
	}
}
