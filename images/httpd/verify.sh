# Run by build.sh after the image is built.
set -euo pipefail
docker run --rm --network none "$TAG" httpd -v
docker run --rm --network none "$TAG" httpd -t
