#!/usr/bin/env bash
# `CERTCTL_AUTH_SECRET` must be non-empty (docs/certctl-findings.md#auth-secret).
# Shows: nothing over HTTP. With CERTCTL_AUTH_TYPE=api-key, an empty CERTCTL_AUTH_SECRET stops the
#   server at start ("auth secret is required for auth type api-key", internal/config/config.go
#   Validate) even when CERTCTL_API_KEYS_NAMED supplies the keys and the secret is never used
#   (cmd/server/auth_backfill.go reads it only when no named key is set). A running server has,
#   by definition, passed that check.
# Always exits 2 with what a person does instead. Creates nothing.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
REPRO_NO_PREFLIGHT=1
repro_init "$@"

cannot "only visible when certctl starts. To see it: start a throwaway certctl with CERTCTL_AUTH_TYPE=api-key, CERTCTL_API_KEYS_NAMED=admin:<key>:admin and CERTCTL_AUTH_SECRET= (empty): it exits with 'auth secret is required for auth type api-key'; set CERTCTL_AUTH_SECRET to any value it never uses and it starts, accepting only the named key"
