#!/usr/bin/env bash
# Agents receive the target's configuration redacted (docs/certctl-findings.md#target-secrets-redacted).
# Shows: certctl stores a target's configuration twice (encrypted in full, and with every field
#   whose name contains key/password/secret/token/… replaced by ********) and the agent's work
#   poll hands out the redacted copy: an NGINX deployment job arrives with key_path "********",
#   so the agent cannot write the private key where the server reads it.
# Needs PGURL (to write the certificate→target mapping no API call writes: without it there is no
#   deployment job to poll). Creates in certctl: a team, an owner, a renewal policy, an agent that
#   never runs, an NGINX target, one certificate issued through the agent path, its mapping row,
#   its issuance job and a deployment job, which this script's work poll claims (it stays Running:
#   no agent will deploy it); a local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

uniq_name
nginx_config "$REPLY"
config=$REPLY
sent_key_path=$(jq -r .key_path <<<"$config")
setup_deployment_job "$config"
work_item
item=$REPLY
got=$(jq -r '.target_config.key_path // empty' <<<"$item")
got_cert=$(jq -r '.target_config.cert_path // empty' <<<"$item")

if [ "$got" = "********" ]; then
	reproduces "target $TARGET_ID was created with key_path $sent_key_path; the agent's work for deployment job $DEPLOY_JOB_ID carries key_path '$got' (cert_path '$got_cert' intact)"
fi
if [ "$got" = "$sent_key_path" ]; then
	not_reproduced "the agent's work carries the real key_path ($got)"
fi
cannot "the agent's work carries key_path '${got:-absent}': $(cut -c1-300 <<<"$item")"
