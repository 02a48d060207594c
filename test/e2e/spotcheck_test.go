package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The spot checks against the real certctl, each of their thresholds breached by one of these runs: on
// a fast server they hold, except two guards that fire by design on certctl 2026-05 builds: the cursor
// walk's (the cursor never advances, docs/certctl-findings.md#pagination-cursor) and the bulk-revoke
// filter's (a filter matches at most 50 certificates, docs/certctl-findings.md#bulk-renew-filter-cap).
// tick_renewal_scan waits for certctl's scheduled renewal scan. `make spotcheck` schedules it 3 minutes
// after boot, after the other checks; these runs use certctl's shortest interval, 1 minute, and 1000
// due certificates (a scan of seconds), and accept a scan that overlaps the checks before it (the check
// measures it all the same, and says so): minutes of waiting each otherwise. The check against the
// baselines runs with the machine to itself, before the parallel tests: beside two other stacks on 2
// cores, stats_summary's median went from under 50 ms to 50.2 and 79.8 ms. The breach cases then run
// side by side: most of their time is spent waiting for certctl's clock.
func TestSpotchecks(t *testing.T) {
	e2e(t)
	gateParallel(t)
	t.Run("within the baselines", func(t *testing.T) {
		r := run(t, stackEnv(t, "SEED_BULK_CERTS=1000", "CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL=1m"), loadtest, "spotcheck")
		// Red by certctl's two defects (the cursor, the filter cap), whatever the machine's speed.
		wantCode(t, r, 99)
		// The latency budgets are certctl's published figures judged on this machine: stats_summary's
		// median has crossed its 50 ms (60 ms on a slower day), v2.1.7's renewal scan took 8 to 13 ms per
		// certificate on our 2-core machines against the 5 ms it publishes, and on a faster machine both
		// hold. Either is a finding, not the harness's fault: logged, not judged. "slow page walk, slow
		// renewal scan" shows the scan's budget breaking.
		heldButTiming(t, r, "stats_summary")
		heldButTiming(t, r, "tick_renewal_scan")
		wantThresholds(t, r, "bulk_revoke", "bulk_revoke_filter_capped count==0", "checks{way:owner} rate==1")
		wantThresholds(t, r, "inventory_walk", "inventory_cursor_stuck count==0", "checks{walk:cursor} rate==1")
		wantOutput(t, r, `CURSOR WALK STUCK`)
		wantOutput(t, r, `BULK REVOKE FILTER CAPPED: owner_id filter over 1000 certificates matched 50 and revoked 50; the same call again matched 50, revoked 0`)
		wantOutput(t, r, `run-now/renewal answered HTTP 404`)
		wantOutput(t, r, `tick_renewal_scan: 1000 Renewal jobs for 1000 due certificates`)
		logFigures(t, r)
	})
	// 31 s on every bulk revocation: each request is over 30 s, so over both sizes' total budget and over
	// 30 ms per certificate even for 1000 (310 ms for 100 ids, 620 ms per certificate the capped filter
	// matched). The database refuses the revocation of every certificate whose id ends in 7: 10 of each
	// 100 ids, 5 of the 50 the filter reaches. The follow-up and clean-up calls are untimed, so unfaulted.
	// One way per run, side by side: two runs of a minute each instead of one of three.
	for _, way := range []struct{ name, failing, output string }{
		{"ids", "checks{way:ids} rate==1", `bulk_revoke: ids 100: 10 failed, first: .*revocation of \S+ refused`},
		{"owner", "checks{way:owner} rate==1", `bulk_revoke: owner 100: 5 failed, first: .*revocation of \S+ refused`},
	} {
		t.Run("slow and partly refused bulk revoke by "+way.name, func(t *testing.T) {
			t.Parallel()
			seed := t.TempDir()
			copySQL(t, filepath.Join(root, "seed"), seed)
			copySQL(t, filepath.Join(root, "test", "e2e", "testdata", "seed-refuse-revocations"), seed)
			r := run(t, stackEnv(t, "SEED_DIR="+seed, "SEED_BULK_CERTS=1000", "SCENARIOS=bulk_revoke", "SPOTCHECK_REVOKE_WAYS="+way.name,
				"FAULT_LATENCY=31s", "FAULT_ROUTE=POST /api/v1/certificates/bulk-revoke"), loadtest, "spotcheck")
			wantCode(t, r, 99)
			failing := []string{
				"http_req_duration{size:100,way:" + way.name + "} max<5000", "http_req_duration{size:1000,way:" + way.name + "} max<30000",
				"bulk_revoke_ms_per_certificate{size:100,way:" + way.name + "} max<50", "bulk_revoke_ms_per_certificate{size:1000,way:" + way.name + "} max<30",
				"bulk_revoke_failed count==0", way.failing,
			}
			if way.name == "owner" {
				failing = append(failing, "bulk_revoke_filter_capped count==0")
			}
			wantThresholds(t, r, "bulk_revoke", failing...)
			wantOutput(t, r, way.output)
		})
	}
	t.Run("slow page walk, slow renewal scan", func(t *testing.T) {
		t.Parallel()
		// 6 s per list request over 1000 certificates: 2 pages of the page walk, each past p95 1000 ms,
		// 12 s per 1000 certificates. Every Renewal job insert waits 10 ms in the database: the scan of
		// the 1000 seeded certificates takes over 10 ms per certificate.
		seed := t.TempDir()
		copySQL(t, filepath.Join(root, "seed"), seed)
		if err := os.WriteFile(filepath.Join(seed, "91_slow_renewal_jobs.sql"), []byte(slowRenewalJobs(0.01)), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, stackEnv(t, "SEED_DIR="+seed, "SEED_BULK_CERTS=1000", "SCENARIOS=inventory_walk,tick_renewal_scan",
			"CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL=1m", "FAULT_LATENCY=6s", "FAULT_ROUTE=GET /api/v1/certificates$"), loadtest, "spotcheck")
		wantCode(t, r, 99)
		wantThresholds(t, r, "inventory_walk", "http_req_duration{walk:page} p(95)<1000",
			"inventory_walk_ms_per_1000_certs{walk:page} max<3000", "inventory_cursor_stuck count==0", "checks{walk:cursor} rate==1")
		wantThresholds(t, r, "tick_renewal_scan", "renewal_scan_ms_per_certificate max<5")
		wantOutput(t, r, `tick_renewal_scan: 1000 Renewal jobs for 1000 due certificates`)
	})
	t.Run("slow and refused reads and writes", func(t *testing.T) {
		t.Parallel()
		// 120 ms then a 500 on the stats summary (past the 100 ms mean and the 50 ms p50), on the list,
		// on bulk revoke and on the job list: every check of every spot check fails (tick_renewal_scan's
		// at its first count of due certificates, without waiting for a scan). No walk and no scan ever
		// completes, so their costs judged no sample: a budget that judged nothing does not pass. The gate
		// leaves bulk_revoke out: its setup issues 2,200 certificates (46 s of the run's 63 s of load), and
		// the full suite's two bulk-revoke subtests break its checks.
		env := stackEnv(t, "FAULT_LATENCY=120ms", "FAULT_ERROR_RATE=1",
			"FAULT_ROUTE=GET /api/v1/stats/summary,GET /api/v1/certificates$,POST /api/v1/certificates/bulk-revoke,GET /api/v1/jobs$")
		if testing.Short() {
			env = append(env, "SCENARIOS=stats_summary,inventory_walk,tick_renewal_scan")
		}
		r := run(t, env, loadtest, "spotcheck")
		wantCode(t, r, 99)
		wantThresholds(t, r, "stats_summary", "http_req_duration{phase:measured} avg<100", "http_req_duration{phase:measured} med<50",
			"checks{phase:measured} rate==1")
		wantThresholds(t, r, "inventory_walk", "checks{walk:page} rate==1", "checks{walk:cursor} rate==1",
			"inventory_walk_ms_per_1000_certs{walk:page} max<3000")
		if !testing.Short() {
			wantThresholds(t, r, "bulk_revoke", "checks{way:ids} rate==1", "checks{way:owner} rate==1")
		}
		wantThresholds(t, r, "tick_renewal_scan", "checks{phase:measured} rate==1", "renewal_scan_ms_per_certificate max<5")
	})
}

