#!/usr/bin/env bash
# The server's TLS key must be readable by uid 1000 (docs/certctl-findings.md#tls-key-readable).
# Shows: nothing over HTTP. certctl's image runs as uid 1000 and refuses to start when it cannot
#   read its TLS key ("server TLS cert/key pair invalid (…): permission denied — refuse to
#   start"): a running server has, by definition, read it.
# Always exits 2 with what a person does instead. Creates nothing.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
REPRO_NO_PREFLIGHT=1
repro_init "$@"

cannot "only visible when certctl starts, which a request to a running server cannot show. To see it: give the server's key mode 0600 and an owner other than uid 1000 (e.g. root), start certctl's image with CERTCTL_SERVER_TLS_KEY_PATH pointing at it, and read its log: 'server TLS cert/key pair invalid (…): open …: permission denied — refuse to start', exit non-zero; chown 1000:1000 and it starts"
