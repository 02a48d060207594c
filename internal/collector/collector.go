// Package collector samples certctl's server side while the load runs: PostgreSQL's activity, statement
// statistics and counters, and certctl's Prometheus endpoint. It runs as its own container on the load
// network (cmd/collector), started by the harness just before the first k6 and stopped (SIGTERM) after the
// last, and writes what it saw under the run directory's server/ folder, one JSON line per sample.
// Whatever it cannot reach it reports as not available, with the reason, and goes on with the rest.
package collector

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"certctl-loadtest/internal/output"
)

// Files under server/, written by the collector (containers.jsonl is the harness's).
const (
	ActivityFile   = "pg_activity.jsonl"
	DatabaseFile   = "pg_database.jsonl"
	StatementsFile = "pg_statements.jsonl"
	MetricsFile    = "certctl_metrics.jsonl"
	TablesFile     = "pg_tables.jsonl"
	StatusFile     = "collector.json"
	ContainersFile = "containers.jsonl"
)

// Config is read from COLLECT_* variables.
type Config struct {
	DatabaseURL string // empty: the database is not sampled
	MetricsURL  string // empty: certctl's metrics are not scraped
	Token       string // Bearer token for MetricsURL
	CAFile      string // CA bundle for MetricsURL; empty: the system's
	Out         string // the directory to write to (the run's server/)
	ReadyFile   string // written once every source has been tried: the container's healthcheck
	// StatementsOff: pg_stat_statements is not loaded on purpose (PG_STAT_STATEMENTS=false).
	StatementsOff bool

	ActivityEvery time.Duration
	// ActivityFineEvery is the activity's interval while backends wait on locks (and FineHold after):
	// a lock diagnosis needs the finer picture, the rest of the run does not pay for it.
	ActivityFineEvery time.Duration
	DatabaseEvery     time.Duration
	StatementsEvery   time.Duration
	MetricsEvery      time.Duration
	TablesEvery       time.Duration
}

// LoadConfig reads the configuration; intervals default to the documented ones.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL: getenv("COLLECT_DATABASE_URL"), MetricsURL: getenv("COLLECT_METRICS_URL"),
		Token: getenv("COLLECT_TOKEN"), CAFile: getenv("COLLECT_CA_FILE"),
		Out: getenv("COLLECT_OUT"), ReadyFile: getenv("COLLECT_READY_FILE"),
		StatementsOff: getenv("COLLECT_STATEMENTS") == "off",
	}
	if c.Out == "" {
		return c, errors.New("COLLECT_OUT is not set: the directory to write samples to")
	}
	if c.ReadyFile == "" {
		c.ReadyFile = "/tmp/collector.ready"
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
		def  time.Duration
	}{
		{"COLLECT_ACTIVITY_INTERVAL", &c.ActivityEvery, time.Second},
		{"COLLECT_ACTIVITY_FINE_INTERVAL", &c.ActivityFineEvery, 250 * time.Millisecond},
		{"COLLECT_DATABASE_INTERVAL", &c.DatabaseEvery, 5 * time.Second},
		{"COLLECT_STATEMENTS_INTERVAL", &c.StatementsEvery, 15 * time.Second},
		// The diagnosis reads the scrapes around its window only, and each costs certctl its queries.
		{"COLLECT_METRICS_INTERVAL", &c.MetricsEvery, 30 * time.Second},
		// Sizes and vacuum counters move over minutes: a soak reads their drift, a short run its two ends.
		{"COLLECT_TABLES_INTERVAL", &c.TablesEvery, time.Minute},
	} {
		*d.dst = d.def
		if v := getenv(d.name); v != "" {
			iv, err := time.ParseDuration(v)
			if err != nil || iv < 50*time.Millisecond {
				return c, fmt.Errorf("%s=%q: want a duration of at least 50ms, like 250ms or 5s", d.name, v)
			}
			*d.dst = iv
		}
	}
	return c, nil
}

