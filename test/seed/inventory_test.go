package seed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

const inventorySQL = "inventory/01_inventory.sql"

// The inventory seed on certctl's migrated schema: a year of a small fleet, its rows in the proportions
// the file's header gives, every certificate in the steady state of renewal at 31 days (none due when
// certctl starts), a rerun adding nothing; and where the build chains its audit trail (main's
// migration 000047), a chain that verifies from the first row to the last.
func TestInventorySeed(t *testing.T) {
	e := newEnv(t)
	d := e.newDB(t)
	d.apply(t, baseSQL, composeIDs...)
	const n = 40
	before := d.now(t)
	took := d.apply(t, inventorySQL, append(composeIDs, "inventory_certs="+strconv.Itoa(n))...)
	t.Logf("%d certificates' year in %v", n, took.Round(time.Millisecond))
	checkCounts(t, d, "after the inventory", map[string]int64{
		"teams": 1, "owners": 1, "renewal_policies": 1, "issuers": 1, "certificate_profiles": 2,
		"managed_certificates": n, "certificate_versions": 8 * n, "agents": n / 10, "jobs": 16 * n, "audit_events": 91 * n,
	})
	// Measured from the seed's own now(): a day of slack either side would hide a wrong schedule.
	if bad := d.int(t, `SELECT count(*) FROM managed_certificates WHERE id LIKE 'lt-grow-%'
		AND NOT (expires_at > $1::timestamptz + interval '31 days' - interval '1 minute' AND expires_at <= $1::timestamptz + interval '47 days' + interval '1 minute')`, before); bad != 0 {
		t.Errorf("%d certificates expire outside (now + 31 d, now + 47 d]: due at certctl's first scan", bad)
	}
	if bad := d.int(t, `SELECT count(*) FROM certificate_versions v JOIN managed_certificates c ON c.id = v.certificate_id
		WHERE c.id LIKE 'lt-grow-%' AND v.not_before > $1::timestamptz`, before); bad != 0 {
		t.Errorf("%d versions signed after the seed started", bad)
	}
	// The fleet's current versions end where the certificates do.
	if bad := d.int(t, `SELECT count(*) FROM managed_certificates c WHERE id LIKE 'lt-grow-%'
		AND expires_at <> (SELECT max(not_after) FROM certificate_versions v WHERE v.certificate_id = c.id)`); bad != 0 {
		t.Errorf("%d certificates whose expiry is not their last version's", bad)
	}
	if d.int(t, "SELECT count(*) FROM pg_proc WHERE proname = 'audit_events_verify_chain'") == 1 {
		var breakID *string
		var walked int64
		if err := d.conn.QueryRow(context.Background(), "SELECT first_break_id, row_count FROM audit_events_verify_chain()").Scan(&breakID, &walked); err != nil {
			t.Fatal(err)
		}
		if breakID != nil || walked < 91*n {
			t.Errorf("certctl's verifier: break at %v after %d rows; want none in %d", breakID, walked, 91*n)
		}
	}
	d.apply(t, inventorySQL, append(composeIDs, "inventory_certs="+strconv.Itoa(n))...)
	checkCounts(t, d, "after a rerun", map[string]int64{
		"teams": 1, "owners": 1, "renewal_policies": 1, "issuers": 1, "certificate_profiles": 2,
		"managed_certificates": n, "certificate_versions": 8 * n, "agents": n / 10, "jobs": 16 * n, "audit_events": 91 * n,
	})
}

// INVENTORY_LARGE=N times the inventory seed at N certificates on this machine, and on main the walk of
// its audit-chain verifier over them (not in any suite: figures for docs/growth.md, taken alone).
func TestInventorySeedLarge(t *testing.T) {
	v := os.Getenv("INVENTORY_LARGE")
	if v == "" {
		t.Skip("set INVENTORY_LARGE=<certificates> to time the inventory seed")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("INVENTORY_LARGE=%q: a whole number of certificates", v)
	}
	e := newEnv(t)
	d := e.newDB(t)
	d.apply(t, baseSQL, composeIDs...)
	r := d.psql(t, inventorySQL, append(composeIDs, "inventory_certs="+v, "growth_audit="+os.Getenv("INVENTORY_AUDIT"))...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var size string
	_ = d.conn.QueryRow(context.Background(), "SELECT pg_size_pretty(pg_database_size(current_database()))").Scan(&size)
	t.Logf("%s: %d certificates' year in %v; database %s (PostgreSQL %s)", filepath.Base(certctlDist), n, r.elapsed.Round(time.Second), size, serverVersion(t, d))
	fmt.Fprint(os.Stderr, r.stderr)
	// main's verifier: the walk certctl starts at every boot and every 6 h, within a 5-minute deadline
	// of its own (scheduler.runAuditChainVerify). Timed here, on the database alone, cold and then warm.
	if d.int(t, "SELECT count(*) FROM pg_proc WHERE proname = 'audit_events_verify_chain'") == 1 {
		for _, pass := range []string{"first", "second"} {
			var walked int64
			start := time.Now()
			if err := d.conn.QueryRow(context.Background(), "SELECT row_count FROM audit_events_verify_chain()").Scan(&walked); err != nil {
				t.Fatalf("audit_events_verify_chain(): %v", err)
			}
			t.Logf("audit_events_verify_chain(), %s walk: %d rows in %v", pass, walked, time.Since(start).Round(100*time.Millisecond))
		}
	}
}
