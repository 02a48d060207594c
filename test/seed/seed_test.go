// Package seed tests the SQL fixtures in seed/ the way the harness applies them: the psql binary
// (-X -q -v ON_ERROR_STOP=1 -v name=value … -f file) against a throwaway PostgreSQL 15 (internal/pgtest)
// holding certctl's own schema. That schema is not kept in this repository: CERTCTL_DIST names a certctl
// build (a folder with certctl's server binary and its migrations/), and the tests run that build's
// `server --migrate-only`, which applies certctl's migrations and its base seed exactly as a deployment
// does, into a template database. Every subtest gets its own copy of it.
//
// Without CERTCTL_DIST the tests that need the schema skip, saying so once; with CI set they fail
// instead, and a CERTCTL_DIST that is not a usable build fails too. Run them against each certctl build
// the harness supports:
//
//	CERTCTL_DIST=/path/to/certctl-build go test -count=1 -v ./test/seed/
//
// SEED_LARGE=1 adds a 1,000,000-certificate run and logs its time (about half a minute on 2 cores).
package seed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"certctl-loadtest/internal/docs"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/pgtest"

	"certctl-loadtest/internal/testenv"
)

const (
	baseSQL   = "00_base.sql"
	certsSQL  = "01_bulk_renewal_certs.sql"
	agentsSQL = "02_agent_fleet.sql"
)

// composeIDs are the id variables docker-compose.yml passes to the seeders (-v team_id=…), with the
// registry's defaults (the LT_*_ID knobs); defaultIDs is the same as a map.
var composeIDs, defaultIDs = registryIDs()

// The row counts the seeds write when given none: the registry's SEED_BULK_CERTS and SEED_AGENTS.
var (
	defaultCerts  = knobInt("SEED_BULK_CERTS")
	defaultAgents = knobInt("SEED_AGENTS")
)

func registryIDs() ([]string, map[string]string) {
	vars, err := docs.SeedVariables(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	var flags []string
	ids := map[string]string{}
	for _, v := range vars {
		if strings.HasPrefix(v.Knob.Name, "LT_") {
			flags = append(flags, v.Psql+"="+v.Knob.Default)
			ids[v.Psql] = v.Knob.Default
		}
	}
	return flags, ids
}

func knobInt(name string) int64 {
	n, err := strconv.ParseInt(harness.KnobDefault(name), 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

// seedDir is the repository's seed/ directory (the test runs in test/seed).
var seedDir = filepath.Join("..", "..", "seed")

// psqlPath prefers the client beside the test server's binaries, then psql on PATH.
func psqlPath(t testing.TB) string {
	dirs := []string{os.Getenv("PGTEST_BIN_DIR"), pgtest.DefaultBinDir}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "psql")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("psql")
	if err != nil {
		testenv.SkipOrFailInCI(t, fmt.Sprintf("no psql binary in %s or on PATH: %v", pgtest.DefaultBinDir, err))
	}
	return p
}

// env is one throwaway cluster with certctl's migrated schema in a template database.
type env struct {
	cluster  *pgtest.Cluster
	template string
	psql     string
	n        atomic.Int32
	// baseline counts the rows of seededTables in the template: what certctl's migrations and its base
	// seed put there (a default renewal policy, for one).
	baseline map[string]int64
}

func newEnv(t *testing.T) *env {
	t.Helper()
	requireDist(t)
	psql := psqlPath(t)
	if os.Getenv("CI") != "" {
		bin := os.Getenv("PGTEST_BIN_DIR")
		if bin == "" {
			bin = pgtest.DefaultBinDir
		}
		if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
			t.Fatalf("CI is set and there is no PostgreSQL server to test the seeds on: %v", err)
		}
	}
	e := &env{cluster: pgtest.Start(t), template: "certctl_template", psql: psql}
	url := e.cluster.CreateDatabase(t, e.template, "")
	elapsed := migrate(t, certctlDist, url)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	// The copy must be the build's whole schema: every migration it ships, recorded by certctl.
	ups, _ := filepath.Glob(filepath.Join(certctlDist, "migrations", "*.up.sql"))
	var applied int
	var last string
	if err := conn.QueryRow(ctx, "SELECT count(*), max(version::text) FROM schema_migrations").Scan(&applied, &last); err != nil {
		t.Fatalf("reading certctl's schema_migrations: %v", err)
	}
	if applied != len(ups) {
		t.Errorf("certctl recorded %d migrations, its build ships %d", applied, len(ups))
	}
	e.baseline = tableCounts(t, conn)
	if err := conn.Close(ctx); err != nil { // a template must have no open connections
		t.Fatal(err)
	}
	out, _ := exec.Command(psql, "--version").Output()
	t.Logf("certctl build %s: server --migrate-only applied %d migrations (last %s) and its base seed in %v; client %s",
		filepath.Base(certctlDist), applied, last, elapsed.Round(time.Millisecond), strings.TrimSpace(string(out)))
	return e
}

// seededTables are the tables the seed files write, and those they must leave alone.
var seededTables = []string{"teams", "owners", "renewal_policies", "issuers", "certificate_profiles",
	"managed_certificates", "certificate_versions", "agents", "audit_events", "jobs"}

func tableCounts(t testing.TB, conn *pgx.Conn) map[string]int64 {
	t.Helper()
	counts := make(map[string]int64, len(seededTables))
	for _, table := range seededTables {
		var n int64
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
			t.Fatalf("counting %s: %v", table, err)
		}
		counts[table] = n
	}
	return counts
}

