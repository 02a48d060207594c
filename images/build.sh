#!/usr/bin/env bash
# Offline image kit: builds, from Debian bookworm packages, a local stand-in for every upstream image the
# harness's compose files use, so the same compose files run on a machine without registry access
# (images/offline.env switches the image names). See images/README.md.
#
#   images/build.sh                 build whatever is missing or out of date (all images)
#   images/build.sh postgres k6     only these (names: the folders under images/)
#   FORCE=1 images/build.sh         rebuild the images even if up to date (picks up new Debian updates)
#   FORCE=base images/build.sh      also re-create the cached debootstrap rootfs
#
# Environment: LOADTEST_CACHE (default /var/cache/certctl-loadtest), JOBS (parallel image builds, default 4),
# DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR.
#
# The harness's own images (cmd/*/Dockerfile) are not built here: `loadtest run` builds their binaries on the
# host and compose copies each onto a base, here this kit's (images/offline.env), elsewhere alpine.
#
# How an image is made: debootstrap --variant=minbase once (cached tarball), then per image: unpack the rootfs,
# chroot apt-get upgrade + install --no-install-recommends <images/NAME/packages>, copy images/NAME/rootfs/,
# run images/NAME/{pre,post}-install.sh in the chroot, clean apt, `tar | docker import`, then a metadata-only
# `docker build` from images/NAME/Dockerfile (ENTRYPOINT/CMD/USER/STOPSIGNAL..., which `docker import
# --change` cannot fully express on Engine 20.10). Every image carries a label with the hash of its inputs
# (this script, its folder, the Go binary, its tag and pin); a run skips images whose label matches.
#
# Names: images/NAME/image.conf says which pin of .env the image stands in for (PIN=IMAGE_NGINX). Its tag
# is that variable in images/offline.env, certctl-loadtest/offline-NAME:<version>, and the version must be
# what VERSION_CMD reads from the built rootfs (Debian's nginx is not the pinned upstream's): a tag that says
# otherwise fails the build. The pin itself, read from .env, becomes the label org.certctl-loadtest.upstream.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
CACHE=${LOADTEST_CACHE:-/var/cache/certctl-loadtest}
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
FORCE=${FORCE:-}
JOBS=${JOBS:-4}
LABEL=org.certctl-loadtest
ALL_IMAGES=(postgres k6 openssl base nginx httpd haproxy prometheus keycloak)
# Images built around a Go binary: name -> binary built by build_binary.
declare -A GO_IMAGE=([k6]=k6)
export DOCKER_BUILDKIT=0 # metadata-only builds on the classic builder (no buildx here)

die() { echo "build.sh: $*" >&2; exit 1; }
now() { echo "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
report() { printf '%-9s %-11s %6ss  %s\n' "$1" "$2" "$3" "$4"; } # name status seconds detail
conf() { # name VAR: a value from images/NAME/image.conf (a shell fragment of VAR=value lines)
  (set +u; . "$HERE/$1/image.conf" || exit 1; eval "echo \"\${$2:-}\"") || die "cannot read $HERE/$1/image.conf."
}
envval() { sed -n "s/^$2=//p" "$1" | tail -n 1; } # file VAR: VAR's value in a compose env file
tag_of() { # name: the local tag, images/offline.env's value of the image's PIN
  local pin t; pin=$(conf "$1" PIN); t=$(envval "$HERE/offline.env" "$pin")
  [ -n "$t" ] || die "images/offline.env sets no $pin (images/$1/image.conf: PIN=$pin)."
  echo "$t"
}
upstream_of() { # name: the upstream image .env pins for it
  local pin u; pin=$(conf "$1" PIN); u=$(envval "$REPO/.env" "$pin")
  [ -n "$u" ] || die ".env pins no $pin (images/$1/image.conf: PIN=$pin)."
  echo "$u"
}
# For VERSION_CMD, run in the chroot: PACKAGE's upstream version (no epoch, no Debian revision), cut to
# its first FIELDS dot-separated fields: debver nginx 2 -> 1.22.
debver() { dpkg-query -W -f='${Version}' "$1" | sed -E 's/^[0-9]+://; s/[-~+].*//' | cut -d. -f"1-$2"; }

# ---------------------------------------------------------------------------------------------- preflight
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it); try: sudo $0"
command -v docker >/dev/null 2>&1 || die "the docker CLI is not installed."
docker info >/dev/null 2>&1 || die "docker is unreachable (is dockerd running? start it with: dockerd >/var/log/dockerd.log 2>&1 &)."
command -v debootstrap >/dev/null 2>&1 || die "debootstrap is missing (apt-get install debootstrap)."

