package double

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"certctl-loadtest/internal/pgtest"
)

const (
	adminToken  = "admin-token"
	viewerToken = "viewer-token"
)

// schemaPath is certctl's real schema dump: CERTCTL_SCHEMA, or the copy in
// the shared directory beside the repository.
func schemaPath(t *testing.T) string {
	p := os.Getenv("CERTCTL_SCHEMA")
	if p == "" {
		p = filepath.Join("..", "..", "..", "shared", "certctl", "schema.sql")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("certctl schema dump not found (set CERTCTL_SCHEMA): %v", err)
	}
	return p
}

// fixtureSQL is the minimum a certificate or heartbeat needs besides the
// dump's own seed (rp-default, roles, permissions).
const fixtureSQL = `
INSERT INTO teams (id, name) VALUES ('t1', 'team one');
INSERT INTO owners (id, name, email, team_id) VALUES ('o1', 'owner one', 'o1@example.com', 't1');
INSERT INTO issuers (id, name, type, config, enabled) VALUES ('iss1', 'local', 'GenericCA', '{}', true);
INSERT INTO agents (id, name, hostname, status, api_key_hash) VALUES ('ag1', 'agent-1', 'host1', 'Offline', 'x');
INSERT INTO agents (id, name, hostname, status, api_key_hash, retired_at) VALUES ('ag-gone', 'agent-gone', 'host2', 'Offline', 'x', now());
`

func testConfig() Config {
	return Config{
		AuthType:     "api-key",
		Keys:         []APIKey{{Name: "adm", Key: adminToken, Admin: true}, {Name: "view", Key: viewerToken}},
		KeygenMode:   "agent",
		MaxBodyBytes: 1 << 20,
		RateLimitRPS: 50, RateLimitBurst: 100,
	}
}

type fixture struct {
	srv *Server
	db  *pgxpool.Pool
}

type harness struct {
	cluster  *pgtest.Cluster
	template string
	n        atomic.Int32
}

// newDB copies the migrated template into a fresh database with the
// fixture rows.
func (h *harness) newDB(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	url := h.cluster.CreateDatabase(t, fmt.Sprintf("t%d", h.n.Add(1)), h.template)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(context.Background(), fixtureSQL); err != nil {
		t.Fatal(err)
	}
	return url, pool
}

func (h *harness) server(t *testing.T, cfg Config) *fixture {
	t.Helper()
	_, pool := h.newDB(t)
	srv, err := NewServer(context.Background(), cfg, pool, testLogWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, db: pool}
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (f *fixture) do(t *testing.T, method, target, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	return rec
}

func (f *fixture) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := f.db.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (f *fixture) scalar(t *testing.T, sql string, args ...any) any {
	t.Helper()
	var v any
	if err := f.db.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %q: %v", rec.Body.String(), err)
	}
	return v
}

func expectStatus(t *testing.T, rec *httptest.ResponseRecorder, want int) {
	t.Helper()
	if rec.Code != want {
		t.Fatalf("status %d, want %d; body %s", rec.Code, want, rec.Body.String())
	}
}

// expectHandlerError checks certctl's handler error shape.
func expectHandlerError(t *testing.T, rec *httptest.ResponseRecorder, status int, messageContains string) {
	t.Helper()
	expectStatus(t, rec, status)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	body := decode[handlerErrorBody](t, rec)
	if body.Error != http.StatusText(status) || body.RequestID == "" || body.RequestID != rec.Header().Get("X-Request-ID") {
		t.Errorf("not certctl's handler error: %s", rec.Body.String())
	}
	if !strings.Contains(body.Message, messageContains) {
		t.Errorf("message %q does not contain %q", body.Message, messageContains)
	}
}

