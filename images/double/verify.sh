# Run by build.sh after the image is built (the server itself is exercised by images/check.sh).
set -euo pipefail
docker run --rm --network none --entrypoint sh "$TAG" -c 'id -u | grep -qx 1000 && test -x /app/server && curl --version >/dev/null'
