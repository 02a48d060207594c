#!/usr/bin/env bash
# OCSP always 500 for a local issuer (docs/certctl-findings.md#ocsp-500).
# Shows: GET /.well-known/pki/ocsp/{issuer}/{serial} answers 500 "Failed to generate OCSP
#   response" for a certificate the local CA has just issued (certctl cannot create its OCSP
#   responder key), while the same issuer's CRL answers 200.
# Creates in certctl: a team, an owner, a renewal policy, an agent and one certificate issued
#   through the agent CSR path; a local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need openssl

agent_cert
issue "$CERT_ID" "$AGENT_ID" "$CSR"

# OCSP and CRL are anonymous endpoints (relying parties have no key).
API_NO_AUTH=1 call GET "/.well-known/pki/ocsp/$ISSUER_ID/$SERIAL"
ocsp=$HTTP_STATUS
ocsp_msg=$(jqb '.message // empty')
ocsp_body=$(snippet)
API_NO_AUTH=1 call GET "/.well-known/pki/crl/$ISSUER_ID"
crl=$HTTP_STATUS

case $ocsp in
500) reproduces "OCSP for serial $SERIAL, just issued by $ISSUER_ID, answered 500 '${ocsp_msg}'; the issuer's CRL answered $crl" ;;
200) not_reproduced "OCSP for serial $SERIAL answered 200 (a responder key exists: e.g. the harness's OCSP_RESPONDER_WORKAROUND)" ;;
*) cannot "OCSP for serial $SERIAL answered $ocsp: $ocsp_body" ;;
esac
