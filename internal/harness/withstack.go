package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// StackAccess is how a process on the host reaches the stack's certctl and its database: by the
// containers' addresses on the stack's network, certctl under the name its certificate carries.
type StackAccess struct {
	URL       string // certctl's URL as the stack names it (CERTCTL_URL)
	ConnectTo string // curl's --connect-to: URL's host and port at the container's address
	Key       string // the admin API key
	CAFile    string // the CA that signed certctl's certificate, copied into the run directory
	PGURL     string // certctl's database
	// Responder is the ACME challenge responder's management API (pebble-challtestsrv's), through the
	// relay; it answers only when the stack runs the pki profile's services.
	Responder string
	// Compose runs `docker compose <args>` on the stack (nil for an external target), its output in
	// logs/compose.log: a measurement that stops and starts services.
	Compose func(ctx context.Context, args ...string) error
}

// WithStack starts certctl's stack as a run does (preflight, images, certctl healthy and its seeds),
// without any load, calls fn with how the host reaches it, keeps the stack's logs in the run
// directory and tears the stack down. It returns fn's exit code, or the run's code for what kept the
// stack from starting. An external target is not started: fn gets its URL, key and CA bundle.
func (r *Runner) WithStack(ctx context.Context, fn func(ctx context.Context, dir string, a StackAccess) int) int {
	dir := r.Cfg.RunDir()
	if _, err := os.Lstat(dir); err == nil {
		r.logf("%s already exists: results are never overwritten; pick another RUN_ID (or leave it unset)", dir)
		return results.ExitBadInput
	}
	compose := Compose{Cfg: r.Cfg, Exec: r.Exec, Env: append(slices.Clone(r.Env), "LT_OWNER="+r.Owner.String())}
	run := results.Run{RunID: r.Cfg.RunID, StartedAt: r.Now().UTC(), Command: r.Command, Config: r.Cfg.Redacted()}
	svcs, code, err := r.preflight(ctx, &compose, &run)
	if err != nil {
		r.logf("%v", err)
		return code
	}
	if err := makeRunDir(dir, r.Owner); err != nil {
		r.logf("cannot create the results directory: %v", err)
		return results.ExitEnvironment
	}
	r.Created = true
	defer r.Owner.chownTree(r.Cfg.ResultsDir, dir)
	r.keepBuildLog(dir)
	if ext := r.Cfg.External; ext != nil {
		ca := ext.CABundle
		if ca == "" {
			ca = systemCAs // CERTCTL_CA_BUNDLE unset: certctl's certificate is one the system trusts
		}
		return fn(ctx, dir, StackAccess{URL: ext.URL, Key: r.Cfg.Env["CLIENT_TOKEN"], CAFile: ca})
	}
	defer r.tearDown(compose, dir)
	if problem := r.up(ctx, compose, svcs, dir, &run); problem != "" {
		r.logf("%s", problem)
		r.saveStackLogs(compose, dir)
		return results.ExitEnvironment
	}
	defer r.saveStackLogs(compose, dir)
	a, err := r.access(ctx, compose, dir)
	if err != nil {
		r.logf("cannot reach the stack from the host: %v", err)
		return results.ExitEnvironment
	}
	a.Compose = func(ctx context.Context, args ...string) error {
		f, err := output.Append(filepath.Join(dir, "logs", "compose.log"))
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(f, "docker compose %s\n", strings.Join(args, " "))
		code, err := compose.Run(ctx, f, f, args...)
		if err == nil && code != 0 {
			err = fmt.Errorf("docker compose %s: exit %d (logs/compose.log)", strings.Join(args, " "), code)
		}
		return err
	}
	return fn(ctx, dir, a)
}

// systemCAs is Debian's (and Alpine's) bundle of the CAs the system trusts.
const systemCAs = "/etc/ssl/certs/ca-certificates.crt"

// relayService forwards the host's connections to certctl and PostgreSQL (docker-compose.yml): the
// namespace they share answers nothing outside it.
const relayService = "stack-relay"

// access starts the relay, finds its address and copies certctl's CA out of its volume.
func (r *Runner) access(ctx context.Context, compose Compose, dir string) (StackAccess, error) {
	a := StackAccess{URL: envOr(r.Env, "CERTCTL_URL", KnobDefault("CERTCTL_URL")), Key: r.Cfg.Env["CERTCTL_TOKEN"]}
	u, err := url.Parse(a.URL)
	if err != nil || u.Hostname() == "" || u.Port() == "" {
		return a, fmt.Errorf("CERTCTL_URL=%q: needs a host and a port", a.URL)
	}
	if u.Port() != "8443" {
		return a, fmt.Errorf("CERTCTL_URL=%q: the relay (%s) forwards certctl's port 8443 only", a.URL, relayService)
	}
	var log bytes.Buffer
	if code, err := compose.Run(ctx, &log, &log, "up", "--detach", "--wait", "--wait-timeout", "60", relayService); err != nil || code != 0 {
		return a, fmt.Errorf("%s did not start (exit %d %v): %s", relayService, code, err, strings.TrimSpace(log.String()))
	}
	relay, err := r.address(ctx, compose, relayService)
	if err != nil {
		return a, err
	}
	a.ConnectTo = fmt.Sprintf("%s:%s:%s:%s", u.Hostname(), u.Port(), relay, u.Port())
	a.PGURL = fmt.Sprintf("postgres://certctl:certctl@%s:5432/certctl?sslmode=disable", relay)
	a.Responder = fmt.Sprintf("http://%s:8055", relay)
	a.CAFile = filepath.Join(dir, "ca.crt")
	code, err := compose.Run(ctx, io.Discard, io.Discard, "cp", serverService+":/tls/ca.crt", a.CAFile)
	if err != nil || code != 0 {
		return a, fmt.Errorf("docker compose cp %s:/tls/ca.crt: exit %d %v", serverService, code, err)
	}
	return a, nil
}

// address is a service's container address on the stack's network.
func (r *Runner) address(ctx context.Context, compose Compose, svc string) (string, error) {
	id, err := compose.Output(ctx, "ps", "--quiet", svc)
	if err != nil || strings.TrimSpace(id) == "" {
		return "", fmt.Errorf("no container for %s (%v)", svc, err)
	}
	var out bytes.Buffer
	code, err := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"inspect", "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", strings.TrimSpace(id)}, Env: r.Env, Stdout: &out, Stderr: io.Discard})
	if err != nil || code != 0 {
		return "", fmt.Errorf("docker inspect %s: exit %d %v", svc, code, err)
	}
	for _, ip := range strings.Fields(out.String()) {
		return ip, nil
	}
	return "", fmt.Errorf("%s has no address", svc)
}