// Status is collector.json: each source's outcome and the collector's own cost.
type Status struct {
	StartedAt time.Time         `json:"started_at"`
	EndedAt   time.Time         `json:"ended_at"`
	Intervals map[string]string `json:"intervals"`
	Sources   []SourceStatus    `json:"sources"`
	// CPUSeconds is the collector process's own CPU time (user + system) over its life.
	CPUSeconds float64 `json:"cpu_s"`
}

type SourceStatus struct {
	Name    string `json:"name"`
	File    string `json:"file,omitempty"`
	Samples int    `json:"samples"`
	Errors  int    `json:"errors"`
	// Reason is why the source gave nothing (not available), or its last error.
	Reason string `json:"reason,omitempty"`
	// WaitMS is the time the collector waited for this source's answers, all samples together: what
	// PostgreSQL (or certctl, for its metrics) spent serving the collector is at most this.
	WaitMS float64 `json:"wait_ms"`
}

// source is one sampled thing: a query or a scrape every interval, one JSON line each.
type source struct {
	status SourceStatus
	every  time.Duration
	sample func(ctx context.Context) ([]byte, error) // one line, or an error
	w      io.WriteCloser
	// unavailable set: the source is not sampled at all.
	unavailable bool
	// fine, when shorter than every, is the interval for FineHold after a sample wantsFine.
	fine      time.Duration
	wantsFine func(line []byte) bool
	fineUntil time.Time
}

// FineHold is how long a sample that wants the finer interval keeps it.
const FineHold = 30 * time.Second

// interval is the time to the source's next sample.
func (s *source) interval(now time.Time) time.Duration {
	if s.fine > 0 && s.fine < s.every && now.Before(s.fineUntil) {
		return s.fine
	}
	return s.every
}

// waitsOnLocks: a backend in the activity sample waits on a heavyweight lock.
func waitsOnLocks(line []byte) bool { return bytes.Contains(line, []byte(`"wait":"Lock:`)) }

// Run samples until ctx ends, takes a last sample of every source, and writes collector.json.
func Run(ctx context.Context, cfg Config, logf func(string, ...any)) error {
	st := Status{StartedAt: time.Now().UTC(), Intervals: map[string]string{
		"activity": cfg.ActivityEvery.String(), "activity_fine": cfg.ActivityFineEvery.String(), "database": cfg.DatabaseEvery.String(),
		"statements": cfg.StatementsEvery.String(), "metrics": cfg.MetricsEvery.String(), "tables": cfg.TablesEvery.String(),
	}}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	db := &database{}
	var sources []*source
	sources = append(sources, db.sources(ctx, cfg, logf)...)
	sources = append(sources, metricsSource(cfg))
	for _, s := range sources {
		if s.unavailable {
			continue
		}
		f, err := output.Create(filepath.Join(cfg.Out, s.status.File))
		if err != nil {
			return err
		}
		s.w = f
	}
	// The first sample of each before the healthcheck passes: the load starts after it.
	for _, s := range sources {
		s.take(context.Background())
	}
	if err := output.Text(cfg.ReadyFile, "ok\n"); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, s := range sources {
		if s.unavailable {
			continue
		}
		wg.Add(1)
		go func(s *source) {
			defer wg.Done()
			// On a schedule, as a ticker would be, but one whose step changes with what is seen.
			next := time.Now()
			for {
				now := time.Now()
				next = next.Add(s.interval(now))
				if next.Before(now) {
					next = now // a sample that took longer than the interval: no burst to catch up
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Until(next)):
					s.take(ctx)
				}
			}
		}(s)
	}
	wg.Wait()
	// The "after" sample: the stack is still up, the load is over.
	final, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range sources {
		if s.status.Name != "pg_activity" {
			s.take(final)
		}
		if s.w != nil {
			s.w.Close()
		}
		st.Sources = append(st.Sources, s.status)
	}
	db.close()
	st.EndedAt = time.Now().UTC()
	st.CPUSeconds = ownCPU()
	return output.JSON(filepath.Join(cfg.Out, StatusFile), st)
}

