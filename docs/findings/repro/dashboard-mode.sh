#!/usr/bin/env bash
# Dashboard mode answers HTML everywhere (docs/certctl-findings.md#dashboard-mode).
# Shows: when certctl finds web/dist/index.html (or web/index.html) in its working directory (its
#   official image does, in /app), every path outside /api/v1, /health, /ready, /.well-known/* and
#   /scep answers 200 text/html with the dashboard page: ACME paths included, so an ACME
#   directory, nonce or renewal-info request gets HTML with status 200.
# Exits 1 on a certctl started elsewhere (the harness runs it in /tmp), 0 on one in dashboard mode.
# Creates in certctl: nothing.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

# A profile that does not exist: in API mode this can only be a JSON/problem answer (401 without
# a key), never 200; in dashboard mode the path never reaches certctl's router.
path="/acme/profile/repro-none-$REPRO_RUN/new-nonce"
API_NO_AUTH=1 call GET "$path"
acme="$HTTP_STATUS $HTTP_CTYPE"
API_NO_AUTH=1 call GET /api/v1/version
api_v="$HTTP_STATUS $HTTP_CTYPE"

case $acme in
200\ text/html*) reproduces "GET $path (no key, unknown profile) answered $acme: the dashboard page; /api/v1/version still answers $api_v" ;;
esac
not_reproduced "GET $path answered $acme, not the dashboard page: certctl serves the API only"
