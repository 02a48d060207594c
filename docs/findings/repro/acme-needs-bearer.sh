#!/usr/bin/env bash
# ACME needs a Bearer key as well as the JWS (docs/certctl-findings.md#acme-needs-bearer).
# Shows: without Authorization: Bearer, certctl's ACME directory answers 401 (with the key: 200),
#   and so does renewal-info, which certctl's own handler documents as unauthenticated per
#   RFC 9773. /acme is not among the paths certctl routes around its API-key middleware.
# Creates in certctl: a certificate profile.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

acme_profile
with_key=$HTTP_STATUS

API_NO_AUTH=1 call GET "/acme/profile/$PROFILE_ID/directory"
dir_status=$HTTP_STATUS
dir_ctype=$HTTP_CTYPE
dir_body=$(snippet)
# Any well-formed id: the point is the status before the handler runs.
API_NO_AUTH=1 call GET "/acme/profile/$PROFILE_ID/renewal-info/AA.AA"
ari_status=$HTTP_STATUS

if [ "$dir_status" = 401 ]; then
	reproduces "ACME directory without a Bearer key: 401 ($dir_ctype: $dir_body), with the admin key: $with_key; renewal-info without a key: $ari_status"
fi
if [ "$dir_status" = 200 ]; then
	not_reproduced "the ACME directory answers 200 without a Bearer key (renewal-info: $ari_status)"
fi
cannot "the ACME directory without a key answered $dir_status ($dir_ctype): $dir_body"
