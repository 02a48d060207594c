package pgwire

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/pgtest"
)

func TestParseURL(t *testing.T) {
	good := []struct {
		url  string
		want Config
	}{
		{"postgres://certctl:certctl@postgres:5432/certctl?sslmode=disable",
			Config{Host: "postgres", Port: 5432, User: "certctl", Password: "certctl", Database: "certctl"}},
		{"postgresql://u@h/d?sslmode=prefer&application_name=collector&connect_timeout=3",
			Config{Host: "h", Port: 5432, User: "u", Database: "d", ApplicationName: "collector", ConnectTimeout: 3 * time.Second}},
		{"postgres://u:p%40ss%3Aw@[::1]:6543", // escaped password, IPv6, database defaults to user
			Config{Host: "::1", Port: 6543, User: "u", Password: "p@ss:w", Database: "u"}},
		{"postgres://u@/d?sslmode=allow",
			Config{Host: "localhost", Port: 5432, User: "u", Database: "d"}},
	}
	for _, tc := range good {
		got, err := ParseURL(tc.url)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tc.url, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseURL(%q) = %+v, want %+v", tc.url, got, tc.want)
		}
	}

	bad := []struct{ url, errPart string }{
		{"postgres://u@h/d?sslmode=require", "sslmode=require needs TLS"},
		{"postgres://u@h/d?sslmode=verify-full", "sslmode=verify-full needs TLS"},
		{"mysql://u@h/d", "scheme"},
		{"postgres://h/d", "no user"},
		{"postgres://u@h:99999/d", "port"},
		{"postgres://u@h/d?pool_max_conns=4", "pool_max_conns"},
		{"postgres://u@h/d?connect_timeout=soon", "connect_timeout"},
	}
	for _, tc := range bad {
		_, err := ParseURL(tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.errPart) {
			t.Errorf("ParseURL(%q) error = %v, want it to mention %q", tc.url, err, tc.errPart)
		}
	}
	// A malformed URL's error must not echo the password.
	if _, err := ParseURL("postgres://u:topsecret@h:port/d"); err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Errorf("malformed URL error = %v, want an error without the password", err)
	}
}

// RFC 7677 section 3.
func TestSCRAMVector(t *testing.T) {
	s := &scramClient{user: "user", password: "pencil", nonce: "rOprNGfwEbeRWgbNEkqO"}
	if got, want := s.clientFirst(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"; got != want {
		t.Fatalf("client-first = %q, want %q", got, want)
	}
	final, err := s.clientFinal("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
	if err != nil {
		t.Fatal(err)
	}
	if want := "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="; final != want {
		t.Errorf("client-final = %q, want %q", final, want)
	}
	if err := s.verifyServerFinal("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="); err != nil {
		t.Errorf("server signature rejected: %v", err)
	}
	// A near miss (a misquotation of the RFC's value seen in the wild) must fail.
	if err := s.verifyServerFinal("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjRO4Q4="); err == nil {
		t.Error("forged server signature accepted")
	}
	if err := s.verifyServerFinal("e=invalid-proof"); err == nil || !strings.Contains(err.Error(), "invalid-proof") {
		t.Errorf("server error = %v, want it reported", err)
	}

	// A server nonce that does not extend ours is refused.
	s2 := &scramClient{user: "user", password: "pencil", nonce: "rOprNGfwEbeRWgbNEkqO"}
	s2.clientFirst()
	if _, err := s2.clientFinal("r=someoneElse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"); err == nil {
		t.Error("foreign server nonce accepted")
	}
}

func TestMD5Password(t *testing.T) {
	// Expected value: SELECT 'md5' || md5(md5('secretcertctl') || 'abcd')
	if got, want := md5Password("certctl", "secret", []byte("abcd")), "md587853e64f8377062da38117b8a218c02"; got != want {
		t.Errorf("md5Password = %q, want %q", got, want)
	}
}

func connect(t *testing.T, c *pgtest.Cluster) *Conn {
	t.Helper()
	cfg, err := ParseURL(c.URL("postgres") + "&application_name=pgwire-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func queryOne(t *testing.T, conn *Conn, sql string) string {
	t.Helper()
	rows, err := conn.QueryRows(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] == nil {
		t.Fatalf("%s: got %d rows, want one non-NULL value", sql, len(rows))
	}
	return *rows[0][0]
}

func TestAuthMethods(t *testing.T) {
	for _, method := range []string{"trust", "scram-sha-256", "md5", "password"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			var c *pgtest.Cluster
			if method == "trust" {
				c = pgtest.Start(t)
			} else {
				c = pgtest.StartWithAuth(t, method, "p@ss,w=rd'1")
			}
			conn := connect(t, c)
			if got := queryOne(t, conn, "SELECT current_setting('application_name')"); got != "pgwire-test" {
				t.Errorf("application_name = %q", got)
			}
			if method == "trust" {
				return
			}
			// The server only runs MD5 (or SCRAM) when the stored password is
			// of that kind, so this shows which exchange was exercised.
			if method == "scram-sha-256" || method == "md5" {
				got := queryOne(t, conn, "SELECT rolpassword FROM pg_authid WHERE rolname = current_user")
				if wantPrefix := map[string]string{"scram-sha-256": "SCRAM-SHA-256$", "md5": "md5"}[method]; !strings.HasPrefix(got, wantPrefix) {
					t.Errorf("stored password %.16q..., want %s (else the server negotiates another method)", got, wantPrefix)
				}
			}

			cfg, _ := ParseURL(c.URL("postgres"))
			cfg.Password = "wrong"
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := Connect(ctx, cfg)
			var pgErr *Error
			if !errors.As(err, &pgErr) || pgErr.Code != "28P01" || !strings.Contains(err.Error(), "authentication") {
				t.Errorf("wrong password: err = %v, want SQLSTATE 28P01 naming authentication", err)
			}
			t.Logf("wrong password: %v", err)

			cfg.Password = ""
			if _, err := Connect(ctx, cfg); err == nil || !strings.Contains(err.Error(), "no password") {
				t.Errorf("no password: err = %v, want it to say no password was given", err)
			}
		})
	}
}