// checkCounts asserts each seeded table holds the template's rows plus added[table] (0 when absent).
func checkCounts(t *testing.T, d *db, when string, added map[string]int64) {
	t.Helper()
	got := tableCounts(t, d.conn)
	for _, table := range seededTables {
		if want := d.env.baseline[table] + added[table]; got[table] != want {
			t.Errorf("%s: %s holds %d rows, want %d (%d from certctl's migrations and base seed + %d)",
				when, table, got[table], want, d.env.baseline[table], added[table])
		}
	}
}

// db is one copy of the migrated template.
type db struct {
	env  *env
	name string
	conn *pgx.Conn
}

func (e *env) newDB(t *testing.T) *db {
	t.Helper()
	name := fmt.Sprintf("seed%d", e.n.Add(1))
	url := e.cluster.CreateDatabase(t, name, e.template)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return &db{env: e, name: name, conn: conn}
}

type psqlRun struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// psql runs one seed file as the harness does: psql -X -q -v ON_ERROR_STOP=1 -h … -U certctl -d …
// -v name=value … -f file.
func (d *db) psql(t testing.TB, file string, vars ...string) psqlRun {
	t.Helper()
	return d.psqlPath(t, filepath.Join(seedDir, file), vars...)
}

// psqlPath is psql for any file, path relative to the test's directory.
func (d *db) psqlPath(t testing.TB, path string, vars ...string) psqlRun {
	t.Helper()
	args := []string{"-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-h", "127.0.0.1", "-p", fmt.Sprint(d.env.cluster.Port), "-U", pgtest.User, "-d", d.name}
	for _, v := range vars {
		args = append(args, "-v", v)
	}
	args = append(args, "-f", path)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.env.psql, args...)
	// Only the command line decides where psql connects and what it reads at startup.
	cmd.Env = []string{"LC_ALL=C", "PGCONNECT_TIMEOUT=10", "PATH=" + os.Getenv("PATH")}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := psqlRun{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("psql %s: %v", path, err)
	}
	return r
}

// apply runs a seed file that must succeed silently.
func (d *db) apply(t testing.TB, file string, vars ...string) time.Duration {
	t.Helper()
	r := d.psql(t, file, vars...)
	if r.code != 0 {
		t.Fatalf("psql -f %s %v: exit %d\nstderr: %s\nstdout: %s", file, vars, r.code, r.stderr, r.stdout)
	}
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("psql -q -f %s printed something:\nstdout: %q\nstderr: %q", file, r.stdout, r.stderr)
	}
	return r.elapsed
}

