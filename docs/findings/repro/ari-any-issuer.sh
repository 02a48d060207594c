#!/usr/bin/env bash
# Renewal-info looks in an arbitrary issuer (docs/certctl-findings.md#ari-any-issuer).
# Shows: with two or more enabled issuers, ACME renewal-info for one certificate certctl issued
#   answers 200 some of the time and 404 the rest: it looks the serial up under "the first
#   available issuer", the first entry of a Go map, whose order changes from call to call.
#   (Go's small-map iteration favours one slot, so the split is uneven; 64 asks make a mix
#   all but certain.)
# Creates in certctl: a second local-CA issuer when fewer than two are enabled (creating one also
#   regenerates every ephemeral local CA: docs/certctl-findings.md#local-ca-ephemeral), a
#   certificate profile, a team, an owner, a renewal policy, an agent and one certificate issued
#   once or a few times (until its serial does not start with 0, to keep
#   docs/certctl-findings.md#ari-leading-zero out of the way).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need openssl base64

acme_profile
enabled_issuers
if [ "$ENABLED_COUNT" -lt 2 ]; then
	note "only $ENABLED_COUNT enabled issuer: creating a second one"
	mk_issuer
	enabled_issuers
fi
[ "$ENABLED_COUNT" -ge 2 ] || cannot "still fewer than two enabled issuers"

agent_cert
for _ in 1 2 3 4 5 6 7 8; do
	issue "$CERT_ID" "$AGENT_ID" "$CSR"
	case $SERIAL in 0*) ;; *) break ;; esac
done
case $SERIAL in 0*) cannot "eight serials in a row started with 0; run again" ;; esac
ari_id "$LEAF_PEM"
id=$REPLY

ok=0 nf=0 other=0
for _ in $(seq 64); do
	call GET "/acme/profile/$PROFILE_ID/renewal-info/$id"
	case $HTTP_STATUS in 200) ok=$((ok + 1)) ;; 404) nf=$((nf + 1)) ;; *) other=$((other + 1)) ;; esac
done
counts="$ok×200, $nf×404, $other×other of 64 asks; enabled issuers: $ENABLED_DESC"

if [ "$ok" -gt 0 ] && [ "$nf" -gt 0 ]; then
	reproduces "the same renewal-info request for a certificate issued by $ISSUER_ID (serial $SERIAL) answered $counts"
fi
if [ "$nf" = 0 ] && [ "$ok" -gt 0 ]; then
	not_reproduced "renewal-info found the certificate every time: $counts"
fi
cannot "renewal-info never found the certificate ($counts); ARI disabled, or the lookup never landed on $ISSUER_ID (odds under 1 in 4,000)"
