// Package f5 is a stand-in for an F5 BIG-IP management interface (iControl
// REST) used by the load-test harness's connector tier. It answers the calls
// certctl's F5 target connector makes (see README.md beside this file for the
// list, with references into certctl's source), keeps the uploaded files,
// crypto objects, client-ssl profiles and transactions in memory, and serves
// a small HTML page on "/" for the TLS handshake scenario.
package f5

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// Defaults, each overridable through the environment variable named in
// LoadConfig.
const (
	DefaultListen   = ":443"
	DefaultCertFile = "/tls/starter.crt"
	DefaultKeyFile  = "/tls/starter.key"
	DefaultUser     = "admin"
	DefaultPassword = "admin"
	DefaultProfiles = "clientssl"
	// DefaultMaxTokens is BIG-IP's own per-user limit on active login tokens
	// (F5 K44237337); certctl logs in once per deployment and never deletes
	// its token, so the limit is part of what a load test should see.
	DefaultMaxTokens = 100
)

// Config is everything the stand-in reads from its environment and argv.
type Config struct {
	Listen   string
	CertFile string
	KeyFile  string
	Username string
	Password string
	// Profiles are the client-ssl profiles that exist at startup, as full
	// paths ("/Common/clientssl"). certctl only modifies a profile, so the
	// one its target config names must be here.
	Profiles []string
	// MaxTokens caps the active login tokens; 0 means no cap.
	MaxTokens int
	// VirtualListen, when set, is a virtual server's address: TLS with the
	// certificate, key and chain VirtualProfile holds at each handshake, so a
	// deployment through the REST API is what its clients see next.
	VirtualListen  string
	VirtualProfile string
	// LogCalls logs every /mgmt/ call (method, route, status) on stderr.
	LogCalls bool
	// Healthcheck makes the binary probe a running instance instead of
	// serving.
	Healthcheck bool
}

// String is the startup line's summary; it leaves the password out.
func (c Config) String() string {
	tokens := "unlimited"
	if c.MaxTokens > 0 {
		tokens = strconv.Itoa(c.MaxTokens)
	}
	return fmt.Sprintf("cert=%s key=%s user=%s profiles=%s max-tokens=%s",
		c.CertFile, c.KeyFile, c.Username, strings.Join(c.Profiles, ","), tokens)
}

// Same character set certctl's connector accepts for a profile name, so any
// profile certctl could be pointed at can be created here.
var (
	profileNameRE = regexp.MustCompile(`^[a-zA-Z0-9_\-\.]+$`)
	partitionRE   = regexp.MustCompile(`^[a-zA-Z0-9_\-]+$`)
)

// LoadConfig builds a Config from getenv (os.Getenv in production) and the
// command-line arguments after the program name.
func LoadConfig(getenv func(string) string, args []string) (Config, error) {
	env := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	cfg := Config{
		Listen:   env("F5_LISTEN", DefaultListen),
		CertFile: env("F5_TLS_CERT", DefaultCertFile),
		KeyFile:  env("F5_TLS_KEY", DefaultKeyFile),
		Username: env("F5_USERNAME", DefaultUser),
		// Not trimmed: a password may legitimately end in a space.
		Password:  getenv("F5_PASSWORD"),
		MaxTokens: DefaultMaxTokens,
	}
	if cfg.Password == "" {
		cfg.Password = DefaultPassword
	}

	fs := flag.NewFlagSet("f5-standin", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&cfg.Healthcheck, "healthcheck", false, "")
	if err := fs.Parse(args); err != nil {
		return cfg, fmt.Errorf("arguments: %v (the only flag is --healthcheck)", err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("arguments: unexpected %q (the only flag is --healthcheck)", fs.Arg(0))
	}

	if _, port, err := net.SplitHostPort(cfg.Listen); err != nil {
		return cfg, fmt.Errorf("F5_LISTEN: %q is not host:port (%v)", cfg.Listen, err)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return cfg, fmt.Errorf("F5_LISTEN: %q has no TCP port", cfg.Listen)
	}

	if v := strings.TrimSpace(getenv("F5_MAX_TOKENS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return cfg, fmt.Errorf("F5_MAX_TOKENS: %q is not a non-negative integer (0 = no limit)", v)
		}
		cfg.MaxTokens = n
	}

	switch v := strings.TrimSpace(getenv("F5_LOG_CALLS")); v {
	case "", "0":
	case "1":
		cfg.LogCalls = true
	default:
		return cfg, fmt.Errorf("F5_LOG_CALLS: %q is neither 1 nor 0", v)
	}

	if v := strings.TrimSpace(getenv("F5_VIRTUAL_LISTEN")); v != "" {
		if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
			return cfg, fmt.Errorf("F5_VIRTUAL_LISTEN: %q is not host:port", v)
		}
		cfg.VirtualListen = v
	}

	seen := map[string]bool{}
	for _, p := range strings.Split(env("F5_SSL_PROFILES", DefaultProfiles), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		full, err := profilePath(p)
		if err != nil {
			return cfg, fmt.Errorf("F5_SSL_PROFILES: %w", err)
		}
		if !seen[full] {
			seen[full] = true
			cfg.Profiles = append(cfg.Profiles, full)
		}
	}
	if cfg.VirtualListen != "" {
		full, err := profilePath(env("F5_VIRTUAL_PROFILE", DefaultProfiles))
		if err != nil {
			return cfg, fmt.Errorf("F5_VIRTUAL_PROFILE: %w", err)
		}
		if !seen[full] && full != "/Common/clientssl" {
			return cfg, fmt.Errorf("F5_VIRTUAL_PROFILE=%s is not among F5_SSL_PROFILES (%s): the virtual server would serve a profile that does not exist", full, strings.Join(cfg.Profiles, ","))
		}
		cfg.VirtualProfile = full
	}
	return cfg, nil
}

// profilePath turns "name" or "/Partition/name" into a full path.
func profilePath(p string) (string, error) {
	part, name := "Common", p
	if strings.HasPrefix(p, "/") {
		rest := strings.TrimPrefix(p, "/")
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return "", fmt.Errorf("%q: want name or /Partition/name", p)
		}
		part, name = rest[:i], rest[i+1:]
	}
	if !partitionRE.MatchString(part) {
		return "", fmt.Errorf("%q: partition %q has characters certctl rejects", p, part)
	}
	if !profileNameRE.MatchString(name) {
		return "", errors.New(strconv.Quote(p) + ": profile name has characters certctl rejects (allowed: letters, digits, _ - .)")
	}
	return "/" + part + "/" + name, nil
}

// HealthURL is what --healthcheck probes: the configured port on loopback
// unless the listener is bound to one specific address.
func (c Config) HealthURL() string {
	host, port, _ := net.SplitHostPort(c.Listen)
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "https://" + net.JoinHostPort(host, port) + "/healthz"
}