func (d *db) int(t testing.TB, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := d.conn.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func (d *db) now(t testing.TB) time.Time {
	t.Helper()
	var ts time.Time
	if err := d.conn.QueryRow(context.Background(), "SELECT clock_timestamp()").Scan(&ts); err != nil {
		t.Fatal(err)
	}
	return ts
}

// defaultRows is what the three files add with the defaults: one of each base row (the profile twice:
// its trusted and its challenge-mode ACME profile), defaultCerts
// certificates (never issued: no versions), defaultAgents agents, and nothing in certctl's audit trail
// or jobs.
var defaultRows = map[string]int64{
	"teams": 1, "owners": 1, "renewal_policies": 1, "issuers": 1, "certificate_profiles": 2,
	"managed_certificates": defaultCerts, "agents": defaultAgents,
}

func TestSeed(t *testing.T) {
	e := newEnv(t)

	t.Run("Defaults", func(t *testing.T) {
		d := e.newDB(t)
		d.apply(t, baseSQL, composeIDs...)
		before := d.now(t)
		tCerts := d.apply(t, certsSQL, composeIDs...)
		beforeAgents := d.now(t)
		tAgents := d.apply(t, agentsSQL, composeIDs...)
		after := d.now(t)
		t.Logf("seeding %d certificates: %v; %d agents: %v; both: %v (psql wall clock, PostgreSQL %s)",
			defaultCerts, tCerts.Round(time.Millisecond), defaultAgents, tAgents.Round(time.Millisecond),
			(tCerts + tAgents).Round(time.Millisecond), serverVersion(t, d))

		checkCounts(t, d, "after seeding", defaultRows)
		checkCerts(t, d, defaultCerts, defaultIDs, before, beforeAgents)
		checkAgents(t, d, defaultAgents, beforeAgents, after)
		checkCertctlCertificateList(t, d, defaultCerts)
		checkCertctlAgentScans(t, d, defaultAgents)
	})

	t.Run("RerunAddsNothing", func(t *testing.T) {
		d := e.newDB(t)
		d.apply(t, baseSQL, composeIDs...)
		d.apply(t, certsSQL, composeIDs...)
		d.apply(t, agentsSQL, composeIDs...)
		checkCounts(t, d, "first run", defaultRows)
		first := snapshot(t, d)

		// Again as the harness does, then once more with the counts given explicitly: both must be
		// no-ops, with every row left byte for byte as it was.
		d.apply(t, baseSQL, composeIDs...)
		d.apply(t, certsSQL, composeIDs...)
		d.apply(t, agentsSQL, composeIDs...)
		d.apply(t, certsSQL, append(composeIDs, fmt.Sprintf("bulk_certs=%d", defaultCerts))...)
		d.apply(t, agentsSQL, append(composeIDs, fmt.Sprintf("agent_count=%d", defaultAgents))...)
		if second := snapshot(t, d); second != first {
			t.Errorf("second run changed the data:\nbefore %s\nafter  %s", first, second)
		}
		if n := d.int(t, "SELECT count(*) FROM managed_certificates"); n != defaultCerts {
			t.Errorf("%d certificates after the rerun, want %d", n, defaultCerts)
		}
		if n := d.int(t, "SELECT count(*) FROM agents"); n != defaultAgents {
			t.Errorf("%d agents after the rerun, want %d", n, defaultAgents)
		}
		checkCounts(t, d, "second run", defaultRows)
	})

	t.Run("WithoutBaseRows", func(t *testing.T) {
		d := e.newDB(t) // schema only: no team, owner, policy, issuer or profile
		for _, file := range []string{certsSQL, agentsSQL} {
			r := d.psql(t, file, composeIDs...)
			t.Logf("%s without base rows: exit %d, stderr:\n%s", file, r.code, r.stderr)
			if r.code == 0 {
				t.Errorf("%s succeeded without the base rows", file)
			}
			for _, want := range []string{"ERROR", "foreign key", "teams.id = '" + defaultIDs["team_id"] + "'", "00_base.sql"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("%s: stderr does not mention %q", file, want)
				}
			}
			if r.stdout != "" {
				t.Errorf("%s: stdout %q", file, r.stdout)
			}
		}
		checkCounts(t, d, "after the failed seeds", nil)

		// One base row missing: named, and the transaction leaves nothing behind.
		d.apply(t, baseSQL, composeIDs...)
		if _, err := d.conn.Exec(context.Background(), "DELETE FROM certificate_profiles WHERE id = $1", defaultIDs["profile_id"]); err != nil {
			t.Fatal(err)
		}
		r := d.psql(t, certsSQL, composeIDs...)
		if r.code == 0 || !strings.Contains(r.stderr, "certificate_profiles.id = '"+defaultIDs["profile_id"]+"'") ||
			strings.Contains(r.stderr, "teams.id") {
			t.Errorf("missing profile only: exit %d, stderr %s", r.code, r.stderr)
		}
		if n := d.int(t, "SELECT count(*) FROM managed_certificates"); n != 0 {
			t.Errorf("%d certificates inserted by a failed seed", n)
		}
	})

	// The checks above can fail on certctl's real schema: a fixture that references a row which does not
	// exist is stopped by certctl's own foreign key (no guard of ours in between), psql exits 3 and the
	// whole transaction, good rows included, is rolled back.
	t.Run("BrokenFixtureFails", func(t *testing.T) {
		d := e.newDB(t)
		d.apply(t, baseSQL, composeIDs...)
		const broken = "testdata/broken_missing_owner.sql"
		r := d.psqlPath(t, broken, composeIDs...)
		t.Logf("%s: exit %d, stderr:\n%s", broken, r.code, r.stderr)
		if r.code != 3 {
			t.Errorf("%s: exit %d, want psql's 3 (script error under ON_ERROR_STOP)", broken, r.code)
		}
		for _, want := range []string{
			"ERROR:",
			`violates foreign key constraint "managed_certificates_owner_id_fkey"`,
			`Key (owner_id)=(lt-missing-owner) is not present in table "owners"`,
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr does not mention %q", broken, want)
			}
		}
		added := map[string]int64{"teams": 1, "owners": 1, "renewal_policies": 1, "issuers": 1, "certificate_profiles": 2}
		checkCounts(t, d, "after the broken fixture", added) // the base rows only: no certificate, no agent
	})

	// The ids have no default in the files: one not given is named, and nothing is inserted.
	t.Run("IDsRequired", func(t *testing.T) {
		d := e.newDB(t)
		d.apply(t, baseSQL, composeIDs...)
		for _, file := range []string{certsSQL, agentsSQL} {
			r := d.psql(t, file, "team_id="+defaultIDs["team_id"], "policy_id="+defaultIDs["policy_id"])
			if r.code == 0 || !strings.Contains(r.stderr, file+": no value for the psql variable(s) owner_id, issuer_id, profile_id") {
				t.Errorf("%s without three ids: exit %d, stderr %s", file, r.code, r.stderr)
			}
		}
		checkCounts(t, d, "after the refused seeds", map[string]int64{"teams": 1, "owners": 1, "renewal_policies": 1, "issuers": 1, "certificate_profiles": 2})
	})

	t.Run("Overrides", func(t *testing.T) {
		d := e.newDB(t)
		ov := map[string]string{"team_id": "ov-team", "owner_id": "ov-owner", "policy_id": "ov-policy",
			"issuer_id": "ov-issuer", "profile_id": "ov-profile"}
		var ids []string
		for k, v := range ov {
			ids = append(ids, k+"="+v)
		}
		d.apply(t, baseSQL, ids...)
		before := d.now(t)
		d.apply(t, certsSQL, append(ids, "bulk_certs=123")...)
		beforeAgents := d.now(t)
		d.apply(t, agentsSQL, append(ids, "agent_count=37")...)
		after := d.now(t)
		checkCerts(t, d, 123, ov, before, beforeAgents)
		checkAgents(t, d, 37, beforeAgents, after)

		// 0 adds nothing; growing the count adds only the missing tail.
		d.apply(t, certsSQL, append(ids, "bulk_certs=0")...)
		d.apply(t, certsSQL, append(ids, "bulk_certs=200")...)
		if n := d.int(t, "SELECT count(*) FROM managed_certificates"); n != 200 {
			t.Errorf("%d certificates after growing 123 -> 200", n)
		}
		// An empty value, as compose passes an unset SEED_AGENTS, means the default.
		d.apply(t, agentsSQL, append(ids, "agent_count=")...)
		if n := d.int(t, "SELECT count(*) FROM agents"); n != defaultAgents {
			t.Errorf("%d agents after agent_count='' (want the default %d)", n, defaultAgents)
		}
		for _, bad := range []struct{ file, v string }{
			{certsSQL, "bulk_certs=abc"}, {certsSQL, "bulk_certs=-5"}, {agentsSQL, "agent_count=1e3"},
		} {
			r := d.psql(t, bad.file, append(ids, bad.v)...)
			if r.code == 0 || !strings.Contains(r.stderr, "must be a non-negative integer") {
				t.Errorf("%s with %s: exit %d, stderr %s", bad.file, bad.v, r.code, r.stderr)
			}
		}
	})
}

