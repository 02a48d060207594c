#!/usr/bin/env bash
# Packages a certctl build into local images laid out like the official ones (server.Dockerfile,
# agent.Dockerfile), so the harness runs the real server and agent without a registry:
#
#   images/certctl/build.sh [DIST]       DIST defaults to $CERTCTL_DIST
#
# DIST holds `server` and `agent` (linux binaries), `migrations/` and `LICENSE`, as certctl's build gives
# them (a checkout after `go build ./cmd/server ./cmd/agent` works too). The images are tagged after the
# folder: certctl-loadtest/certctl-server:<folder>-local and certctl-loadtest/certctl-agent:<folder>-local.
# Each carries the sha256 of its binary as a label; an image whose inputs did not change is not rebuilt.
# On success the last two lines of stdout are CERTCTL_IMAGE=<tag> and CERTCTL_AGENT_IMAGE=<tag>.
#
# The base image is IMAGE_BASE, else .env's pin (images/offline.env's with IMAGES=offline).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$(dirname "$HERE")")
die() { echo "certctl images: $*" >&2; exit 1; }

DIST=${1:-${CERTCTL_DIST:-}}
[ -n "$DIST" ] || die "no build given: set CERTCTL_DIST to a certctl build directory (server, agent, migrations/, LICENSE)."
[ -d "$DIST" ] || die "CERTCTL_DIST=$DIST is not a directory."
DIST=$(cd "$DIST" && pwd)
for f in server agent; do
  [ -f "$DIST/$f" ] && [ -x "$DIST/$f" ] || die "$DIST/$f is missing or not executable: CERTCTL_DIST must hold certctl's server and agent binaries."
done
[ -d "$DIST/migrations" ] || die "$DIST/migrations is missing: CERTCTL_DIST must hold certctl's migrations/ folder."
[ -f "$DIST/LICENSE" ] || die "$DIST/LICENSE is missing: certctl's licence travels with its binaries."
case $(head -c 4 "$DIST/server" | od -An -c | tr -d ' ') in
  177ELF) ;;
  *) die "$DIST/server is not a Linux (ELF) binary: build it with GOOS=linux." ;;
esac

pin() { # VAR: its value in the env files compose reads (a later file wins)
  local v="" x f files=("$REPO/.env")
  if [ "${IMAGES:-}" = offline ]; then files+=("$REPO/images/offline.env"); fi
  for f in "${files[@]}"; do
    x=$(sed -n "s/^$1=//p" "$f" | tail -n 1)
    if [ -n "$x" ]; then v=$x; fi
  done
  echo "$v"
}
BASE=${IMAGE_BASE:-$(pin IMAGE_BASE)}
[ -n "$BASE" ] || die "no base image: IMAGE_BASE is not set and .env has no pin."
docker info >/dev/null 2>&1 || die "the Docker engine is unreachable (start dockerd, or set DOCKER_HOST)."
if ! docker image inspect "$BASE" >/dev/null 2>&1 && [ "${IMAGES:-}" = offline ]; then
  die "base image $BASE is missing: run \`make images\` first."
fi

# The tag is the folder's name, made safe for a tag: v2.1.7 -> v2.1.7-local, main-151107c -> main-151107c-local.
name=$(basename "$DIST" | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9_.-]+/-/g; s/^[.-]+//' | cut -c1-100)
[ -n "$name" ] || die "cannot make an image tag from the folder name $(basename "$DIST")."
base_id=$(docker image inspect -f '{{.Id}}' "$BASE" 2>/dev/null || echo "$BASE")

build() { # role binary dockerfile tag
  local role=$1 bin=$2 df=$3 tag=$4 sum inputs old
  sum=$(sha256sum "$DIST/$bin" | cut -d' ' -f1)
  inputs=$( { echo "$sum $base_id"; sha256sum "$df"; if [ "$role" = server ]; then (cd "$DIST" && find migrations -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); fi; } | sha256sum | cut -c1-32)
  old=$(docker image inspect -f '{{ index .Config.Labels "org.certctl-loadtest.inputs-hash" }}' "$tag" 2>/dev/null || true)
  if [ "$old" = "$inputs" ]; then
    echo "certctl images: $tag up to date ($bin sha256 ${sum:0:12})" >&2
    return 0
  fi
  local t0=$SECONDS
  # The classic builder: it takes a local-only base as it is, where BuildKit may ask a registry first.
  local log; log=$(mktemp)
  if ! DOCKER_BUILDKIT=0 docker build -q -f "$df" --build-arg "BASE_IMAGE=$BASE" \
    --label "org.certctl-loadtest.inputs-hash=$inputs" \
    --label "org.certctl-loadtest.certctl-build=$name" \
    --label "org.certctl-loadtest.certctl-$role-sha256=$sum" \
    -t "$tag" "$DIST" >"$log" 2>&1; then
    grep -v -e DEPRECATED -e 'BuildKit is currently disabled' -e 'environment-variable' "$log" >&2
    rm -f "$log"
    local hint=""
    # A host with no registry (CI's, an air-gapped one) cannot pull the upstream base: say what can.
    if [ "${IMAGES:-}" != offline ] && ! docker image inspect "$BASE" >/dev/null 2>&1; then
      hint=" $BASE is not on this host and docker could not pull it: with no registry, set IMAGES=offline to build on the stand-in bases \`make images\` builds."
    fi
    die "docker build of $tag failed (base $BASE).$hint"
  fi
  rm -f "$log"
  echo "certctl images: $tag built in $((SECONDS - t0))s ($bin sha256 ${sum:0:12})" >&2
}

server=certctl-loadtest/certctl-server:$name-local
agent=certctl-loadtest/certctl-agent:$name-local
build server server "$HERE/server.Dockerfile" "$server"
build agent agent "$HERE/agent.Dockerfile" "$agent"
echo "CERTCTL_IMAGE=$server"
echo "CERTCTL_AGENT_IMAGE=$agent"
