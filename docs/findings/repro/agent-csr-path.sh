#!/usr/bin/env bash
# Agent CSR path: 202 even when nothing is signed (docs/certctl-findings.md#agent-csr-path).
# Shows: POST /api/v1/agents/{id}/csr for a certificate whose issuer is not in certctl's issuer
#   registry (here: an issuer disabled through the API) answers 202 {"status":"csr_signed"},
#   yet no certificate version is stored.
# Creates in certctl: a local-CA issuer (created, then disabled; both rebuild the issuer registry,
#   which regenerates every ephemeral local CA: docs/certctl-findings.md#local-ca-ephemeral), a
#   team, an owner, a renewal policy, an agent and one certificate that stays unissued.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need openssl

mk_issuer
issuer=$REPLY
# Disabling goes through PUT, which rebuilds the registry without the issuer: the same state as
# an issuer disabled in the database before boot. certctl creates every issuer enabled.
call PUT "/api/v1/issuers/$issuer" "$(jq -cn --arg n "$ISSUER_NAME" \
	'{name: $n, type: "GenericCA", config: {ca_common_name: ("certctl repro CA " + $n)}, enabled: false, test_status: "untested"}')"
expect_status 200 "disabling the issuer"
call GET "/api/v1/issuers/$issuer"
[ "$(jqb .enabled)" = false ] || cannot "the issuer is still enabled after the PUT: $(snippet)"

agent_cert "$issuer"
cert=$CERT_ID

submit_csr "$AGENT_ID" "$cert" "$CSR"
csr_status=$HTTP_STATUS
csr_body=$(snippet)
call GET "/api/v1/certificates/$cert/versions"
expect_status 200 "reading the certificate's versions"
versions=$(jqb '.data | length')

if [ "$csr_status" = 202 ] && [ "$versions" = 0 ]; then
	reproduces "the CSR for a certificate of disabled issuer $issuer answered 202 $csr_body, and the certificate has no version: nothing was signed"
fi
if [ "$csr_status" != 202 ]; then
	not_reproduced "the CSR for a certificate of a disabled issuer answered $csr_status: $csr_body"
fi
cannot "the CSR answered 202 and the certificate has $versions version(s): a disabled issuer signed?"
