# Run by build.sh after the image is built: the binary must be the pinned release.
set -euo pipefail
out=$(docker run --rm --network none "$TAG" version)
echo "$out"
want="v${TAG##*:}"
case "$out" in *"k6 $want "*) ;; *) echo "k6 version is not $want: $out" >&2; exit 1 ;; esac