func (s *source) take(ctx context.Context) {
	if s.unavailable {
		return
	}
	began := time.Now()
	line, err := s.sample(ctx)
	s.status.WaitMS += float64(time.Since(began).Microseconds()) / 1000
	if err != nil {
		if ctx.Err() != nil {
			return // stopped mid-query: not the source's fault
		}
		s.status.Errors++
		s.status.Reason = err.Error()
		return
	}
	if _, err := s.w.Write(append(line, '\n')); err != nil {
		s.status.Errors++
		s.status.Reason = "writing " + s.status.File + ": " + err.Error()
		return
	}
	s.status.Samples++
	if s.wantsFine != nil && s.wantsFine(line) {
		s.fineUntil = time.Now().Add(FineHold)
	}
}

func ownCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// database holds the one connection every database source shares: one backend, queries in turn.
type database struct {
	mu   sync.Mutex
	conn *pgx.Conn
	cfg  *pgx.ConnConfig
}

func (d *database) close() {
	if d.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		d.conn.Close(ctx)
	}
}

func (d *database) query(ctx context.Context, sql string) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if d.conn == nil {
		// The last query timed out (a saturated database) and took the connection with it.
		c, err := pgx.ConnectConfig(qctx, d.cfg)
		if err != nil {
			return nil, err
		}
		d.conn = c
	}
	rows, err := d.conn.Query(qctx, sql)
	var vals []*string
	if err == nil {
		vals, err = pgx.CollectRows(rows, pgx.RowTo[*string])
	}
	var pe *pgconn.PgError
	if err != nil && (!errors.As(err, &pe) || d.conn.IsClosed()) {
		d.close()
		d.conn = nil
	}
	if err != nil {
		return nil, err
	}
	if len(vals) != 1 || vals[0] == nil {
		return nil, fmt.Errorf("expected one JSON value, got %d rows", len(vals))
	}
	// json_agg of rows puts a newline between them: one sample must be one line.
	var line bytes.Buffer
	if err := json.Compact(&line, []byte(*vals[0])); err != nil {
		return nil, fmt.Errorf("the database answered something other than JSON: %v", err)
	}
	return line.Bytes(), nil
}

// connConfig reads COLLECT_DATABASE_URL into pgx's configuration, set up to sample as the collector always
// has: one plain round trip per query, UTC timestamps, and a query that outlives its timeout cancelled on
// the server rather than left running there.
func connConfig(url string) (*pgx.ConnConfig, error) {
	pc, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	pc.RuntimeParams["application_name"] = "certctl-loadtest-collector"
	// clock_timestamp() is rendered in the session's zone: the samples' "at" must be UTC.
	pc.RuntimeParams["TimeZone"] = "UTC"
	pc.ConnectTimeout = 5 * time.Second
	// The simple query protocol: each sample is one Query message, with no prepared statement kept on
	// the server, as the sampling cost in docs/diagnosis.md was measured.
	pc.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	// pgx's default only drops the socket, and the backend would go on running a query nobody waits for.
	pc.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
	}
	return pc, nil
}

