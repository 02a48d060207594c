#!/usr/bin/env bash
# Smoke test of the offline images built by images/build.sh (see images/README.md).
#   images/check.sh                  every image
#   images/check.sh postgres nginx   only these
# Each image is exercised the way the harness uses it (no network access needed). Every container and volume
# it creates carries a label unique to this run and is removed on exit, pass or fail.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ALL=(postgres k6 openssl base nginx httpd haproxy prometheus keycloak)
RUN_ID=certctl-offline-check-$$
LBL=org.certctl-loadtest.check=$RUN_ID
TMP=$(mktemp -d)
FAILS=0

cleanup() {
  local ids
  ids=$(docker ps -aq --filter "label=$LBL")
  if [ -n "$ids" ]; then docker rm -f -v $ids >/dev/null || true; fi
  ids=$(docker volume ls -q --filter "label=$LBL")
  if [ -n "$ids" ]; then docker volume rm $ids >/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

docker info >/dev/null 2>&1 || { echo "check.sh: docker is unreachable." >&2; exit 1; }
pin() { (. "$HERE/$1/image.conf"; echo "$PIN"); }
envval() { sed -n "s/^$2=//p" "$1" | tail -n 1; } # file VAR: VAR's value in a compose env file
tag() { envval "$HERE/offline.env" "$(pin "$1")"; }
upstream() { envval "$(dirname "$HERE")/.env" "$(pin "$1")"; }
ok() { printf 'ok    %-8s %s\n' "$CUR" "$*"; }
fail() { printf 'FAIL  %-8s %s\n' "$CUR" "$*"; FAILS=$((FAILS + 1)); }
# check "description" command...: ok/FAIL by exit status; output kept for the FAIL line
check() {
  local d=$1 out; shift
  if out=$("$@" 2>&1); then ok "$d"; else fail "$d: $(tail -n 3 <<<"$out" | tr '\n' ' ')"; fi
}
# expect "description" "wanted substring" command...
expect() {
  local d=$1 want=$2 out; shift 2
  out=$("$@" 2>&1) || true
  if [[ $out == *"$want"* ]]; then ok "$d"; else fail "$d: wanted '$want', got: $(tail -n 3 <<<"$out" | tr '\n' ' ')"; fi
}
# wait_for seconds command...: retries every 0.5 s
wait_for() {
  local until=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$until" ] || return 1
    sleep 0.5
  done
}
run() { docker run --rm --label "$LBL" --network none "$@"; }
create() { docker create --label "$LBL" "$@"; }
ip_of() { docker inspect -f '{{ .NetworkSettings.IPAddress }}' "$1"; }
stop_quickly() { # container seconds [code]: docker stop (the image's STOPSIGNAL) must end it before docker's kill, with 0 or code
  local c=$1 t0=$SECONDS code
  docker stop -t "$2" "$c" >/dev/null
  code=$(docker inspect -f '{{.State.ExitCode}}' "$c")
  [ $((SECONDS - t0)) -lt "$2" ] && { [ "$code" = 0 ] || [ "$code" = "${3:-0}" ]; }
}

# A CA and a server certificate for localhost, shared by the TLS checks (made by the openssl image).
TLS_VOL=
tls_volume() {
  [ -z "$TLS_VOL" ] || return 0
  TLS_VOL=$RUN_ID-tls
  docker volume create --label "$LBL" "$TLS_VOL" >/dev/null
  docker run --rm --label "$LBL" --network none --user 0:0 -v "$TLS_VOL:/tls" --entrypoint /bin/sh "$(tag openssl)" -c '
    set -eu; cd /tls
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -keyout ca.key -out ca.crt \
      -subj "/CN=check CA" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr \
      -subj "/CN=localhost" 2>/dev/null
    printf "subjectAltName=DNS:localhost,IP:127.0.0.1\n" >ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile ext -out server.crt 2>/dev/null
    cat server.crt server.key >haproxy.pem
    chown 99:99 haproxy.pem && chmod 0600 haproxy.pem server.key && chmod 0644 ca.crt server.crt'
}

# ------------------------------------------------------------------------------------------------ postgres
check_postgres() {
  local t c; t=$(tag postgres); c=$RUN_ID-pg
  expect "PostgreSQL ${t##*:} inside, as the tag says" "(PostgreSQL) ${t##*:}." run --entrypoint postgres "$t" --version
  printf 'CREATE TABLE t (x int); INSERT INTO t VALUES (42);\n' >"$TMP/10-table.sql"
  # Slow init: a TCP probe must not pass before this has run (the temporary server is socket-only).
  printf 'sleep 3; touch /tmp/slow-init-done\n' >"$TMP/20-slow.sh"
  # The collector's settings: pg_stat_statements preloaded, as compose gives it (PG_SHARED_PRELOAD).
  create --name "$c" -e POSTGRES_USER=checker -e POSTGRES_PASSWORD=s3cret -e POSTGRES_DB=checkdb \
    "$t" postgres -c fsync=off -c shared_preload_libraries=pg_stat_statements >/dev/null
  docker cp "$TMP/10-table.sql" "$c:/docker-entrypoint-initdb.d/"
  docker cp "$TMP/20-slow.sh" "$c:/docker-entrypoint-initdb.d/"
  docker start "$c" >/dev/null
  if wait_for 60 docker exec "$c" pg_isready -h 127.0.0.1 -U checker -d checkdb; then
    ok "pg_isready over TCP"
  else
    fail "pg_isready over TCP never passed: $(docker logs --tail 5 "$c" 2>&1 | tr '\n' ' ')"; return
  fi
  check "TCP ready only after the init scripts ran" docker exec "$c" test -e /tmp/slow-init-done
  local ip; ip=$(ip_of "$c")
  local psql=(docker run --rm --label "$LBL" --entrypoint psql)
  expect "initdb.d .sql ran; query over TCP with the password" 42 \
    "${psql[@]}" -e PGPASSWORD=s3cret "$t" -X -h "$ip" -U checker -d checkdb -tAc 'SELECT x FROM t'
  expect "wrong password refused (scram-sha-256 for TCP)" "password authentication failed" \
    "${psql[@]}" -e PGPASSWORD=wrong "$t" -X -h "$ip" -U checker -d checkdb -tAc 'SELECT 1'
  expect "CMD override reaches postgres (-c fsync=off)" "off|*" \
    "${psql[@]}" -e PGPASSWORD=s3cret "$t" -X -h "$ip" -U checker -d checkdb -tAc \
    "SELECT current_setting('fsync') || '|' || current_setting('listen_addresses')"
  expect "pg_stat_statements preloaded, created and counting" "true|" \
    "${psql[@]}" -e PGPASSWORD=s3cret "$t" -X -h "$ip" -U checker -d checkdb -tAc \
    "CREATE EXTENSION pg_stat_statements; SELECT (count(*) > 0)::text || '|' FROM pg_stat_statements"
  expect "postgres runs as uid 70 (postgres)" "70" docker exec "$c" sh -c "awk '/^Uid:/ {print \$2}' /proc/1/status"
  check "SIGINT stop (fast shutdown), exit 0" stop_quickly "$c" 20
  expect "log shows the fast shutdown" "fast shutdown request" docker logs "$c"
  # SIGTERM (docker kill's default, a runtime's stop without the image's STOPSIGNAL): smart shutdown, exit 0.
  docker start "$c" >/dev/null
  if wait_for 60 docker exec "$c" pg_isready -q -h 127.0.0.1 -U checker -d checkdb; then
    docker kill --signal TERM "$c" >/dev/null
    check "SIGTERM stop (smart shutdown), exit 0" sh -c "[ \"\$(timeout 20 docker wait '$c')\" = 0 ]"
    expect "log shows the smart shutdown" "smart shutdown request" docker logs "$c"
  else
    fail "restart after the fast shutdown never became ready: $(docker logs --tail 5 "$c" 2>&1 | tr '\n' ' ')"
  fi
  docker rm -f -v "$c" >/dev/null
  expect "POSTGRES_PASSWORD_FILE is honoured" "PostgreSQL init process complete" \
    run --entrypoint bash "$t" -c 'echo pw >/tmp/pw && POSTGRES_PASSWORD_FILE=/tmp/pw timeout 60 docker-entrypoint.sh postgres -c fsync=off & sleep 1; for i in $(seq 60); do pg_isready -q -h 127.0.0.1 && break; sleep 0.5; done; pg_isready -h 127.0.0.1 >/dev/null && echo "PostgreSQL init process complete"'
  expect "no password: refuses to initialise" "superuser password is not specified" run "$t"
}

# ------------------------------------------------------------------------------------------------------ k6
check_k6() {
  local t; t=$(tag k6)
  expect "k6 version" "k6 v${t##*:}" run "$t" version
  expect "runs as k6 (12345) in /home/k6" "12345:12345 /home/k6" run --entrypoint sh "$t" -c 'echo "$(id -u):$(id -g) $(pwd)"'
  printf 'import { check } from "k6";\nexport const options = { iterations: 3 };\nexport default function () { check(1, { one: (v) => v === 1 }); }\n' >"$TMP/script.js"
  expect "k6 run (script on stdin)" "checks_succeeded" \
    sh -c "docker run --rm -i --label '$LBL' --network none -e K6_NO_USAGE_REPORT=true '$t' run - <'$TMP/script.js'"
  check "ca-certificates present" run --entrypoint test "$t" -s /etc/ssl/certs/ca-certificates.crt
}

# ------------------------------------------------------------------------------------------------- openssl
check_openssl() {
  local t; t=$(tag openssl)
  expect "entrypoint is openssl, OpenSSL ${t##*:} as the tag says" "OpenSSL ${t##*:}." run "$t" version
  expect "EC key + chmod/chown/mkdir/cat under /bin/sh as root" "BEGIN PRIVATE KEY" \
    run --user 0:0 --entrypoint /bin/sh "$t" -c 'set -e; mkdir -p /tmp/tls; cd /tmp/tls
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -keyout k.pem -out c.pem -subj /CN=x 2>/dev/null
      chown 1000:1000 k.pem; chmod 0600 k.pem; test "$(stat -c %u:%a k.pem)" = 1000:600; cat k.pem'
  if tls_volume >/dev/null 2>&1; then ok "CA + server certificate for the sidecar checks"; else fail "could not make the TLS volume"; fi
}

# --------------------------------------------------------------------------------------------------- nginx
check_nginx() {
  local t c; t=$(tag nginx); c=$RUN_ID-nginx
  tls_volume
  expect "nginx ${t##*:} inside, as the tag says" "nginx/${t##*:}." run --entrypoint /usr/sbin/nginx "$t" -v
  cat >"$TMP/nginx.conf" <<'EOF'
user  nginx;
worker_processes  1;
error_log  /var/log/nginx/error.log notice;
pid        /run/nginx.pid;
events { worker_connections 64; }
http {
    include /etc/nginx/mime.types;
    access_log /var/log/nginx/access.log;
    server { listen 8080; location / { return 200 "plain ok\n"; } }
    server {
        listen 8443 ssl;
        ssl_certificate     /tls/server.crt;
        ssl_certificate_key /tls/server.key;
        location / { return 200 "tls ok\n"; }
    }
}
stream {
    server { listen 9000; proxy_pass 127.0.0.1:8080; }
}
EOF
  create --name "$c" -v "$TLS_VOL:/tls:ro" "$t" >/dev/null
  docker cp "$TMP/nginx.conf" "$c:/etc/nginx/nginx.conf"
  expect "nginx -t (config with a stream block)" "test is successful" \
    docker run --rm --label "$LBL" --network none -v "$TLS_VOL:/tls:ro" -v "$TMP/nginx.conf:/etc/nginx/nginx.conf:ro" "$t" nginx -t
  docker start "$c" >/dev/null
  if ! wait_for 20 docker exec "$c" curl -fsS http://127.0.0.1:8080/; then
    fail "nginx did not serve: $(docker logs --tail 5 "$c" 2>&1 | tr '\n' ' ')"; return
  fi
  expect "http with curl" "plain ok" docker exec "$c" curl -fsS http://127.0.0.1:8080/
  expect "https (server key read by the root master)" "tls ok" docker exec "$c" curl -fsS --cacert /tls/ca.crt https://localhost:8443/
  expect "stream proxy (module loaded by the wrapper)" "plain ok" docker exec "$c" curl -fsS http://127.0.0.1:9000/
  expect "wget present" "plain ok" docker exec "$c" wget -q -O - http://127.0.0.1:8080/
  check "nginx -s reload" docker exec "$c" nginx -s reload
  check "SIGQUIT stop (graceful), exit 0" stop_quickly "$c" 15
}

# --------------------------------------------------------------------------------------------------- httpd
check_httpd() {
  local t c; t=$(tag httpd); c=$RUN_ID-httpd
  tls_volume
  expect "Apache ${t##*:} inside, as the tag says" "Apache/${t##*:}." run "$t" httpd -v
  # Official-style: every module by LoadModule, including those Debian compiles in (unixd, log_config...).
  cat >"$TMP/httpd.conf" <<'EOF'
ServerRoot "/usr/local/apache2"
Listen 8080
Listen 8443
LoadModule mpm_event_module modules/mod_mpm_event.so
LoadModule authz_core_module modules/mod_authz_core.so
LoadModule mime_module modules/mod_mime.so
LoadModule log_config_module modules/mod_log_config.so
LoadModule unixd_module modules/mod_unixd.so
LoadModule version_module modules/mod_version.so
LoadModule dir_module modules/mod_dir.so
LoadModule socache_shmcb_module modules/mod_socache_shmcb.so
LoadModule ssl_module modules/mod_ssl.so
User www-data
Group www-data
ServerName localhost
DocumentRoot "/usr/local/apache2/htdocs"
<Directory "/usr/local/apache2/htdocs">
    Require all granted
</Directory>
ErrorLog /proc/self/fd/2
LogLevel warn
CustomLog /proc/self/fd/1 "%h %r %>s"
TypesConfig conf/mime.types
SSLSessionCache "shmcb:logs/ssl_scache(512000)"
<VirtualHost *:8443>
    SSLEngine on
    SSLCertificateFile /tls/server.crt
    SSLCertificateKeyFile /tls/server.key
</VirtualHost>
EOF
  expect "httpd -t (official-style LoadModule lines)" "Syntax OK" \
    docker run --rm --label "$LBL" --network none -v "$TLS_VOL:/tls:ro" -v "$TMP/httpd.conf:/usr/local/apache2/conf/httpd.conf:ro" "$t" httpd -t
  create --name "$c" -v "$TLS_VOL:/tls:ro" -v "$TMP/httpd.conf:/usr/local/apache2/conf/httpd.conf:ro" "$t" >/dev/null
  docker start "$c" >/dev/null
  if ! wait_for 20 docker exec "$c" wget -q -O /dev/null http://127.0.0.1:8080/; then
    fail "httpd did not serve: $(docker logs --tail 5 "$c" 2>&1 | tr '\n' ' ')"; return
  fi
  expect "http with wget" "It works" docker exec "$c" wget -q -O - http://127.0.0.1:8080/
  expect "https with mod_ssl" "It works" docker exec "$c" wget -q -O - --ca-certificate=/tls/ca.crt https://localhost:8443/
  check "httpd -k graceful" docker exec "$c" httpd -k graceful
  sleep 1
  expect "still serving after graceful" "It works" docker exec "$c" wget -q -O - http://127.0.0.1:8080/
  check "SIGWINCH stop (graceful), exit 0" stop_quickly "$c" 15
  expect "default image config: httpd -t" "Syntax OK" run "$t" httpd -t
}

# ------------------------------------------------------------------------------------------------- haproxy
check_haproxy() {
  local t c; t=$(tag haproxy); c=$RUN_ID-haproxy
  tls_volume
  expect "HAProxy ${t##*:} inside, as the tag says" "HAProxy version ${t##*:}." run --entrypoint haproxy "$t" -v
  cat >"$TMP/haproxy.cfg" <<'EOF'
global
    log stdout format raw local0
defaults
    mode http
    log global
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend plain
    bind :8080
    http-request return status 200 content-type text/plain string "plain ok"
frontend tls
    bind :8443 ssl crt /tls/haproxy.pem
    http-request return status 200 content-type text/plain string "tls ok"
EOF
  expect "haproxy -c" "Configuration file is valid" \
    docker run --rm --label "$LBL" --network none -v "$TLS_VOL:/tls:ro" -v "$TMP/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" "$t" haproxy -c -f /usr/local/etc/haproxy/haproxy.cfg
  create --name "$c" -v "$TLS_VOL:/tls:ro" -v "$TMP/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" "$t" >/dev/null
  docker start "$c" >/dev/null
  if ! wait_for 20 docker exec "$c" wget -q -O /dev/null http://127.0.0.1:8080/; then
    fail "haproxy did not serve: $(docker logs --tail 5 "$c" 2>&1 | tr '\n' ' ')"; return
  fi
  expect "http with wget" "plain ok" docker exec "$c" wget -q -O - http://127.0.0.1:8080/
  expect "https (pem owned by uid 99)" "tls ok" docker exec "$c" wget -q -O - --ca-certificate=/tls/ca.crt https://localhost:8443/
  expect "runs as uid 99 with -W -db" "99 haproxy -W -db -f /usr/local/etc/haproxy/haproxy.cfg" \
    docker exec "$c" sh -c 'echo "$(awk "/^Uid:/ {print \$2}" /proc/1/status) $(tr "\0" " " </proc/1/cmdline)"'
  check "SIGUSR1 stop (soft stop), exit 0" stop_quickly "$c" 15
}

# ---------------------------------------------------------------------------------------------- prometheus
# The live view's Prometheus, started with compose.observability.yml's flags: ready, answering its query
# API, as nobody. (k6's remote write into it is test/e2e's TestObservabilityLive.)
check_prometheus() {
  local t c; t=$(tag prometheus); c=$RUN_ID-prometheus
  expect "Prometheus ${t##*:} inside, as the tag says" "version ${t##*:}." run "$t" --version
  create --name "$c" "$t" --config.file=/etc/prometheus/prometheus.yml --storage.tsdb.path=/prometheus \
    --web.enable-remote-write-receiver --enable-feature=native-histograms >/dev/null
  docker start "$c" >/dev/null
  if ! wait_for 30 docker exec "$c" wget -q -O /dev/null http://127.0.0.1:9090/-/ready; then
    fail "prometheus did not become ready: $(docker logs --tail 5 "$c" 2>&1 | tr '\n' ' ')"; return
  fi
  ok "ready with the remote-write receiver and native histograms"
  expect "query API answers" '"status":"success"' docker exec "$c" wget -q -O - 'http://127.0.0.1:9090/api/v1/query?query=up'
  expect "runs as nobody (65534)" "65534" docker exec "$c" sh -c 'awk "/^Uid:/ {print \$2}" /proc/1/status'
  check "SIGTERM stop, exit 0" stop_quickly "$c" 15
}

# ------------------------------------------------------------------------------------------------ keycloak
# Started as the auth tier starts it (docker-compose.yml, keycloak), without TLS: the options built into the
# image (dev-file, local cache, health) must not be rebuilt at start, and the management port must say UP.
check_keycloak() {
  local t c; t=$(tag keycloak); c=$RUN_ID-keycloak
  expect "Keycloak ${t##*:} inside, as the tag says" "Keycloak ${t##*:}" run "$t" --version
  expect "runs as uid 1000" "1000" run --entrypoint id "$t" -u
  create --name "$c" -e KC_BOOTSTRAP_ADMIN_USERNAME=admin -e KC_BOOTSTRAP_ADMIN_PASSWORD=check \
    "$t" start --optimized --http-enabled=true --hostname-strict=false --db=dev-file --cache=local --health-enabled=true >/dev/null
  docker start "$c" >/dev/null
  if ! wait_for 120 docker exec "$c" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9000 && printf "GET /health/ready HTTP/1.0\r\n\r\n" >&3 && grep -q UP <&3'; then
    fail "keycloak did not become ready: $(docker logs --tail 5 "$c" 2>&1 | tr '\n' ' ')"; return
  fi
  ok "ready, started --optimized with the options built into the image"
  expect "serves the master realm's discovery" '"issuer"' docker exec "$c" bash -c 'exec 3<>/dev/tcp/127.0.0.1/8080 && printf "GET /realms/master/.well-known/openid-configuration HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3 && cat <&3'
  # The JVM ends on SIGTERM after its shutdown hooks with 143, as upstream's image does.
  check "SIGTERM stop, exit 0 or the JVM's 143" stop_quickly "$c" 30 143
}

# ---------------------------------------------------------------------------------------------------- base
# Base of our own images (cmd/*/Dockerfile, images/certctl/*.Dockerfile). Those Dockerfiles skip `apk add`
# when curl and pgrep are already there, so without them an offline build would fail.
check_base() {
  local t; t=$(tag base)
  expect "Debian ${t##*:} inside, as the tag says" "=${t##*:}=" run "$t" sh -c '. /etc/os-release && echo "=$VERSION_CODENAME="'
  check "curl present" run "$t" curl --version
  check "pgrep present (the certctl agent's healthcheck)" run "$t" pgrep --version
  check "CA bundle present" run "$t" test -s /etc/ssl/certs/ca-certificates.crt
}

SEL=("$@"); [ ${#SEL[@]} -gt 0 ] || SEL=("${ALL[@]}")
for CUR in "${SEL[@]}"; do
  [ -f "$HERE/$CUR/image.conf" ] || { echo "check.sh: unknown image '$CUR' (known: ${ALL[*]})" >&2; exit 2; }
  if ! docker image inspect "$(tag "$CUR")" >/dev/null 2>&1; then fail "$(tag "$CUR") is not built (run images/build.sh)"; continue; fi
  # Named for what it is, labelled with what it stands in for: the pin .env holds now.
  expect "labelled as the stand-in for $(upstream "$CUR") ($(pin "$CUR"))" "=$(upstream "$CUR")=" \
    docker image inspect -f '={{ index .Config.Labels "org.certctl-loadtest.upstream" }}=' "$(tag "$CUR")"
  "check_$CUR"
done
if [ "$FAILS" -gt 0 ]; then echo "check.sh: $FAILS check(s) failed." >&2; exit 1; fi
echo "check.sh: all checks passed."
