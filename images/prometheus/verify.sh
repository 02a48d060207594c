# Run by build.sh after the image is built: the binary, the user, and a start that answers ready with the
# flags compose.observability.yml passes.
set -euo pipefail
out=$(docker run --rm --network none "$TAG" --version 2>&1); echo "${out%%$'\n'*}"
test "$(docker run --rm --network none --entrypoint id "$TAG" -u)" = 65534
name=verify-prometheus-$$
docker run -d --rm --name "$name" --network none "$TAG" --config.file=/etc/prometheus/prometheus.yml \
  --storage.tsdb.path=/prometheus --web.enable-remote-write-receiver --enable-feature=native-histograms >/dev/null
trap 'docker rm -f "$name" >/dev/null 2>&1 || true' EXIT
for _ in $(seq 1 30); do
  if docker exec "$name" wget -q -O /dev/null http://127.0.0.1:9090/-/ready 2>/dev/null; then exit 0; fi
  sleep 1
done
docker logs "$name" 2>&1 | tail -n 20 >&2
exit 1
