#!/usr/bin/env bash
# Listing sorts the whole table (docs/certctl-findings.md#list-full-sort).
# Shows: no index on managed_certificates leads with created_at, so certctl's page query
#   (ORDER BY created_at ASC LIMIT … OFFSET …, the default order of GET /api/v1/certificates)
#   can only be answered by reading and sorting every row. The plan is taken with sequential scans
#   and explicit sorts discouraged, so that a table of any size shows whether an index could serve
#   the order (a small table would be sorted either way).
# Needs PGURL. Creates nothing (EXPLAIN without ANALYZE runs nothing).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need_pg

leading_index managed_certificates created_at
leading=$REPLY
pgq "SELECT count(*) FROM managed_certificates;"
rows=$REPLY
pgq "SET enable_seqscan = off;
     SET enable_sort = off;
     EXPLAIN SELECT id FROM managed_certificates ORDER BY created_at ASC LIMIT 50 OFFSET 0;"
plan=$(grep -oE '(Index Only Scan|Index Scan|Bitmap Heap Scan|Seq Scan|Incremental Sort|Sort)( using [a-z0-9_]+)?' <<<"$REPLY" | paste -sd'>' -)
note "plan: $plan"

if [ -z "$leading" ] && grep -q 'Sort' <<<"$plan"; then
	reproduces "no index on managed_certificates starts with created_at, and the page query's plan is [$plan] even with sequential scans and sorts discouraged: every page reads and sorts all $rows rows"
fi
if [ -n "$leading" ] && ! grep -q 'Sort' <<<"$plan"; then
	not_reproduced "index(es) $leading serve ORDER BY created_at: plan [$plan]"
fi
cannot "index(es) leading with created_at: '${leading:-none}', yet plan [$plan]"
