#!/usr/bin/env bash
# The audit chain verifier walks rows in an order concurrent writes do not keep
# (docs/certctl-findings.md#audit-chain-order).
# Shows: each audit row is chained to the row inserted before it (the trigger takes the
#   audit_chain_head lock), but its timestamp is taken in Go before the insert waits for that lock,
#   and audit_events_verify_chain() walks ORDER BY timestamp, id. Audited requests sent PARALLEL at
#   a time (default 40) therefore leave rows whose prev_hash is not the row_hash of the row before
#   them in the verifier's order: certctl's own verifier reports a tamper break where nobody
#   tampered. v2.1.7 has no chain: the script says "does not reproduce" there.
# Needs PGURL (it calls the verifier and reads the chain columns). Sends REQUESTS (default 400)
# reads of a team that does not exist (404, each audited). Creates in certctl: audit events only.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need_pg
parallel=${PARALLEL:-40}
requests=${REQUESTS:-400}

pgq "SELECT to_regprocedure('audit_events_verify_chain()') IS NOT NULL;"
if [ "$REPLY" != t ]; then
	not_reproduced "this database has no audit_events_verify_chain(): audit rows are not chained (v2.1.7 and earlier)"
fi

verify() { # → REPLY "first_break_id|first_break_pos|row_count"
	pgq "SET statement_timeout = '5min'; SELECT coalesce(first_break_id, ''), first_break_pos, row_count FROM audit_events_verify_chain();"
	REPLY=${REPLY##*$'\n'}
}

verify
IFS='|' read -r before_id before_pos before_rows <<<"$REPLY"
if [ -n "$before_id" ]; then
	note "the verifier already reports a break before the burst: row $before_pos of $before_rows ($before_id)"
else
	note "the verifier finds the chain of $before_rows rows intact"
fi
pgq "SELECT now();"
t0=$REPLY

uniq_name
note "$requests audited reads, $parallel at a time"
curl -sS --parallel --parallel-max "$parallel" --max-time 60 --cacert "$CA" \
	-H "Authorization: Bearer $T" -o "$REPRO_TMP/page#1" -w '%{http_code}\n' \
	"$B/api/v1/teams/$REPLY-[1-$requests]" >"$REPRO_TMP/codes" 2>"$REPRO_TMP/curl.err" || true
codes=$(sort "$REPRO_TMP/codes" | uniq -c | awk '{ printf "%s%s×%s", (NR > 1 ? " " : ""), $2, $1 }')
answered=$(grep -c '^404$' "$REPRO_TMP/codes")
note "answers: $codes"
[ "$answered" -ge $((requests / 2)) ] || cannot "only $answered of $requests reads answered 404 ($codes): $(head -c 200 "$REPRO_TMP/curl.err")"
# The audit rows are written by goroutines after the responses.
sleep 3

# The verifier's own rule (prev_hash = the row_hash of the row before in timestamp, id order) over
# the rows written since t0, so that what came before cannot decide the verdict.
pgq "WITH w AS (
	   SELECT timestamp, prev_hash, lag(row_hash) OVER (ORDER BY timestamp, id) AS expected
	     FROM audit_events WHERE timestamp >= :'t0'::timestamptz - interval '1 minute')
	 SELECT count(*) FILTER (WHERE timestamp >= :'t0'), count(*) FILTER (WHERE timestamp >= :'t0' AND prev_hash IS DISTINCT FROM expected)
	   FROM w;" "t0=$t0"
IFS='|' read -r rows breaks <<<"$REPLY"
verify
IFS='|' read -r after_id after_pos after_rows <<<"$REPLY"
said="certctl's verifier: intact"
if [ -n "$after_id" ]; then said="certctl's verifier: break at row $after_pos of $after_rows ($after_id)"; fi
if [ -n "$before_id" ]; then said="$said (it already reported one before the burst)"; fi

if [ "$rows" -lt "$((answered / 2))" ]; then
	cannot "only $rows audit rows since the burst began, for $answered audited reads"
fi
if [ "$breaks" -gt 0 ]; then
	reproduces "of $rows audit rows written by $requests reads $parallel at a time, $breaks do not follow the row before them in the verifier's order (timestamp, id); $said"
fi
not_reproduced "all $rows audit rows written by $requests reads $parallel at a time chain in timestamp order; $said"
