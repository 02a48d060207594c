// Package pgtest starts a throwaway PostgreSQL cluster for tests, from the
// server binaries installed on the machine (Debian's postgresql-15 by
// default). Each cluster lives in a t.TempDir(), listens on a free loopback
// port only, and is stopped by t.Cleanup.
//
// The cluster's bootstrap superuser is "certctl" with trust authentication,
// matching the harness's compose stack (POSTGRES_USER=certctl), so certctl's
// migrations create their objects owned by the same role as in the stack.
package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultBinDir is where Debian installs the PostgreSQL 15 server binaries.
const DefaultBinDir = "/usr/lib/postgresql/15/bin"

// User is the cluster's bootstrap superuser.
const User = "certctl"

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	Port    int
	DataDir string

	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{}
	// password is User's password once StartWithAuth has set one; URL
	// carries it.
	password string
}

// Start initialises and starts a cluster, or skips the test when the server
// binaries are absent. The bin dir can be overridden with PGTEST_BIN_DIR.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	binDir := os.Getenv("PGTEST_BIN_DIR")
	if binDir == "" {
		binDir = DefaultBinDir
	}
	initdb := filepath.Join(binDir, "initdb")
	postgres := filepath.Join(binDir, "postgres")
	for _, p := range []string{initdb, postgres} {
		if _, err := os.Stat(p); err != nil {
			tb.Skipf("pgtest: PostgreSQL server binary %s not found (install postgresql-15 or set PGTEST_BIN_DIR): %v", p, err)
		}
	}

	cred, err := dropRootCredential()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}

	base := tb.TempDir()
	dataDir := filepath.Join(base, "data")
	if cred != nil {
		// initdb and postgres refuse to run as root. The postgres user needs
		// to traverse the test's private temp root (0700, owned by root) and
		// to own the directory it works in.
		if err := os.Chmod(filepath.Dir(base), 0o711); err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
		if err := os.Chmod(base, 0o711); err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
	}
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	if cred != nil {
		if err := os.Chown(dataDir, int(cred.Uid), int(cred.Gid)); err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
	}

	var out bytes.Buffer
	cmd := exec.Command(initdb, "-D", dataDir, "-U", User, "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := cmd.Run(); err != nil {
		tb.Fatalf("pgtest: initdb failed: %v\n%s", err, out.String())
	}

	// The free port is found by binding and releasing it, so another process
	// can take it before postgres binds: retry with a fresh port.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
		c, err := launch(postgres, dataDir, port, cred)
		if err == nil {
			tb.Cleanup(c.stop)
			return c
		}
		lastErr = err
	}
	tb.Fatalf("pgtest: postgres did not start: %v", lastErr)
	return nil
}

// StartWithAuth is Start, then gives User the password and makes loopback
// TCP connections authenticate with method: "trust", "scram-sha-256", "md5"
// or "password" (cleartext). It is for testing clients' authentication; URL
// includes the password.
func StartWithAuth(tb testing.TB, method, password string) *Cluster {
	tb.Helper()
	switch method {
	case "trust", "scram-sha-256", "md5", "password":
	default:
		tb.Fatalf("pgtest: unsupported auth method %q", method)
	}
	if password == "" {
		tb.Fatalf("pgtest: StartWithAuth needs a password")
	}
	c := Start(tb)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	// The server only does MD5 authentication when the stored password is an
	// MD5 hash; against a SCRAM verifier an md5 pg_hba line means SCRAM.
	encryption := "scram-sha-256"
	if method == "md5" {
		encryption = "md5"
	}
	// Utility statements take no bind parameters, hence the quoted literal.
	for _, stmt := range []string{
		"SET password_encryption = '" + encryption + "'",
		"ALTER ROLE " + pgx.Identifier{User}.Sanitize() + " PASSWORD '" + strings.ReplaceAll(password, "'", "''") + "'",
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			tb.Fatalf("pgtest: %s: %v", strings.SplitN(stmt, " PASSWORD", 2)[0], err)
		}
	}
	// Rewriting the file in place keeps its owner, which postgres needs.
	hba := "host all all 127.0.0.1/32 " + method + "\n"
	if err := os.WriteFile(filepath.Join(c.DataDir, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		tb.Fatalf("pgtest: reload: %v", err)
	}
	c.password = password
	if method == "trust" {
		return c
	}

	// The reload is asynchronous: wait until a wrong password is refused, so
	// the caller's first connection already meets the new rules.
	for {
		probe, err := pgx.Connect(ctx, c.urlWith("pgtest-wrong-"+password, "postgres"))
		if err != nil {
			break
		}
		_ = probe.Close(ctx)
		if ctx.Err() != nil {
			tb.Fatalf("pgtest: %s authentication not in effect after reload:\n%s", method, c.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c
}

// dropRootCredential returns the postgres user's credentials when running as
// root, and nil otherwise. A SysProcAttr credential is used rather than
// runuser so the test process is the postmaster's direct parent: signals
// reach it without a PAM session in between.
func dropRootCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root and no postgres user to run the server as: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func launch(postgres, dataDir string, port int, cred *syscall.Credential) (*Cluster, error) {
	c := &Cluster{Port: port, DataDir: dataDir, logs: &syncBuffer{}, done: make(chan struct{})}
	c.cmd = exec.Command(postgres, "-D", dataDir,
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=",
		// Durability is worthless for a throwaway cluster and costs seconds.
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=200",
	)
	c.cmd.Stdout, c.cmd.Stderr = c.logs, c.logs
	c.cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: cred,
		// If the test binary dies without running its cleanups, take the
		// postmaster with it instead of leaving it running forever.
		Pdeathsig: syscall.SIGQUIT,
	}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = c.cmd.Wait()
		close(c.done)
	}()

	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			_ = conn.Close(ctx)
			cancel()
			return c, nil
		}
		cancel()
		select {
		case <-c.done:
			return nil, fmt.Errorf("postgres exited during startup on port %d:\n%s", port, c.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("postgres not accepting connections after 30s: %v\n%s", err, c.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL is a lib/pq-style connection URL for database db on this cluster.
func (c *Cluster) URL(db string) string { return c.urlWith(c.password, db) }

func (c *Cluster) urlWith(password, db string) string {
	if password != "" {
		return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", url.UserPassword(User, password), c.Port, db)
	}
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", User, c.Port, db)
}

// CreateDatabase creates an empty database and returns its URL. With a
// non-empty template the new database is a copy of it, which is much faster
// than loading a schema again; the template must have no open connections.
func (c *Cluster) CreateDatabase(tb testing.TB, name, template string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	stmt := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		stmt += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := conn.Exec(ctx, stmt); err != nil {
		tb.Fatalf("pgtest: %s: %v", stmt, err)
	}
	return c.URL(name)
}

// Logs returns what the server has written so far, for failure messages.
func (c *Cluster) Logs() string { return c.logs.String() }

// stop asks for a fast shutdown (SIGINT) and escalates to SIGKILL if the
// server is still up after 10 s.
func (c *Cluster) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// syncBuffer collects the server's output; postgres writes it from a
// goroutine owned by os/exec while tests may read it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Cap memory: a chatty server must not grow the test's heap unbounded.
	if b.buf.Len() > 1<<20 {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
