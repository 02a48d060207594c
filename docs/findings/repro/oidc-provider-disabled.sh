#!/usr/bin/env bash
# OIDC providers created through the API are stored disabled (docs/certctl-findings.md#oidc-provider-disabled).
# Shows: a provider created with POST /api/v1/auth/oidc/providers is stored with enabled = false (the
#   request has no such field and the repository writes Go's zero value over the column's DEFAULT
#   TRUE), and /api/v1/auth/info, which the login page reads, leaves it out. Neither answer of the API
#   says it is disabled, hence the database.
# The provider's issuer is a name that does not resolve: creating a provider fetches nothing, and
#   main-151107c's address check lets a name that does not resolve pass. No identity provider is
#   contacted, so the login itself (500 for a disabled provider) is not tried: without a reachable
#   issuer it fails first on discovery, with the same 500.
# Exits 1 where a trigger or a fix stores the provider enabled (the harness's AUTH_WORKAROUNDS=1 does).
# Needs PGURL. Creates in certctl: one OIDC provider, deleted at the end, and audit events.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need_pg

uniq_name
name=$REPLY
# Validate insists on https for the redirect URI; its host does not matter for a provider never used.
redirect="https://${B#*://}/auth/oidc/callback"
# main-151107c resolves the issuer's name before it stores the provider; where no resolver
# answers, waiting out the resolver can outlast a call's default 10 s.
API_MAX_TIME=30 call POST /api/v1/auth/oidc/providers "$(jq -cn --arg n "$name" --arg r "$redirect" --arg i "https://$name.invalid/realms/repro" \
	'{name: $n, issuer_url: $i, client_id: "certctl-repro", client_secret: "repro-secret", redirect_uri: $r,
	  allowed_email_domains: []}')"
if [ "$HTTP_STATUS" != 201 ]; then
	cannot "creating an OIDC provider answered $HTTP_STATUS: $(snippet)"
fi
id=$(jqb '.id // empty')
[ -n "$id" ] || cannot "creating an OIDC provider answered 201 without an id: $(snippet)"
on_exit "api DELETE /api/v1/auth/oidc/providers/$id"
answered=$(jqb 'if has("enabled") then "enabled: \(.enabled)" else "no enabled field" end')

pgq "SELECT enabled FROM oidc_providers WHERE id = :'id';" "id=$id"
enabled=$REPLY
[ -n "$enabled" ] || cannot "provider $id answered 201 but is not in oidc_providers"

API_NO_AUTH=1 call GET /api/v1/auth/info
listed=$(jqb --arg id "$id" 'if any(.oidc_providers[]?; .id == $id) then "listed" else "not listed" end')
note "provider $id: the create answered 201 with $answered; /api/v1/auth/info ($HTTP_STATUS): $listed"

# A trigger is how a deployment (or the harness) works around this; name it when the row is enabled.
pgq "SELECT coalesce(string_agg(tgname, ', '), '') FROM pg_trigger
      WHERE tgrelid = 'oidc_providers'::regclass AND NOT tgisinternal;"
triggers=$REPLY

why=''
if [ -n "$triggers" ]; then why=" (oidc_providers has the trigger(s) $triggers, as the harness's workaround adds)"; fi

case $enabled in
f) reproduces "provider $id, created through the API, is stored with enabled = false ($answered in the create's answer; $listed in /api/v1/auth/info)" ;;
t) not_reproduced "provider $id is stored enabled$why; /api/v1/auth/info: $listed" ;;
esac
cannot "oidc_providers.enabled of $id reads '$enabled'"
