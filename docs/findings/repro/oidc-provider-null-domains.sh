#!/usr/bin/env bash
# Creating an OIDC provider without allowed_email_domains answers 500 (docs/certctl-findings.md#oidc-provider-null-domains).
# Shows: POST /api/v1/auth/oidc/providers with the body certctl's Keycloak runbook gives, which has no
#   allowed_email_domains, answers 500 "could not create provider": the handler passes the missing
#   list on as nil, the repository sends it as NULL, and the column is NOT NULL. The same body with
#   "allowed_email_domains": [] answers 201, which shows the field is the only difference.
# The issuer is a name that does not resolve: creating a provider fetches nothing from it.
# Creates in certctl: at most two OIDC providers, deleted at the end, and audit events.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

redirect="https://${B#*://}/auth/oidc/callback"
# The runbook's body (docs/operator/oidc-runbooks/keycloak.md, "Via the API"), with this run's names;
# EXTRA is merged in.
provider() { # EXTRA_JSON
	local name
	uniq_name
	name=$REPLY
	# main-151107c resolves the issuer's name before it stores the provider; where no resolver
	# answers, waiting out the resolver can outlast a call's default 10 s.
	API_MAX_TIME=30 call POST /api/v1/auth/oidc/providers "$(jq -cn --arg n "$name" --arg r "$redirect" --argjson x "$1" \
		'{name: $n, issuer_url: ("https://" + $n + ".invalid/realms/certctl"), client_id: "certctl",
		  client_secret: "repro-secret", redirect_uri: $r, groups_claim_path: "groups",
		  groups_claim_format: "string-array", fetch_userinfo: false, scopes: ["openid", "profile", "email"],
		  iat_window_seconds: 300, jwks_cache_ttl_seconds: 3600} + $x')"
	local id
	id=$(jqb '.id // empty')
	if [ "$HTTP_STATUS" = 201 ] && [ -n "$id" ]; then
		on_exit "api DELETE /api/v1/auth/oidc/providers/$id"
	fi
}

answer() { REPLY=$(jqb '.message // empty'); REPLY="$HTTP_STATUS${REPLY:+ \"$REPLY\"}"; }

provider '{}'
answer
without=$REPLY
s_without=$HTTP_STATUS
note "without allowed_email_domains: $without"
provider '{"allowed_email_domains": []}'
answer
with=$REPLY
s_with=$HTTP_STATUS
note "with allowed_email_domains []: $with"

[ "$s_with" = 201 ] || cannot "even with allowed_email_domains [] the provider was not created: $with"
case $s_without in
500) reproduces "without allowed_email_domains, creating a provider answers $without; with [] it answers 201" ;;
201) not_reproduced "a provider without allowed_email_domains is created (201), as with []" ;;
4??) not_reproduced "without allowed_email_domains the create is refused as the client's error: $without" ;;
esac
cannot "without allowed_email_domains: $without; with []: $with"
