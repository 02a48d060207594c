#!/usr/bin/env bash
# `per_page` silently clamped, `limit` ignored (docs/certctl-findings.md#pagination-per-page).
# Shows: a per_page outside 1..500 (0, 501, not a number) answers 200 with "per_page": 50 instead
#   of an error, and ?limit=5 does not limit anything.
# Creates in certctl: a team, an owner, a renewal policy and 6 certificates (never issued); a
#   local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

base_rows
for _ in 1 2 3 4 5 6; do mk_cert; done
q="/api/v1/certificates?owner_id=$OWNER_ID"

clamped=()
for pp in 0 501 abc; do
	call GET "$q&per_page=$pp"
	note "per_page=$pp: HTTP $HTTP_STATUS, per_page $(jqb .per_page), rows $(jqb '.data | length')"
	if [ "$HTTP_STATUS" = 200 ] && [ "$(jqb .per_page)" = 50 ]; then clamped+=("$pp"); fi
done

call GET "$q&limit=5"
expect_status 200 "listing with limit=5"
limit_rows=$(jqb '.data | length')
note "limit=5: rows $limit_rows of 6"

if [ "${#clamped[@]}" -gt 0 ] || [ "$limit_rows" -gt 5 ]; then
	reproduces "per_page ${clamped[*]:-(none)} answered 200 with per_page 50 and no error; limit=5 answered $limit_rows of the owner's 6 rows"
fi
not_reproduced "out-of-range per_page values were refused or honoured, and limit=5 answered $limit_rows rows"
