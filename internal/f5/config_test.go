package f5

import (
	"reflect"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfigDefaults(t *testing.T) {
	cfg, err := LoadConfig(envOf(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Listen: ":443", CertFile: "/tls/starter.crt", KeyFile: "/tls/starter.key", Username: "admin", Password: "admin",
		Profiles: []string{"/Common/clientssl"}, MaxTokens: 100}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got %+v\nwant %+v", cfg, want)
	}
	if got := cfg.HealthURL(); got != "https://127.0.0.1:443/healthz" {
		t.Errorf("HealthURL = %s", got)
	}
	if strings.Contains(cfg.String(), "admin admin") || strings.Contains(cfg.String(), "password") {
		t.Errorf("String leaks the password: %s", cfg)
	}
}

func TestLoadConfigOverrides(t *testing.T) {
	cfg, err := LoadConfig(envOf(map[string]string{
		"F5_LISTEN": "0.0.0.0:8443", "F5_TLS_CERT": "/c", "F5_TLS_KEY": "/k", "F5_USERNAME": "ops", "F5_PASSWORD": " pw ",
		"F5_SSL_PROFILES": "lt-f5, /Tenant_1/app.example.com,lt-f5", "F5_MAX_TOKENS": "0",
	}), []string{"--healthcheck"})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Listen: "0.0.0.0:8443", CertFile: "/c", KeyFile: "/k", Username: "ops", Password: " pw ",
		Profiles: []string{"/Common/lt-f5", "/Tenant_1/app.example.com"}, MaxTokens: 0, Healthcheck: true}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got %+v\nwant %+v", cfg, want)
	}
	if got := cfg.HealthURL(); got != "https://127.0.0.1:8443/healthz" {
		t.Errorf("HealthURL = %s", got)
	}
	cfg.Listen = "[::1]:443"
	if got := cfg.HealthURL(); got != "https://[::1]:443/healthz" {
		t.Errorf("HealthURL = %s", got)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	for name, c := range map[string]struct {
		env  map[string]string
		args []string
		want string
	}{
		"listen without port": {env: map[string]string{"F5_LISTEN": "443"}, want: "F5_LISTEN"},
		"listen bad port":     {env: map[string]string{"F5_LISTEN": ":https"}, want: "F5_LISTEN"},
		"profile chars":       {env: map[string]string{"F5_SSL_PROFILES": "bad name"}, want: "F5_SSL_PROFILES"},
		"profile path":        {env: map[string]string{"F5_SSL_PROFILES": "/Common"}, want: "F5_SSL_PROFILES"},
		"max tokens":          {env: map[string]string{"F5_MAX_TOKENS": "-1"}, want: "F5_MAX_TOKENS"},
		"unknown flag":        {args: []string{"--verbose"}, want: "--healthcheck"},
		"stray argument":      {args: []string{"serve"}, want: "unexpected"},
	} {
		_, err := LoadConfig(envOf(c.env), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line mentioning %q", name, err, c.want)
		}
	}
}
