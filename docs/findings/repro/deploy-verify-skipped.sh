#!/usr/bin/env bash
# The agent's post-deployment check is skipped for file targets
# (docs/certctl-findings.md#deploy-verify-skipped).
# Shows: the agent's check (CERTCTL_VERIFY_DEPLOYMENT, on by default) needs a host in the target
#   configuration it receives (it looks for host, hostname, target or address); the work certctl
#   hands out for an NGINX deployment has none of them (an NGINX target's configuration has no
#   such field), so the agent logs "could not extract target host/port for verification" and
#   reports the job Completed unchecked. What the agent does with the item is read in the source
#   (cmd/agent/verify.go extractTargetHostAndPort); the item's shape is observed here. (The NGINX,
#   Apache and HAProxy connectors have their own opt-in post_deploy_verify {enabled, endpoint}.)
# Needs PGURL (to write the certificate→target mapping no API call writes: without it there is no
#   deployment job to poll). Creates in certctl: a team, an owner, a renewal policy, an agent that
#   never runs, an NGINX target, one certificate issued through the agent path, its mapping row,
#   its issuance job and a deployment job, which this script's work poll claims (it stays Running);
#   a local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

setup_deployment_job
work_item
item=$REPLY
keys=$(jq -r '.target_config // {} | keys | join(",")' <<<"$item")
hostish=$(jq -r '[.target_config // {} | to_entries[] | select(.key == "host" or .key == "hostname" or .key == "target" or .key == "address") | select((.value | type) == "string" and .value != "") | .key] | join(",")' <<<"$item")

if [ -z "$hostish" ]; then
	reproduces "the work item for NGINX deployment job $DEPLOY_JOB_ID ($(jq -r .target_type <<<"$item")) carries target_config keys [$keys]: no host/hostname/target/address, so the agent's post-deployment check has nothing to dial and is skipped"
fi
not_reproduced "the work item carries $hostish: the agent's check would dial it"