// heldButTiming: every threshold of a scenario held, but those on certctl's speed, which are logged.
func heldButTiming(t *testing.T, r result, scenario string) {
	t.Helper()
	_, th := scenarioByName(t, r.summary, scenario)
	for name, ok := range th {
		switch {
		case !ok && !timingThreshold(name):
			t.Errorf("%s: threshold %q failed unexpectedly", scenario, name)
		case !ok:
			t.Logf("%s: %s over certctl's published baseline on this machine", scenario, name)
		}
	}
}

// logFigures logs each spot check's line of figures: what the real certctl measured in this run.
func logFigures(t *testing.T, r result) {
	for _, m := range regexp.MustCompile(`(?m)^\[\w+\] (\w+: .+ — .+)$`).FindAllStringSubmatch(r.output, -1) {
		t.Logf("%s", m[1])
	}
}

// slowRenewalJobsSQL joins the scale seeder's fixtures in one run: every Renewal job certctl inserts
// waits 10 ms, as on a slow database, so its renewal scan takes more than 5 ms per certificate.
// slowRenewalJobs is a seed fixture that makes every Renewal job insert wait seconds in the database.
func slowRenewalJobs(seconds float64) string {
	return fmt.Sprintf(`CREATE OR REPLACE FUNCTION lt_slow_renewal_job() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.type = 'Renewal' THEN
    PERFORM pg_sleep(%g);
  END IF;
  RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS lt_slow_renewal_job ON jobs;
CREATE TRIGGER lt_slow_renewal_job BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION lt_slow_renewal_job();
`, seconds)
}

// copySQL copies the *.sql files of one directory, and of its subdirectories (seed/lib, which the
// fixtures include), into another.
func copySQL(t *testing.T, from, to string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".sql" {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(to, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		n++
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil || n == 0 {
		t.Fatalf("no SQL fixtures copied from %s (%v)", from, err)
	}
}
