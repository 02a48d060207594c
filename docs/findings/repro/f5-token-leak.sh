#!/usr/bin/env bash
# The F5 connector leaks a login token per deployment (docs/certctl-findings.md#f5-token-leak).
# Shows: nothing over certctl's API. The leak is in the agent's F5 connector (a new connector and a
#   new POST /mgmt/shared/authn/login per deployment job, never a DELETE of the token), seen only
#   at the BIG-IP: after ~50 deployments within 20 minutes it refuses logins ("maximum active
#   login tokens"). certctl's server records no login, so no request to it can show this.
# Always exits 2 with what a person does instead. Creates nothing.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
REPRO_NO_PREFLIGHT=1
repro_init "$@"

cannot "the F5 connector runs inside the agent and talks only to the BIG-IP, so certctl's API cannot show its tokens. To see it: run a certctl agent with an F5 target against a BIG-IP, deploy to it 60 times within 20 minutes, then list the user's tokens on the BIG-IP (GET /mgmt/shared/authz/tokens) or read the agent's log: logins pile up to 100 and later deployments fail with 'maximum active login tokens'"
