# shellcheck shell=bash
# Sourced by every reproduction script here (docs/findings/repro/<anchor>.sh), never run itself.
#
# A script calls `repro_init "$@"` and ends through exactly one of reproduces / not_reproduced /
# cannot, so its exit status is the verdict: 0 the behaviour is there, 1 the build behaves
# correctly, 2 the script could not judge. Anything else that ends a script (an unset variable,
# a signal) is turned into 2 by the EXIT trap, so a crash can never read as "does not reproduce".
#
# Tools: bash, curl, jq, openssl, psql, coreutils (plus awk, grep and sed).

# -u and pipefail: a typo or a failed stage must stop the script (and become a 2), not yield an
# empty id that a later request then "proves" something with. No -e: expected failures (a 500 is
# often the point) are checked explicitly.
set -u -o pipefail

REPRO_ANCHOR=$(basename "${0%.sh}")
REPRO_DONE=
REPRO_TMP=
REPRO_CLEANUP=()
REPRO_SEQ=0
ISSUE_N=0
HTTP_STATUS=000
HTTP_TIME=0
HTTP_CTYPE=
BODY=

usage() {
	if [ -n "${1-}" ]; then printf 'could not run: %s\n' "$1" >&2; fi
	printf 'usage: %s <certctl-base-url> <admin-api-key> <ca-cert-file>\n' "$(basename "$0")" >&2
	printf '       PGURL=postgres://user:password@host:5432/certctl  only for the scripts that read the database\n' >&2
	REPRO_DONE=1
	exit 2
}

reproduces() {
	REPRO_DONE=1
	printf 'reproduces: %s\n' "$1"
	exit 0
}

not_reproduced() {
	REPRO_DONE=1
	printf 'does not reproduce: %s\n' "$1"
	exit 1
}

cannot() {
	REPRO_DONE=1
	printf 'could not run: %s\n' "$1" >&2
	exit 2
}

# Progress goes to stderr so that stdout carries the verdict line alone.
note() { printf '  %s\n' "$*" >&2; }

need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || cannot "needs $t"
	done
}

need_pg() {
	[ -n "${PGURL-}" ] || cannot "needs PGURL (a libpq URL to this certctl's PostgreSQL): what it checks is only visible in the database"
	need psql
}

# Registered commands run before the temporary directory goes, whatever the verdict, so a
# script that changed something temporarily (jobs-list-in-memory) puts it back. They run inside
# the EXIT trap: they must not call cannot/pgq, whose exit would replace the verdict.
on_exit() { REPRO_CLEANUP+=("$1"); }

_repro_exit() {
	local rc=$? c
	trap - EXIT INT TERM
	for c in "${REPRO_CLEANUP[@]}"; do
		eval "$c" >/dev/null 2>&1 || true
	done
	if [ -n "$REPRO_TMP" ]; then rm -rf "$REPRO_TMP"; fi
	if [ -z "$REPRO_DONE" ]; then
		printf 'could not run: the script stopped before reaching a verdict (status %s)\n' "$rc" >&2
		exit 2
	fi
	exit "$rc"
}

repro_init() {
	trap _repro_exit EXIT
	trap 'cannot "interrupted"' INT TERM
	[ $# -ge 3 ] || usage "three arguments are needed"
	B=${1%/}
	T=$2
	CA=$3
	case $B in
	https://* | http://*) ;;
	*) usage "the base URL must start with https:// (e.g. https://certctl-server:8443)" ;;
	esac
	[ -n "$T" ] || usage "the admin API key is empty"
	{ [ -f "$CA" ] && [ -r "$CA" ]; } || usage "cannot read the CA file $CA"
	need curl jq awk grep sed
	REPRO_TMP=$(mktemp -d "${TMPDIR:-/tmp}/repro-$REPRO_ANCHOR.XXXXXX") || cannot "mktemp failed"
	REPRO_RUN="$RANDOM$$"
	REPRO_START=$SECONDS
	# One authenticated read first, so that a wrong CA file, URL or key is reported as such
	# rather than as whatever the script's first real request makes of it.
	if [ -z "${REPRO_NO_PREFLIGHT-}" ]; then
		call GET /api/v1/auth/check
		case $HTTP_STATUS in
		200) ;;
		401 | 403) cannot "certctl refused the admin key at $B/api/v1/auth/check ($HTTP_STATUS): $(snippet)" ;;
		*) cannot "GET $B/api/v1/auth/check answered $HTTP_STATUS ($HTTP_CTYPE): $(snippet)" ;;
		esac
	fi
}

