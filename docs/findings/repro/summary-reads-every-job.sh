#!/usr/bin/env bash
# The dashboard summary and the metrics read every job and every agent
# (docs/certctl-findings.md#summary-reads-every-job).
# Shows: with JOBS (default 5000) finished jobs added, each GET /api/v1/metrics/prometheus (what a
#   Prometheus scrape calls), /api/v1/metrics and /api/v1/stats/summary makes PostgreSQL read every row
#   of jobs (pg_stat_user_tables.seq_tup_read grows by the table's size per call), and each call's time
#   grows with the table. A summary that counted in SQL would read none of them.
# Needs PGURL (it adds the jobs by SQL and reads the table statistics). Creates in certctl: a team, an
#   owner, a renewal policy, one certificate (never issued), audit events; the JOBS synthetic jobs
#   (status Completed, so nothing runs them) are deleted at the end.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need_pg
jobs=${JOBS:-5000}
calls=3

base_rows
mk_cert
cert=$REPLY
prefix="repro-summary-$REPRO_RUN-"
on_exit "psql \"\$PGURL\" -X -q -c \"DELETE FROM jobs WHERE id LIKE '$prefix%'\""

# Sequential reads of jobs so far, once this backend's view of the statistics is fresh.
seq_read() {
	pgq "SELECT pg_stat_clear_snapshot(); SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relid = 'jobs'::regclass;"
	REPLY=${REPLY##*$'\n'}
}

# The statistics of certctl's backends reach pg_stat_user_tables when they flush (at least once a
# second while busy, within ~10 s when idle): poll until two readings agree.
settled() {
	local a b
	seq_read
	a=$REPLY
	for _ in 1 2 3 4 5 6 7 8; do
		sleep 2
		seq_read
		b=$REPLY
		[ "$b" != "$a" ] || break
		a=$b
	done
	REPLY=$b
}

# CALLS requests to PATH → READ (rows of jobs read sequentially meanwhile, beyond the idle rate), MS (p50)
measure() {
	local path=$1 before after times=()
	settled
	before=$REPLY
	for _ in $(seq "$calls"); do
		call GET "$path"
		expect_status 200 "GET $path"
		times+=("$HTTP_TIME")
	done
	settled
	after=$REPLY
	READ=$((after - before))
	MS=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 * 1000 } END { printf "%.1f", v[int((NR + 1) / 2)] }')
}

pgq "SELECT count(*) FROM jobs;"
had=$REPLY
measure /api/v1/metrics/prometheus
small_ms=$MS
note "jobs: $had; $calls scrapes read $READ rows of jobs, p50 $small_ms ms"

note "adding $jobs finished jobs"
pgq "INSERT INTO jobs (id, type, certificate_id, status, attempts, max_attempts, created_at, completed_at)
	SELECT :'p' || g, 'Renewal', :'c', 'Completed', 1, 3, now() - g * interval '1 minute', now() - g * interval '1 minute'
	  FROM generate_series(1, :n) g;
	ANALYZE jobs;" "p=$prefix" "c=$cert" "n=$jobs"
pgq "SELECT count(*) FROM jobs;"
total=$REPLY

results=()
worst=
for path in /api/v1/metrics/prometheus /api/v1/metrics /api/v1/stats/summary; do
	measure "$path"
	per=$((READ / calls))
	note "$path: $calls calls read $READ rows of jobs ($per a call, the table holds $total), p50 $MS ms"
	results+=("$path $per rows a call, p50 $MS ms")
	if [ -z "$worst" ] || [ "$per" -lt "$worst" ]; then worst=$per; fi
done

if [ "$worst" -ge "$((total * 9 / 10))" ]; then
	reproduces "with $total jobs every call reads the whole table: $(IFS=';'; echo "${results[*]}") (the scrape took $small_ms ms with $had jobs)"
fi
if [ "$worst" -lt "$((total / 10))" ]; then
	not_reproduced "with $total jobs the calls read $worst rows of jobs or fewer: $(IFS=';'; echo "${results[*]}")"
fi
cannot "with $total jobs the calls read between a tenth and all of them ($worst rows): $(IFS=';'; echo "${results[*]}")"