func TestQueries(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	conn := connect(t, c)
	ctx := context.Background()

	json := queryOne(t, conn, `SELECT json_build_object('n', 1, 's', 'é"x', 'a', json_agg(g)) FROM generate_series(1, 3) g`)
	if want := `{"n" : 1, "s" : "é\"x", "a" : [1, 2, 3]}`; json != want {
		t.Errorf("json = %s, want %s", json, want)
	}

	rows, err := conn.QueryRows(ctx, "SELECT g::text, CASE WHEN g = 2 THEN NULL ELSE 'v' || g END FROM generate_series(1, 3) g")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("rows = %d, want 3", len(rows))
	}
	for i, r := range rows {
		if len(r) != 2 || r[0] == nil || *r[0] != string(rune('1'+i)) {
			t.Errorf("row %d = %v", i, r)
		}
		if (r[1] == nil) != (i == 1) {
			t.Errorf("row %d NULL-ness wrong: %v", i, r[1])
		}
	}

	// No rows, an empty query and a large value.
	if rows, err := conn.QueryRows(ctx, "SELECT 1 WHERE false"); err != nil || len(rows) != 0 {
		t.Errorf("no rows: %v, %v", rows, err)
	}
	if err := conn.Exec(ctx, " "); err != nil {
		t.Errorf("empty query: %v", err)
	}
	if got := queryOne(t, conn, "SELECT repeat('x', 1000000)"); len(got) != 1000000 {
		t.Errorf("large value length %d", len(got))
	}

	// An SQL error is an *Error with its SQLSTATE, and the connection
	// stays usable.
	_, err = conn.QueryRows(ctx, "SELECT * FROM no_such_table")
	var pgErr *Error
	if !errors.As(err, &pgErr) || pgErr.Code != "42P01" || pgErr.Severity != "ERROR" {
		t.Fatalf("err = %v, want *Error 42P01", err)
	}
	err = conn.Exec(ctx, "SELECT 1/0")
	if !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("err = %v, want *Error 22012", err)
	}
	if got := queryOne(t, conn, "SELECT 'still alive'"); got != "still alive" {
		t.Errorf("after error: %q", got)
	}

	// Notices are skipped.
	if err := conn.Exec(ctx, "DO $$BEGIN RAISE NOTICE 'hello'; END$$"); err != nil {
		t.Errorf("notice: %v", err)
	}

	// COPY is refused without losing the connection.
	if err := conn.Exec(ctx, "CREATE TEMP TABLE t(x int); COPY t FROM STDIN"); err == nil {
		t.Error("COPY FROM STDIN succeeded")
	}
	if err := conn.Exec(ctx, "COPY (SELECT 1) TO STDOUT"); err != nil {
		t.Errorf("COPY TO STDOUT: %v", err)
	}
	if got := queryOne(t, conn, "SELECT 'ok'"); got != "ok" {
		t.Errorf("after COPY: %q", got)
	}
	if err := conn.Exec(ctx, "SELECT '\x00'"); err == nil {
		t.Error("query with NUL accepted")
	}
}

