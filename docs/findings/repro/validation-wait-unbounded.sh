#!/usr/bin/env bash
# A challenge waits for a validation slot without any bound (docs/certctl-findings.md#validation-wait-unbounded).
# Shows: with certctl's http-01 validation slots (10 by default) held by challenges whose responder
#   answers slowly and many more of them queued, a challenge whose responder answers at once stays
#   undecided past the 30 s certctl means as one challenge's outer cap: it waits its turn in a queue
#   nothing bounds, behind every slow one, however long that takes.
# Needs responders certctl can reach (`loadtest findings` starts them: the PKI tier's challenge-responder
#   and challenge-slow, and sets these):
#   CHALLENGE_MGMT       a responder's management API in pebble-challtestsrv's shape (POST /add-http01)
#   CHALLENGE_FAST_NAME  a name certctl resolves to that responder, port 80
#   CHALLENGE_SLOW_NAME  a name certctl resolves to a proxy in front of it that holds every answer
#   CHALLENGE_SLOW_HOLD  that proxy's hold (8s)
#   ACME_HTTP01_SLOTS    certctl's CERTCTL_ACME_SERVER_HTTP01_CONCURRENCY (10)
#   and certctl's guard against private addresses (CERTCTL_BLOCK_RFC1918_OUTBOUND) off when they have one.
# Creates in certctl: a certificate profile in challenge mode (its API takes no mode: set by SQL, PGURL),
#   18 ACME accounts and ~70 orders (4 an account), none finalized; certctl goes on validating the slow ones for about a
#   minute after the script ends.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need openssl base64
need_pg

for v in CHALLENGE_MGMT CHALLENGE_FAST_NAME CHALLENGE_SLOW_NAME; do
	[ -n "${!v-}" ] || cannot "needs $v: a challenge responder certctl can reach and a slow one in front of it, which this script cannot start (see its header; loadtest findings brings both)"
done
hold=${CHALLENGE_SLOW_HOLD:-8s}
[[ $hold =~ ^([0-9]+)s$ ]] || cannot "CHALLENGE_SLOW_HOLD=$hold: whole seconds, as 8s"
hold=${BASH_REMATCH[1]}
slots=${ACME_HTTP01_SLOTS:-10}
[[ $slots =~ ^[1-9][0-9]*$ ]] || cannot "ACME_HTTP01_SLOTS=$slots: a count"
# The cap certctl's validator pool means for one challenge (internal/api/acme/validators.go,
# PerChallengeTimeout), and a margin for the polls and this host.
CAP=30
BOUND=$((CAP + 5))
# A slow challenge holds its slot for the proxy's hold, or 10 s, when certctl gives up waiting for the
# answer's headers. Enough of them that the queue ahead of the fast one takes ~50 s to drain.
held=$((hold < 10 ? hold : 10))
[ "$held" -ge 2 ] || cannot "CHALLENGE_SLOW_HOLD=${hold}s: too short to hold a slot while the queue forms"
n_slow=$((slots * ((50 + held - 1) / held)))

acme_profile
profile=$PROFILE_ID
pgq "UPDATE certificate_profiles SET acme_auth_mode = 'challenge' WHERE id = :'id' RETURNING acme_auth_mode;" "id=$profile"
[ "$REPLY" = challenge ] || cannot "could not put profile $profile in challenge mode"
# certctl lets an account hold 5 orders not yet valid (CERTCTL_ACME_SERVER_RATE_LIMIT_CONCURRENT_ORDERS):
# 4 orders an account, each account's key, URL and thumbprint kept to switch between them. The pool
# is shared by every account, which is the finding's point.
PER_ACCOUNT=4
keys=() kids=() jwks=() thumbs=()
use_account() { # N
	ACCT_KEY=${keys[$1]} KID=${kids[$1]} JWK_N=${jwks[$1]} thumb=${thumbs[$1]} NONCE=
}
new_account() { # N
	BODY=${ACME_DIR:-$BODY}
	acme_account "$1"
	acme_thumbprint
	keys[$1]=$ACCT_KEY kids[$1]=$KID jwks[$1]=$JWK_N thumbs[$1]=$REPLY
	use_account "$1"
}

