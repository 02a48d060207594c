#!/usr/bin/env bash
# HTTPS only (docs/certctl-findings.md#https-only).
# Shows: certctl's listener speaks TLS 1.3 only, with HTTP/2, and no plain HTTP: plain HTTP to the
#   same address gets Go's "client sent an HTTP request to an HTTPS server" 400 (or no answer), and
#   a TLS 1.2-only handshake fails. (That the server refuses to start without a certificate and key,
#   and listens on 127.0.0.1 by default, is only visible at start.)
# Creates in certctl: nothing.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
REPRO_NO_PREFLIGHT=1
repro_init "$@"

case $B in
http://*)
	API_NO_AUTH=1 call_raw GET /health
	[ "$HTTP_STATUS" = 000 ] || not_reproduced "certctl answers plain HTTP at $B ($HTTP_STATUS)"
	cannot "no answer over plain HTTP at $B; pass the https:// URL"
	;;
esac

hostport=${B#https://}
hostport=${hostport%%/*}
plain=$(curl -sS --max-time 5 -o "$REPRO_TMP/plain" -w '%{http_code}' "http://$hostport/health" 2>/dev/null) || true
plain_body=$(tr -d '\r\n' <"$REPRO_TMP/plain" 2>/dev/null | cut -c1-80)
tls12=$(curl -sS --max-time 5 --cacert "$CA" --tlsv1.2 --tls-max 1.2 -o /dev/null -w '%{http_code}' "$B/health" 2>/dev/null) || true
tls13=$(curl -sS --max-time 5 --cacert "$CA" --tlsv1.3 -o /dev/null -w '%{http_code} HTTP/%{http_version}' "$B/health" 2>/dev/null) || true
note "plain HTTP: ${plain:-000} '$plain_body'; TLS 1.2 only: ${tls12:-000}; TLS 1.3: ${tls13:-000}"

case $tls13 in 200\ *) ;; *) cannot "GET $B/health over TLS 1.3 answered '${tls13:-nothing}'" ;; esac
plain_refused=no
case ${plain:-000} in 000 | 400) plain_refused=yes ;; esac
tls12_refused=no
case ${tls12:-000} in 000) tls12_refused=yes ;; esac

if [ "$plain_refused" = yes ] && [ "$tls12_refused" = yes ]; then
	reproduces "plain HTTP to $hostport answered ${plain:-nothing} ('$plain_body'), a TLS 1.2 handshake failed, TLS 1.3 answered $tls13"
fi
not_reproduced "plain HTTP answered ${plain:-000} ('$plain_body'), TLS 1.2 answered ${tls12:-000}"