# CERTCTL_CONNECT_TO (curl's --connect-to, host:port:address:port) reaches the URL's host at another
# address and keeps its name for TLS: a certctl whose certificate names a host this machine cannot
# resolve (a certctl in a container, reached from the host by the container's address).
curl() {
	if [ -n "${CERTCTL_CONNECT_TO-}" ]; then
		command curl --connect-to "$CERTCTL_CONNECT_TO" "$@"
	else
		command curl "$@"
	fi
}

# Seconds since repro_init: loops that wait for certctl stop on this so a script ends in ~60 s.
elapsed() { REPLY=$((SECONDS - REPRO_START)); }

snippet() { printf '%s' "$BODY" | tr '\n\r' '  ' | cut -c1-240; }

# api METHOD PATH [JSON]: prints the body and sets HTTP_STATUS, HTTP_TIME (seconds) and
# HTTP_CTYPE. Called as $(api …) it runs in a subshell, where those globals are lost; the status
# is therefore also written to a file (last_status), and `call` below is the form the scripts use.
# Environment for one call: API_KEY (another Bearer key), API_NO_AUTH=1, API_NO_RETRY=1,
# API_CTYPE (the request body's Content-Type, application/json by default).
# A 429 is retried (five times, a second apart) because certctl's limiter is on by default and
# shared by every request from this address (docs/certctl-findings.md#rate-limiter): without the
# retry a script's verdict would depend on what else this host sent in the last second.
api() {
	local method=$1 path=$2 body=${3-} tries=0 meta
	local -a args=(-sS --max-time "${API_MAX_TIME:-10}" --cacert "$CA" -X "$method"
		-o "$REPRO_TMP/body" -D "$REPRO_TMP/headers"
		-w '%{http_code} %{time_total} %{content_type}')
	if [ -z "${API_NO_AUTH-}" ]; then args+=(-H "Authorization: Bearer ${API_KEY:-$T}"); fi
	if [ -n "$body" ]; then args+=(-H "Content-Type: ${API_CTYPE:-application/json}" --data-binary "$body"); fi
	while :; do
		# curl leaves -o untouched when a response has no body; an old body must not be reread.
		: >"$REPRO_TMP/body"
		: >"$REPRO_TMP/headers"
		meta=$(curl "${args[@]}" "$B$path" 2>"$REPRO_TMP/curl.err") || true
		HTTP_STATUS='' HTTP_TIME='' HTTP_CTYPE=''
		read -r HTTP_STATUS HTTP_TIME HTTP_CTYPE <<<"$meta" || true
		HTTP_STATUS=${HTTP_STATUS:-000}
		HTTP_TIME=${HTTP_TIME:-0}
		if [ "$HTTP_STATUS" = 429 ] && [ "$tries" -lt 5 ] && [ -z "${API_NO_RETRY-}" ]; then
			tries=$((tries + 1))
			sleep 1
			continue
		fi
		break
	done
	printf '%s\n' "$HTTP_STATUS" >"$REPRO_TMP/status"
	cat "$REPRO_TMP/body"
}

last_status() { cat "$REPRO_TMP/status"; }