# order NAME → ORDER_AUTHZ, ORDER_CHALLENGE (URLs): a new order whose http-01 key authorization the
# responder serves, its challenge not yet answered.
order() {
	local token
	acme_post "$(jq -r .newOrder <<<"$ACME_DIR")" "$(jq -cn --arg d "$1" '{identifiers: [{type: "dns", value: $d}]}')" kid
	expect_status 201 "new-order for $1"
	[ "$(jqb .status)" = pending ] || cannot "an order on a challenge-mode profile is '$(jqb .status)', not pending: certctl did not put the profile in challenge mode"
	ORDER_AUTHZ=$(jqb '.authorizations[0]')
	acme_post "$ORDER_AUTHZ" "" kid
	expect_status 200 "reading the authorization of $1"
	ORDER_CHALLENGE=$(jqb '.challenges[] | select(.type == "http-01") | .url')
	token=$(jqb '.challenges[] | select(.type == "http-01") | .token')
	{ [ -n "$ORDER_CHALLENGE" ] && [ -n "$token" ]; } || cannot "the authorization of $1 offers no http-01 challenge: $(snippet)"
	command curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -X POST "$CHALLENGE_MGMT/add-http01" \
		-d "$(jq -cn --arg t "$token" --arg c "$token.$thumb" '{token: $t, content: $c}')" >"$REPRO_TMP/mgmt" 2>&1 || true
	[ "$(cat "$REPRO_TMP/mgmt")" = 200 ] || cannot "the responder's management API at $CHALLENGE_MGMT did not take the key authorization: $(cat "$REPRO_TMP/mgmt")"
}

authz_status() { # URL → REPLY
	acme_post "$1" "" kid
	REPLY=$(jqb '.status // empty')
}

note "ordering $n_slow names its slow responder holds ${hold}s, and one its fast responder answers at once"
slow_challenges=()
n_acct=$(((n_slow + PER_ACCOUNT - 1) / PER_ACCOUNT))
for ((i = 0; i < n_slow; i++)); do
	if ((i % PER_ACCOUNT == 0)); then new_account $((i / PER_ACCOUNT)); fi
	order "$CHALLENGE_SLOW_NAME"
	slow_challenges+=("$ORDER_CHALLENGE")
	last_slow_authz=$ORDER_AUTHZ
done
new_account "$n_acct"
order "$CHALLENGE_FAST_NAME"
fast_authz=$ORDER_AUTHZ
fast_challenge=$ORDER_CHALLENGE

# The slow ones first, as fast as this host signs them: the first $slots take the slots, the rest queue.
for ((i = 0; i < n_slow; i++)); do
	if ((i % PER_ACCOUNT == 0)); then use_account $((i / PER_ACCOUNT)); fi
	acme_post "${slow_challenges[$i]}" '{}' kid
	expect_status 200 "answering a slow challenge"
done
use_account "$n_acct"
acme_post "$fast_challenge" '{}' kid
expect_status 200 "answering the fast challenge"
posted=$EPOCHREALTIME

# The fast authorization until decided, or 90 s.
status=
waited=0
while :; do
	authz_status "$fast_authz"
	status=$REPLY
	waited=$(awk -v a="$posted" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	case $status in valid | invalid) break ;; esac
	awk -v w="$waited" 'BEGIN { exit !(w >= 90) }' && break
	sleep 1
done

if awk -v w="$waited" -v b="$BOUND" 'BEGIN { exit !(w < b) }'; then
	# Decided in time: a fix, unless the slow responder never held anything (then nothing queued).
	use_account $(((n_slow - 1) / PER_ACCOUNT))
	authz_status "$last_slow_authz"
	case $REPLY in
	valid | invalid) cannot "the fast challenge was decided ($status) in ${waited} s, but so was the last slow one: the slow responder did not hold certctl's validations, so nothing queued" ;;
	esac
	not_reproduced "the fast challenge was decided ($status) ${waited} s after it was answered, with $n_slow slow ones answered before it still queued: the wait for a slot is bounded"
fi
case $status in
valid | invalid) after="decided ($status) after ${waited} s" ;;
*) after="still '${status:-unreadable}' after ${waited} s" ;;
esac
reproduces "a challenge whose responder answers at once, answered after $n_slow whose responder holds ${hold}s, was $after: past the ${CAP} s certctl gives one challenge, waiting for one of its $slots validation slots in a queue with no bound"
