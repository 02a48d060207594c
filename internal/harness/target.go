package harness

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ExternalNoDiagnosis is why an external run has no diagnosis.
const ExternalNoDiagnosis = "it samples the PostgreSQL and the containers of the stack the harness starts, and an external certctl's are not the harness's to read"

// MaxSegments bounds --segments: more k6 processes than this on one machine measure the machine.
const MaxSegments = 16

// loadSegments reads SEGMENTS (`loadtest run --segments N`): each scenario runs as N k6 processes,
// each its execution segment of the load, merged into one record.
func (c *Config) loadSegments(get getter) error {
	v := get("SEGMENTS", KnobDefault("SEGMENTS"))
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxSegments {
		return fmt.Errorf("SEGMENTS=%q: want a whole number from 1 (one k6 process per scenario) to %d", v, MaxSegments)
	}
	c.Segments = n
	if n == 1 {
		return nil
	}
	for _, name := range c.Tiers {
		if t, _ := LookupTier(name); t.OneProcess != "" {
			return fmt.Errorf("SEGMENTS=%d: the %s tier runs as one k6 process: %s", n, t.Name, t.OneProcess)
		}
	}
	c.Env["SEGMENTS"] = v
	return nil
}

// SegmentArgs are k6's arguments for process i (0-based) of n: its segment of an even split, and the
// whole sequence, so that every process agrees on how VUs and arrivals are divided.
func SegmentArgs(i, n int) []string {
	frac := func(k int) string {
		switch k {
		case 0:
			return "0"
		case n:
			return "1"
		}
		return fmt.Sprintf("%d/%d", k, n)
	}
	seq := make([]string, 0, n+1)
	for k := 0; k <= n; k++ {
		seq = append(seq, frac(k))
	}
	return []string{"--execution-segment", frac(i) + ":" + frac(i+1), "--execution-segment-sequence", strings.Join(seq, ",")}
}

// SegmentID names process i of n in file names: "2of4".
func SegmentID(i, n int) string { return fmt.Sprintf("%dof%d", i+1, n) }

// externalUnavailable: what a scenario needs that an external certctl does not give the harness (a
// tier's is Tier.NotExternal); such scenarios are left out of an external run, with this reason.
var externalUnavailable = map[string]string{
	"bulk_renewal":   "it needs 10K certificates seeded straight into certctl's database",
	"agent_storm":    "it needs 5K agents seeded straight into certctl's database",
	"renewal_scan":   "it seeds due certificates into certctl's database",
	"fleet_rotation": "it runs certctl's agents beside the server",
}

// Unavailable says why a scenario cannot run against an external certctl; "" when it can.
func Unavailable(s Scenario) string {
	if why := externalUnavailable[s.Name]; why != "" {
		return why
	}
	t, _ := LookupTier(s.Tier)
	return t.NotExternal
}

// loadTarget reads TARGET: the stack the harness starts, or a certctl that is already running.
func (c *Config) loadTarget(get getter) error {
	switch v := get("TARGET", KnobDefault("TARGET")); v {
	case "stack":
		return nil
	case "external":
	default:
		return fmt.Errorf("TARGET=%q: use stack (certctl on the harness's own compose stack) or external (CERTCTL_URL, a certctl already running)", v)
	}
	raw := get("CERTCTL_URL", "")
	if raw == "" {
		return fmt.Errorf("TARGET=external needs CERTCTL_URL, the certctl to load (https://certctl.staging.example:8443)")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("CERTCTL_URL=%q: want https://host[:port], certctl's base URL without a path", raw)
	}
	key := get("CERTCTL_API_KEY", "")
	if key == "" {
		return fmt.Errorf("TARGET=external needs CERTCTL_API_KEY, an admin API key of that certctl (the scenarios create certificates)")
	}
	ext := &External{URL: strings.TrimRight(raw, "/"), Verify: true, Network: get("EXTERNAL_NETWORK", "host")}
	switch v := get("CERTCTL_TLS_VERIFY", "true"); v {
	case "true":
	case "false":
		ext.Verify = false
	default:
		return fmt.Errorf("CERTCTL_TLS_VERIFY=%q: use true (verify certctl's certificate, the default) or false", v)
	}
	if v := get("CERTCTL_CA_BUNDLE", ""); v != "" {
		abs, err := CABundle(v)
		if err != nil {
			return err
		}
		ext.CABundle = abs
	}
	ext.AllowPublic = get("ALLOW_PUBLIC_TARGET", "") == "yes"
	public, err := publicAddress(u.Hostname())
	if err != nil && ext.Network == "host" {
		return fmt.Errorf("CERTCTL_URL=%s: %v", raw, err)
	}
	// A name only Docker's network resolves (another compose project's service) is judged by that
	// network instead: it must be internal (checkExternal).
	if public != "" {
		if !ext.AllowPublic {
			return fmt.Errorf("CERTCTL_URL=%s resolves to a public address (%s): load is sent only to loopback and private networks unless you set ALLOW_PUBLIC_TARGET=yes, saying this certctl is yours to load", raw, public)
		}
		ext.Public = true
	}
	// The diagnosis samples the stack's database and containers: an external certctl's are not the
	// harness's to read. Said in the run, not an error: DIAGNOSIS is on by default.
	c.Collector, c.Containers = false, false
	delete(c.Env, "COLLECT_STATEMENTS")
	delete(c.Env, "PG_SHARED_PRELOAD")
	if c.Faults {
		return fmt.Errorf("the fault proxy (FAULT_*) sits on the harness's own stack: it cannot be put in front of TARGET=external")
	}
	if c.Env["OBSERVABILITY"] == "true" || c.Observability {
		return fmt.Errorf("OBSERVABILITY=true runs beside the harness's own stack: with TARGET=external, send k6's metrics with K6_OUT instead")
	}
	var kept []Scenario
	for _, s := range c.Scenarios {
		if Unavailable(s) == "" {
			kept = append(kept, s)
		} else {
			c.Skipped = append(c.Skipped, s)
		}
	}
	if len(kept) == 0 {
		var why []string
		for _, s := range c.Skipped {
			why = append(why, s.Name+": "+Unavailable(s))
		}
		return fmt.Errorf("TARGET=external: none of the selected scenarios can run against a certctl the harness did not start (%s)", strings.Join(why, "; "))
	}
	c.Scenarios = kept
	c.External = ext
	// Nothing of certctl's is packaged or started: a CERTCTL_DIST in the environment is not this run's.
	c.Dist = ""
	delete(c.Env, "CERTCTL_DIST")
	if ext.CABundle != "" {
		c.Env["LT_CA_BUNDLE"] = ext.CABundle
		c.Env["LT_SSL_CERT_FILE"] = "/ca/bundle.pem"
	}
	if !ext.Verify {
		c.Env["LT_INSECURE_SKIP_TLS_VERIFY"] = "true"
	}
	c.Env["TARGET"] = "external"
	c.Env["CERTCTL_URL"] = ext.URL
	c.Env["CLIENT_TOKEN"] = key
	c.Env["CERTCTL_TLS_VERIFY"] = strconv.FormatBool(ext.Verify)
	c.Env["EXTERNAL_NETWORK"] = ext.Network
	if ext.CABundle != "" {
		c.Env["CERTCTL_CA_BUNDLE"] = ext.CABundle
	}
	c.Secrets = append(c.Secrets, key)
	return nil
}

