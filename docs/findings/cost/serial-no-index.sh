#!/usr/bin/env bash
# What a lookup by serial costs as certificate_versions grows, with no index on its serial_number
# (docs/certctl-findings.md#serial-no-index). OCSP, renewal-info and ACME revoke-cert find a certificate
# by (issuer, serial) through certificate_versions; this times renewal-info from the client and the
# lookups' own queries in PostgreSQL (EXPLAIN ANALYZE of certctl's two statements) at each size of SIZES, then
# once more at the largest size with the index a fix would add.
#
# Usage: serial-no-index.sh <certctl-base-url> <admin-api-key> <ca-cert-file>, with PGURL (it writes
# rows by SQL). SIZES (default "10000 100000 1000000" versions), ASKS (default 30 requests a size).
# `loadtest findings --measure serial-no-index` runs it against the harness's stack.
#
# The versions it adds are synthetic rows certctl never signed (unique serials and fingerprints, no
# PEM), under 100 synthetic certificates of the same issuer as the one real certificate it asks about:
# only ever against a throwaway certctl. Stdout is the table; progress goes to stderr.
# shellcheck source=docs/findings/repro/lib.sh
. "$(dirname "$0")/../repro/lib.sh"
repro_init "$@"
need_pg
need openssl sort awk
sizes=${SIZES:-10000 100000 1000000}
asks=${ASKS:-30}

acme_profile
agent_cert
issue "$CERT_ID" "$AGENT_ID" "$CSR"
ari_id "$LEAF_PEM"
ari=$REPLY
serial=$SERIAL
note "the real certificate $CERT_ID, serial $serial, issuer $ISSUER_ID"

pgq "INSERT INTO managed_certificates
	SELECT (jsonb_populate_record(NULL::managed_certificates, to_jsonb(mc) || jsonb_build_object(
		'id', 'syn-' || :'run' || '-' || g, 'name', 'syn-' || :'run' || '-' || g,
		'common_name', 'syn-' || :'run' || '-' || g || '.repro.example.com'))).*
	FROM managed_certificates mc, generate_series(0, 99) g WHERE mc.id = :'c';" "c=$CERT_ID" "run=$REPRO_RUN"

# Rows so far, then batches of at most 100,000 (each well inside lib.sh's 20 s statement timeout).
grow() { # TARGET
	local have next
	pgq "SELECT count(*) FROM certificate_versions;"
	have=$REPLY
	while [ "$have" -lt "$1" ]; do
		next=$((have + 100000))
		[ "$next" -le "$1" ] || next=$1
		pgq "INSERT INTO certificate_versions (id, certificate_id, serial_number, not_before, not_after, fingerprint_sha256, pem_chain)
			SELECT 'synv-' || :'run' || '-' || g, 'syn-' || :'run' || '-' || (g % 100),
			       md5(:'run' || g) || substr(md5(g || :'run'), 1, 8), now(), now() + interval '90 days',
			       'synfp-' || :'run' || '-' || g, ''
			FROM generate_series(:from, :to) g;" "run=$REPRO_RUN" "from=$((have + 1))" "to=$next"
		have=$next
	done
	pgq "ANALYZE certificate_versions;"
}

# certctl's two statements (internal/repository/postgres/certificate.go), timed by PostgreSQL:
# GetVersionBySerial (renewal-info, ACME revoke-cert; its ORDER BY reads every match) → VER_MS, VER_PLAN;
# GetByIssuerAndSerial (OCSP; LIMIT 1 may stop at the first match) → CERT_MS.
explain() {
	pgq "EXPLAIN (ANALYZE, FORMAT JSON)
		SELECT v.id, v.pem_chain FROM certificate_versions AS v, managed_certificates AS c
		WHERE c.id = v.certificate_id AND c.issuer_id = :'i' AND v.serial_number = :'s'
		ORDER BY v.created_at DESC LIMIT 1;" "i=$ISSUER_ID" "s=$serial"
	VER_MS=$(jq -r '.[0]["Execution Time"]' <<<"$REPLY")
	VER_PLAN=$(jq -r '[.. | objects | select(has("Node Type")) | .["Node Type"] + (if .["Relation Name"] then " " + .["Relation Name"] else "" end)] | join(" > ")' <<<"$REPLY")
	pgq "EXPLAIN (ANALYZE, FORMAT JSON)
		SELECT c.id FROM managed_certificates AS c, certificate_versions AS v
		WHERE v.certificate_id = c.id AND c.issuer_id = :'i' AND v.serial_number = :'s' LIMIT 1;" "i=$ISSUER_ID" "s=$serial"
	CERT_MS=$(jq -r '.[0]["Execution Time"]' <<<"$REPLY")
}

# ASKS renewal-info requests for the real certificate → P50, P95 (ms), CODES ("200×n 404×m": with
# several issuers enabled certctl looks in one at random, docs/certctl-findings.md#ari-any-issuer; both
# answers pay the lookup)
renewal_info() {
	local times=() codes=()
	for _ in $(seq "$asks"); do
		call GET "/acme/profile/$PROFILE_ID/renewal-info/$ari"
		times+=("$HTTP_TIME")
		codes+=("$HTTP_STATUS")
	done
	read -r P50 P95 < <(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 * 1000 } END {
		i50 = int(NR * 0.50 + 0.5); i95 = int(NR * 0.95 + 0.5); if (i50 < 1) i50 = 1; if (i95 < 1) i95 = 1
		printf "%.1f %.1f\n", v[i50], v[i95] }')
	CODES=$(printf '%s\n' "${codes[@]}" | sort | uniq -c | awk '{ printf "%s%s×%s", (NR > 1 ? " " : ""), $2, $1 }')
}

printf 'versions\tindex\tversion_lookup_ms\tcert_lookup_ms\trenewal_info_p50_ms\tp95_ms\tanswers\tversion_lookup_plan\n'
for n in $sizes; do
	note "growing certificate_versions to $n rows"
	grow "$n"
	explain
	renewal_info
	printf '%s\tnone\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$VER_MS" "$CERT_MS" "$P50" "$P95" "$CODES" "$VER_PLAN"
done
note "adding the index a fix would add, at $n rows"
pgq "CREATE INDEX IF NOT EXISTS repro_certificate_versions_serial ON certificate_versions (serial_number);"
pgq "ANALYZE certificate_versions;"
explain
renewal_info
printf '%s\tserial_number\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$VER_MS" "$CERT_MS" "$P50" "$P95" "$CODES" "$VER_PLAN"
REPRO_DONE=1 # the table is the result: the EXIT trap exits 0
