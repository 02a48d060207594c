# Run by build.sh after the image is built.
set -euo pipefail
docker run --rm --network none "$TAG" postgres --version
docker run --rm --network none --entrypoint sh "$TAG" -c 'pg_isready --version && psql --version && id postgres'
# PG_VERSION (Dockerfile) is what a run records: it must be the server's own.
docker run --rm --network none --entrypoint sh "$TAG" -c 'v=$(postgres --version); [ "${v##* }" = "$PG_VERSION" ] || { echo "PG_VERSION=$PG_VERSION, but the server says: $v" >&2; exit 1; }'
