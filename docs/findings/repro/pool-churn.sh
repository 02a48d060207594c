#!/usr/bin/env bash
# certctl's pool keeps a fifth of its connections idle (docs/certctl-findings.md#pool-churn).
# Shows: a stream of readiness probes (GET /ready pings the database through certctl's pool, with no
#   key and no audit row, so every session counted is the pool's), PARALLEL at a time (default 40),
#   makes PostgreSQL open far more sessions than a pool could need: database/sql closes every connection returned beyond
#   SetMaxIdleConns (maxOpen / 5: 10 of the default 50), and opens a new one, a backend fork and an
#   authentication, for the next request. A pool that kept what it opened would open at most its
#   maximum (50 by default); the script says "reproduces" past twice that.
# Needs PGURL (pg_stat_database.sessions, PostgreSQL 14 or later). Sends REQUESTS (default 4000)
# probes. Creates nothing.
# Audited reads would do as well at a lower rate, but on main-151107c their audit rows queue for the
# chain lock (docs/certctl-findings.md#audit-chain) and hold the pool at its maximum, where returned
# connections go straight to waiting requests and none is closed: the burst would measure the lock.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need_pg
parallel=${PARALLEL:-40}
requests=${REQUESTS:-4000}
ceiling=100 # twice certctl's default CERTCTL_DATABASE_MAX_CONNS

sessions() {
	pgq "SELECT sessions FROM pg_stat_database WHERE datname = current_database();"
}

# A backend's statistics reach pg_stat_database when it flushes them (at exit, or within seconds
# while it lives): wait for the counter to settle before and after, so the delta is the burst's.
settled() {
	local a b
	sessions
	a=$REPLY
	for _ in 1 2 3 4 5; do
		sleep 2
		sessions
		b=$REPLY
		[ "$b" -gt "$((a + 2))" ] || break # only our own psql sessions since
		a=$b
	done
	REPLY=$b
}

pgq "SHOW server_version_num;"
[ "$REPLY" -ge 140000 ] || cannot "PostgreSQL $REPLY has no pg_stat_database.sessions (14 or later)"
settled
before=$REPLY

# One stream, PARALLEL requests in flight over kept-alive connections: the probes reach the pool as fast
# as certctl answers them. (Waves of fresh connections do not: their TLS handshakes spread the probes
# out, and the pool rarely holds more than its idle ten at once.)
note "$requests probes, $parallel at a time"
start=$SECONDS
curl -sS --parallel --parallel-max "$parallel" --max-time 60 --cacert "$CA" -o "$REPRO_TMP/page#1" -w '%{http_code}\n' \
	"$B/ready?n=[1-$requests]" >"$REPRO_TMP/codes" 2>"$REPRO_TMP/curl.err" || true
took=$((SECONDS - start))
ok=$(grep -c '^200$' "$REPRO_TMP/codes")
codes=$(sort "$REPRO_TMP/codes" | uniq -c | awk '{ printf "%s%s×%s", (NR > 1 ? " " : ""), $2, $1 }')
note "answers: $codes in ${took}s"
# A limiter in front of the burst, or a database certctl cannot reach (503), leaves nothing to judge.
[ "$ok" -ge $((requests * 9 / 10)) ] || cannot "only $ok of $requests probes answered 200 ($codes): $(head -c 200 "$REPRO_TMP/curl.err")"

settled
after=$REPLY
# Our own psql sessions (about a dozen across both waits) are in the delta too; the ceiling dwarfs them.
opened=$((after - before))
if [ "$opened" -gt "$ceiling" ]; then
	reproduces "$requests readiness probes, $parallel at a time, made PostgreSQL open $opened sessions (a pool keeping its connections opens at most its maximum, 50 by default): connections past the idle limit are closed and reopened"
fi
not_reproduced "$requests readiness probes, $parallel at a time, opened $opened sessions (at most $ceiling expected from a pool that keeps its connections)"
