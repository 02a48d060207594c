package e2e

import "testing"

// The spot checks against the double: the stats-summary baseline holds on a fast server and breaks
// under injected latency; the cursor guard fires, because the double reproduces certctl's stuck cursor
// (FACTS.md §3).
func TestSpotchecks(t *testing.T) {
	t.Run("stats summary within its baseline", func(t *testing.T) {
		r := run(t, doubleEnv(t), loadtest, "spotcheck")
		wantThresholds(t, r, "stats_summary")
		wantThresholds(t, r, "bulk_revoke")
		if _, th := scenarioByName(t, r.summary, "inventory_walk"); th["inventory_cursor_stuck count==0"] {
			t.Errorf("inventory_walk: the cursor guard passed on a cursor that never advances: %v", th)
		}
		wantOutput(t, r, `CURSOR WALK STUCK`)
	})
	t.Run("bulk revoke slower than its baseline", func(t *testing.T) {
		// 6 s for 100 certificates: 60 ms each, and one request over 5 s.
		r := run(t, doubleEnv(t, "DOUBLE_LATENCY=6s", "DOUBLE_FAULT_ROUTE=POST /api/v1/certificates/bulk-revoke"), loadtest, "spotcheck")
		wantCode(t, r, 99)
		wantThresholds(t, r, "bulk_revoke", "bulk_revoke_ms_per_certificate max<50", "http_req_duration max<5000")
	})
	t.Run("bulk revoke refused", func(t *testing.T) {
		r := run(t, doubleEnv(t, "DOUBLE_ERROR_RATE=1", "DOUBLE_FAULT_ROUTE=POST /api/v1/certificates/bulk-revoke"), loadtest, "spotcheck")
		wantCode(t, r, 99)
		wantThresholds(t, r, "bulk_revoke", "checks rate==1")
	})
	t.Run("stats summary slower than its baseline", func(t *testing.T) {
		r := run(t, doubleEnv(t, "DOUBLE_LATENCY=120ms", "DOUBLE_FAULT_ROUTE=GET /api/v1/stats/summary"), loadtest, "spotcheck")
		wantCode(t, r, 99)
		wantThresholds(t, r, "stats_summary", "http_req_duration avg<100", "http_req_duration med<50")
	})
}
