# Run by build.sh after the image is built.
set -euo pipefail
q=(-e NGINX_ENTRYPOINT_QUIET_LOGS=1)
out=$(docker run --rm --network none "${q[@]}" "$TAG" nginx -V 2>&1); echo "${out%%$'\n'*}"
docker run --rm --network none "${q[@]}" "$TAG" nginx -t
docker run --rm --network none --entrypoint sh "$TAG" -c 'curl --version >/dev/null && wget --version >/dev/null && envsubst --version >/dev/null'
