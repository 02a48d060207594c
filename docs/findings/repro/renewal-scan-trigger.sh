#!/usr/bin/env bash
# No way to start a renewal scan; the documented trigger is a 404
# (docs/certctl-findings.md#renewal-scan-trigger).
# Shows: POST /api/v1/admin/scheduler/run-now/renewal, which certctl's
#   docs/operator/performance-baselines.md (baseline #3) tells operators to call, answers 404.
#   (That nothing else starts a scan, and that a successful scan logs nothing at info, is read in
#   the source.)
# Creates in certctl: nothing (an audit event for the request).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

call POST /api/v1/admin/scheduler/run-now/renewal
case $HTTP_STATUS in
404 | 405) reproduces "POST /api/v1/admin/scheduler/run-now/renewal answered $HTTP_STATUS ($HTTP_CTYPE): $(snippet)" ;;
2??) not_reproduced "the documented renewal trigger answered $HTTP_STATUS: $(snippet)" ;;
*) cannot "the documented renewal trigger answered $HTTP_STATUS: $(snippet)" ;;
esac
