package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// The spot checks against the real certctl, each of their thresholds breached by one of these runs: on
// a fast server they hold, except the cursor guard, which fires because certctl's cursor never advances
// (docs/certctl-findings.md#pagination-cursor).
func TestSpotchecks(t *testing.T) {
	t.Parallel()
	t.Run("within the baselines", func(t *testing.T) {
		r := run(t, stackEnv(t), loadtest, "spotcheck")
		wantCode(t, r, 99)
		wantThresholds(t, r, "stats_summary")
		wantThresholds(t, r, "bulk_revoke")
		wantThresholds(t, r, "inventory_walk", "inventory_cursor_stuck count==0", "checks{walk:cursor} rate==1")
		wantOutput(t, r, `CURSOR WALK STUCK`)
	})
	t.Run("slow page walk, slow and partly refused bulk revoke", func(t *testing.T) {
		// 6 s per request on the list and on bulk revoke, over an inventory of about 1000 certificates:
		// 3 pages of the page walk, each past p95 1000 ms, 18 s per 1000 certificates; 60 ms per
		// revoked certificate and one request over 5 s. The database refuses 10 of the 100 revocations.
		seed := t.TempDir()
		copySQL(t, filepath.Join(root, "seed"), seed)
		copySQL(t, filepath.Join(root, "test", "e2e", "testdata", "seed-refuse-revocations"), seed)
		r := run(t, stackEnv(t, "SEED_DIR="+seed, "SEED_BULK_CERTS=1000", "FAULT_LATENCY=6s",
			"FAULT_ROUTE=GET /api/v1/certificates$,POST /api/v1/certificates/bulk-revoke"), loadtest, "spotcheck")
		wantCode(t, r, 99)
		wantThresholds(t, r, "stats_summary")
		wantThresholds(t, r, "inventory_walk", "http_req_duration{walk:page} p(95)<1000",
			"inventory_walk_ms_per_1000_certs{walk:page} max<3000", "inventory_cursor_stuck count==0", "checks{walk:cursor} rate==1")
		wantThresholds(t, r, "bulk_revoke", "bulk_revoke_ms_per_certificate max<50", "http_req_duration{phase:measured} max<5000",
			"bulk_revoke_failed count==0", "checks{phase:measured} rate==1")
		wantOutput(t, r, `bulk_revoke: 10 failed, first: .*revocation of \S+ refused`)
	})
	t.Run("slow and refused reads and writes", func(t *testing.T) {
		// 120 ms then a 500 on the stats summary (past the 100 ms mean and the 50 ms p50), on the list
		// and on bulk revoke: every check of every spot check fails.
		r := run(t, stackEnv(t, "FAULT_LATENCY=120ms", "FAULT_ERROR_RATE=1",
			"FAULT_ROUTE=GET /api/v1/stats/summary,GET /api/v1/certificates$,POST /api/v1/certificates/bulk-revoke"), loadtest, "spotcheck")
		wantCode(t, r, 99)
		wantThresholds(t, r, "stats_summary", "http_req_duration{phase:measured} avg<100", "http_req_duration{phase:measured} med<50",
			"checks{phase:measured} rate==1")
		wantThresholds(t, r, "inventory_walk", "checks{walk:page} rate==1", "checks{walk:cursor} rate==1")
		wantThresholds(t, r, "bulk_revoke", "checks{phase:measured} rate==1")
	})
}

// copySQL copies the *.sql files of one directory into another.
func copySQL(t *testing.T, from, to string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(from, "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no SQL fixtures in %s (%v)", from, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
