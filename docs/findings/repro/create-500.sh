#!/usr/bin/env bash
# Duplicate name or unknown reference → 500 (docs/certctl-findings.md#create-500).
# Shows: POST /api/v1/certificates with a name that exists, or with an owner_id that does not,
#   answers 500 "Failed to create certificate" (the database constraint fails and the handler
#   reports it as a server error) instead of 409 / 400.
# Creates in certctl: a team, an owner, a renewal policy and one certificate (never issued); a
#   local-CA issuer only if none is enabled. The two refused requests create nothing.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

base_rows
mk_cert
cert=$REPLY
call GET "/api/v1/certificates/$cert"
name=$(jqb .name)

body() { # NAME OWNER
	jq -cn --arg n "$1" --arg o "$2" --arg t "$TEAM_ID" --arg i "$ISSUER_ID" --arg p "$POLICY_ID" \
		'{name: $n, common_name: ($n + ".repro.example.com"), owner_id: $o, team_id: $t, issuer_id: $i, renewal_policy_id: $p, environment: "repro"}'
}
call POST /api/v1/certificates "$(body "$name" "$OWNER_ID")"
dup=$HTTP_STATUS
dup_msg=$(jqb '.message // empty')
uniq_name
call POST /api/v1/certificates "$(body "$REPLY" "no-such-owner-$REPRO_RUN")"
ref=$HTTP_STATUS
ref_msg=$(jqb '.message // empty')

if [ "$dup" = 500 ] || [ "$ref" = 500 ]; then
	reproduces "duplicate name: $dup '$dup_msg'; unknown owner_id: $ref '$ref_msg'"
fi
case "$dup $ref" in
4??\ 4??) not_reproduced "duplicate name: $dup; unknown owner_id: $ref (client errors, as they should be)" ;;
esac
cannot "duplicate name: $dup '$dup_msg'; unknown owner_id: $ref '$ref_msg'"
