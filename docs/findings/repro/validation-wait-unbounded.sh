#!/usr/bin/env bash
# A challenge waits for a validation slot without any bound (docs/certctl-findings.md#validation-wait-unbounded).
# Shows: nothing by itself. The wait needs ten or more challenges whose responder answers slowly and a
#   fast one behind them, and certctl validates by fetching http://<name>/.well-known/acme-challenge/
#   on port 80 of names it resolves: a responder on its network that the script cannot start. The PKI
#   tier's acme_http01_saturated brings one (docker-compose.yml's challenge-slow).
# Creates in certctl: nothing.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

cannot "needs a slow HTTP-01 responder certctl can reach, which this script cannot start: run make loadtest-pki SCENARIOS=acme_http01_saturated ACME_SLOW_VUS=45 CHALLENGE_SLOW_LATENCY=12s ACME_FINALIZE_WORKAROUND=1 DURATION=1m"
