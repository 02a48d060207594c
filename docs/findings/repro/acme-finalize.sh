#!/usr/bin/env bash
# ACME finalize answers 500 (docs/certctl-findings.md#acme-finalize).
# Shows: with certctl's own ACME server, new-account and new-order work (the order is ready under a
#   trust_authenticated profile), but finalize answers 500 serverInternal and the order stays
#   "processing": certctl signed the certificate, then failed to store it (empty owner, team and
#   renewal policy against their foreign keys; empty fingerprint against a UNIQUE column).
# Creates in certctl: a certificate profile, an ACME account (RSA key made here), one order; the
#   certificate certctl signs is not stored (that is the bug), the order stays open.
# Runs only when every enabled issuer is a local CA: finalize signs with whichever enabled issuer
#   certctl's registry yields first, and a remote one (Let's Encrypt, …) would be dialled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need openssl base64

enabled_issuers
[ "$ENABLED_COUNT" -ge 1 ] || cannot "no enabled issuer: finalize would fail for want of one, not for this finding"
if [ -n "$ENABLED_REMOTE" ]; then
	cannot "enabled non-local issuers ($ENABLED_REMOTE): finalize may sign through any of them (docs/certctl-findings.md#ari-any-issuer) and dial it; disable them (PUT /api/v1/issuers/{id} with \"enabled\": false) on this throwaway certctl and rerun"
fi

acme_profile
dir=$BODY

# ACME URLs come from the directory, built by certctl from the Host it was asked on; the JWS
# "url" must be exactly that, and the request goes to the same path under $B.
acme_path() { # URL → REPLY path under $B
	REPLY=${1#"$B"}
	[ "$REPLY" != "$1" ] || cannot "certctl's ACME URL $1 is not under $B: pass the base URL certctl sees itself at"
}

ACCT_KEY="$REPRO_TMP/account.pem"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$ACCT_KEY" 2>/dev/null || cannot "openssl could not make an RSA key"
# RS256 because openssl's signature is then already the JWS signature (ES256 would need the DER
# signature converted to r||s).
JWK_N=$(hex2bin "$(openssl rsa -in "$ACCT_KEY" -noout -modulus | cut -d= -f2)" | b64url)
KID=
NONCE=

acme_nonce() {
	acme_path "$(jq -r .newNonce <<<"$dir")"
	call GET "$REPLY"
	header Replay-Nonce
	NONCE=$REPLY
	[ -n "$NONCE" ] || cannot "new-nonce answered $HTTP_STATUS without a Replay-Nonce"
}

acme_post() { # URL PAYLOAD(jwk|kid) → BODY, HTTP_STATUS, NONCE (the next one, when given)
	local url=$1 payload=$2 mode=$3 prot ph pl sig path
	acme_path "$url"
	path=$REPLY
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
	API_CTYPE=application/jose+json call POST "$path" \
		"$(jq -cn --arg p "$ph" --arg l "$pl" --arg s "$sig" '{protected: $p, payload: $l, signature: $s}')"
	header Replay-Nonce
	NONCE=$REPLY
}

acme_nonce
acme_post "$(jq -r .newAccount <<<"$dir")" '{"termsOfServiceAgreed":true}' jwk
case $HTTP_STATUS in 200 | 201) ;; *) cannot "new-account answered $HTTP_STATUS: $(snippet)" ;; esac
header Location
KID=$REPLY
[ -n "$KID" ] || cannot "new-account gave no Location (account URL)"

uniq_name
dns="$REPLY.repro.example.com"
[ -n "$NONCE" ] || acme_nonce
acme_post "$(jq -r .newOrder <<<"$dir")" "$(jq -cn --arg d "$dns" '{identifiers: [{type: "dns", value: $d}]}')" kid
expect_status 201 "new-order"
order_status=$(jqb .status)
finalize_url=$(jqb .finalize)
header Location
order_url=$REPLY
[ "$order_status" = ready ] || cannot "the new order is '$order_status', not ready: the profile's ACME auth mode is not trust_authenticated?"

new_key
csr=$(openssl req -new -key "$REPLY" -subj "/CN=$dns" -addext "subjectAltName=DNS:$dns" -outform DER 2>/dev/null | b64url)
[ -n "$csr" ] || cannot "openssl could not make the CSR"
[ -n "$NONCE" ] || acme_nonce
acme_post "$finalize_url" "$(jq -cn --arg c "$csr" '{csr: $c}')" kid
fin_status=$HTTP_STATUS
fin_problem=$(jqb '.type // empty')
fin_nonce=$NONCE

if [ "$fin_status" = 200 ]; then
	not_reproduced "finalize answered 200 (order $(jqb .status)): the certificate was stored"
fi
[ "$fin_status" = 500 ] || cannot "finalize answered $fin_status: $(snippet)"

# The 500 carries no Replay-Nonce (an ACME client reusing its last one then gets badNonce).
acme_nonce
acme_post "$order_url" "" kid
after=$(jqb '.status // empty')
case $after in
processing)
	reproduces "finalize answered 500 ${fin_problem:-} (Replay-Nonce: ${fin_nonce:-none}); the order stays 'processing', so certctl signed the certificate and failed to store it, and the order keeps counting against the account's open orders"
	;;
invalid)
	cannot "finalize answered 500 but the order is 'invalid': the issuer refused the CSR (a different failure from this finding's store error)"
	;;
*)
	cannot "finalize answered 500 and the order is '${after:-unreadable}' ($HTTP_STATUS)"
	;;
esac
