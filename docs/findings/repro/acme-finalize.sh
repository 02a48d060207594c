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
acme_account

uniq_name
dns="$REPLY.repro.example.com"
acme_post "$(jq -r .newOrder <<<"$ACME_DIR")" "$(jq -cn --arg d "$dns" '{identifiers: [{type: "dns", value: $d}]}')" kid
expect_status 201 "new-order"
order_status=$(jqb .status)
finalize_url=$(jqb .finalize)
header Location
order_url=$REPLY
[ "$order_status" = ready ] || cannot "the new order is '$order_status', not ready: the profile's ACME auth mode is not trust_authenticated?"

new_key
csr=$(openssl req -new -key "$REPLY" -subj "/CN=$dns" -addext "subjectAltName=DNS:$dns" -outform DER 2>/dev/null | b64url)
[ -n "$csr" ] || cannot "openssl could not make the CSR"
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