// The sampling queries. Postgres builds each JSON line itself: the collector only writes it down.
// Only client backends other than our own count, and only those doing something (idle ones wait for
// certctl, not for the database).
const (
	activitySQL = `SELECT json_build_object('at', clock_timestamp(), 'backends', coalesce(json_agg(json_build_object(
  'state', state, 'wait', CASE WHEN wait_event IS NULL THEN NULL ELSE wait_event_type || ':' || wait_event END,
  'query', left(query, 200))), '[]'::json))::text
FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state IS DISTINCT FROM 'idle'`

	databaseSQL = `SELECT json_build_object('at', clock_timestamp(),
  'db', (SELECT row_to_json(d) FROM (SELECT numbackends, xact_commit, xact_rollback, blks_read, blks_hit,
    tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted, conflicts, temp_files, temp_bytes, deadlocks,
    sessions
    FROM pg_stat_database WHERE datname = current_database()) d),
  'locks_waiting', (SELECT count(*) FROM pg_locks WHERE NOT granted)%s)::text`
	// pg_stat_wal is PostgreSQL 14 to 17's; without it the database source still samples the rest.
	walSQL = `,
  'wal', (SELECT row_to_json(w) FROM (SELECT wal_records, wal_fpi, wal_bytes, wal_buffers_full, wal_write, wal_sync FROM pg_stat_wal) w)`

	// Every table of certctl's schema with its heap and index sizes, live and dead rows and vacuum counts:
	// what a soak reads for bloat and autovacuum, and any run for what its load wrote.
	tablesSQL = `SELECT json_build_object('at', clock_timestamp(), 'tables', coalesce(json_agg(t ORDER BY t.name), '[]'::json))::text FROM (
  SELECT relname AS name, pg_table_size(relid) AS table_bytes, pg_indexes_size(relid) AS index_bytes,
    n_live_tup AS live, n_dead_tup AS dead, n_tup_ins AS inserted, n_tup_upd AS updated, n_tup_del AS deleted,
    autovacuum_count AS autovacuums, autoanalyze_count AS autoanalyzes, vacuum_count AS vacuums
  FROM pg_stat_user_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')) t`

	statementsSQL = `SELECT json_build_object('at', clock_timestamp(), 'entries', (SELECT count(*) FROM pg_stat_statements),
  'dealloc', (SELECT dealloc FROM pg_stat_statements_info), 'statements', coalesce(json_agg(s), '[]'::json))::text FROM (
  SELECT queryid::text AS id, left(query, 300) AS query, calls, total_exec_time AS total_ms, rows
  FROM pg_stat_statements
  WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_%'
  ORDER BY total_exec_time DESC LIMIT 25) s`
)

// sources connects (retrying while the database starts) and returns the database's three sources, each
// marked not available with the reason when it cannot be sampled.
func (d *database) sources(ctx context.Context, cfg Config, logf func(string, ...any)) []*source {
	activity := &source{status: SourceStatus{Name: "pg_activity", File: ActivityFile}, every: cfg.ActivityEvery, fine: cfg.ActivityFineEvery, wantsFine: waitsOnLocks}
	counters := &source{status: SourceStatus{Name: "pg_database", File: DatabaseFile}, every: cfg.DatabaseEvery}
	statements := &source{status: SourceStatus{Name: "pg_statements", File: StatementsFile}, every: cfg.StatementsEvery}
	tables := &source{status: SourceStatus{Name: "pg_tables", File: TablesFile}, every: cfg.TablesEvery}
	all := []*source{activity, counters, statements, tables}
	off := func(reason string) []*source {
		for _, s := range all {
			s.unavailable, s.status.Reason, s.status.File = true, reason, ""
		}
		return all
	}
	if cfg.DatabaseURL == "" {
		return off("no database access: COLLECT_DATABASE_URL is not set")
	}
	pc, err := connConfig(cfg.DatabaseURL)
	if err != nil {
		return off("COLLECT_DATABASE_URL: " + err.Error())
	}
	d.cfg = pc
	deadline := time.Now().Add(20 * time.Second)
	for {
		d.conn, err = pgx.ConnectConfig(ctx, pc)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	if err != nil {
		return off("cannot connect to the database: " + err.Error())
	}
	activity.sample = func(ctx context.Context) ([]byte, error) { return d.query(ctx, activitySQL) }
	withWAL := fmt.Sprintf(databaseSQL, walSQL)
	if _, err := d.query(ctx, withWAL); err != nil {
		withWAL = fmt.Sprintf(databaseSQL, "")
	}
	counters.sample = func(ctx context.Context) ([]byte, error) { return d.query(ctx, withWAL) }
	// pg_stat_statements counts from a reset at the start of the load; it needs the library preloaded
	// (the stack's postgres does) and the extension created (a superuser may; the stack's user is one).
	if cfg.StatementsOff {
		statements.unavailable, statements.status.Reason, statements.status.File = true, StatementsOffReason, ""
	} else if _, err := d.conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		statements.unavailable, statements.status.Reason, statements.status.File = true, "pg_stat_statements cannot be created: "+pgReason(err), ""
	} else if _, err := d.conn.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
		statements.unavailable, statements.status.Reason, statements.status.File = true, "pg_stat_statements: "+pgReason(err), ""
	}
	statements.sample = func(ctx context.Context) ([]byte, error) { return d.query(ctx, statementsSQL) }
	tables.sample = func(ctx context.Context) ([]byte, error) { return d.query(ctx, tablesSQL) }
	logf("sampling the database: activity every %s (%s while backends wait on locks), counters every %s, statements every %s, tables every %s", cfg.ActivityEvery, cfg.ActivityFineEvery, cfg.DatabaseEvery, cfg.StatementsEvery, cfg.TablesEvery)
	return all
}

