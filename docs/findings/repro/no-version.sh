#!/usr/bin/env bash
# No version stamped: `/api/v1/version` says `dev` (docs/certctl-findings.md#no-version).
# Shows: GET /api/v1/version answers "version": "dev" with an empty commit: certctl's image is
#   built without -ldflags -X …handler.Version and without .git in its build context (.dockerignore),
#   so neither the release tag nor the VCS revision reaches the binary. (The startup log's fixed
#   "version": "2.0.9" is read in the source, cmd/server/main.go.)
# Creates in certctl: nothing (the endpoint is not audited).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
repro_init "$@"

API_NO_AUTH=1 call GET /api/v1/version
expect_status 200 "GET /api/v1/version"
v=$(jqb '.version // empty')
info=$(jqb -c '{version, commit, modified, build_time, go_version}')

if [ "$v" = dev ]; then
	reproduces "GET /api/v1/version answered $info: nothing tells this build from another"
fi
[ -n "$v" ] || cannot "GET /api/v1/version answered no version: $(snippet)"
not_reproduced "the build reports itself: $info"
