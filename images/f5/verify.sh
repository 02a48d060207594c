# Run by build.sh after the image is built: the binary is in place and runs as root, it refuses to start
# without a certificate (one line naming the variable), and with a throwaway certificate it passes its own
# health check. The full API is covered by internal/f5's tests.
set -euo pipefail
docker run --rm --network none --entrypoint sh "$TAG" -c \
  'test -x /usr/local/bin/f5-standin && id -u | grep -qx 0 && test -s /etc/ssl/certs/ca-certificates.crt'
if out=$(docker run --rm --network none "$TAG" 2>&1); then
  echo "f5-standin started without a certificate" >&2; exit 1
fi
grep -qx 'f5-standin: refusing to start: F5_TLS_CERT=/tls/starter.crt: no such file or directory' <<<"$out" ||
  { echo "unexpected refusal: $out" >&2; exit 1; }
if ! command -v openssl >/dev/null 2>&1; then
  echo "verify.sh: no openssl on this host; skipped the run with a certificate" >&2; exit 0
fi
tmp=$(mktemp -d)
name=f5-standin-test-verify-$$
trap 'docker rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=f5 \
  -keyout "$tmp/starter.key" -out "$tmp/starter.crt" 2>/dev/null
chmod 0644 "$tmp/starter.key"
docker run -d --name "$name" --network none -v "$tmp:/tls:ro" "$TAG" >/dev/null
for _ in $(seq 50); do
  if docker exec "$name" /usr/local/bin/f5-standin --healthcheck 2>/dev/null; then exit 0; fi
  sleep 0.1
done
docker logs "$name" >&2
echo "f5-standin never became healthy" >&2
exit 1
