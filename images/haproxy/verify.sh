# Run by build.sh after the image is built.
set -euo pipefail
out=$(docker run --rm --network none "$TAG" haproxy -v); echo "${out%%$'\n'*}"
test "$(docker run --rm --network none --entrypoint id "$TAG" -u)" = 99
