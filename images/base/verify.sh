# Run by build.sh after the image is built.
set -euo pipefail
docker run --rm --network none "$TAG" sh -c 'curl --version >/dev/null && pgrep --version >/dev/null && test -s /etc/ssl/certs/ca-certificates.crt'
