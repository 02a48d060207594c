#!/usr/bin/env bash
# The renewal scan ignores the policy's window and `auto_renew`
# (docs/certctl-findings.md#renewal-scan-window).
# Shows: a certificate under a renewal policy with a 7-day window and auto_renew false, Active and
#   expiring in 20 days, is put into renewal (status RenewalInProgress, a Renewal job) by certctl's
#   scheduled scan, which takes everything expiring within 31 days. A scan that honoured the
#   policy would at most mark it Expiring.
# certctl offers no way to start a scan (docs/certctl-findings.md#renewal-scan-trigger): the script
#   waits RENEWAL_WAIT seconds (default 50) for the scheduled one. With the default interval (1 h)
#   it usually sees none and exits 2: start certctl with CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL=1m
#   and run with RENEWAL_WAIT=75, or rerun after the next scan (the rows stay).
# Creates in certctl: a team, an owner, a renewal policy (7 days, auto_renew false), one
#   certificate (never issued, status Active, expiring in 20 days) and, when the bug shows, the
#   Renewal job the scan creates; a local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

base_rows "" 7 false
expires=$(date -u -d '+20 days' +%Y-%m-%dT%H:%M:%SZ)
mk_cert "$(jq -cn --arg e "$expires" '{status: "Active", expires_at: $e}')"
cert=$REPLY
call GET "/api/v1/certificates/$cert"
[ "$(jqb .status)" = Active ] || cannot "the certificate was stored as '$(jqb .status)', not Active"

wait_s=${RENEWAL_WAIT:-50}
status=Active
start=$SECONDS
while [ $((SECONDS - start)) -lt "$wait_s" ]; do
	sleep 3
	call GET "/api/v1/certificates/$cert"
	expect_status 200 "reading the certificate"
	status=$(jqb .status)
	[ "$status" = Active ] || break
done
# A scan that marks it Expiring may create the job a moment later in the same pass.
if [ "$status" = Expiring ]; then
	sleep 3
	call GET "/api/v1/certificates/$cert"
	status=$(jqb .status)
fi

case $status in
RenewalInProgress)
	reproduces "certificate $cert (policy $POLICY_ID: renewal_window_days 7, auto_renew false; expires $expires) was put into renewal by the scheduled scan ($((SECONDS - start)) s after creation), 20 days before expiry"
	;;
Expiring)
	not_reproduced "the scan marked certificate $cert Expiring but started no renewal: the policy's window or auto_renew was honoured"
	;;
Active)
	cannot "no renewal scan ran in ${wait_s} s (the interval is CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL, default 1h, minimum 1m, and nothing else starts one): rerun with the interval at 1m and RENEWAL_WAIT=75, or check certificate $cert's status after the next scan"
	;;
*)
	cannot "certificate $cert is '$status'"
	;;
esac