if [ $# -gt 0 ]; then SELECTED=("$@"); else SELECTED=("${ALL_IMAGES[@]}"); fi
for n in "${SELECTED[@]}"; do
  [ -f "$HERE/$n/image.conf" ] || die "unknown image '$n' (known: ${ALL_IMAGES[*]})."
  tag_of "$n" >/dev/null
  upstream_of "$n" >/dev/null
done
for n in "${SELECTED[@]}"; do
  if [ -n "${GO_IMAGE[$n]:-}" ]; then command -v go >/dev/null 2>&1 || die "go is not on PATH (needed for the $n binary)."; fi
done

mkdir -p "$CACHE"/{rootfs,bin,apt,logs,work}
exec 9>"$CACHE/build.lock"
flock -w 900 9 || die "another build.sh holds $CACHE/build.lock."
RUN=$(mktemp -d "$CACHE/work/run.XXXXXX")
cleanup() {
  local m
  # Never leave a mount behind (an image's /proc, MOUNT_PROC) before rm -rf.
  for m in $(awk -v p="$RUN/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r); do umount -l "$m" || true; done
  rm -rf --one-file-system "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------------------------------- base rootfs
make_base() { # $1 = output tarball
  local out=$1 root="$RUN/base"
  mkdir -p "$root"
  debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR"
  # Slim: no docs (copyright kept), man pages, info, translations - now and for every later install.
  cat >"$root/etc/dpkg/dpkg.cfg.d/01-offline-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
  find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root"/usr/share/{man,info,locale,lintian,linda}/*
  cat >"$root/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main
EOF
  cat >"$root/etc/apt/apt.conf.d/90offline-images" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
Dpkg::Options { "--force-confdef"; "--force-confold"; };
EOF
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" # no service starts in the chroot
  chmod 0755 "$root/usr/sbin/policy-rc.d"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  in_chroot "$root" 'apt-get update -q && apt-get -y -q upgrade && apt-get clean'
  tar --numeric-owner -C "$root" -cf "$out.tmp" .
  mv "$out.tmp" "$out"
  rm -rf --one-file-system "$root"
}

in_chroot() { # root, bash script text
  chroot "$1" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -euo pipefail -c "$2"
}

BASE_KEY=$( { echo "$SUITE $MIRROR $SECURITY_MIRROR"; declare -f make_base in_chroot; } | sha256sum | cut -c1-16)
BASE_TAR="$CACHE/rootfs/$SUITE-minbase-$BASE_KEY.tar"
BASE_READY=
ensure_base() {
  [ -n "$BASE_READY" ] && return 0
  if [ "$FORCE" = base ] || [ ! -s "$BASE_TAR" ]; then
    local t0 rc=0; t0=$(now)
    # In the background so that errexit applies inside (it is ignored in an `if` condition).
    make_base "$BASE_TAR" >"$CACHE/logs/rootfs.log" 2>&1 &
    wait $! || rc=$?
    if [ "$rc" != 0 ]; then
      tail -n 25 "$CACHE/logs/rootfs.log" >&2
      die "debootstrap of the $SUITE rootfs failed (log: $CACHE/logs/rootfs.log)."
    fi
    find "$CACHE/rootfs" -name "$SUITE-minbase-*.tar" ! -path "$BASE_TAR" -delete
    report rootfs built "$(secs "$t0")" "$BASE_TAR"
  fi
  BASE_READY=1
}

# ---------------------------------------------------------------------------------------------- binaries
build_binary() { # name -> $CACHE/bin/name; go skips relinking when the output is up to date
  case $1 in
    k6) (cd "$REPO" && CGO_ENABLED=0 go build -o "$CACHE/bin/k6" go.k6.io/k6/v2) ;;
    *) echo "no such binary: $1" >&2; return 1 ;;
  esac
}

# ------------------------------------------------------------------------------------------- downloads
# A file no Debian package ships (Keycloak's distribution zip, from Maven Central): fetched once into the
# cache and used only when its SHA-256 is the one image.conf pins, then copied into the rootfs's /tmp/fetch
# for post-install.sh. A cached file with another hash is fetched again.
fetch() { # url sha256 destination-directory
  local url=$1 want=$2 dest=$3 file="$CACHE/fetch/${1##*/}"
  [ -n "$want" ] || { echo "$url: image.conf pins no FETCH_SHA256" >&2; return 1; }
  mkdir -p "$CACHE/fetch" "$dest"
  if [ ! -s "$file" ] || [ "$(sha256sum <"$file" | cut -d' ' -f1)" != "$want" ]; then
    curl -fsSL --retry 3 -o "$file.part" "$url" || { echo "cannot fetch $url" >&2; return 1; }
    mv "$file.part" "$file"
  fi
  local got; got=$(sha256sum <"$file" | cut -d' ' -f1)
  [ "$got" = "$want" ] || { echo "$url: sha256 $got, but image.conf pins $want" >&2; return 1; }
  cp -l "$file" "$dest/" 2>/dev/null || cp "$file" "$dest/"
}

# ------------------------------------------------------------------------------------------------ images
SELF_HASH=$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)
inputs_hash() { # name [binary]
  {
    echo "base $BASE_KEY script $SELF_HASH tag $(tag_of "$1") upstream $(upstream_of "$1")"
    (cd "$HERE/$1" && find . -type f -printf '%p %m\n' | LC_ALL=C sort && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    if [ -n "${2:-}" ]; then sha256sum <"$CACHE/bin/$2"; fi
  } | sha256sum | cut -c1-32
}


image_hash() { docker image inspect -f "{{ index .Config.Labels \"$LABEL.inputs-hash\" }}" "$1" 2>/dev/null || true; }

build_image() { # name hash [binary]  (runs in a background job; output goes to the image's log)
  local name=$1 hash=$2 bin=${3:-} dir="$HERE/$1" root="$RUN/$1/root"
  local tag upstream; tag=$(tag_of "$name"); upstream=$(upstream_of "$name")
  mkdir -p "$root"
  tar -C "$root" -xf "$BASE_TAR"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # Per-image cache of downloaded .debs (hard links: same filesystem).
  local debs="$CACHE/apt/$name"; mkdir -p "$debs"
  find "$debs" -name '*.deb' -exec cp -l {} "$root/var/cache/apt/archives/" \;
  local s
  for s in pre-install.sh; do
    if [ -f "$dir/$s" ]; then cp "$dir/$s" "$root/tmp/$s"; in_chroot "$root" "bash /tmp/$s"; fi
  done
  # A package whose maintainer script runs a program that needs /proc (OpenJDK's postinst runs java)
  # gets one for the install; it is unmounted before the rootfs is packed (and by cleanup on a failure).
  local proc=; if [ "$(conf "$name" MOUNT_PROC)" = 1 ]; then mount -t proc proc "$root/proc"; proc=$root/proc; fi
  local pkgs; pkgs=$(sed -e 's/#.*//' "$dir/packages" | xargs)
  # The base's apt lists may be stale: refresh, then take every pending (security) update as well.
  in_chroot "$root" "apt-get update -q && apt-get -y -q upgrade && apt-get -y -q install $pkgs && apt-get -q autoclean"
  find "$debs" -name '*.deb' -delete
  find "$root/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -exec cp -l {} "$debs/" \;
  if [ -d "$dir/rootfs" ]; then cp -a --no-preserve=ownership "$dir/rootfs/." "$root/"; fi
  if [ -n "$bin" ]; then
    local bpath; bpath=$(conf "$name" BINARY_PATH)
    [ -n "$bpath" ] || die "$name: image.conf has no BINARY_PATH."
    install -D -m 0755 "$CACHE/bin/$bin" "$root$bpath"
  fi
  local url; url=$(conf "$name" FETCH_URL)
  if [ -n "$url" ]; then fetch "$url" "$(conf "$name" FETCH_SHA256)" "$root/tmp/fetch"; fi
  for s in post-install.sh; do
    if [ -f "$dir/$s" ]; then cp "$dir/$s" "$root/tmp/$s"; in_chroot "$root" "bash /tmp/$s"; fi
  done
  if [ -n "$proc" ]; then umount "$proc"; fi
  # The tag must say what is inside, read from the rootfs itself: a stand-in is not its upstream.
  local version; version=$(in_chroot "$root" "$(declare -f debver); $(conf "$name" VERSION_CMD)")
  if [ -z "$version" ] || [ "${tag##*:}" != "$version" ]; then
    echo "$name: the image holds version '${version:-?}' (images/$name/image.conf VERSION_CMD), but images/offline.env tags it $tag: set $(conf "$name" PIN)=${tag%:*}:$version there" >&2
    return 1
  fi
  local versions; versions=$(in_chroot "$root" "dpkg-query -W -f '\${Package}=\${Version} ' $(conf "$name" VERSION_PACKAGES)" | sed 's/ $//')
  in_chroot "$root" 'apt-get clean && rm -rf /var/lib/apt/lists/* /var/log/apt/* /var/log/dpkg.log /var/log/alternatives.log \
    /var/cache/debconf/*-old /var/lib/dpkg/*-old /var/cache/ldconfig/aux-cache /usr/sbin/policy-rc.d /tmp/* /var/tmp/*'
  : >"$root/etc/resolv.conf"
  echo localhost >"$root/etc/hostname"

  local tmp_tag="${tag%:*}-rootfs:${hash:0:12}"
  tar --numeric-owner -C "$root" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf - . |
    docker import --message "certctl-loadtest offline rootfs for $name" - "$tmp_tag"
  rm -rf --one-file-system "$RUN/$name"

  local old; old=$(docker image inspect -f '{{.Id}}' "$tag" 2>/dev/null || true)
  local -a args=(--build-arg "BASE=$tmp_tag" --label "$LABEL.inputs-hash=$hash" --label "$LABEL.debian-packages=$versions"
    --label "$LABEL.upstream=$upstream")
  local a v; for a in $(conf "$name" BUILD_ARGS); do # VAR=package: the package's upstream version
    v=$(tr ' ' '\n' <<<"$versions" | sed -n "s/^${a#*=}=//p" | sed -E 's/^[0-9]+://; s/-[^-]*$//')
    args+=(--build-arg "${a%%=*}=$v")
  done
  docker build -q -t "$tag" "${args[@]}" - <"$dir/Dockerfile"
  docker image rm "$tmp_tag" >/dev/null
  # A quick look at the result; an image that fails it must not keep its tag (it would count as up to date).
  if [ -f "$dir/verify.sh" ] && ! TAG="$tag" bash "$dir/verify.sh"; then
    docker image rm "$tag" >/dev/null || true
    echo "$name: $dir/verify.sh failed; image removed" >&2
    return 1
  fi
  local new; new=$(docker image inspect -f '{{.Id}}' "$tag")
  if [ -n "$old" ] && [ "$old" != "$new" ]; then docker image rm "$old" || echo "note: the previous $tag ($old) is still in use; left in place"; fi
}

# One background job per image; each prints its own line. Failures are collected at the end.
declare -A PID=()
FAILED=()
running_images() { local p c=0; for p in "${PID[@]}"; do if kill -0 "$p" 2>/dev/null; then c=$((c + 1)); fi; done; echo "$c"; }
start_job() { # name hash [binary] t0
  local name=$1 hash=$2 bin=$3 t0=$4 tag; tag=$(tag_of "$name")
  while [ "$(running_images)" -ge "$JOBS" ]; do sleep 0.2; done
  (
    trap - EXIT
    # build_image runs as its own background job so that errexit applies inside it.
    build_image "$name" "$hash" "$bin" >"$CACHE/logs/$name.log" 2>&1 &
    rc=0; wait $! || rc=$?
    if [ "$rc" = 0 ]; then
      report "$name" built "$(secs "$t0")" "$tag"
    else
      report "$name" FAILED "$(secs "$t0")" "log: $CACHE/logs/$name.log"
      tail -n 20 "$CACHE/logs/$name.log" | sed "s/^/  $name| /" >&2
      exit 1
    fi
  ) &
  PID[$name]=$!
}

consider() { # name [binary] t0: skip if up to date, else start a build job
  local name=$1 bin=$2 t0=$3 tag hash
  tag=$(tag_of "$name")
  hash=$(inputs_hash "$name" "$bin")
  if [ -z "$FORCE" ] && [ "$(image_hash "$tag")" = "$hash" ]; then
    report "$name" "up to date" "$(secs "$t0")" "$tag"
    return 0
  fi
  ensure_base
  start_job "$name" "$hash" "$bin" "$(now)" # the image's own time (the rootfs and binary have their lines)
}

T_ALL=$(now)
# Go binaries build in the background (CPU) while the rootfs and the other images build (network, disk).
declare -A BIN_PID=() BIN_T0=() BIN_SUM=()
for n in "${SELECTED[@]}"; do
  b=${GO_IMAGE[$n]:-}
  [ -n "$b" ] || continue
  BIN_T0[$n]=$(now)
  BIN_SUM[$n]=$(sha256sum "$CACHE/bin/$b" 2>/dev/null || true)
  build_binary "$b" >"$CACHE/logs/$b.go.log" 2>&1 &
  BIN_PID[$n]=$!
done
for n in "${SELECTED[@]}"; do
  [ -z "${GO_IMAGE[$n]:-}" ] || continue
  consider "$n" "" "$(now)"
done
# A Go image that does not exist at all will need the rootfs: make it while the compiler runs.
for n in "${!BIN_PID[@]}"; do
  docker image inspect "$(tag_of "$n")" >/dev/null 2>&1 || ensure_base
done
for n in "${!BIN_PID[@]}"; do
  b=${GO_IMAGE[$n]}
  rc=0; wait "${BIN_PID[$n]}" || rc=$?
  if [ "$rc" = 3 ]; then
    report "$n" skipped "$(secs "${BIN_T0[$n]}")" "$(cat "$CACHE/logs/$b.go.log")"
    continue
  elif [ "$rc" != 0 ]; then
    report "$n" FAILED "$(secs "${BIN_T0[$n]}")" "go build of $b failed (log: $CACHE/logs/$b.go.log)"
    sed "s/^/  $n| /" "$CACHE/logs/$b.go.log" | tail -n 20 >&2
    FAILED+=("$n")
    continue
  fi
  if [ "$(sha256sum "$CACHE/bin/$b")" != "${BIN_SUM[$n]}" ]; then
    report "bin/$b" built "$(secs "${BIN_T0[$n]}")" "go build -> $CACHE/bin/$b"
  fi
  consider "$n" "$b" "$(now)"
done
for n in "${!PID[@]}"; do wait "${PID[$n]}" || FAILED+=("$n"); done

if [ ${#FAILED[@]} -gt 0 ]; then die "failed to build: ${FAILED[*]} (see the log lines above)."; fi
echo "all done in $(secs "$T_ALL")s (cache: $CACHE)"
