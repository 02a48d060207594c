#!/usr/bin/env bash
# Renewal-info 404 for serials starting with a zero digit (docs/certctl-findings.md#ari-leading-zero).
# Shows: ACME renewal-info (RFC 9773) answers 200 for a certificate certctl issued, but 404
#   ("resource not found") when its serial, as stored (40 hex digits), starts with 0: the lookup
#   turns the serial back into hex without leading zeros.
# With more than one enabled issuer renewal-info also picks an issuer at random
#   (docs/certctl-findings.md#ari-any-issuer); each certificate is then asked 64 times, and the
#   verdict needs the control certificate found at least once.
# Creates in certctl: a certificate profile, a team, an owner, a renewal policy, an agent and one
#   certificate issued up to 48 times until a serial starts with 0 (1 in 8 does); a local-CA
#   issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need openssl base64

acme_profile
enabled_issuers
tries=3
[ "$ENABLED_COUNT" -le 1 ] || tries=64

agent_cert

zero='' zero_id='' control='' control_id=''
for i in $(seq 48); do
	issue "$CERT_ID" "$AGENT_ID" "$CSR"
	case $SERIAL in
	0*) if [ -z "$zero" ]; then
		zero=$SERIAL
		ari_id "$LEAF_PEM"
		zero_id=$REPLY
	fi ;;
	*) if [ -z "$control" ]; then
		control=$SERIAL
		ari_id "$LEAF_PEM"
		control_id=$REPLY
	fi ;;
	esac
	if [ -n "$zero" ] && [ -n "$control" ]; then break; fi
	elapsed
	[ "$REPLY" -lt 40 ] || break
done
[ -n "$zero" ] || cannot "no serial started with 0 in $i issuances (each does with odds 1 in 8); run again"
[ -n "$control" ] || cannot "every serial started with 0; no control certificate"

ask() { # ARI_ID → REPLY "n200 n404 other"
	local ok=0 nf=0 other=0
	for _ in $(seq "$tries"); do
		call GET "/acme/profile/$PROFILE_ID/renewal-info/$1"
		case $HTTP_STATUS in 200) ok=$((ok + 1)) ;; 404) nf=$((nf + 1)) ;; *) other=$((other + 1)) ;; esac
	done
	REPLY="$ok $nf $other"
}
ask "$control_id"
read -r c200 c404 cother <<<"$REPLY"
ask "$zero_id"
read -r z200 z404 zother <<<"$REPLY"
counts="control $control: $c200×200 $c404×404 $cother×other; zero-led $zero: $z200×200 $z404×404 $zother×other (of $tries each, $ENABLED_COUNT enabled issuer(s))"

if [ "$c200" -gt 0 ] && [ "$z200" = 0 ] && [ "$z404" -gt 0 ]; then
	reproduces "renewal-info finds the certificate with serial $control but never the one with serial $zero, issued the same way by $ISSUER_ID: $counts"
fi
if [ "$z200" -gt 0 ]; then
	not_reproduced "renewal-info found the certificate with serial $zero: $counts"
fi
cannot "renewal-info did not find even the control certificate ($counts); ARI disabled (CERTCTL_ACME_SERVER_ARI_ENABLED)?"
