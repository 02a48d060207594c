#!/usr/bin/env bash
# A bulk-renew or bulk-revoke filter matches at most 50 certificates
# (docs/certctl-findings.md#bulk-renew-filter-cap).
# Shows: POST /api/v1/certificates/bulk-renew {"owner_id": …} for an owner of 55 certificates
#   reports total_matched 50: the service asks the repository for 10,000 rows and gets its
#   default page of 50. (Bulk-revoke resolves filters the same way; it is not exercised here
#   because revocation needs issued certificates.)
# Creates in certctl: a team, an owner, a renewal policy, 55 certificates (never issued) and the
#   issuance jobs bulk-renew enqueues for 50 of them; a local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

n=55
base_rows
for _ in $(seq "$n"); do
	mk_cert
	elapsed
	[ "$REPLY" -lt 50 ] || cannot "creating $n certificates took longer than 50 s"
done

call GET "/api/v1/certificates?owner_id=$OWNER_ID&per_page=1"
expect_status 200 "counting the owner's certificates"
total=$(jqb .total)
[ "$total" = "$n" ] || cannot "the owner holds $total certificates, not $n"

call POST /api/v1/certificates/bulk-renew "$(jq -cn --arg o "$OWNER_ID" '{owner_id: $o}')"
expect_status 200 "bulk-renew by owner"
matched=$(jqb .total_matched)
summary=$(jqb -c '{total_matched, total_enqueued, total_skipped, total_failed}')

if [ "$matched" = 50 ]; then
	reproduces "bulk-renew by an owner of $n certificates answered $summary: the filter stops at 50"
fi
if [ "$matched" = "$n" ]; then
	not_reproduced "bulk-renew by owner matched all $n certificates: $summary"
fi
cannot "bulk-renew by owner answered $summary for $n certificates"
