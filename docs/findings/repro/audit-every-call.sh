#!/usr/bin/env bash
# Every API call writes an audit row (docs/certctl-findings.md#audit-every-call).
# Shows: a plain read (a GET answering 404) leaves an api_get event in the audit trail, written
#   after the response; /api/v1/version does not.
# Creates in certctl: audit events only (the table refuses deletes, so they stay).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

server_time
rfc3339 $((REPLY - 60))
since=$REPLY

# A path no one else asks for, so its audit row can only come from this request.
uniq_name
probe="/api/v1/teams/$REPLY"
call GET "$probe"
note "GET $probe answered $HTTP_STATUS"
# The row is written by a goroutine after the response: give it a moment.
sleep 2

found=
for page in 1 2 3 4; do
	call GET "/api/v1/audit?since=$since&per_page=500&page=$page"
	expect_status 200 "listing audit events"
	found=$(jqb --arg p "$probe" '[.data[]? | select(.resource_id == $p)] | .[0] | select(. != null) | "\(.action) by \(.actor) at \(.timestamp), details \(.details | tojson)"')
	[ -z "$found" ] || break
	[ "$(jqb '.data | length')" = 500 ] || break
done

if [ -n "$found" ]; then
	reproduces "a single read (GET $probe) left an audit event: $found"
fi
not_reproduced "no audit event for GET $probe within the last minute of the audit trail"
