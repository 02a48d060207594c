#!/usr/bin/env bash
# The NGINX connector writes the chain apart from the certificate (docs/certctl-findings.md#nginx-chain).
# Shows: nothing over certctl's API. The agent splits what certctl issued into the leaf (written to
#   cert_path) and the rest (written to chain_path, and only if chain_path is set); nginx serves
#   one file per ssl_certificate, so an nginx pointed at cert_path serves no intermediate. The
#   split happens in the agent (cmd/agent/deploy.go splitPEMChain) and the server only hands out
#   the paths, so no request to certctl shows which file gets what.
# Always exits 2 with what a person does instead. Creates nothing.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
REPRO_NO_PREFLIGHT=1
repro_init "$@"

cannot "the leaf/chain split happens inside the agent when it writes files, beyond certctl's API. To see it: register an agent and an NGINX target (cert_path, chain_path), map a certificate issued by an intermediate CA to it, let the agent deploy, then count the certificates in cert_path ('grep -c BEGIN <cert_path>': 1) and ask the nginx pointed at it ('openssl s_client -connect <host>:443 -showcerts </dev/null | grep -c BEGIN': 1, no intermediate; verification against the root alone fails)"
