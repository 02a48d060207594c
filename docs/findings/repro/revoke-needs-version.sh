#!/usr/bin/env bash
# Only issued certificates can be revoked (docs/certctl-findings.md#revoke-needs-version).
# Shows: revocation starts from the certificate's latest version (for its serial), so revoking a
#   certificate that was never issued fails: bulk-revoke by id counts it in total_failed and
#   lists the error.
# Creates in certctl: a team, an owner, a renewal policy and one certificate (never issued); a
#   local-CA issuer only if none is enabled.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

base_rows
mk_cert
cert=$REPLY

call POST /api/v1/certificates/bulk-revoke "$(jq -cn --arg c "$cert" '{reason: "superseded", certificate_ids: [$c]}')"
expect_status 200 "bulk-revoke by id"
summary=$(jqb -c '{total_matched, total_revoked, total_skipped, total_failed}')
err=$(jqb '.errors[0].error // empty')

if [ "$(jqb .total_failed)" = 1 ]; then
	reproduces "bulk-revoke of a certificate that was never issued answered $summary: '$err'"
fi
if [ "$(jqb .total_revoked)" = 1 ]; then
	not_reproduced "a certificate that was never issued was revoked: $summary"
fi
cannot "bulk-revoke answered $summary"
