#!/usr/bin/env bash
# Jobs never record when they started or ended (docs/certctl-findings.md#job-times-unset).
# Shows: a job that went AwaitingCSR → Running → Completed (an issuance completed by the agent's
#   CSR) still has no started_at and no completed_at: every status change is one
#   UPDATE jobs SET status, last_error, which touches nothing else.
# Creates in certctl: a team, an owner, a renewal policy, an agent, one certificate issued through
#   its issuance job; a local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need openssl

agent_cert
cert=$CERT_ID

trigger_issuance "$cert"
call GET '/api/v1/jobs?per_page=500'
expect_status 200 "listing jobs"
job=$(jqb --arg c "$cert" '[.data[]? | select(.certificate_id == $c)] | .[0].id // empty')
status=$(jqb --arg c "$cert" '[.data[]? | select(.certificate_id == $c)] | .[0].status // empty')
[ -n "$job" ] || cannot "no job appeared for the certificate after the renew trigger"

if [ "$status" = AwaitingCSR ]; then
	submit_csr "$AGENT_ID" "$cert" "$CSR"
	expect_status 202 "submitting the CSR"
fi
# In server key-generation mode the job processor runs the job instead; wait for it.
start=$SECONDS
while :; do
	call GET "/api/v1/jobs/$job"
	expect_status 200 "reading the job"
	status=$(jqb .status)
	case $status in Completed | Failed | Cancelled) break ;; esac
	[ $((SECONDS - start)) -lt 45 ] || cannot "job $job is still '$status' after 45 s"
	sleep 2
done
times=$(jqb -c '{status, created_at, started_at, completed_at}')

if [ "$(jqb '.started_at // empty')" = "" ] && [ "$(jqb '.completed_at // empty')" = "" ]; then
	reproduces "job $job ($(jqb .type)) is $status, and certctl says $times: no start or end time"
fi
not_reproduced "job $job records its times: $times"