func checkPEM(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read it (%v)", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return fmt.Errorf("holds no PEM certificate")
	}
	return nil
}

// publicAddress resolves host and returns the first address that is neither loopback, private
// (RFC 1918, RFC 4193) nor link-local; "" when there is none.
func publicAddress(host string) (string, error) {
	ips, err := net.DefaultResolver.LookupIP(context.Background(), "ip", host)
	if err != nil {
		return "", fmt.Errorf("cannot resolve %s (%v)", host, err)
	}
	for _, ip := range ips {
		if !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()) {
			return ip.String(), nil
		}
	}
	return "", nil
}

// CABundle checks CERTCTL_CA_BUNDLE's file (a readable PEM file of certificates) and returns its
// absolute path.
func CABundle(v string) (string, error) {
	abs, err := filepath.Abs(v)
	if err == nil {
		err = checkPEM(abs)
	}
	if err != nil {
		return "", fmt.Errorf("CERTCTL_CA_BUNDLE=%s: %v", v, err)
	}
	return abs, nil
}

// ProbeExternal asks the external certctl for /health and then, with the key, for one page of
// certificates: an unreachable server, a certificate the bundle does not verify or a rejected key fail
// here, in seconds, before any load.
func ProbeExternal(ctx context.Context, ext *External, key string) error {
	cfg := &tls.Config{InsecureSkipVerify: !ext.Verify} //nolint:gosec // CERTCTL_TLS_VERIFY=false asked for it
	if ext.CABundle != "" {
		b, err := os.ReadFile(ext.CABundle)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(b)
		cfg.RootCAs = pool
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	get := func(path string, auth bool) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ext.URL+path, nil)
		if err != nil {
			return 0, err
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		res.Body.Close()
		return res.StatusCode, nil
	}
	code, err := get("/health", false)
	if err != nil {
		hint := ""
		var uerr x509.UnknownAuthorityError
		var herr x509.HostnameError
		if errors.As(err, &uerr) || errors.As(err, &herr) || strings.Contains(err.Error(), "certificate") {
			hint = ": give the CA that signed its certificate in CERTCTL_CA_BUNDLE"
		}
		return fmt.Errorf("certctl at %s is unreachable (%v)%s", ext.URL, err, hint)
	}
	if code != http.StatusOK {
		return fmt.Errorf("certctl at %s answered /health with HTTP %d", ext.URL, code)
	}
	code, err = get("/api/v1/certificates?per_page=1", true)
	switch {
	case err != nil:
		return fmt.Errorf("certctl at %s: listing certificates failed (%v)", ext.URL, err)
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Errorf("certctl at %s rejected CERTCTL_API_KEY (HTTP %d): give an admin API key", ext.URL, code)
	case code != http.StatusOK:
		return fmt.Errorf("certctl at %s answered listing certificates with HTTP %d", ext.URL, code)
	}
	return nil
}

// checkExternal fails an external run in seconds when its certctl cannot be reached: from this
// machine when k6 runs on the host's network, else by the Docker network k6 will join existing.
func (r *Runner) checkExternal(ctx context.Context) string {
	ext := r.Cfg.External
	if ext.Network != "host" {
		var out bytes.Buffer
		code, err := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"network", "inspect", "--format", "{{.Internal}}", ext.Network}, Env: r.Env, Stdout: &out, Stderr: io.Discard})
		if err != nil || code != 0 {
			return fmt.Sprintf("EXTERNAL_NETWORK=%s is not a Docker network on this engine: k6 would have no way to reach %s", ext.Network, ext.URL)
		}
		if strings.TrimSpace(out.String()) != "true" && !ext.AllowPublic {
			return fmt.Sprintf("EXTERNAL_NETWORK=%s is not an internal network: from it k6 could reach any address, and CERTCTL_URL's host is not checked on this machine; use an internal network, or set ALLOW_PUBLIC_TARGET=yes", ext.Network)
		}
		// k6's setup() probes certctl from inside that network before any load (exit 108 if it fails).
		return ""
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := ProbeExternal(pctx, ext, r.Cfg.Env["CLIENT_TOKEN"]); err != nil {
		return err.Error()
	}
	return ""
}