func createBody(name string, extra ...string) string {
	fields := []string{
		`"name":"` + name + `"`, `"common_name":"` + name + `.example.com"`, `"issuer_id":"iss1"`,
		`"owner_id":"o1"`, `"team_id":"t1"`, `"renewal_policy_id":"rp-default"`,
	}
	return "{" + strings.Join(append(fields, extra...), ",") + "}"
}

// seedCerts inserts n certificates one second apart in created_at, oldest
// first, named <prefix>-000 …
func (f *fixture) seedCerts(t *testing.T, prefix string, n int) {
	t.Helper()
	f.exec(t, `
		INSERT INTO managed_certificates (id, name, common_name, environment, owner_id, team_id, issuer_id,
			renewal_policy_id, status, expires_at, created_at, updated_at)
		SELECT $1 || '-' || lpad(i::text, 3, '0'), $1 || '-' || lpad(i::text, 3, '0'), 'h' || i || '.example.com', '',
			'o1', 't1', 'iss1', 'rp-default', 'Active', now() + interval '60 days',
			timestamptz '2026-01-01' + i * interval '1 second', now()
		FROM generate_series(0, $2 - 1) AS i`, prefix, n)
}

// TestPostgres runs everything that needs a real database against one
// throwaway PostgreSQL: the schema loader on certctl's real dump, then the
// handlers, each subtest on its own copy of the migrated database.
func TestPostgres(t *testing.T) {
	cluster := pgtest.Start(t)
	h := &harness{cluster: cluster, template: "certctl_template"}
	templateURL := cluster.CreateDatabase(t, h.template, "")
	schema := schemaPath(t)

	// Every other subtest copies this database, so the first load happens
	// here rather than in a subtest that -run could filter out.
	loaded, err := Migrate(context.Background(), templateURL, schema)
	if err != nil {
		t.Fatalf("loading certctl's schema.sql: %v", err)
	}
	if !loaded {
		t.Fatal("first Migrate reported the schema already present")
	}

	t.Run("MigrateRealDumpTwice", func(t *testing.T) {
		ctx := context.Background()
		loaded, err := Migrate(ctx, templateURL, schema)
		if err != nil || loaded {
			t.Fatalf("second Migrate: loaded=%v err=%v, want a no-op", loaded, err)
		}
		pool, err := pgxpool.New(ctx, templateURL)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		checks := map[string]int64{
			"SELECT count(*) FROM roles":                                        7,
			"SELECT count(*) FROM renewal_policies WHERE id = 'rp-default'":     1,
			"SELECT count(*) FROM policy_rules":                                 4,
			"SELECT count(*) FROM audit_chain_head":                             1,
			"SELECT count(*) FROM tenants WHERE id = 't-default'":               1,
			"SELECT count(*) FROM pg_extension WHERE extname = 'pgcrypto'":      1,
			"SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'audit_events%'": 2,
		}
		for q, want := range checks {
			var got int64
			if err := pool.QueryRow(ctx, q).Scan(&got); err != nil || got != want {
				t.Errorf("%s = %d (%v), want %d", q, got, err, want)
			}
		}
		var perms int64
		_ = pool.QueryRow(ctx, "SELECT count(*) FROM role_permissions").Scan(&perms)
		if perms < 200 {
			t.Errorf("role_permissions has %d rows; the COPY blocks did not all load", perms)
		}
	})

	t.Run("MigrateBrokenDumpRollsBack", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		for name, dump := range map[string]string{
			"syntax": "\\restrict x\nCREATE TABLE public.managed_certificates (id text);\nSELEC 1;\n",
			"copy":   "CREATE TABLE public.managed_certificates (id text);\nCOPY public.managed_certificates (id) FROM stdin;\na\n",
		} {
			path := filepath.Join(dir, name+".sql")
			if err := os.WriteFile(path, []byte(dump), 0o644); err != nil {
				t.Fatal(err)
			}
			url := cluster.CreateDatabase(t, "broken_"+name, "")
			_, err := Migrate(context.Background(), url, path)
			if err == nil {
				t.Fatalf("%s: broken dump loaded", name)
			}
			if !strings.Contains(err.Error(), "line") {
				t.Errorf("%s: error does not locate the failure: %v", name, err)
			}
			pool, _ := pgxpool.New(context.Background(), url)
			present, perr := SchemaPresent(context.Background(), pool)
			pool.Close()
			if perr != nil || present {
				t.Errorf("%s: failed load left tables behind (present=%v, %v)", name, present, perr)
			}
		}
	})

	t.Run("ServerRefusesEmptyDatabase", func(t *testing.T) {
		t.Parallel()
		url := cluster.CreateDatabase(t, "empty", "")
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		_, err = NewServer(context.Background(), testConfig(), pool, nil)
		if !errors.Is(err, ErrSchemaMissing) {
			t.Fatalf("err = %v, want ErrSchemaMissing", err)
		}
		if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "--migrate-only") {
			t.Errorf("error is not a clear one-liner: %q", err)
		}
	})

	t.Run("Auth", func(t *testing.T) {
		f := h.server(t, testConfig())
		t.Parallel()

		rec := f.do(t, "GET", "/api/v1/certificates", "", "")
		expectStatus(t, rec, 401)
		if rec.Body.String() != "{\"error\":\"Authorization header required\"}\n" ||
			rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" ||
			rec.Header().Get("WWW-Authenticate") != `Bearer realm="certctl"` {
			t.Errorf("missing-key 401: %v %q", rec.Header(), rec.Body.String())
		}
		req := httptest.NewRequest("GET", "/api/v1/auth/check", nil)
		req.Header.Set("Authorization", "Basic Zm9vOmJhcg==")
		rec = httptest.NewRecorder()
		f.srv.ServeHTTP(rec, req)
		expectStatus(t, rec, 401)
		if !strings.Contains(rec.Body.String(), "Invalid Authorization header format") {
			t.Errorf("basic-auth 401 body %q", rec.Body.String())
		}
		rec = f.do(t, "GET", "/api/v1/auth/check", "nope", "")
		expectStatus(t, rec, 401)
		if rec.Body.String() != "{\"error\":\"Invalid API key\"}\n" || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("wrong-key 401: %q", rec.Body.String())
		}

		type check struct {
			Status      string       `json:"status"`
			User        string       `json:"user"`
			Admin       bool         `json:"admin"`
			Roles       []string     `json:"roles"`
			Permissions []permission `json:"effective_permissions"`
		}
		has := func(c check, perm string) bool {
			for _, p := range c.Permissions {
				if p.Permission == perm && p.ScopeType == "global" {
					return true
				}
			}
			return false
		}
		rec = f.do(t, "GET", "/api/v1/auth/check", adminToken, "")
		expectStatus(t, rec, 200)
		if c := decode[check](t, rec); c.Status != "authenticated" || c.User != "adm" || !c.Admin ||
			len(c.Roles) != 1 || c.Roles[0] != "r-admin" || !has(c, "cert.issue") || !has(c, "agent.heartbeat") {
			t.Errorf("admin auth/check: %s", rec.Body.String())
		}
		rec = f.do(t, "GET", "/api/v1/auth/check", viewerToken, "")
		expectStatus(t, rec, 200)
		if c := decode[check](t, rec); c.Admin || len(c.Roles) != 1 || c.Roles[0] != "r-viewer" || has(c, "cert.issue") || !has(c, "cert.read") {
			t.Errorf("viewer auth/check: %s", rec.Body.String())
		}

		// Read-only keys: reads work, every write is 403 with the RBAC body.
		expectStatus(t, f.do(t, "GET", "/api/v1/certificates", viewerToken, ""), 200)
		expectStatus(t, f.do(t, "GET", "/api/v1/stats/summary", viewerToken, ""), 200)
		for _, w := range []struct{ method, target, body string }{
			{"POST", "/api/v1/certificates", createBody("viewer-made")},
			{"POST", "/api/v1/agents/ag1/heartbeat", ""},
			{"POST", "/api/v1/certificates/bulk-renew", `{"certificate_ids":["x"]}`},
		} {
			rec := f.do(t, w.method, w.target, viewerToken, w.body)
			expectStatus(t, rec, 403)
			if rec.Body.String() != `{"error":"Insufficient permissions"}` {
				t.Errorf("%s %s 403 body %q", w.method, w.target, rec.Body.String())
			}
		}

		// Anonymous surface.
		for target, want := range map[string]string{
			"/health": `{"status":"healthy"}`,
			"/ready":  `{"db":"reachable","status":"ready"}`,
		} {
			rec := f.do(t, "GET", target, "", "")
			expectStatus(t, rec, 200)
			if strings.TrimSpace(rec.Body.String()) != want {
				t.Errorf("%s body %q, want %s", target, rec.Body.String(), want)
			}
		}
		rec = f.do(t, "GET", "/api/v1/version", "", "")
		expectStatus(t, rec, 200)
		if v := decode[map[string]any](t, rec); v["version"] != Version || !strings.Contains(Version, "double") || v["go_version"] == "" {
			t.Errorf("version: %s", rec.Body.String())
		}

		rec = f.do(t, "GET", "/api/v1/auth/info", "", "")
		expectStatus(t, rec, 200)
		if strings.TrimSpace(rec.Body.String()) != `{"auth_type":"api-key","required":true}` {
			t.Errorf("auth/info: %s", rec.Body.String())
		}

		expectStatus(t, f.do(t, "GET", "/api/v1/no-such-route", "", ""), 401)
		expectHandlerError(t, f.do(t, "GET", "/api/v1/no-such-route", adminToken, ""), 404, "no-such-route")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/jobs/run-now", adminToken, ""), 404, "")
	})

	t.Run("CreateCertificate", func(t *testing.T) {
		f := h.server(t, testConfig())
		t.Parallel()

		rec := f.do(t, "POST", "/api/v1/certificates", adminToken, createBody("web-1", `"sans":["a.example.com"]`, `"tags":{"env":"lt"}`))
		expectStatus(t, rec, 201)
		c := decode[certificate](t, rec)
		if !strings.HasPrefix(c.ID, "cert-") || c.Status != "Pending" || c.Name != "web-1" || c.Tags["env"] != "lt" ||
			len(c.SANs) != 1 || c.CreatedAt.IsZero() {
			t.Errorf("created: %s", rec.Body.String())
		}
		if got := f.scalar(t, "SELECT status FROM managed_certificates WHERE id = $1", c.ID); got != "Pending" {
			t.Errorf("stored status %v", got)
		}

		rec = f.do(t, "POST", "/api/v1/certificates", adminToken, createBody("web-2", `"id":"mc-chosen"`, `"environment":"staging"`, `"certificate_profile_id":""`))
		expectStatus(t, rec, 201)
		if c := decode[certificate](t, rec); c.ID != "mc-chosen" || c.Environment != "staging" {
			t.Errorf("explicit id/environment not kept: %s", rec.Body.String())
		}

		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates", adminToken,
			`{"name":"x","common_name":"x.example.com","issuer_id":"iss1","owner_id":"o1","renewal_policy_id":"rp-default"}`), 400, "team_id is required")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates", adminToken,
			strings.Replace(createBody("bad"), "bad.example.com", "bad host.example.com", 1)), 400, "invalid hostname format")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates", adminToken,
			strings.Replace(createBody("bad2"), "bad2.example.com", "-bad.example.com", 1)), 400, "hyphen")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates", adminToken, `{"name":`), 400, "Invalid request body")

		// certctl's documented 500s: the constraints answer, not validation.
		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates", adminToken, createBody("web-1")), 500, "Failed to create certificate")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates", adminToken,
			strings.Replace(createBody("web-3"), `"iss1"`, `"no-such-issuer"`, 1)), 500, "Failed to create certificate")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates", adminToken,
			createBody("web-4", `"certificate_profile_id":"no-such-profile"`)), 500, "Failed to create certificate")
		if n := f.scalar(t, "SELECT count(*) FROM managed_certificates"); n != int64(2) {
			t.Errorf("%v certificates stored, want 2", n)
		}
	})

	t.Run("ListCertificates", func(t *testing.T) {
		f := h.server(t, testConfig())
		t.Parallel()
		f.seedCerts(t, "lc", 120)
		f.exec(t, "UPDATE managed_certificates SET status = 'Expiring' WHERE name IN ('lc-005', 'lc-006', 'lc-007')")

		type page struct {
			Data    []certificate `json:"data"`
			Total   int           `json:"total"`
			Page    int           `json:"page"`
			PerPage int           `json:"per_page"`
		}
		get := func(q string) page {
			rec := f.do(t, "GET", "/api/v1/certificates"+q, adminToken, "")
			expectStatus(t, rec, 200)
			return decode[page](t, rec)
		}
		p := get("?per_page=50&page=1")
		if len(p.Data) != 50 || p.Total != 120 || p.Page != 1 || p.PerPage != 50 || p.Data[0].Name != "lc-000" || p.Data[49].Name != "lc-049" {
			t.Errorf("page 1: %d items, total %d, page %d, per_page %d, first %q", len(p.Data), p.Total, p.Page, p.PerPage, p.Data[0].Name)
		}
		if p.Data[0].TargetIDs == nil || p.Data[0].Tags == nil {
			t.Errorf("target_ids/tags must be [] and {}, not null")
		}
		if p := get("?per_page=50&page=3"); len(p.Data) != 20 || p.Data[0].Name != "lc-100" {
			t.Errorf("page 3: %d items starting %v", len(p.Data), p.Data)
		}
		for _, q := range []string{"", "?per_page=0", "?per_page=501", "?per_page=-3", "?per_page=abc", "?limit=5"} {
			if p := get(q); len(p.Data) != 50 || p.PerPage != 50 || p.Page != 1 {
				t.Errorf("%q: %d items, per_page %d, page %d; want the silent default 50", q, len(p.Data), p.PerPage, p.Page)
			}
		}
		if p := get("?per_page=500"); len(p.Data) != 120 {
			t.Errorf("per_page=500: %d items", len(p.Data))
		}
		if p := get("?page=0&per_page=10"); p.Page != 1 || p.Data[0].Name != "lc-000" {
			t.Errorf("page=0 not treated as 1: page %d", p.Page)
		}
		if p := get("?page=99"); p.Data == nil || len(p.Data) != 0 || p.Total != 120 {
			t.Errorf("past the end: data %v total %d, want [] and 120", p.Data, p.Total)
		}
		if p := get("?status=Expiring"); p.Total != 3 || len(p.Data) != 3 {
			t.Errorf("status filter: total %d", p.Total)
		}
		if p := get("?sort=-name&per_page=1"); p.Data[0].Name != "lc-119" {
			t.Errorf("sort=-name: first %q", p.Data[0].Name)
		}
		rec := f.do(t, "GET", "/api/v1/certificates?fields=id,name&per_page=2", adminToken, "")
		if items := decode[struct{ Data []map[string]any }](t, rec).Data; len(items) != 2 || len(items[0]) != 2 || items[0]["name"] != "lc-000" {
			t.Errorf("sparse fields: %s", rec.Body.String())
		}

		// A row certctl cannot scan breaks the whole list there too.
		f.exec(t, `INSERT INTO managed_certificates (id, name, common_name, owner_id, team_id, issuer_id, renewal_policy_id, status, expires_at)
			VALUES ('null-env', 'null-env', 'n.example.com', 'o1', 't1', 'iss1', 'rp-default', 'Active', now())`)
		expectHandlerError(t, f.do(t, "GET", "/api/v1/certificates?per_page=500", adminToken, ""), 500, "Failed to list certificates")
	})

	t.Run("StuckCursor", func(t *testing.T) {
		f := h.server(t, testConfig())
		t.Parallel()
		f.seedCerts(t, "cur", 30)

		type cursorPage struct {
			Data       []certificate `json:"data"`
			Total      int           `json:"total"`
			NextCursor string        `json:"next_cursor"`
			PageSize   int           `json:"page_size"`
		}
		rec := f.do(t, "GET", "/api/v1/certificates?cursor=start&page_size=10", adminToken, "")
		expectStatus(t, rec, 200)
		first := decode[cursorPage](t, rec)
		if len(first.Data) != 10 || first.Total != 30 || first.PageSize != 10 || first.NextCursor == "" {
			t.Fatalf("first cursor page: %d items, total %d, page_size %d, cursor %q", len(first.Data), first.Total, first.PageSize, first.NextCursor)
		}
		if raw := decode[map[string]any](t, rec); raw["page"] != nil || raw["per_page"] != nil {
			t.Errorf("cursor envelope carries page/per_page: %s", rec.Body.String())
		}
		cursor := first.NextCursor
		for i := 0; i < 3; i++ {
			rec := f.do(t, "GET", "/api/v1/certificates?page_size=10&cursor="+cursor, adminToken, "")
			expectStatus(t, rec, 200)
			next := decode[cursorPage](t, rec)
			if next.NextCursor != cursor || next.Data[0].ID != first.Data[0].ID || next.Data[9].ID != first.Data[9].ID {
				t.Fatalf("walk %d advanced (cursor %q → %q, first id %s): certctl's cursor never moves", i, cursor, next.NextCursor, next.Data[0].ID)
			}
		}
		if p := decode[cursorPage](t, f.do(t, "GET", "/api/v1/certificates?cursor=x&per_page=7", adminToken, "")); p.PageSize != 7 || len(p.Data) != 7 {
			t.Errorf("cursor without page_size: page_size %d, %d items; want per_page", p.PageSize, len(p.Data))
		}
	})

	t.Run("Heartbeat", func(t *testing.T) {
		f := h.server(t, testConfig())
		t.Parallel()

		rec := f.do(t, "POST", "/api/v1/agents/ag1/heartbeat", adminToken, `{"os":"linux","version":"1.2.3"}`)
		expectStatus(t, rec, 200)
		if strings.TrimSpace(rec.Body.String()) != `{"status":"heartbeat_recorded"}` {
			t.Errorf("body %q", rec.Body.String())
		}
		var status, os, version string
		var beat *time.Time
		if err := f.db.QueryRow(context.Background(), "SELECT status, os, version, last_heartbeat_at FROM agents WHERE id = 'ag1'").
			Scan(&status, &os, &version, &beat); err != nil {
			t.Fatal(err)
		}
		if status != "Online" || os != "linux" || version != "1.2.3" || beat == nil || time.Since(*beat) > time.Minute {
			t.Errorf("agent after heartbeat: %s %s %s %v", status, os, version, beat)
		}
		expectStatus(t, f.do(t, "POST", "/api/v1/agents/ag1/heartbeat", adminToken, ""), 200)
		expectStatus(t, f.do(t, "POST", "/api/v1/agents/ag1/heartbeat", adminToken, "not json"), 200)
		expectHandlerError(t, f.do(t, "POST", "/api/v1/agents/no-such-agent/heartbeat", adminToken, ""), 500, "Failed to record heartbeat")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/agents/ag-gone/heartbeat", adminToken, ""), 410, "retired")
	})

	t.Run("BulkRenew", func(t *testing.T) {
		f := h.server(t, testConfig())
		t.Parallel()
		var ids []string
		for i := 0; i < 3; i++ {
			rec := f.do(t, "POST", "/api/v1/certificates", adminToken, createBody(fmt.Sprintf("br-%d", i)))
			expectStatus(t, rec, 201)
			ids = append(ids, decode[certificate](t, rec).ID)
		}
		f.exec(t, "UPDATE managed_certificates SET expires_at = now() + interval '10 days' WHERE id = $1", ids[1])

		body := fmt.Sprintf(`{"certificate_ids":[%q,%q,"no-such-cert"]}`, ids[0], ids[1])
		rec := f.do(t, "POST", "/api/v1/certificates/bulk-renew", adminToken, body)
		expectStatus(t, rec, 200)
		res := decode[bulkRenewResult](t, rec)
		if res.TotalMatched != 2 || res.TotalEnqueued != 2 || res.TotalSkipped != 0 || res.TotalFailed != 0 || len(res.EnqueuedJobs) != 2 {
			t.Fatalf("first bulk-renew: %s", rec.Body.String())
		}
		for i, j := range res.EnqueuedJobs {
			var typ, status, certID string
			if err := f.db.QueryRow(context.Background(), "SELECT type, status, certificate_id FROM jobs WHERE id = $1", j.JobID).
				Scan(&typ, &status, &certID); err != nil {
				t.Fatal(err)
			}
			wantType := []string{"Issuance", "Renewal"}[i] // never issued vs. has an expiry
			if typ != wantType || status != "AwaitingCSR" || certID != j.CertificateID {
				t.Errorf("job %s: %s %s %s, want %s AwaitingCSR", j.JobID, typ, status, certID, wantType)
			}
		}

		rec = f.do(t, "POST", "/api/v1/certificates/bulk-renew", adminToken, body)
		expectStatus(t, rec, 200)
		res = decode[bulkRenewResult](t, rec)
		if res.TotalMatched != 2 || res.TotalEnqueued != 0 || res.TotalSkipped != 2 {
			t.Errorf("second bulk-renew of the same ids: %s", rec.Body.String())
		}
		if strings.Contains(rec.Body.String(), "enqueued_jobs") {
			t.Errorf("certctl omits an empty enqueued_jobs: %s", rec.Body.String())
		}

		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates/bulk-renew", adminToken, `{}`), 400, "At least one filter criterion")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates/bulk-renew", adminToken, `{"certificate_ids":[]}`), 400, "At least one")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates/bulk-renew", adminToken, `[`), 400, "Invalid request body")

		// A filter matches at most 50 certificates per call (certctl's
		// 10000-per-page request clamped to 50).
		f.seedCerts(t, "fleet", 70)
		rec = f.do(t, "POST", "/api/v1/certificates/bulk-renew", adminToken, `{"owner_id":"o1"}`)
		expectStatus(t, rec, 200)
		res = decode[bulkRenewResult](t, rec)
		if res.TotalMatched != 50 {
			t.Errorf("filter bulk-renew over 73 certificates matched %d, want certctl's 50", res.TotalMatched)
		}
	})

	t.Run("StatsSummary", func(t *testing.T) {
		f := h.server(t, testConfig())
		t.Parallel()
		f.seedCerts(t, "st", 60)
		f.exec(t, "UPDATE managed_certificates SET status = 'Revoked' WHERE name IN ('st-000', 'st-059')")
		f.exec(t, "UPDATE agents SET last_heartbeat_at = now() WHERE id = 'ag1'")
		f.exec(t, "INSERT INTO jobs (id, type, status) VALUES ('j1', 'Renewal', 'AwaitingCSR'), ('j2', 'Renewal', 'Failed')")

		rec := f.do(t, "GET", "/api/v1/stats/summary", adminToken, "")
		expectStatus(t, rec, 200)
		s := decode[dashboardSummary](t, rec)
		// st-059 is outside the 50 oldest certctl classifies.
		if s.TotalCertificates != 60 || s.RevokedCertificates != 1 || s.TotalAgents != 1 || s.ActiveAgents != 1 ||
			s.OfflineAgents != 0 || s.PendingJobs != 1 || s.FailedJobs != 1 || s.CompletedAt.IsZero() {
			t.Errorf("summary: %s", rec.Body.String())
		}
	})

	t.Run("RateLimitBeforeAuth", func(t *testing.T) {
		cfg := testConfig()
		cfg.RateLimitEnabled, cfg.RateLimitRPS, cfg.RateLimitBurst = true, 0.001, 3
		f := h.server(t, cfg)
		t.Parallel()
		for i := 0; i < 3; i++ {
			expectStatus(t, f.do(t, "GET", "/api/v1/certificates", "", ""), 401)
		}
		rec := f.do(t, "GET", "/api/v1/certificates", adminToken, "")
		expectStatus(t, rec, 429)
		assertRateLimited(t, rec.Header(), rec.Body.String())
		// The probes have their own bucket.
		expectStatus(t, f.do(t, "GET", "/health", "", ""), 200)
	})

	t.Run("FaultsThroughServer", func(t *testing.T) {
		cfg := testConfig()
		cfg.Faults = Faults{ErrorRate: 1, Route: "GET /api/v1/certificates"}
		f := h.server(t, cfg)
		t.Parallel()
		expectHandlerError(t, f.do(t, "GET", "/api/v1/certificates?per_page=50", adminToken, ""), 500, "Injected fault")
		expectStatus(t, f.do(t, "GET", "/api/v1/certificates", "", ""), 401) // auth first
		expectStatus(t, f.do(t, "POST", "/api/v1/certificates", adminToken, createBody("fault-free")), 201)
		expectStatus(t, f.do(t, "GET", "/api/v1/stats/summary", adminToken, ""), 200)
		expectStatus(t, f.do(t, "GET", "/ready", "", ""), 200)

		cfg = testConfig()
		cfg.Faults = Faults{Latency: 120 * time.Millisecond, Unhealthy: true}
		f = h.server(t, cfg)
		start := time.Now()
		expectStatus(t, f.do(t, "GET", "/api/v1/version", "", ""), 200)
		if d := time.Since(start); d < 120*time.Millisecond {
			t.Errorf("DOUBLE_LATENCY=120ms answered in %s", d)
		}
		start = time.Now()
		expectStatus(t, f.do(t, "GET", "/health", "", ""), 503)
		expectStatus(t, f.do(t, "GET", "/ready", "", ""), 503)
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("probes delayed %s: faults must not apply to them", d)
		}
	})

	t.Run("RunHTTPS", func(t *testing.T) {
		url, _ := h.newDB(t)
		t.Parallel()
		testRunHTTPS(t, url)
	})

	t.Run("RunMigrateOnly", func(t *testing.T) {
		t.Parallel()
		url := cluster.CreateDatabase(t, "run_migrate", "")
		cfg := testConfig()
		cfg.DatabaseURL, cfg.SchemaPath = url, schema

		// Without --migrate-only the server refuses an unprepared database.
		cert, key := writeSelfSigned(t)
		cfg.TLSCertPath, cfg.TLSKeyPath = cert, key
		err := Run(context.Background(), cfg, RunOptions{Stdout: testLogWriter{t}, Stderr: testLogWriter{t}})
		if !errors.Is(err, ErrSchemaMissing) {
			t.Fatalf("server on an empty database: %v, want ErrSchemaMissing", err)
		}

		cfg.MigrateOnly = true
		var out strings.Builder
		if err := Run(context.Background(), cfg, RunOptions{Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		if err := Run(context.Background(), cfg, RunOptions{Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "schema loaded") || !strings.Contains(out.String(), "already present") {
			t.Errorf("migrate-only output: %q", out.String())
		}
	})

	runIssuanceTests(t, h) // issuance_test.go
}
