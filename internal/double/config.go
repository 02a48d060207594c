// Package double is a stand-in for the certctl server (certctl-io/certctl
// 151107c) used by the load-test harness's own tests. It answers the
// handful of routes the harness drives, with certctl's status codes, error
// shapes and known bugs (see /work/shared/certctl/FACTS.md), against
// certctl's real database schema, and adds fault knobs (latency, error
// rate, crash, unhealthy) that the real server does not have.
package double

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Version is what GET /api/v1/version reports, so nobody mistakes a run
// against the double for one against certctl.
const Version = "certctl-double/0.1"

// DefaultPoolSize is the pgx pool size; certctl's own default (50) is sized
// for a real server's background loops the double does not have.
const DefaultPoolSize = 20

// APIKey is one entry of CERTCTL_API_KEYS_NAMED (or a synthesized legacy key
// from CERTCTL_AUTH_SECRET).
type APIKey struct {
	Name  string
	Key   string
	Admin bool
}

// Config is everything the double reads from its environment and argv.
type Config struct {
	DatabaseURL string
	SchemaPath  string
	MigrateOnly bool

	Host        string
	Port        int
	TLSCertPath string
	TLSKeyPath  string

	// AuthType is "api-key" or "none".
	AuthType string
	Keys     []APIKey

	RateLimitEnabled bool
	RateLimitRPS     float64
	RateLimitBurst   int

	// KeygenMode decides the status of jobs bulk-renew creates: certctl's
	// default "agent" mode parks them in AwaitingCSR.
	KeygenMode string

	MaxBodyBytes int64

	// AgentBootstrapToken is CERTCTL_AGENT_BOOTSTRAP_TOKEN: when set,
	// POST /api/v1/agents also requires the Bearer key to equal it.
	AgentBootstrapToken string

	// ACME is the CERTCTL_ACME_SERVER_* subset the double honours.
	ACME ACMEConfig

	Faults Faults
}

// Faults are the double's own knobs (DOUBLE_*); certctl has no equivalent.
type Faults struct {
	Latency   time.Duration
	ErrorRate float64
	// Route restricts Latency and ErrorRate to requests whose
	// "METHOD /path" (query excluded) starts with it; empty means all.
	Route     string
	ExitAfter time.Duration
	Unhealthy bool
}

// Active reports whether any per-request fault is configured.
func (f Faults) Active() bool { return f.Latency > 0 || f.ErrorRate > 0 }

var faultRouteRE = regexp.MustCompile(`^[A-Z]+( /[^$]*\$?)?$`)

