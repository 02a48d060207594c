# Run by build.sh after the image is built: the user, the version, and the Java it runs on.
set -euo pipefail
test "$(docker run --rm --network none --entrypoint id "$TAG" -u)" = 1000
docker run --rm --network none "$TAG" --version | grep -q "^Keycloak ${TAG##*:}"
docker run --rm --network none --entrypoint java "$TAG" -version 2>&1 | head -n 1
