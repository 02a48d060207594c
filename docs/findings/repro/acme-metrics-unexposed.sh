#!/usr/bin/env bash
# ACME and its challenge validation export no metrics (docs/certctl-findings.md#acme-metrics-unexposed).
# Shows: after an ACME request, certctl's Prometheus endpoint has other certctl_ series and no
#   certctl_acme_ one: its ACME counter table (internal/service/acme.go, ACMEMetrics) and its validator
#   pool's gauges are never handed to the metrics handler.
# Creates in certctl: a certificate profile.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

# acme_guard reads the directory: certctl counts it (certctl_acme_directory_total, were it exposed).
acme_profile
call GET "/acme/profile/$PROFILE_ID/directory"
expect_status 200 "the ACME directory, read a second time"

call GET /api/v1/metrics/prometheus
expect_status 200 "GET /api/v1/metrics/prometheus"
series=$(grep -c '^certctl_' <<<"$BODY" || true)
acme=$(grep -c '^certctl_acme_' <<<"$BODY" || true)
[ "$series" -gt 0 ] || cannot "the Prometheus endpoint answered no certctl_ series at all: $(snippet)"

if [ "$acme" = 0 ]; then
	reproduces "two ACME directory reads later, /api/v1/metrics/prometheus has $series certctl_ series and no certctl_acme_ one"
fi
not_reproduced "/api/v1/metrics/prometheus has $acme certctl_acme_ series: $(grep -m3 '^certctl_acme_' <<<"$BODY" | tr '\n' ' ')"