// TestSeedLarge rehearses a large fleet: SEED_LARGE=1 go test -run TestSeedLarge -v ./test/seed/
// (SEED_LARGE_CERTS overrides the 1,000,000).
func TestSeedLarge(t *testing.T) {
	if os.Getenv("SEED_LARGE") != "1" {
		t.Skip("set SEED_LARGE=1 to seed 1,000,000 certificates")
	}
	n := int64(1_000_000)
	if s := os.Getenv("SEED_LARGE_CERTS"); s != "" {
		if _, err := fmt.Sscan(s, &n); err != nil {
			t.Fatalf("SEED_LARGE_CERTS=%q: %v", s, err)
		}
	}
	e := newEnv(t)
	d := e.newDB(t)
	d.apply(t, baseSQL, composeIDs...)
	before := d.now(t)
	elapsed := d.apply(t, certsSQL, append(composeIDs, fmt.Sprintf("bulk_certs=%d", n))...)
	after := d.now(t)
	t.Logf("seeding %d certificates: %v (PostgreSQL %s)", n, elapsed.Round(time.Millisecond), serverVersion(t, d))
	checkCerts(t, d, n, defaultIDs, before, after)

	start := time.Now()
	d.apply(t, certsSQL, append(composeIDs, fmt.Sprintf("bulk_certs=%d", n))...)
	t.Logf("rerun (adds nothing): %v", time.Since(start).Round(time.Millisecond))
	if got := d.int(t, "SELECT count(*) FROM managed_certificates"); got != n {
		t.Errorf("%d certificates after the rerun, want %d", got, n)
	}
	var size string
	_ = d.conn.QueryRow(context.Background(),
		"SELECT pg_size_pretty(pg_total_relation_size('managed_certificates'))").Scan(&size)
	t.Logf("managed_certificates with indexes: %s", size)
	checkCertctlCertificateList(t, d, n)
}