# call METHOD PATH [JSON]: api without a subshell; the body lands in BODY (NUL bytes of a binary
# answer dropped: a shell variable cannot hold them).
call() {
	api "$@" >/dev/null
	BODY=$(tr -d '\000' <"$REPRO_TMP/body")
	if [ "$HTTP_STATUS" = 000 ]; then
		cannot "no answer from $B$2: $(head -c 300 "$REPRO_TMP/curl.err")"
	fi
}

# call_raw: like call, but a transport failure is the caller's business (https-only expects some).
call_raw() {
	api "$@" >/dev/null
	BODY=$(tr -d '\000' <"$REPRO_TMP/body")
}

# jq over the last body; a non-JSON body (HTML, text/plain) yields nothing instead of an error.
jqb() { jq -r "$@" <<<"$BODY" 2>/dev/null; }

header() { # NAME → REPLY, from the last call's response headers
	REPLY=$(tr -d '\r' <"$REPRO_TMP/headers" | awk -v h="$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]'):" \
		'tolower($1) == h { $1 = ""; sub(/^ /, ""); v = $0 } END { print v }')
}

expect_status() { # CODE WHAT
	[ "$HTTP_STATUS" = "$1" ] || cannot "$2 answered $HTTP_STATUS, not $1: $(snippet)"
}

uniq_name() {
	REPRO_SEQ=$((REPRO_SEQ + 1))
	REPLY="repro-$REPRO_ANCHOR-$REPRO_RUN-$REPRO_SEQ"
}

b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }

