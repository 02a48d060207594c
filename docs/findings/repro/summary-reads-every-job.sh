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
# Ten calls a path: a scan of the table that is not the calls' (a harness's collector scrapes the
# metrics every 30 s, which reads it whole) that falls in a path's window adds a tenth of the table to
# each call's count at most.
calls=10

base_rows
mk_cert
cert=$REPLY
prefix="repro-summary-$REPRO_RUN-"
on_exit "psql \"\$PGURL\" -X -q -c \"DELETE FROM jobs WHERE id LIKE '$prefix%'\""

# Sequential reads of jobs so far, as pg_stat_user_tables has them. A backend's counts reach it when it
# flushes them: at the end of a transaction at most once a second, and within 10 s of going idle
# (PGSTAT_IDLE_INTERVAL); so each reading waits 11 s first, and the reads between two readings are
# everything certctl did in between.
seq_read() {
	sleep 11
	pgq "SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relid = 'jobs'::regclass;"
}

# CALLS requests to PATH → MS (p50); READ the rows of jobs read sequentially since the last reading,
# less what certctl reads of the table by itself in as long (IDLE: its job processor, its scheduler).
measure() {
	local path=$1 times=()
	for _ in $(seq "$calls"); do
		call GET "$path"
		expect_status 200 "GET $path"
		times+=("$HTTP_TIME")
	done
	seq_read
	READ=$((REPLY - last - idle))
	last=$REPLY
	MS=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 * 1000 } END { printf "%.1f", v[int((NR + 1) / 2)] }')
}

pgq "SELECT count(*) FROM jobs;"
had=$REPLY
small=()
for _ in $(seq "$calls"); do
	call GET /api/v1/metrics/prometheus
	expect_status 200 "GET /api/v1/metrics/prometheus"
	small+=("$HTTP_TIME")
done
small_ms=$(printf '%s\n' "${small[@]}" | sort -g | awk '{ v[NR] = $1 * 1000 } END { printf "%.1f", v[int((NR + 1) / 2)] }')
note "jobs: $had; a scrape took $small_ms ms (p50 of $calls)"

note "adding $jobs finished jobs"
# Every column certctl scans into a value (not a pointer) is set: scheduled_at NULL would fail the scan
# of the whole listing, which is not what this shows.
pgq "INSERT INTO jobs (id, type, certificate_id, status, attempts, max_attempts, scheduled_at, created_at, completed_at)
	SELECT :'p' || g, 'Renewal', :'c', 'Completed', 1, 3, now() - g * interval '1 minute', now() - g * interval '1 minute', now() - g * interval '1 minute'
	  FROM generate_series(1, :n) g;
	ANALYZE jobs;" "p=$prefix" "c=$cert" "n=$jobs"
pgq "SELECT count(*) FROM jobs;"
total=$REPLY
seq_read
last=$REPLY
# What is read with no call of ours: the least of two windows, since such a scan lands in some windows
# and not others (one that landed here alone was subtracted from every path's calls, which then seemed
# to read two thirds of the table: seen on main-151107c beside the harness's collector).
idle=
for _ in 1 2; do
	seq_read
	if [ -z "$idle" ] || [ "$((REPLY - last))" -lt "$idle" ]; then idle=$((REPLY - last)); fi
	last=$REPLY
done
note "certctl itself read $idle rows of jobs in 11 s with no call (the least of two windows)"

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
	reproduces "with $total jobs every call reads the whole table: $(IFS=';'; echo "${results[*]}") (a scrape took $small_ms ms with $had jobs; certctl itself read $idle rows of jobs in as long with no call)"
fi
if [ "$worst" -lt "$((total / 10))" ]; then
	not_reproduced "with $total jobs the calls read $worst rows of jobs or fewer: $(IFS=';'; echo "${results[*]}")"
fi
cannot "with $total jobs the calls read between a tenth and all of them ($worst rows): $(IFS=';'; echo "${results[*]}")"
