#!/usr/bin/env bash
# The job processor steals agent-routed deployment jobs (docs/certctl-findings.md#job-processor-steals).
# Shows: a Deployment job routed to an agent, made by certctl when that agent's CSR is signed,
#   goes from Pending to Running at the server's next job-processor tick although the agent never
#   polled, and the agent's work poll then no longer lists it: the processor claims every Pending
#   job and skips agent-routed deployments without handing them back.
# Waits up to STEAL_WAIT seconds (default 45) for a tick: with CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL
#   longer than that (the harness's deploy tier uses 1h) nothing moves and the script exits 2.
# Needs PGURL (to write the certificate→target mapping no API call writes). Creates in certctl: a
#   team, an owner, a renewal policy, an agent that never runs, an NGINX target (nothing is
#   deployed), one certificate issued through the agent path, its mapping row, its issuance job and
#   the deployment job; a local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

setup_deployment_job
note "deployment job $DEPLOY_JOB_ID for agent $AGENT_ID is $DEPLOY_JOB_STATUS"
[ "$DEPLOY_JOB_STATUS" = Pending ] || cannot "the new deployment job is already '$DEPLOY_JOB_STATUS'"

wait_s=${STEAL_WAIT:-45}
status=Pending
start=$SECONDS
while [ $((SECONDS - start)) -lt "$wait_s" ]; do
	sleep 2
	call GET "/api/v1/jobs/$DEPLOY_JOB_ID"
	expect_status 200 "reading the deployment job"
	status=$(jqb .status)
	[ "$status" = Pending ] || break
done
waited=$((SECONDS - start))

if [ "$status" = Pending ]; then
	cannot "the deployment job stayed Pending for $waited s: no job-processor tick in that time (CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL longer than ${wait_s}s?); set it to 10s, or STEAL_WAIT longer than the interval, and rerun"
fi

# Now the agent asks for work, as its 30 s poll would.
call GET "/api/v1/agents/$AGENT_ID/work"
expect_status 200 "the agent's work poll"
listed=$(jqb --arg j "$DEPLOY_JOB_ID" '[.jobs[]? | select(.id == $j)] | length')

if [ "$status" = Running ] && [ "$listed" = 0 ]; then
	reproduces "deployment job $DEPLOY_JOB_ID for agent $AGENT_ID went Pending → Running within $waited s without the agent polling, and the agent's work poll does not list it: it will never run (only the offline-agent reaper ever moves it, to Failed)"
fi
if [ "$status" = Running ]; then
	reproduces "deployment job $DEPLOY_JOB_ID for agent $AGENT_ID went Pending → Running within $waited s without the agent polling (its work poll lists it $listed time(s))"
fi
not_reproduced "the agent-routed deployment job moved to '$status' within $waited s without the agent; the job processor did not leave it Running"