# Hex to bytes with printf alone (xxd is not on the allowed list); NUL bytes pass through a pipe.
hex2bin() {
	local h=${1//[^0-9A-Fa-f]/}
	if [ $((${#h} % 2)) -eq 1 ]; then h=0$h; fi
	# shellcheck disable=SC2059
	printf "$(printf '%s' "$h" | sed 's/../\\x&/g')"
}

pgq() { # SQL [name=value …] → REPLY (unaligned, tuples only); the SQL goes through stdin so
	# psql interpolates :'name' variables (it does not in -c strings).
	local sql=$1 kv
	shift
	local -a vars=()
	for kv in "$@"; do vars+=(-v "$kv"); done
	if ! REPLY=$(PGCONNECT_TIMEOUT=5 PGOPTIONS='-c statement_timeout=20s' \
		psql "$PGURL" -X -q -A -t -v ON_ERROR_STOP=1 "${vars[@]}" <<<"$sql" 2>"$REPRO_TMP/psql.err"); then
		cannot "psql failed: $(head -c 300 "$REPRO_TMP/psql.err" | tr '\n' ' ')"
	fi
}

leading_index() { # TABLE COLUMN → REPLY: the indexes of TABLE whose first column is COLUMN ("a, b"; empty: none)
	pgq "SELECT coalesce(string_agg(i.relname, ', '), '')
	       FROM pg_index x
	       JOIN pg_class i ON i.oid = x.indexrelid
	       JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
	      WHERE x.indrelid = :'t'::regclass AND a.attname = :'c';" "t=$1" "c=$2"
}

# certctl's own clock (the Date header of /health, which needs no key), for audit-trail windows
# that must not depend on this host's clock.
server_time() {
	local d
	d=$(curl -sS --max-time 10 --cacert "$CA" -o /dev/null -D - "$B/health" 2>/dev/null |
		tr -d '\r' | awk 'tolower($1) == "date:" { $1 = ""; sub(/^ /, ""); print }')
	REPLY=
	if [ -n "$d" ]; then REPLY=$(date -u -d "$d" +%s 2>/dev/null); fi
	if [ -z "$REPLY" ]; then REPLY=$(date -u +%s); fi
}

rfc3339() { REPLY=$(date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ); }

# --- rows every script creates for itself ------------------------------------------------------

mk_team() {
	local name
	uniq_name
	name=$REPLY
	call POST /api/v1/teams "$(jq -cn --arg n "$name" '{name: $n, description: "certctl repro script"}')"
	expect_status 201 "creating a team"
	REPLY=$(jqb .id)
}

mk_owner() { # TEAM_ID
	local name
	uniq_name
	name=$REPLY
	call POST /api/v1/owners "$(jq -cn --arg n "$name" --arg t "$1" '{name: $n, email: "repro@example.com", team_id: $t}')"
	expect_status 201 "creating an owner"
	REPLY=$(jqb .id)
}

mk_policy() { # [renewal_window_days] [auto_renew]
	local name window=${1:-30} auto=${2:-true}
	uniq_name
	name=$REPLY
	call POST /api/v1/renewal-policies "$(jq -cn --arg n "$name" --argjson w "$window" --argjson a "$auto" \
		'{name: $n, renewal_window_days: $w, auto_renew: $a, max_retries: 3, retry_interval_seconds: 3600}')"
	expect_status 201 "creating a renewal policy"
	REPLY=$(jqb .id)
}

# certctl stores a profile disabled unless told otherwise; trust_authenticated lets an ACME order
# be ready without a challenge, which is what the ACME scripts need and what certctl defaults to.
mk_profile() {
	local name
	uniq_name
	name=$REPLY
	call POST /api/v1/profiles "$(jq -cn --arg n "$name" \
		'{name: $n, description: "certctl repro script", enabled: true, acme_auth_mode: "trust_authenticated", max_ttl_seconds: 7776000}')"
	expect_status 201 "creating a certificate profile"
	REPLY=$(jqb .id)
}

# A GenericCA issuer with no CA files: certctl makes its CA up in memory (ephemeral mode).
# Creating an issuer rebuilds certctl's issuer registry, which regenerates every ephemeral CA
# (docs/certctl-findings.md#local-ca-ephemeral), so scripts reuse an existing one when they can.
mk_issuer() {
	local name
	uniq_name
	name=$REPLY
	call POST /api/v1/issuers "$(jq -cn --arg n "$name" \
		'{name: $n, type: "GenericCA", config: {ca_common_name: ("certctl repro CA " + $n)}, enabled: true}')"
	if [ "$HTTP_STATUS" != 201 ]; then
		cannot "creating a local-CA issuer answered $HTTP_STATUS ($(snippet)); certctl stores an issuer's configuration encrypted and refuses to without CERTCTL_CONFIG_ENCRYPTION_KEY"
	fi
	REPLY=$(jqb .id)
	ISSUER_NAME=$name
}

enabled_issuers() { # → ENABLED_COUNT, ENABLED_DESC ("id (type), …"), ENABLED_REMOTE (non-local ones)
	call GET '/api/v1/issuers?per_page=500'
	expect_status 200 "listing issuers"
	ENABLED_COUNT=$(jqb '[.data[]? | select(.enabled == true)] | length')
	ENABLED_DESC=$(jqb '[.data[]? | select(.enabled == true) | "\(.id) (\(.type))"] | join(", ")')
	ENABLED_REMOTE=$(jqb '[.data[]? | select(.enabled == true and .type != "GenericCA") | .id] | join(", ")')
}

# The oldest enabled local CA (iss-local on a certctl started on an empty database); one is made
# when there is none.
local_issuer() {
	call GET '/api/v1/issuers?per_page=500'
	expect_status 200 "listing issuers"
	REPLY=$(jqb '[.data[]? | select(.enabled == true and .type == "GenericCA")] | sort_by(.created_at) | .[0].id // empty')
	if [ -z "$REPLY" ]; then
		note "no enabled local-CA issuer: creating one"
		mk_issuer
	fi
}

# base_rows [ISSUER_ID [renewal_window_days auto_renew]]: the rows a certificate needs, under the given
# issuer or else the oldest enabled local CA (local_issuer), its policy as mk_policy makes it.
base_rows() { # → TEAM_ID OWNER_ID POLICY_ID ISSUER_ID
	mk_team
	TEAM_ID=$REPLY
	mk_owner "$TEAM_ID"
	OWNER_ID=$REPLY
	mk_policy "${@:2}"
	POLICY_ID=$REPLY
	if [ -n "${1:-}" ]; then
		ISSUER_ID=$1
	else
		local_issuer
		ISSUER_ID=$REPLY
	fi
}

# agent_cert [ISSUER_ID]: what a certificate issued through the agent CSR path needs: base_rows, an
# agent, the certificate and a fresh key's CSR for its name; issue "$CERT_ID" "$AGENT_ID" "$CSR" signs it.
agent_cert() { # → AGENT_ID CERT_ID CSR (a file), CERT_CN, and base_rows' ids
	need openssl
	base_rows "$@"
	mk_agent
	AGENT_ID=$REPLY
	mk_cert
	CERT_ID=$REPLY
	new_key
	mk_csr "$REPLY" "$CERT_CN"
	CSR=$REPLY
}

mk_cert() { # [extra JSON merged into the body] → REPLY id, CERT_CN; CERT_ISSUER overrides ISSUER_ID
	local name extra=${1:-'{}'}
	uniq_name
	name=$REPLY
	call POST /api/v1/certificates "$(jq -cn --arg n "$name" --arg o "$OWNER_ID" --arg t "$TEAM_ID" \
		--arg i "${CERT_ISSUER:-$ISSUER_ID}" --arg p "$POLICY_ID" --argjson x "$extra" \
		'{name: $n, common_name: ($n + ".repro.example.com"), sans: [($n + ".repro.example.com")],
		  environment: "repro", owner_id: $o, team_id: $t, issuer_id: $i, renewal_policy_id: $p} + $x')"
	expect_status 201 "creating a certificate"
	REPLY=$(jqb .id)
	CERT_CN=$(jqb .common_name)
}

mk_agent() {
	local name
	uniq_name
	name=$REPLY
	call POST /api/v1/agents "$(jq -cn --arg n "$name" \
		'{name: $n, hostname: ($n + ".repro.example.com"), os: "linux", architecture: "amd64"}')"
	if [ "$HTTP_STATUS" = 401 ] && grep -q bootstrap <<<"$BODY"; then
		cannot "registering an agent answered 401 invalid_or_missing_bootstrap_token: this certctl's CERTCTL_AGENT_BOOTSTRAP_TOKEN is not the admin key, and registration needs one Bearer value that is both (docs/certctl-findings.md#bootstrap-token)"
	fi
	expect_status 201 "registering an agent"
	REPLY=$(jqb .id)
}

nginx_config() { # NAME → REPLY, a target configuration certctl's NGINX validation accepts
	REPLY=$(jq -cn --arg d "/var/lib/certctl-repro/$1" \
		'{cert_path: ($d + "/cert.pem"), key_path: ($d + "/key.pem"), chain_path: ($d + "/chain.pem"),
		  reload_command: "nginx -s reload", validate_command: "nginx -t"}')
}

mk_target() { # AGENT_ID TYPE CONFIG_JSON → REPLY id
	local name
	uniq_name
	name=$REPLY
	call POST /api/v1/targets "$(jq -cn --arg n "$name" --arg a "$1" --arg ty "$2" --argjson c "$3" \
		'{name: $n, type: $ty, agent_id: $a, config: $c}')"
	if [ "$HTTP_STATUS" != 201 ]; then
		cannot "creating a target answered $HTTP_STATUS ($(snippet)); certctl stores a target's configuration encrypted and refuses to without CERTCTL_CONFIG_ENCRYPTION_KEY"
	fi
	REPLY=$(jqb .id)
}

new_key() { # → REPLY path of a fresh P-256 key
	need openssl
	REPRO_SEQ=$((REPRO_SEQ + 1))
	REPLY="$REPRO_TMP/key.$REPRO_SEQ.pem"
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$REPLY" 2>"$REPRO_TMP/openssl.err" ||
		cannot "openssl could not make a key: $(head -c 200 "$REPRO_TMP/openssl.err")"
}

mk_csr() { # KEY CN → REPLY path of a PEM CSR
	local key=$1 cn=$2
	REPRO_SEQ=$((REPRO_SEQ + 1))
	REPLY="$REPRO_TMP/csr.$REPRO_SEQ.pem"
	openssl req -new -key "$key" -subj "/CN=$cn" -addext "subjectAltName=DNS:$cn" -out "$REPLY" 2>"$REPRO_TMP/openssl.err" ||
		cannot "openssl could not make a CSR: $(head -c 200 "$REPRO_TMP/openssl.err")"
}

submit_csr() { # AGENT_ID CERT_ID CSR_FILE: the agent's CSR for the certificate (HTTP_STATUS, BODY as call sets them)
	call POST "/api/v1/agents/$1/csr" "$(jq -cn --rawfile c "$3" --arg id "$2" '{csr_pem: $c, certificate_id: $id}')"
}

# issue CERT_ID AGENT_ID CSR_FILE: the agent CSR path, the one way outside ACME to get a
# certificate signed through the API. Sets SERIAL (certctl's stored form: 40 hex digits),
# LEAF_PEM and CA_PEM (files). Each call on the same certificate adds a version with a new serial.
issue() {
	local cert=$1 agent=$2 csr=$3 before chain
	call GET "/api/v1/certificates/$cert/versions?per_page=1"
	expect_status 200 "reading a certificate's versions"
	before=$(jqb '.data[0].serial_number // empty')
	submit_csr "$agent" "$cert" "$csr"
	expect_status 202 "submitting a CSR through the agent path"
	call GET "/api/v1/certificates/$cert/versions?per_page=1"
	expect_status 200 "reading a certificate's versions"
	SERIAL=$(jqb '.data[0].serial_number // empty')
	if [ -z "$SERIAL" ] || [ "$SERIAL" = "$before" ]; then
		cannot "certctl answered 202 to the CSR but stored no new version: the certificate's issuer is not in its issuer registry (docs/certctl-findings.md#agent-csr-path)"
	fi
	ISSUE_N=$((ISSUE_N + 1))
	LEAF_PEM="$REPRO_TMP/leaf.$ISSUE_N.pem"
	CA_PEM="$REPRO_TMP/ca.$ISSUE_N.pem"
	chain=$(jqb '.data[0].pem_chain')
	awk '/-----BEGIN CERTIFICATE-----/ { n++ } n == 1' <<<"$chain" >"$LEAF_PEM"
	awk '/-----BEGIN CERTIFICATE-----/ { n++ } n == 2' <<<"$chain" >"$CA_PEM"
}

# ACME renewal-info names a certificate by base64url(AKI) "." base64url(serial bytes) (RFC 9773).
# certctl looks only at the serial, so a certificate without an AKI gets a placeholder byte.
ari_id() { # LEAF_PEM → REPLY
	local aki ser
	aki=$(openssl x509 -in "$1" -noout -ext authorityKeyIdentifier 2>/dev/null |
		grep -oE '([0-9A-Fa-f]{2}:)+[0-9A-Fa-f]{2}' | head -1 | tr -d ':')
	ser=$(openssl x509 -in "$1" -noout -serial | cut -d= -f2)
	REPLY="$(hex2bin "${aki:-00}" | b64url).$(hex2bin "$ser" | b64url)"
}

# acme_profile: a new certificate profile whose ACME server answers (acme_guard) → PROFILE_ID; BODY is
# its ACME directory.
acme_profile() {
	mk_profile
	PROFILE_ID=$REPLY
	acme_guard "$PROFILE_ID"
}

# acme_account [N]: an ACME account on the profile whose directory is in BODY (acme_profile leaves it
# there; another account after the first: BODY=$ACME_DIR), its key in account<N>.pem → ACME_DIR (the directory), KID (the account's URL), ACCT_KEY, JWK_N, NONCE; then acme_post
# signs requests as it. RS256, because openssl's signature is then already the JWS signature (ES256
# would need the DER signature converted to r||s).
acme_account() {
	ACME_DIR=$BODY
	ACCT_KEY="$REPRO_TMP/account${1-}.pem"
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$ACCT_KEY" 2>/dev/null || cannot "openssl could not make an RSA key"
	JWK_N=$(hex2bin "$(openssl rsa -in "$ACCT_KEY" -noout -modulus | cut -d= -f2)" | b64url)
	KID=
	NONCE=
	acme_nonce
	acme_post "$(jq -r .newAccount <<<"$ACME_DIR")" '{"termsOfServiceAgreed":true}' jwk
	case $HTTP_STATUS in 200 | 201) ;; *) cannot "new-account answered $HTTP_STATUS: $(snippet)" ;; esac
	header Location
	KID=$REPLY
	[ -n "$KID" ] || cannot "new-account gave no Location (account URL)"
}

# The account key's RFC 7638 thumbprint, which a key authorization ends with: token "." thumbprint.
acme_thumbprint() { # → REPLY
	REPLY=$(printf '{"e":"AQAB","kty":"RSA","n":"%s"}' "$JWK_N" | openssl dgst -sha256 -binary | b64url)
}

# ACME URLs come from the directory, built by certctl from the Host it was asked on; the JWS "url"
# must be exactly that, and the request goes to the same path under $B.
acme_path() { # URL → REPLY path under $B
	REPLY=${1#"$B"}
	[ "$REPLY" != "$1" ] || cannot "certctl's ACME URL $1 is not under $B: pass the base URL certctl sees itself at"
}

acme_nonce() {
	acme_path "$(jq -r .newNonce <<<"$ACME_DIR")"
	call GET "$REPLY"
	header Replay-Nonce
	NONCE=$REPLY
	[ -n "$NONCE" ] || cannot "new-nonce answered $HTTP_STATUS without a Replay-Nonce"
}

# A 429 is retried as api retries one, but signed afresh: a JWS carries its nonce, and sending the same
# one again is a replay certctl answers badNonce.
acme_post() { # URL PAYLOAD MODE(jwk|kid) → BODY, HTTP_STATUS, NONCE (the next one; a fresh one when none came)
	local url=$1 payload=$2 mode=$3 prot ph pl sig path tries=0
	acme_path "$url"
	path=$REPLY
	while :; do
		[ -n "$NONCE" ] || acme_nonce
		if [ "$mode" = jwk ]; then
			prot=$(jq -cn --arg n "$JWK_N" --arg nonce "$NONCE" --arg url "$url" \
				'{alg: "RS256", jwk: {e: "AQAB", kty: "RSA", n: $n}, nonce: $nonce, url: $url}')
		else
			prot=$(jq -cn --arg kid "$KID" --arg nonce "$NONCE" --arg url "$url" \
				'{alg: "RS256", kid: $kid, nonce: $nonce, url: $url}')
		fi
		ph=$(printf '%s' "$prot" | b64url)
		pl=$(printf '%s' "$payload" | b64url)
		sig=$(printf '%s.%s' "$ph" "$pl" | openssl dgst -sha256 -sign "$ACCT_KEY" | b64url)
		API_NO_RETRY=1 API_CTYPE=application/jose+json call POST "$path" \
			"$(jq -cn --arg p "$ph" --arg l "$pl" --arg s "$sig" '{protected: $p, payload: $l, signature: $s}')"
		header Replay-Nonce
		NONCE=$REPLY
		if [ "$HTTP_STATUS" = 429 ] && [ "$tries" -lt 5 ]; then
			tries=$((tries + 1))
			sleep 1
			continue
		fi
		break
	done
}

# In dashboard mode every /acme path answers 200 text/html (docs/certctl-findings.md#dashboard-mode):
# an ACME verdict read from that page would be meaningless.
acme_guard() { # PROFILE_ID
	call GET "/acme/profile/$1/directory"
	case $HTTP_CTYPE in
	text/html*) cannot "/acme answers 200 text/html: this certctl runs in dashboard mode (docs/certctl-findings.md#dashboard-mode), which hides its ACME server; start it from a directory without web/dist/index.html" ;;
	esac
	expect_status 200 "reading the ACME directory of a new profile"
}

# trigger_issuance CERT_ID: the certificate's issuance job, by certctl's renew trigger. A 409 "renewal
# already in progress" (seen once in a findings run on main-151107c, on a certificate created moments
# before) means certctl had already marked the certificate renewing, which its TriggerRenewal refuses
# to start again; which path of certctl's did it was not established. The caller checks the job's
# state either way.
trigger_issuance() {
	call POST "/api/v1/certificates/$1/renew"
	if [ "$HTTP_STATUS" = 409 ] && grep -q "renewal already in progress" <<<"$BODY"; then
		return 0
	fi
	expect_status 202 "triggering the certificate's issuance"
}

# setup_deployment_job [CONFIG_JSON]: an NGINX target's deployment job (the target's configuration an
# NGINX one of a new name unless given), made the way certctl makes
# one: issuance in agent key-generation mode, the agent's CSR signed, then a Deployment job per
# mapped target. The mapping row is the one step no API call offers
# (docs/certctl-findings.md#no-target-binding), so it is written by SQL.
# Sets AGENT_ID TARGET_ID CERT_ID DEPLOY_JOB_ID DEPLOY_JOB_STATUS.
setup_deployment_job() {
	local config=${1:-} job_status
	need_pg
	if [ -z "$config" ]; then
		uniq_name
		nginx_config "$REPLY"
		config=$REPLY
	fi
	agent_cert
	mk_target "$AGENT_ID" NGINX "$config"
	TARGET_ID=$REPLY
	pgq "INSERT INTO certificate_target_mappings (certificate_id, target_id) VALUES (:'c', :'t');" \
		"c=$CERT_ID" "t=$TARGET_ID"
	trigger_issuance "$CERT_ID"
	call GET '/api/v1/jobs?per_page=500'
	expect_status 200 "listing jobs"
	job_status=$(jqb --arg c "$CERT_ID" '[.data[]? | select(.certificate_id == $c and .type != "Deployment")] | .[0].status // empty')
	if [ "$job_status" != AwaitingCSR ]; then
		cannot "the certificate's issuance job is '${job_status:-missing}', not AwaitingCSR: this script needs certctl in agent key-generation mode (CERTCTL_KEYGEN_MODE=agent, the default)"
	fi
	submit_csr "$AGENT_ID" "$CERT_ID" "$CSR"
	expect_status 202 "submitting the agent's CSR"
	call GET '/api/v1/jobs?type=Deployment&per_page=500'
	expect_status 200 "listing deployment jobs"
	DEPLOY_JOB_ID=$(jqb --arg c "$CERT_ID" '[.data[]? | select(.certificate_id == $c)] | .[0].id // empty')
	DEPLOY_JOB_STATUS=$(jqb --arg c "$CERT_ID" '[.data[]? | select(.certificate_id == $c)] | .[0].status // empty')
	[ -n "$DEPLOY_JOB_ID" ] || cannot "no deployment job appeared after the CSR was signed, although the certificate is mapped to target $TARGET_ID"
}

# work_item: the agent's first work poll, straight after setup_deployment_job, before the server's job
# processor can claim the job (docs/certctl-findings.md#job-processor-steals) → REPLY, its item for
# DEPLOY_JOB_ID (JSON).
work_item() {
	call GET "/api/v1/agents/$AGENT_ID/work"
	expect_status 200 "the agent's work poll"
	REPLY=$(jqb -c --arg j "$DEPLOY_JOB_ID" '[.jobs[]? | select(.id == $j)] | .[0] // empty')
	[ -n "$REPLY" ] || cannot "the agent's work poll does not list deployment job $DEPLOY_JOB_ID (claimed by the job processor first? run again)"
}