// LoadConfig builds a Config from getenv (os.Getenv in production) and the
// command-line arguments after the program name. It mirrors certctl's
// parsing of the CERTCTL_* variables it honours, including certctl's lax
// booleans, and is strict about the DOUBLE_* knobs: a typo in a fault knob
// would otherwise silently run a test without the fault.
func LoadConfig(getenv func(string) string, args []string) (Config, error) {
	env := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	cfg := Config{
		DatabaseURL:  expandDatabaseURL(env("CERTCTL_DATABASE_URL", "postgres://localhost/certctl"), getenv),
		SchemaPath:   env("CERTCTL_SCHEMA", "schema.sql"),
		Host:         env("CERTCTL_SERVER_HOST", "127.0.0.1"),
		TLSCertPath:  getenv("CERTCTL_SERVER_TLS_CERT_PATH"),
		TLSKeyPath:   getenv("CERTCTL_SERVER_TLS_KEY_PATH"),
		AuthType:     env("CERTCTL_AUTH_TYPE", "api-key"),
		KeygenMode:   env("CERTCTL_KEYGEN_MODE", "agent"),
		MaxBodyBytes: 1 << 20,

		AgentBootstrapToken: getenv("CERTCTL_AGENT_BOOTSTRAP_TOKEN"),
		ACME:                loadACMEConfig(getenv),
	}

	// certctl hand-parses os.Args for this flag rather than using package
	// flag, and so ignores anything else on the command line.
	for _, a := range args {
		if a == "--migrate-only" || a == "-migrate-only" {
			cfg.MigrateOnly = true
		}
	}

	var err error
	if cfg.Port, err = intVar(getenv, "CERTCTL_SERVER_PORT", 8080); err != nil {
		return cfg, err
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return cfg, fmt.Errorf("CERTCTL_SERVER_PORT: %d is not a TCP port", cfg.Port)
	}

	// certctl treats any non-empty value other than true/1/yes as false.
	cfg.RateLimitEnabled = certctlBool(getenv("CERTCTL_RATE_LIMIT_ENABLED"), true)
	if cfg.RateLimitRPS, err = floatVar(getenv, "CERTCTL_RATE_LIMIT_RPS", 50); err != nil {
		return cfg, err
	}
	if cfg.RateLimitBurst, err = intVar(getenv, "CERTCTL_RATE_LIMIT_BURST", 100); err != nil {
		return cfg, err
	}
	if mb := getenv("CERTCTL_MAX_BODY_SIZE"); mb != "" {
		n, err := strconv.ParseInt(mb, 10, 64)
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("CERTCTL_MAX_BODY_SIZE: %q is not a positive byte count", mb)
		}
		cfg.MaxBodyBytes = n
	}

	switch cfg.AuthType {
	case "api-key":
		secret := getenv("CERTCTL_AUTH_SECRET")
		if secret == "" {
			return cfg, errors.New("CERTCTL_AUTH_SECRET: required when CERTCTL_AUTH_TYPE=api-key (even when CERTCTL_API_KEYS_NAMED is set)")
		}
		if cfg.Keys, err = parseNamedKeys(getenv("CERTCTL_API_KEYS_NAMED")); err != nil {
			return cfg, fmt.Errorf("CERTCTL_API_KEYS_NAMED: %w", err)
		}
		if len(cfg.Keys) == 0 {
			// certctl synthesizes read-only legacy-key-N actors from the
			// secret when no named keys are configured.
			for _, k := range strings.Split(secret, ",") {
				if k = strings.TrimSpace(k); k != "" {
					cfg.Keys = append(cfg.Keys, APIKey{Name: fmt.Sprintf("legacy-key-%d", len(cfg.Keys)), Key: k})
				}
			}
		}
	case "none":
	default:
		return cfg, fmt.Errorf("CERTCTL_AUTH_TYPE: %q is not supported by the double (api-key, none)", cfg.AuthType)
	}

	if !cfg.MigrateOnly {
		if cfg.TLSCertPath == "" {
			return cfg, errors.New("CERTCTL_SERVER_TLS_CERT_PATH: required (HTTPS only, like certctl)")
		}
		if cfg.TLSKeyPath == "" {
			return cfg, errors.New("CERTCTL_SERVER_TLS_KEY_PATH: required (HTTPS only, like certctl)")
		}
	}

	cfg.Faults, err = loadFaults(getenv)
	return cfg, err
}

func loadFaults(getenv func(string) string) (Faults, error) {
	var f Faults
	var err error
	if f.Latency, err = durationVar(getenv, "DOUBLE_LATENCY"); err != nil {
		return f, err
	}
	if f.ExitAfter, err = durationVar(getenv, "DOUBLE_EXIT_AFTER"); err != nil {
		return f, err
	}
	if v := strings.TrimSpace(getenv("DOUBLE_ERROR_RATE")); v != "" {
		f.ErrorRate, err = strconv.ParseFloat(v, 64)
		if err != nil || f.ErrorRate < 0 || f.ErrorRate > 1 {
			return f, fmt.Errorf("DOUBLE_ERROR_RATE: %q is not a number between 0 and 1", v)
		}
	}
	if v := getenv("DOUBLE_FAULT_ROUTE"); v != "" {
		for _, route := range strings.Split(v, ",") {
			if !faultRouteRE.MatchString(strings.TrimSpace(route)) {
				return f, fmt.Errorf("DOUBLE_FAULT_ROUTE: %q is not \"METHOD\", \"METHOD /path-prefix\" or \"METHOD /exact/path$\", comma-separated (e.g. \"POST /api/v1/certificates\")", route)
			}
		}
		f.Route = v
	}
	if v := strings.TrimSpace(getenv("DOUBLE_UNHEALTHY")); v != "" {
		f.Unhealthy, err = strconv.ParseBool(v)
		if err != nil {
			return f, fmt.Errorf("DOUBLE_UNHEALTHY: %q is not a boolean", v)
		}
	}
	return f, nil
}

