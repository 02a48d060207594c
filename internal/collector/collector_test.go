package collector

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/pgtest"

	"github.com/jackc/pgx/v5"
)

func fastConfig(out string) Config {
	return Config{Out: out, ReadyFile: filepath.Join(out, "ready"),
		ActivityEvery: 50 * time.Millisecond, DatabaseEvery: 100 * time.Millisecond, StatementsEvery: 100 * time.Millisecond, MetricsEvery: 100 * time.Millisecond,
		TablesEvery: 100 * time.Millisecond}
}

func readStatus(t *testing.T, out string) map[string]SourceStatus {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, StatusFile))
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	m := map[string]SourceStatus{}
	for _, s := range st.Sources {
		m[s.Name] = s
	}
	return m
}

func lines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v: %s", path, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// Against a real PostgreSQL (without pg_stat_statements preloaded, as a user's own database may be)
// and a metrics endpoint: activity and counters are sampled, the statements are named not available
// with the reason, and the metrics lines hold the parsed samples.
func TestCollectsARealDatabaseAndMetrics(t *testing.T) {
	pg := pgtest.Start(t)
	var scrapes int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		scrapes++
		fmt.Fprintf(w, "# HELP certctl_issuance_total x\n# TYPE certctl_issuance_total counter\ncertctl_issuance_total %d\ncertctl_x_bucket{le=\"0.1\",kind=\"a b\"} 3\n", scrapes)
	}))
	defer srv.Close()
	out := t.TempDir()
	cfg := fastConfig(out)
	cfg.DatabaseURL = fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", pgtest.User, pg.Port)
	cfg.MetricsURL, cfg.Token = srv.URL, "tok"
	setup, err := pgx.Connect(context.Background(), cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Exec(context.Background(), "CREATE TABLE lt_certs (id int PRIMARY KEY, pem text); INSERT INTO lt_certs SELECT g, repeat('x', 200) FROM generate_series(1, 1000) g; ANALYZE lt_certs"); err != nil {
		t.Fatal(err)
	}
	setup.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if err := Run(ctx, cfg, t.Logf); err != nil {
		t.Fatal(err)
	}
	st := readStatus(t, out)
	for _, n := range []string{"pg_activity", "pg_database", "pg_tables", "certctl_metrics"} {
		if st[n].Samples < 3 || st[n].Errors != 0 {
			t.Errorf("%s: %+v", n, st[n])
		}
	}
	if s := st["pg_statements"]; s.Samples != 0 || !strings.Contains(s.Reason, "shared_preload_libraries") {
		t.Errorf("pg_statements without the library: %+v", s)
	}
	// Several backends (and rows) per sample: each sample is still one line.
	for _, f := range []string{ActivityFile, DatabaseFile, MetricsFile} {
		lines(t, filepath.Join(out, f))
	}
	db := lines(t, filepath.Join(out, DatabaseFile))
	if _, ok := db[0]["db"].(map[string]any)["xact_commit"]; !ok {
		t.Errorf("database line %v", db[0])
	}
	tl := lines(t, filepath.Join(out, TablesFile))
	tables := tl[len(tl)-1]["tables"].([]any)
	if len(tables) != 1 {
		t.Fatalf("tables line %v", tl[len(tl)-1])
	}
	if tb := tables[0].(map[string]any); tb["name"] != "lt_certs" || tb["table_bytes"].(float64) < 200_000 || tb["index_bytes"].(float64) <= 0 || tb["live"].(float64) != 1000 {
		t.Errorf("table %v", tb)
	}
	m := lines(t, filepath.Join(out, MetricsFile))
	samples := m[len(m)-1]["samples"].(map[string]any)
	if samples[`certctl_x_bucket{le="0.1",kind="a b"}`] != 3.0 || samples["certctl_issuance_total"].(float64) < 3 {
		t.Errorf("metrics line %v", m[len(m)-1])
	}
	if _, err := os.Stat(cfg.ReadyFile); err != nil {
		t.Errorf("ready file: %v", err)
	}
}

// Nothing reachable: every source says why, and the collector still exits cleanly.
func TestUnreachableSourcesAreReported(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	out := t.TempDir()
	cfg := fastConfig(out)
	cfg.MetricsURL = srv.URL + "/api/v1/metrics/prometheus"
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := Run(ctx, cfg, t.Logf); err != nil {
		t.Fatal(err)
	}
	st := readStatus(t, out)
	if s := st["pg_activity"]; !strings.Contains(s.Reason, "COLLECT_DATABASE_URL is not set") {
		t.Errorf("pg_activity: %+v", s)
	}
	if s := st["certctl_metrics"]; s.Samples != 0 || !strings.Contains(s.Reason, "404 Not Found") {
		t.Errorf("certctl_metrics: %+v", s)
	}
}

func TestParseProm(t *testing.T) {
	got := ParseProm([]byte("# HELP a b\na 1\nb{x=\"1 2\"} 2.5 1700000000\nc NaN\nd{y=\"z\"} notanumber\n\n"))
	if len(got) != 2 || got["a"] != 1 || got[`b{x="1 2"}`] != 2.5 {
		t.Errorf("%v", got)
	}
}

