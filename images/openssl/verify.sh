# Run by build.sh after the image is built.
set -euo pipefail
docker run --rm --network none "$TAG" version
docker run --rm --network none --entrypoint /bin/sh "$TAG" -c 'command -v chmod chown mkdir cat >/dev/null'
