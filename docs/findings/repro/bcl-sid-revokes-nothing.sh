#!/usr/bin/env bash
# A back-channel logout naming a session (sid) revokes nothing (docs/certctl-findings.md#bcl-sid-revokes-nothing).
# Shows: certctl has nowhere to keep the provider's session id. Its sessions table has no column for
#   it, so the sid of a logout token can only be looked up as a certctl session id (ses-…), which it
#   never is. The behaviour itself needs an identity provider that signs logout tokens: the harness's
#   auth tier shows it with AUTH_BCL_SID=true (every session ended at Keycloak stays accepted), and its
#   absence there is what says a build fixed it (the registry's "not appearing"). This script reads the
#   schema only: it looks for the provider's session id in every table, not only sessions, and says it
#   cannot judge when one may hold it.
# Needs PGURL. Creates nothing.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"
need_pg

pgq "SELECT coalesce(string_agg(column_name, ', ' ORDER BY ordinal_position), '')
     FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'sessions';"
cols=$REPLY
[ -n "$cols" ] || cannot "this certctl's database has no sessions table"
pgq "SELECT coalesce(string_agg(column_name, ', '), '')
     FROM information_schema.columns WHERE table_schema = current_schema()
       AND (column_name ~ '(^|_)sid$' OR column_name ~ '(idp|provider|oidc).*session');"
if [ -n "$REPLY" ]; then
	cannot "the schema has $REPLY, which may hold the provider's session id: judge with the auth tier (AUTH_BCL_SID=true)"
fi
reproduces "sessions ($cols) has no column for the provider's session id, nor has any other table: a logout token's sid can match no session"
