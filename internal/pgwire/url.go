package pgwire

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ParseURL reads a libpq-style URL:
//
//	postgres://user:pass@host:port/db?sslmode=disable&application_name=x&connect_timeout=5
//
// There is no TLS support, so only sslmode values that permit a plaintext
// connection are accepted; anything else is refused rather than silently
// downgraded. Unknown query parameters are refused too, so that a typo or a
// setting this client would ignore does not go unnoticed.
func ParseURL(s string) (Config, error) {
	u, err := url.Parse(s)
	if err != nil {
		// url.Parse quotes the whole URL, password included.
		return Config{}, fmt.Errorf("pgwire: invalid database URL")
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return Config{}, fmt.Errorf("pgwire: database URL scheme %q, want postgres:// or postgresql://", u.Scheme)
	}
	c := Config{Host: u.Hostname(), Port: defaultPort}
	if c.Host == "" {
		c.Host = "localhost"
	}
	if p := u.Port(); p != "" {
		c.Port, err = strconv.Atoi(p)
		if err != nil || c.Port < 1 || c.Port > 65535 {
			return Config{}, fmt.Errorf("pgwire: database URL port %q is not a TCP port", p)
		}
	}
	if u.User != nil {
		c.User = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	if c.User == "" {
		return Config{}, fmt.Errorf("pgwire: database URL has no user name")
	}
	c.Database = strings.TrimPrefix(u.Path, "/")
	if c.Database == "" {
		c.Database = c.User // libpq's default
	}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "sslmode":
			switch v {
			case "disable", "allow", "prefer":
			default:
				return Config{}, fmt.Errorf("pgwire: sslmode=%s needs TLS, which this client does not support; use sslmode=disable", v)
			}
		case "application_name":
			c.ApplicationName = v
		case "connect_timeout":
			secs, err := strconv.Atoi(v)
			if err != nil || secs < 0 {
				return Config{}, fmt.Errorf("pgwire: connect_timeout=%q is not a number of seconds", v)
			}
			c.ConnectTimeout = time.Duration(secs) * time.Second
		default:
			return Config{}, fmt.Errorf("pgwire: database URL parameter %q is not supported (supported: sslmode, application_name, connect_timeout)", k)
		}
	}
	return c, nil
}
