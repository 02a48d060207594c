#!/usr/bin/env bash
# Cursor pagination never advances (docs/certctl-findings.md#pagination-cursor).
# Shows: GET /api/v1/certificates?cursor=… does not answer the rows after the cursor (it answers
#   the first page again), so a client following next_cursor loops forever; a request without a
#   cursor never starts a cursor walk (page mode, no next_cursor).
# Creates in certctl: a team, an owner, a renewal policy and 3 certificates (never issued); a
#   local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

base_rows
for _ in 1 2 3; do mk_cert; done

# The owner filter confines the walk to this script's three certificates, whatever else the
# database holds. Page mode gives the reference order (oldest first).
q="/api/v1/certificates?owner_id=$OWNER_ID"
call GET "$q&per_page=3"
expect_status 200 "listing the certificates"
[ "$(jqb '.data | length')" = 3 ] || cannot "the owner's list holds $(jqb '.data | length') rows, not 3: $(snippet)"
ids=$(jqb '[.data[].id] | join(",")')
third=$(jqb '.data[2].id')

call GET "$q&page_size=2"
expect_status 200 "listing the first page"
opening_has_cursor=$(jqb 'has("next_cursor")')
# No request hands out a first cursor, so it is built the way certctl's handler builds
# next_cursor: base64url (padded) of "<created_at RFC 3339>:<id>" of the page's last row.
cursor=$(jqb '.data[1] | "\(.created_at):\(.id)"' | tr -d '\n' | base64 -w0 | tr '+/' '-_')

call GET "$q&page_size=2&cursor=$cursor"
expect_status 200 "listing with a cursor"
page2=$(jqb '[.data[]?.id] | join(",")')
next=$(jqb '.next_cursor // empty')
call GET "$q&page_size=2&cursor=$next"
page3=$(jqb '[.data[]?.id] | join(",")')

if [ "$page2" = "$third" ]; then
	not_reproduced "the page after the cursor is exactly the third row ($third)"
fi
if [ -n "$page2" ] && [ "${page2#*"$third"}" = "$page2" ]; then
	reproduces "rows oldest first are [$ids]; with a cursor at row 2 certctl answered [$page2], and following its next_cursor answered [$page3]: the walk never reaches row 3. The opening request (no cursor) carries next_cursor: $opening_has_cursor"
fi
cannot "unexpected page after the cursor: [$page2] (rows: [$ids])"