func serverVersion(t testing.TB, d *db) string {
	var v string
	if err := d.conn.QueryRow(context.Background(), "SHOW server_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// checkCerts verifies what 01 promises for n certificates referencing the base rows named in ids (psql
// variable → id), seeded by a transaction that started between notBefore and notAfter (database clock).
func checkCerts(t *testing.T, d *db, n int64, ids map[string]string, notBefore, notAfter time.Time) {
	t.Helper()
	ctx := context.Background()
	var (
		total, active, bad, seqOK, distinctTx int64
		txTime, minExp, maxExp                time.Time
	)
	err := d.conn.QueryRow(ctx, `
		SELECT count(*),
		       count(*) FILTER (WHERE status = 'Active'),
		       count(*) FILTER (WHERE environment IS DISTINCT FROM 'loadtest'
		           OR common_name <> name || '.loadtest.example.com'
		           OR sans IS DISTINCT FROM ARRAY[common_name::text]
		           OR tags IS DISTINCT FROM '{"harness":"certctl-loadtest","fixture":"bulk-renewal"}'::jsonb
		           OR source IS DISTINCT FROM ''
		           OR id <> 'lt-bulk-' || substr(name, length('loadtest-bulk-') + 1)
		           OR owner_id <> $2 OR team_id <> $3
		           OR renewal_policy_id <> $4 OR certificate_profile_id IS DISTINCT FROM $5
		           OR issuer_id <> $6
		           OR expires_at IS NULL OR revoked_at IS NOT NULL OR last_renewal_at IS NOT NULL),
		       count(*) FILTER (WHERE CASE WHEN name ~ '^loadtest-bulk-[0-9]{7,}$'
		           THEN substr(name, length('loadtest-bulk-') + 1)::bigint BETWEEN 1 AND $1 END),
		       count(DISTINCT updated_at), min(updated_at), min(expires_at), max(expires_at)
		FROM managed_certificates WHERE name LIKE 'loadtest-bulk-%'`, n,
		ids["owner_id"], ids["team_id"], ids["policy_id"], ids["profile_id"], ids["issuer_id"]).
		Scan(&total, &active, &bad, &seqOK, &distinctTx, &txTime, &minExp, &maxExp)
	if err != nil {
		t.Fatal(err)
	}
	if total != n || active != n || seqOK != n || bad != 0 {
		t.Fatalf("certificates: %d total, %d Active, %d with sequence names 1..%d, %d malformed; want %d, all well-formed",
			total, active, seqOK, n, bad, n)
	}
	// One transaction, whose now() is every row's updated_at.
	if distinctTx != 1 || txTime.Before(notBefore) || txTime.After(notAfter) {
		t.Fatalf("updated_at: %d distinct values, first %v; want one, within [%v, %v]", distinctTx, txTime, notBefore, notAfter)
	}
	window := 30 * 24 * time.Hour
	step := window / time.Duration(n)
	if !maxExp.Equal(txTime.Add(window)) {
		t.Errorf("latest expiry %v, want exactly now()+30d = %v", maxExp, txTime.Add(window))
	}
	if gap := minExp.Sub(txTime); gap <= 0 || gap > step+time.Millisecond {
		t.Errorf("earliest expiry now()+%v, want now()+%v (30 days / %d)", gap, step, n)
	}
	// At check time, against the wall clock: all within (now, now+30d], except those whose turn came
	// while the insert ran (one every 30 days / n: none at 10K, a handful at 1M).
	var live, expired int64
	var checkTime time.Time
	if err := d.conn.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE expires_at > clock_timestamp() AND expires_at <= clock_timestamp() + interval '30 days'),
			count(*) FILTER (WHERE expires_at <= clock_timestamp()), clock_timestamp()
		FROM managed_certificates WHERE name LIKE 'loadtest-bulk-%'`).Scan(&live, &expired, &checkTime); err != nil {
		t.Fatal(err)
	}
	if allowed := int64(checkTime.Sub(txTime)/step) + 1; live+expired != n || expired > allowed {
		t.Errorf("at check time %d of %d certificates expire within (now, now+30d], %d already expired (at most %d allowed)",
			live, n, expired, allowed)
	}
	// Evenly spread: each of the 30 days holds n/30 certificates, give or take one.
	rows, err := d.conn.Query(ctx, `
		SELECT b, count(*) FROM (
			SELECT least(width_bucket(extract(epoch FROM expires_at - $1::timestamptz), 0, 30 * 86400, 30), 30) AS b
			FROM managed_certificates WHERE name LIKE 'loadtest-bulk-%') s
		GROUP BY b ORDER BY b`, txTime)
	if err != nil {
		t.Fatal(err)
	}
	perDay, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (int64, error) {
		var b, c int64
		err := r.Scan(&b, &c)
		return c, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n >= 30 {
		if len(perDay) != 30 {
			t.Errorf("expiries fall into %d of 30 days", len(perDay))
		}
		for i, c := range perDay {
			if c < n/30-1 || c > n/30+1 {
				t.Errorf("day %d holds %d certificates, want %d±1", i+1, c, n/30)
			}
		}
	}
	// created_at increases with the sequence: certctl's created_at order is the name order.
	if disorder := d.int(t, `SELECT count(*) FROM (
			SELECT created_at <= lag(created_at) OVER (ORDER BY name) AS bad
			FROM managed_certificates WHERE name LIKE 'loadtest-bulk-%') s WHERE bad`); disorder != 0 {
		t.Errorf("%d certificates whose created_at is not after the previous name's", disorder)
	}
}

// checkAgents verifies what 02 promises for n agents seeded between notBefore and notAfter.
func checkAgents(t *testing.T, d *db, n int64, notBefore, notAfter time.Time) {
	t.Helper()
	var total, online, bad, linux, windows, darwin, amd64, arm64 int64
	var oldest, newest time.Time
	err := d.conn.QueryRow(context.Background(), `
		SELECT count(*),
		       count(*) FILTER (WHERE status = 'Online'),
		       count(*) FILTER (WHERE hostname IS DISTINCT FROM name || '.loadtest.example.com'
		           OR id IS DISTINCT FROM 'lt-agent-' || substr(name, length('loadtest-agent-') + 1)
		           OR name !~ '^loadtest-agent-[0-9]{7,}$'
		           OR os IS NULL OR architecture IS NULL OR version IS DISTINCT FROM 'loadtest'
		           OR ip_address !~ '^10\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$'
		           OR api_key_hash IS NULL OR api_key_hash = ''
		           OR last_heartbeat_at IS NULL OR registered_at > last_heartbeat_at
		           OR retired_at IS NOT NULL),
		       count(*) FILTER (WHERE os = 'linux'), count(*) FILTER (WHERE os = 'windows'),
		       count(*) FILTER (WHERE os = 'darwin'),
		       count(*) FILTER (WHERE architecture = 'amd64'), count(*) FILTER (WHERE architecture = 'arm64'),
		       min(last_heartbeat_at), max(last_heartbeat_at)
		FROM agents WHERE name LIKE 'loadtest-agent-%'`).
		Scan(&total, &online, &bad, &linux, &windows, &darwin, &amd64, &arm64, &oldest, &newest)
	if err != nil {
		t.Fatal(err)
	}
	if total != n || online != n || bad != 0 {
		t.Fatalf("agents: %d total, %d Online, %d malformed; want %d, all Online and well-formed", total, online, bad, n)
	}
	if linux+windows+darwin != n || amd64+arm64 != n {
		t.Errorf("os %d/%d/%d, arch %d/%d: something outside linux/windows/darwin, amd64/arm64", linux, windows, darwin, amd64, arm64)
	}
	if n%10 == 0 && (linux != n*8/10 || windows != n/10 || darwin != n/10) {
		t.Errorf("os split linux/windows/darwin %d/%d/%d, want %d/%d/%d", linux, windows, darwin, n*8/10, n/10, n/10)
	}
	if amd64 == 0 || arm64 == 0 {
		t.Errorf("architectures amd64 %d / arm64 %d: want a mix", amd64, arm64)
	}
	t.Logf("%d agents: linux %d, windows %d, darwin %d; amd64 %d, arm64 %d; heartbeats %v apart",
		n, linux, windows, darwin, amd64, arm64, newest.Sub(oldest).Round(time.Millisecond))
	// Heartbeats within the 60 s before the seeding transaction, spread over (almost) all of them.
	if !oldest.After(notBefore.Add(-time.Minute)) || newest.After(notAfter) {
		t.Errorf("heartbeats %v .. %v, want within (%v, %v]", oldest, newest, notBefore.Add(-time.Minute), notAfter)
	}
	if n >= 60 && newest.Sub(oldest) < 59*time.Second {
		t.Errorf("heartbeats span %v, want staggered over 60 s", newest.Sub(oldest))
	}
}

// certctlCert is what certctl's CertificateRepository.List scans into (151107c): environment and
// expires_at are plain string / time.Time, so a NULL in either fails the whole list with a 500;
// tags must decode as map[string]string.
type certctlCert struct {
	ID, Name, CommonName             string
	SANs                             []string
	Environment                      string
	OwnerID, TeamID, IssuerID, RPID  string
	ProfileID                        *string
	Status                           string
	ExpiresAt                        time.Time
	Tags                             map[string]string
	LastRenewal, LastDeploy, Revoked *time.Time
	RevocationReason, Source         *string
	CreatedAt, UpdatedAt             time.Time
}

// certctlListQuery reads what certctl's unfiltered list reads, in its order (created_at, then
// LIMIT/OFFSET): the columns certctlCert holds, in its fields' order.
var certctlListQuery = "SELECT " + strings.Join([]string{"id", "name", "common_name", "sans", "environment",
	"owner_id", "team_id", "issuer_id", "renewal_policy_id", "certificate_profile_id", "status", "expires_at", "tags",
	"last_renewal_at", "last_deployment_at", "revoked_at", "revocation_reason", "source", "created_at", "updated_at"}, ", ") +
	" FROM managed_certificates ORDER BY created_at LIMIT $1 OFFSET $2"

func listPage(t *testing.T, d *db, perPage, page int) []certctlCert {
	t.Helper()
	rows, err := d.conn.Query(context.Background(), certctlListQuery, perPage, (page-1)*perPage)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []certctlCert
	for rows.Next() {
		var c certctlCert
		var tags []byte
		if err := rows.Scan(&c.ID, &c.Name, &c.CommonName, &c.SANs, &c.Environment, &c.OwnerID, &c.TeamID,
			&c.IssuerID, &c.RPID, &c.ProfileID, &c.Status, &c.ExpiresAt, &tags, &c.LastRenewal,
			&c.LastDeploy, &c.Revoked, &c.RevocationReason, &c.Source, &c.CreatedAt, &c.UpdatedAt); err != nil {
			t.Fatalf("certctl's list scan fails (it would answer 500): %v", err)
		}
		if err := json.Unmarshal(tags, &c.Tags); err != nil {
			t.Fatalf("certificate %s: tags do not decode as map[string]string: %v", c.ID, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCertctlCertificateList runs certctl's list the way a client pages through it (per_page 500, its
// maximum) and checks every seeded row scans, pages are disjoint and come in name order. For a large
// fleet only the first and last pages are read.
func checkCertctlCertificateList(t *testing.T, d *db, n int64) {
	t.Helper()
	const perPage = 500
	pages := int((n + perPage - 1) / perPage)
	var wanted []int
	if n <= 20000 {
		for p := 1; p <= pages; p++ {
			wanted = append(wanted, p)
		}
	} else {
		wanted = []int{1, 2, pages}
	}
	start := time.Now()
	seen := 0
	for _, p := range wanted {
		certs := listPage(t, d, perPage, p)
		for i, c := range certs {
			want := fmt.Sprintf("loadtest-bulk-%07d", (p-1)*perPage+i+1)
			if c.Name != want {
				t.Fatalf("page %d row %d is %s, want %s: certctl's created_at order is not the name order", p, i, c.Name, want)
			}
			if c.Tags["fixture"] != "bulk-renewal" || c.Environment != "loadtest" || len(c.SANs) != 1 {
				t.Fatalf("page %d row %d: %+v", p, i, c)
			}
		}
		seen += len(certs)
	}
	if n <= 20000 && int64(seen) != n {
		t.Errorf("paging per %d saw %d certificates, want %d", perPage, seen, n)
	}
	// certctl's renewal sweep (hourly, and once at boot) selects these: all of them are due.
	due := d.int(t, `SELECT count(*) FROM managed_certificates
		WHERE expires_at < now() + interval '31 days' AND status != 'Archived'`)
	if due != n {
		t.Errorf("%d certificates fall in certctl's 31-day renewal sweep, want all %d", due, n)
	}
	t.Logf("certctl list query over %d page(s) of %d: %v; renewal sweep matches %d", len(wanted), perPage,
		time.Since(start).Round(time.Millisecond), due)
}

// checkCertctlAgentScans reads every agent the way certctl does (AgentRepository.List, and the
// heartbeat's lookup): hostname, os, architecture, ip_address and version into plain strings.
func checkCertctlAgentScans(t *testing.T, d *db, n int64) {
	t.Helper()
	cols := []string{"id", "name", "hostname", "status", "last_heartbeat_at", "registered_at", "api_key_hash",
		"os", "architecture", "ip_address", "version", "retired_at", "retired_reason"}
	rows, err := d.conn.Query(context.Background(),
		"SELECT "+strings.Join(cols, ", ")+" FROM agents WHERE retired_at IS NULL ORDER BY registered_at DESC")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var count int64
	for rows.Next() {
		var id, name, host, status, keyHash, osName, arch, ip, version string
		var heartbeat, retired *time.Time
		var registered time.Time
		var reason *string
		if err := rows.Scan(&id, &name, &host, &status, &heartbeat, &registered, &keyHash,
			&osName, &arch, &ip, &version, &retired, &reason); err != nil {
			t.Fatalf("certctl's agent scan fails (heartbeat and list would answer 500): %v", err)
		}
		count++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Errorf("certctl's agent list returns %d agents, want %d", count, n)
	}
}

// snapshot fingerprints every row the seed files own, timestamps included.
func snapshot(t *testing.T, d *db) string {
	t.Helper()
	var s string
	err := d.conn.QueryRow(context.Background(), `
		SELECT concat_ws(' ',
			(SELECT count(*) || ':' || md5(string_agg(c::text, '|' ORDER BY id)) FROM managed_certificates c),
			(SELECT count(*) || ':' || md5(string_agg(a::text, '|' ORDER BY id)) FROM agents a),
			(SELECT count(*) || ':' || md5(string_agg(x::text, '|' ORDER BY id)) FROM teams x),
			(SELECT count(*) || ':' || md5(string_agg(x::text, '|' ORDER BY id)) FROM owners x),
			(SELECT count(*) || ':' || md5(string_agg(x::text, '|' ORDER BY id)) FROM renewal_policies x),
			(SELECT count(*) || ':' || md5(string_agg(x::text, '|' ORDER BY id)) FROM issuers x),
			(SELECT count(*) || ':' || md5(string_agg(x::text, '|' ORDER BY id)) FROM certificate_profiles x))`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
