# Run by build.sh after the image is built: the user, the version, and the Java it runs on.
# Outputs are captured before they are matched: `docker run … | grep -q` lets grep exit at the first match,
# docker then dies writing to the closed pipe ("write /dev/stdout: broken pipe") and pipefail fails the build.
set -euo pipefail
test "$(docker run --rm --network none --entrypoint id "$TAG" -u)" = 1000
version=$(docker run --rm --network none "$TAG" --version)
grep -q "^Keycloak ${TAG##*:}" <<<"$version"
java=$(docker run --rm --network none --entrypoint java "$TAG" -version 2>&1)
head -n 1 <<<"$java"