func durationVar(getenv func(string) string, name string) (time.Duration, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative Go duration (e.g. 250ms, 30s)", name, v)
	}
	return d, nil
}

func intVar(getenv func(string) string, name string, def int) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not an integer", name, v)
	}
	return n, nil
}

func floatVar(getenv func(string) string, name string, def float64) (float64, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive number", name, v)
	}
	return f, nil
}

func certctlBool(v string, def bool) bool {
	if v == "" {
		return def
	}
	return v == "true" || v == "1" || v == "yes"
}

// expandDatabaseURL reproduces certctl's one substitution: the literal
// "$(POSTGRES_PASSWORD)" in the URL is replaced by that variable's value.
func expandDatabaseURL(url string, getenv func(string) string) string {
	const placeholder = "$(POSTGRES_PASSWORD)"
	if pw := getenv("POSTGRES_PASSWORD"); pw != "" && strings.Contains(url, placeholder) {
		return strings.ReplaceAll(url, placeholder, pw)
	}
	return url
}

var keyNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// parseNamedKeys follows certctl's ParseNamedAPIKeys: name:key[:admin],
// comma-separated; a name may repeat (key rotation) only with the same
// admin flag and a different key.
func parseNamedKeys(s string) ([]APIKey, error) {
	var keys []APIKey
	admin := map[string]bool{}
	pairs := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("invalid entry %q (expected name:key or name:key:admin)", redact(part))
		}
		k := APIKey{Name: strings.TrimSpace(f[0]), Key: strings.TrimSpace(f[1])}
		if len(f) == 3 {
			if strings.TrimSpace(f[2]) != "admin" {
				return nil, fmt.Errorf("invalid admin flag %q for %q (expected 'admin')", f[2], k.Name)
			}
			k.Admin = true
		}
		if !keyNameRE.MatchString(k.Name) {
			return nil, fmt.Errorf("invalid key name %q (alphanumeric, hyphens, underscores)", k.Name)
		}
		if k.Key == "" {
			return nil, fmt.Errorf("empty key for name %q", k.Name)
		}
		if pairs[k.Name+"\x00"+k.Key] {
			return nil, fmt.Errorf("duplicate (name,key) entry for %q", k.Name)
		}
		pairs[k.Name+"\x00"+k.Key] = true
		if prior, seen := admin[k.Name]; seen && prior != k.Admin {
			return nil, fmt.Errorf("key name %q repeated with a different admin flag", k.Name)
		}
		admin[k.Name] = k.Admin
		keys = append(keys, k)
	}
	return keys, nil
}

// redact keeps secrets out of error messages: only the name survives.
func redact(entry string) string {
	if i := strings.IndexByte(entry, ':'); i >= 0 {
		return entry[:i] + ":…"
	}
	return entry
}

// String is the startup log line's summary of the knobs. Keys are listed
// by name only.
func (c Config) String() string {
	names := make([]string, 0, len(c.Keys))
	for _, k := range c.Keys {
		n := k.Name
		if k.Admin {
			n += "(admin)"
		}
		names = append(names, n)
	}
	rl := "off"
	if c.RateLimitEnabled {
		rl = fmt.Sprintf("%grps/burst%d per IP", c.RateLimitRPS, c.RateLimitBurst)
	}
	route := c.Faults.Route
	if route == "" {
		route = "*"
	}
	exit := "off"
	if c.Faults.ExitAfter > 0 {
		exit = c.Faults.ExitAfter.String()
	}
	return fmt.Sprintf("auth=%s keys=[%s] rate_limit=%s keygen=%s latency=%s error_rate=%g fault_route=%q exit_after=%s unhealthy=%t",
		c.AuthType, strings.Join(names, ","), rl, c.KeygenMode,
		c.Faults.Latency, c.Faults.ErrorRate, route, exit, c.Faults.Unhealthy)
}
