#!/usr/bin/env bash
# docs/certctl-findings.md#serial-no-index: no index on certificate_versions(serial_number), so the
# lookup renewal-info and ACME revoke-cert make (GetVersionBySerial) reads every version of the issuer's
# certificates, whatever the planner is told. Reads the catalogue and one plan; writes nothing.
# What it costs as the table grows: docs/findings/cost/serial-no-index.sh.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need_pg

leading_index certificate_versions serial_number
leading=$REPLY
pgq "SELECT count(*) FROM certificate_versions;"
rows=$REPLY
# certctl's statement (GetVersionBySerial) for a serial no version has, with sequential scans
# discouraged: an index on the serial is the only cheap way left, if there is one.
pgq "SET enable_seqscan = off;
     EXPLAIN SELECT v.id FROM certificate_versions AS v, managed_certificates AS c
      WHERE c.id = v.certificate_id AND c.issuer_id = 'repro-none' AND v.serial_number = 'ff'
      ORDER BY v.created_at DESC LIMIT 1;"
plan=$(grep -oE '(Index Only Scan|Index Scan|Bitmap Index Scan|Bitmap Heap Scan|Seq Scan)( using [a-z0-9_]+)?( on [a-z_]+)?' <<<"$REPLY" | paste -sd'>' -)
note "plan: $plan"

if [ -z "$leading" ]; then
	reproduces "no index on certificate_versions starts with serial_number ($rows rows): a lookup by serial reads every version of the issuer's certificates (plan with sequential scans discouraged: [$plan])"
fi
not_reproduced "index(es) $leading lead with serial_number: plan [$plan]"
