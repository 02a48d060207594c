#!/usr/bin/env bash
# Keys without `:admin` are read-only (docs/certctl-findings.md#read-only-keys).
# Shows: a key declared in CERTCTL_API_KEYS_NAMED without ":admin" gets the viewer role: reads
#   answer 200, a write (creating a team) answers 403 "Insufficient permissions", and
#   GET /api/v1/auth/check lists its roles.
# Needs env VIEWER_KEY: a key this certctl was started with, declared without ":admin" (keys cannot
#   be minted through the API); without it the script exits 2. The admin key is only used for the
#   comparison read.
# Creates in certctl: nothing (the refused write creates no team; if it is accepted, one team).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

[ -n "${VIEWER_KEY-}" ] || cannot "needs VIEWER_KEY, a key this certctl was started with in CERTCTL_API_KEYS_NAMED without ':admin' (e.g. viewer:<key>); none can be made through the API"
[ "$VIEWER_KEY" != "$T" ] || cannot "VIEWER_KEY is the admin key"

API_KEY=$VIEWER_KEY call GET /api/v1/auth/check
expect_status 200 "GET /api/v1/auth/check with VIEWER_KEY"
who=$(jqb -c '{user, admin, roles}')
API_KEY=$VIEWER_KEY call GET '/api/v1/certificates?per_page=1'
read_status=$HTTP_STATUS
uniq_name
API_KEY=$VIEWER_KEY call POST /api/v1/teams "$(jq -cn --arg n "$REPLY" '{name: $n, description: "certctl repro script"}')"
write_status=$HTTP_STATUS
write_body=$(snippet)

if [ "$read_status" = 200 ] && [ "$write_status" = 403 ]; then
	reproduces "VIEWER_KEY is $who: reading certificates answered 200, creating a team answered 403 $write_body"
fi
if [ "$write_status" = 201 ]; then
	not_reproduced "VIEWER_KEY ($who) created a team: it is not read-only"
fi
cannot "VIEWER_KEY ($who): read $read_status, write $write_status $write_body"
