#!/usr/bin/env bash
# No API call binds a certificate to a target (docs/certctl-findings.md#no-target-binding).
# Shows: POST /api/v1/certificates accepts target_ids and echoes them, but stores nothing: reading
#   the certificate back (its target_ids come from certificate_target_mappings) gives none. And
#   POST /api/v1/certificates/{id}/deploy answers 202 "deployment_triggered" but creates no
#   deployment job (it only records an audit event).
# Creates in certctl: a team, an owner, a renewal policy, an agent, an NGINX target (configuration
#   only; nothing is deployed), one certificate (never issued) and a deployment_triggered audit
#   event; a local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

base_rows
mk_agent
agent=$REPLY
uniq_name
nginx_config "$REPLY"
mk_target "$agent" NGINX "$REPLY"
target=$REPLY

mk_cert "$(jq -cn --arg t "$target" '{target_ids: [$t]}')"
cert=$REPLY
echoed=$(jqb '(.target_ids // []) | join(",")')
call GET "/api/v1/certificates/$cert"
expect_status 200 "reading the certificate back"
stored=$(jqb '(.target_ids // []) | join(",")')

call POST "/api/v1/certificates/$cert/deploy" "$(jq -cn --arg t "$target" '{target_id: $t}')"
deploy=$HTTP_STATUS
deploy_body=$(snippet)
sleep 3
call GET '/api/v1/jobs?type=Deployment&per_page=500'
expect_status 200 "listing deployment jobs"
jobs=$(jqb --arg c "$cert" '[.data[]? | select(.certificate_id == $c)] | length')

if [ -z "$stored" ] && [ "$jobs" = 0 ]; then
	reproduces "creating the certificate with target_ids [$target] echoed [$echoed] but reading it back gives [] (no mapping stored); the deploy trigger answered $deploy $deploy_body and no deployment job exists for it 3 s later"
fi
if [ "$stored" = "$target" ] && [ "$jobs" -gt 0 ]; then
	not_reproduced "the certificate is bound to $target and the deploy trigger created $jobs deployment job(s)"
fi
if [ -z "$stored" ]; then
	reproduces "creating the certificate with target_ids [$target] echoed [$echoed] but stored no mapping (deploy trigger: $deploy, deployment jobs: $jobs)"
fi
cannot "target_ids stored [$stored]; deploy trigger $deploy; deployment jobs for the certificate: $jobs"