// pg_stat_statements when the library is not in shared_preload_libraries,
// as on a stack whose Postgres was not started with it.
func TestPgStatStatementsNotPreloaded(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	conn := connect(t, c)
	ctx := context.Background()

	if err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		t.Fatalf("CREATE EXTENSION: %v", err)
	}
	for _, sql := range []string{
		"SELECT pg_stat_statements_reset()",
		"SELECT json_agg(s) FROM (SELECT query, calls FROM pg_stat_statements) s",
	} {
		_, err := conn.QueryRows(ctx, sql)
		var pgErr *Error
		if !errors.As(err, &pgErr) || pgErr.Code != "55000" {
			t.Errorf("%s: err = %v, want *Error with SQLSTATE 55000", sql, err)
		}
		t.Logf("%s: %v", sql, err)
	}
	if got := queryOne(t, conn, "SELECT 'usable'"); got != "usable" {
		t.Errorf("after error: %q", got)
	}
}

func TestContextDeadline(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	conn := connect(t, c)
	watcher := connect(t, c)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := conn.QueryRows(ctx, "SELECT pg_sleep(5)")
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("returned after %v, want promptly after the 200ms deadline", elapsed)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	// The connection is in an unknown state and says so.
	if _, err := conn.QueryRows(context.Background(), "SELECT 1"); err == nil || !strings.Contains(err.Error(), "unusable") {
		t.Errorf("query after timeout: %v, want connection unusable", err)
	}
	if err := conn.Close(); err != nil {
		t.Errorf("Close after timeout: %v", err)
	}

	// The cancel request stops the server-side sleep well before 5 s.
	deadline := time.Now().Add(3 * time.Second)
	for {
		n := queryOne(t, watcher, "SELECT count(*)::text FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(5)' AND state = 'active'")
		if n == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("pg_sleep still running 3s after the deadline; server log:\n%s", c.Logs())
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Cancellation without a deadline works too, and an expired ctx
	// leaves a healthy connection alone.
	conn2 := connect(t, c)
	cctx, ccancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, ccancel)
	if _, err := conn2.QueryRows(cctx, "SELECT pg_sleep(5)"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: err = %v, want context.Canceled", err)
	}
	conn3 := connect(t, c)
	if _, err := conn3.QueryRows(cctx, "SELECT 1"); !errors.Is(err, context.Canceled) {
		t.Errorf("expired ctx: err = %v", err)
	}
	if got := queryOne(t, conn3, "SELECT 'fine'"); got != "fine" {
		t.Errorf("after expired ctx: %q", got)
	}
}

func TestConnectErrors(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	cfg, _ := ParseURL(c.URL("no_such_db"))
	_, err := Connect(context.Background(), cfg)
	var pgErr *Error
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" {
		t.Errorf("missing database: err = %v, want *Error 3D000", err)
	}

	// Nothing listens: a prompt error, not a hang.
	cfg.Port = 1
	cfg.ConnectTimeout = time.Second
	if _, err := Connect(context.Background(), cfg); err == nil {
		t.Error("connect to a closed port succeeded")
	}
}

// fakeServer accepts one connection, reads the startup message, replies with
// the given backend messages and then swallows whatever the client sends.
func fakeServer(t *testing.T, reply []byte) Config {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		var n [4]byte
		if _, err := io.ReadFull(nc, n[:]); err != nil {
			return
		}
		if _, err := io.CopyN(io.Discard, nc, int64(binary.BigEndian.Uint32(n[:]))-4); err != nil {
			return
		}
		nc.Write(reply)
		io.Copy(io.Discard, nc)
	}()
	return Config{Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, User: "u", Password: "p", Database: "d"}
}

func authMsg(code uint32, data string) []byte {
	b := binary.BigEndian.AppendUint32([]byte{'R'}, uint32(8+len(data)))
	return append(binary.BigEndian.AppendUint32(b, code), data...)
}

func TestAuthRefusals(t *testing.T) {
	cases := []struct {
		name, errPart string
		reply         []byte
	}{
		{"kerberos", "Kerberos", authMsg(2, "")},
		{"gss", "GSSAPI", authMsg(7, "")},
		{"scram-plus-only", "without channel binding", authMsg(10, "SCRAM-SHA-256-PLUS\x00\x00")},
		// A server must not be able to skip proving it knows the password.
		{"ok-without-sasl-final", "without sending its signature",
			append(authMsg(10, "SCRAM-SHA-256\x00\x00"), authMsg(0, "")...)},
		{"oversized", "limit", []byte{'R', 0x7f, 0xff, 0xff, 0xff}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := fakeServer(t, tc.reply)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn, err := Connect(ctx, cfg)
			if err == nil {
				conn.Close()
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tc.errPart) {
				t.Errorf("err = %v, want it to mention %q", err, tc.errPart)
			}
		})
	}
}
