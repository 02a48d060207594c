#!/usr/bin/env bash
# Rate limiter: one bucket per client IP, before auth (docs/certctl-findings.md#rate-limiter).
# Shows: certctl's limiter runs before authentication, so it keys every request on the client
#   address: after the admin key has emptied the bucket, requests carrying no key at all are
#   answered 429 (not 401), although on their own they are far below the burst. A limiter keyed
#   per user would have given them a bucket of their own. The 429's Content-Type is reported too
#   (text/plain, also on /acme, where a client expects an RFC 8555 problem document).
# Needs the limiter on (CERTCTL_RATE_LIMIT_ENABLED, default true; the harness turns it off): with it
#   off or set above ~300 requests in a couple of seconds, the script exits 2.
# Creates in certctl: up to ~360 api_get audit events; no other row.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

# One curl process, many requests in parallel over one HTTP/2 connection: fast enough to empty a
# bucket of 100 at 50/s. URL globbing makes the requests; -w prints one status line each.
burst() { # N [extra curl args…] → the status lines on stdout, "code content-type" each
	local n=$1
	shift
	curl -sS -Z --parallel-max 32 --max-time 20 --cacert "$CA" "$@" -o /dev/null \
		-w '%{http_code} %{content_type}\n' "$B/api/v1/auth/check?repro=[1-$n]" 2>/dev/null |
		grep -E '^[0-9]{3} ' || true
}

first=$(burst 300 -H "Authorization: Bearer $T")
ok1=$(grep -c '^200 ' <<<"$first")
lim1=$(grep -c '^429 ' <<<"$first")
note "admin key burst of 300: $ok1×200, $lim1×429"
[ "$lim1" -gt 0 ] || cannot "300 quick requests were never throttled: the limiter is off (CERTCTL_RATE_LIMIT_ENABLED=false, as the harness runs certctl) or set above that"

# Fewer than the admin burst got through, so on a bucket of their own these would all pass to
# authentication and be answered 401.
n2=$((ok1 / 2))
[ "$n2" -ge 1 ] || n2=1
[ "$n2" -le 60 ] || n2=60
second=$(burst "$n2")
unauth=$(grep -c '^401 ' <<<"$second")
lim2=$(grep -c '^429 ' <<<"$second")
ctype=$(grep '^429 ' <<<"$second" | head -1 | cut -d' ' -f2-)
note "no-key burst of $n2 right after: $unauth×401, $lim2×429"

if [ "$lim2" -gt 0 ]; then
	reproduces "after the admin key's burst was throttled ($ok1 passed, $lim1×429), $lim2 of $n2 requests carrying no key were answered 429 instead of 401: one bucket per address, taken before authentication (429 Content-Type: ${ctype:-?})"
fi
not_reproduced "requests without a key got their own allowance ($unauth×401 of $n2) after the admin key was throttled"