func TestBadIntervalRefused(t *testing.T) {
	_, err := LoadConfig(func(k string) string {
		return map[string]string{"COLLECT_OUT": "/x", "COLLECT_ACTIVITY_INTERVAL": "5"}[k]
	})
	if err == nil || !strings.Contains(err.Error(), "COLLECT_ACTIVITY_INTERVAL") {
		t.Errorf("%v", err)
	}
}

// json_agg over rows separates them with a newline; a sample is written as one line all the same.
func TestRowsAggregateToOneLine(t *testing.T) {
	pg := pgtest.Start(t)
	pc, err := connConfig(fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres", pgtest.User, pg.Port))
	if err != nil {
		t.Fatal(err)
	}
	d := &database{cfg: pc}
	if d.conn, err = pgx.ConnectConfig(context.Background(), pc); err != nil {
		t.Fatal(err)
	}
	defer d.close()
	line, err := d.query(context.Background(), `SELECT json_agg(s)::text FROM (SELECT 1 AS a, E'x\ny' AS q UNION ALL SELECT 2, 'z') s`)
	if err != nil || strings.Contains(string(line), "\n") || string(line) != `[{"a":1,"q":"x\ny"},{"a":2,"q":"z"}]` {
		t.Fatalf("%q %v", line, err)
	}
}

// The stack's database asks for a password (SCRAM on PostgreSQL 14 and later): the collector connects
// with the one in COLLECT_DATABASE_URL, names itself, and its samples are stamped in UTC.
func TestConnectsWithAPasswordAsItself(t *testing.T) {
	pg := pgtest.StartWithAuth(t, "scram-sha-256", "p@ss,w=rd'1")
	pc, err := connConfig(pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	d := &database{cfg: pc} // no connection yet: query makes it
	defer d.close()
	line, err := d.query(context.Background(), `SELECT json_build_object('app', current_setting('application_name'),
  'tz', current_setting('TimeZone'), 'at', '2024-01-02 03:04:05+02'::timestamptz)::text`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"app":"certctl-loadtest-collector","tz":"UTC","at":"2024-01-02T01:04:05+00:00"}`; string(line) != want {
		t.Errorf("got  %s\nwant %s", line, want)
	}
}

// A query that outlives its timeout is cancelled on the server, not left running there, and the next
// sample is taken all the same.
func TestATimedOutQueryIsCancelledOnTheServer(t *testing.T) {
	pg := pgtest.Start(t)
	url := fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres", pgtest.User, pg.Port)
	pc, err := connConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	d := &database{cfg: pc}
	defer d.close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := d.query(ctx, `SELECT pg_sleep(30)::text`); err == nil {
		t.Fatal("a 30 s query returned within 300 ms")
	}
	// The server's answer to the cancel request keeps the connection; a slower one costs a reconnect.
	t.Logf("connection kept after the timeout: %v", d.conn != nil)
	watcher, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close(context.Background())
	var sleeping int
	for range 40 {
		if err := watcher.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%' AND state = 'active'`).Scan(&sleeping); err != nil {
			t.Fatal(err)
		}
		if sleeping == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sleeping != 0 {
		t.Errorf("the timed-out query still runs on the server 2 s later")
	}
	if line, err := d.query(context.Background(), `SELECT '[1]'`); err != nil || string(line) != "[1]" {
		t.Errorf("the sample after a timeout: %q %v", line, err)
	}
}

// The activity is sampled every second, and every 250 ms for FineHold after a sample in which a backend
// waits on a heavyweight lock: the lock diagnosis's resolution only while there are lock waits.
func TestActivityFinerWhileLocksWait(t *testing.T) {
	c, err := LoadConfig(func(string) string { return "" })
	if err == nil {
		t.Fatal("a configuration without COLLECT_OUT")
	}
	c, err = LoadConfig(func(k string) string { return map[string]string{"COLLECT_OUT": "/tmp/x"}[k] })
	if err != nil || c.ActivityEvery != time.Second || c.ActivityFineEvery != 250*time.Millisecond || c.MetricsEvery != 30*time.Second {
		t.Fatalf("defaults %+v %v", c, err)
	}
	var sampled [][]byte
	now := time.Now()
	s := &source{every: time.Second, fine: 250 * time.Millisecond, wantsFine: waitsOnLocks, w: nopWriter{},
		sample: func(context.Context) ([]byte, error) { return sampled[len(sampled)-1], nil }}
	take := func(line string) time.Duration {
		sampled = append(sampled, []byte(line))
		s.take(context.Background())
		return s.interval(time.Now())
	}
	if got := take(`{"backends":[{"state":"active","wait":"LWLock:WALWrite"}]}`); got != time.Second {
		t.Errorf("no lock wait: %s", got)
	}
	if got := take(`{"backends":[{"state":"active","wait":"Lock:transactionid"}]}`); got != 250*time.Millisecond {
		t.Errorf("a lock wait: %s", got)
	}
	if got := s.interval(now.Add(FineHold + time.Second)); got != time.Second {
		t.Errorf("after the hold: %s", got)
	}
	if s.status.Samples != 2 || s.status.WaitMS < 0 {
		t.Errorf("status %+v", s.status)
	}
}

type nopWriter struct{}

func (nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (nopWriter) Close() error                { return nil }
