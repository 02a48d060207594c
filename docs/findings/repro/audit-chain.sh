#!/usr/bin/env bash
# Audit hash chain serialises audited writes (docs/certctl-findings.md#audit-chain).
# Shows: on a build with migration 000047 every audit insert first locks the single row of
#   audit_chain_head (SELECT … FOR UPDATE in a BEFORE INSERT trigger) until its transaction ends,
#   so while one transaction holds that row, an API write that records an audit event waits.
#   Here psql holds the row for 4 s and POST /api/v1/certificates/{id}/deploy (which only
#   records an audit event) is timed with the row free and with it held. v2.1.7 has no chain:
#   the script says "does not reproduce" there.
# Needs PGURL. Creates in certctl: a team, an owner, a renewal policy, one certificate (never
#   issued) and two deployment_triggered audit events; a local-CA issuer only if none is enabled.
#   The lock is taken with SELECT … FOR UPDATE, which writes nothing.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need_pg

pgq "SELECT to_regclass('audit_chain_head') IS NOT NULL;"
if [ "$REPLY" != t ]; then
	not_reproduced "this database has no audit_chain_head table: audit inserts are not chained, nothing serialises them (v2.1.7 and earlier)"
fi
pgq "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'audit_events'::regclass AND NOT tgisinternal AND tgname ILIKE '%hash_chain%';"
note "hash-chain triggers on audit_events: $REPLY"

base_rows
mk_cert
cert=$REPLY

call POST "/api/v1/certificates/$cert/deploy"
expect_status 202 "the deploy trigger (row free)"
free=$HTTP_TIME

(
	PGCONNECT_TIMEOUT=5 psql "$PGURL" -X -q -v ON_ERROR_STOP=1 >/dev/null 2>&1 <<'SQL'
BEGIN;
SELECT 1 FROM audit_chain_head WHERE id = 1 FOR UPDATE;
SELECT pg_sleep(4);
COMMIT;
SQL
) &
holder=$!
on_exit "kill $holder"
# Give psql time to connect and take the row before the timed request starts.
sleep 1
call POST "/api/v1/certificates/$cert/deploy"
held_status=$HTTP_STATUS
held=$HTTP_TIME
wait "$holder" 2>/dev/null || true

[ "$held_status" = 202 ] || cannot "the deploy trigger with the chain head held answered $held_status: $(snippet)"
if awk -v h="$held" -v f="$free" 'BEGIN { exit !(h >= 2.0 && h - f >= 1.5) }'; then
	reproduces "an audited write took ${free} s with audit_chain_head free and ${held} s while another transaction held its row (held 4 s, request sent 1 s in): every audited write queues on that one row"
fi
not_reproduced "the audited write took ${held} s with audit_chain_head held (${free} s free): it did not wait for the chain head"
