# Run by build.sh after the image is built.
set -euo pipefail
docker run --rm --network none "$TAG" postgres --version
docker run --rm --network none --entrypoint sh "$TAG" -c 'pg_isready --version && psql --version && id postgres'