// StatementsOffReason is the pg_statements source's reason when the harness left pg_stat_statements out.
const StatementsOffReason = "off (PG_STAT_STATEMENTS=false; the statements' shares come from the activity samples)"

func pgReason(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "55000" {
		return "the library is not loaded (shared_preload_libraries must include pg_stat_statements)"
	}
	return err.Error()
}

// metricsSource scrapes certctl's Prometheus endpoint; each line holds every sample by name and labels.
func metricsSource(cfg Config) *source {
	s := &source{status: SourceStatus{Name: "certctl_metrics", File: MetricsFile}, every: cfg.MetricsEvery}
	if cfg.MetricsURL == "" {
		s.unavailable, s.status.Reason, s.status.File = true, "no metrics endpoint: COLLECT_METRICS_URL is not set", ""
		return s
	}
	tr := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			s.unavailable, s.status.Reason, s.status.File = true, fmt.Sprintf("COLLECT_CA_FILE %s holds no certificate (%v)", cfg.CAFile, err), ""
			return s
		}
		tr.RootCAs = pool
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tr, MaxIdleConns: 1}}
	s.sample = func(ctx context.Context) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.MetricsURL, nil)
		if err != nil {
			return nil, err
		}
		if cfg.Token != "" {
			req.Header.Set("Authorization", "Bearer "+cfg.Token)
		}
		at := time.Now().UTC()
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s answered %s", cfg.MetricsURL, resp.Status)
		}
		// How long certctl took to answer: its metrics are computed on request, from the database.
		return json.Marshal(struct {
			At      time.Time          `json:"at"`
			TookMS  float64            `json:"took_ms"`
			Samples map[string]float64 `json:"samples"`
		}{at, float64(time.Since(at).Microseconds()) / 1000, ParseProm(body)})
	}
	return s
}

// ParseProm reads Prometheus's text format into series (name{labels} as exposed) → value. Comments,
// and samples whose value is not a finite number, are skipped; a trailing timestamp is ignored.
func ParseProm(b []byte) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		// The value follows the last '}' when there are labels (label values may hold spaces).
		name, rest := line, ""
		if i := strings.LastIndexByte(line, '}'); i >= 0 {
			name, rest = line[:i+1], strings.TrimSpace(line[i+1:])
		} else if f := strings.Fields(line); len(f) >= 2 {
			name, rest = f[0], strings.Join(f[1:], " ")
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		// NaN and ±Inf have no JSON form: a summary's quantile over no observation is NaN.
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		out[name] = v
	}
	return out
}

// Healthcheck passes once Run has taken its first samples.
func Healthcheck(cfg Config) error {
	if _, err := os.Stat(cfg.ReadyFile); err != nil {
		return fmt.Errorf("not sampling yet: %v", err)
	}
	return nil
}
