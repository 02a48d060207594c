#!/usr/bin/env bash
# The local CA is regenerated at every start (docs/certctl-findings.md#local-ca-ephemeral).
# Shows: a GenericCA issuer without CA files keeps its CA key only in the connector's memory.
#   certctl builds connectors at start and again whenever its issuer registry is rebuilt, which
#   any issuer create/update through the API does; so, without a restart, the script issues a
#   certificate, re-saves the issuer unchanged (PUT) and issues again: the second certificate is
#   signed by a different CA key (another Authority Key Identifier, another CA certificate). A
#   restart does the same (the connector is built anew and nothing persisted the key).
# Creates in certctl: its own ephemeral local-CA issuer (create + one unchanged update: each rebuild
#   also regenerates every other ephemeral local CA on this certctl), a team, an owner, a renewal
#   policy, an agent and one certificate issued twice.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need openssl

ca_id() { # LEAF_PEM CA_PEM → REPLY "AKI / sha256 of the CA certificate"
	local aki fp
	aki=$(openssl x509 -in "$1" -noout -ext authorityKeyIdentifier 2>/dev/null |
		grep -oE '([0-9A-Fa-f]{2}:)+[0-9A-Fa-f]{2}' | head -1)
	fp=$(openssl x509 -in "$2" -noout -fingerprint -sha256 2>/dev/null | cut -d= -f2)
	REPLY="AKI ${aki:-none}, CA certificate ${fp:-none}"
}

mk_issuer
issuer=$REPLY
agent_cert "$issuer"

issue "$CERT_ID" "$AGENT_ID" "$CSR"
ca_id "$LEAF_PEM" "$CA_PEM"
before=$REPLY
serial1=$SERIAL

call PUT "/api/v1/issuers/$issuer" "$(jq -cn --arg n "$ISSUER_NAME" \
	'{name: $n, type: "GenericCA", config: {ca_common_name: ("certctl repro CA " + $n)}, enabled: true, test_status: "untested"}')"
expect_status 200 "re-saving the issuer unchanged"

issue "$CERT_ID" "$AGENT_ID" "$CSR"
ca_id "$LEAF_PEM" "$CA_PEM"
after=$REPLY

if [ "$before" = "AKI none, CA certificate none" ]; then cannot "could not read the issuing CA of the first certificate"; fi
if [ "$before" != "$after" ]; then
	reproduces "certificate $serial1 was signed by [$before]; after an unchanged PUT of issuer $issuer the next one ($SERIAL) was signed by [$after]: the first CA's key is gone, as after a restart"
fi
not_reproduced "both certificates were signed by the same CA [$before] across a registry rebuild"
