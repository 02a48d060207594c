#!/usr/bin/env bash
# What main-151107c's audit chain verifier costs as audit_events grows
# (docs/certctl-findings.md#audit-verify-cost). The scheduler runs audit_events_verify_chain() at start
# and every 6 hours, under a 5-minute timeout: a row-by-row plpgsql walk that rehashes the whole table.
# This times certctl's own function over chains of SIZES rows (default "100000 1000000 3000000"), and
# ASKS API reads (default 30) with the database idle and while the walk runs.
#
# Usage: audit-verify.sh <certctl-base-url> <admin-api-key> <ca-cert-file>, with PGURL.
# `loadtest findings --measure audit-verify` runs it against the harness's stack.
#
# The chain it walks is not certctl's: a schema of its own holds a copy of audit_events' shape and of
# audit_chain_head, with certctl's hash trigger, and search_path points certctl's functions at it. So
# certctl's table is neither grown nor broken (its rows cannot be deleted), and certctl's own writes
# during the growth cannot interleave with the synthetic chain. The schema is dropped at the end.
# Stdout is the table; progress goes to stderr.
# shellcheck source=docs/findings/repro/lib.sh
. "$(dirname "$0")/../repro/lib.sh"
repro_init "$@"
need_pg
need sort awk
sizes=${SIZES:-100000 1000000 3000000}
asks=${ASKS:-30}

pgq "SELECT to_regprocedure('audit_events_verify_chain()') IS NOT NULL;"
[ "$REPLY" = t ] || cannot "this database has no audit_events_verify_chain() (v2.1.7 and earlier have no chain to verify)"

schema="repro_audit_verify_$REPRO_RUN"
# Inside the EXIT trap: plain psql, never pgq (whose failure would exit and replace the verdict).
on_exit "psql \"\$PGURL\" -X -q -c 'DROP SCHEMA IF EXISTS $schema CASCADE'"
pgq "CREATE SCHEMA :\"s\";
	CREATE TABLE :\"s\".audit_events (LIKE public.audit_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
	CREATE TABLE :\"s\".audit_chain_head (LIKE public.audit_chain_head INCLUDING ALL);
	INSERT INTO :\"s\".audit_chain_head (id, row_hash, updated_at) VALUES (1, '', now());
	CREATE TRIGGER repro_hash_chain BEFORE INSERT ON :\"s\".audit_events
		FOR EACH ROW EXECUTE FUNCTION public.audit_events_compute_hash_chain();" "s=$schema"

# A real api_get row of this certctl (repro_init's own request wrote one) is the template, so the
# synthetic rows hash the same shape of payload certctl's do.
sleep 2
pgq "SELECT id FROM public.audit_events WHERE action = 'api_get' ORDER BY timestamp DESC LIMIT 1;"
template=$REPLY
[ -n "$template" ] || cannot "no api_get audit row to copy"

# Rows are chained in insertion order and the verifier walks (timestamp, id): clock_timestamp() per row
# and ids that sort with the series keep the two orders the same. Each batch commits on its own, as
# certctl's inserts do: one transaction updating audit_chain_head a million times would walk an ever
# longer chain of the row's versions. (psql does not interpolate inside the dollar-quoted body: the
# shell puts the numbers and the template's id in.)
grow() { # TARGET
	pgq "SET search_path = :\"s\", public; SELECT count(*) FROM audit_events;" "s=$schema"
	local have=${REPLY##*$'\n'}
	[ "$have" -lt "$1" ] || return 0
	pgq "SET search_path = :\"s\", public;
		SET statement_timeout = '60min';
		DO \$grow\$
		DECLARE b bigint;
		BEGIN
			FOR b IN SELECT generate_series($((have + 1)), $1, 5000) LOOP
				INSERT INTO audit_events (id, actor, actor_type, action, resource_type, resource_id, details, timestamp, event_category)
				SELECT 'syn-' || lpad(g::text, 12, '0'), t.actor, t.actor_type, t.action, t.resource_type, t.resource_id,
				       t.details, clock_timestamp(), t.event_category
				  FROM public.audit_events t, generate_series(b, least(b + 4999, $1)) g
				 WHERE t.id = '$template';
				COMMIT;
			END LOOP;
		END
		\$grow\$;
		ANALYZE audit_events;" "s=$schema"
}

verify() { # → VERIFY_S, VERIFY_ROWS, VERIFY_BREAK (empty: intact)
	pgq "SET search_path = :\"s\", public;
		SET statement_timeout = '60min';
		SELECT clock_timestamp() AS t0 \\gset
		SELECT coalesce(first_break_id, '') || '|' || row_count FROM audit_events_verify_chain();
		SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 2);" "s=$schema"
	VERIFY_S=${REPLY##*$'\n'}
	IFS='|' read -r VERIFY_BREAK VERIFY_ROWS <<<"$(sed -n '1p' <<<"$REPLY")"
}

reads() { # → P50 P95 (ms) of ASKS certificate-list reads
	local times=()
	for _ in $(seq "$asks"); do
		call GET "/api/v1/certificates?per_page=50"
		times+=("$HTTP_TIME")
	done
	read -r P50 P95 < <(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 * 1000 } END {
		i50 = int(NR * 0.50 + 0.5); i95 = int(NR * 0.95 + 0.5); if (i50 < 1) i50 = 1; if (i95 < 1) i95 = 1
		printf "%.1f %.1f\n", v[i50], v[i95] }')
}

printf 'rows\tverify_s\tus_per_row\tchain\tgrow_s\n'
for n in $sizes; do
	note "growing the copy's chain to $n rows"
	start=$SECONDS
	grow "$n"
	grown=$((SECONDS - start))
	verify
	[ "$VERIFY_ROWS" = "$n" ] || note "the verifier walked $VERIFY_ROWS rows, not $n"
	printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$VERIFY_S" "$(awk -v s="$VERIFY_S" -v n="$VERIFY_ROWS" 'BEGIN { printf "%.2f", s * 1e6 / n }')" \
		"$([ -z "$VERIFY_BREAK" ] && echo intact || echo "break at $VERIFY_BREAK")" "$grown"
done

note "$asks reads with the database idle, then while the walk of $n rows runs"
reads
idle="$P50 $P95"
( pgq "SET search_path = :\"s\", public; SET statement_timeout = '60min'; SELECT row_count FROM audit_events_verify_chain();" "s=$schema" ) &
walker=$!
sleep 1
reads
wait "$walker" || true
printf '\nreads\tp50_ms\tp95_ms\n'
read -r a b <<<"$idle"
printf 'idle\t%s\t%s\n' "$a" "$b"
printf 'during the walk of %s rows\t%s\t%s\n' "$n" "$P50" "$P95"
REPRO_DONE=1 # the tables are the result: the EXIT trap exits 0
