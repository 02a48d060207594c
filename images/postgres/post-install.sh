# Runs in the chroot after the packages and rootfs/ are in place.
PG_MAJOR=15
sample=/usr/share/postgresql/$PG_MAJOR/postgresql.conf.sample
# Like upstream: initdb copies this sample, so every new cluster listens on all addresses.
sed -ri "s!^#?(listen_addresses)\s*=\s*\S+.*!\1 = '*'!" "$sample"
grep -F "listen_addresses = '*'" "$sample"
[ "$(id -u postgres)" = 70 ] && [ "$(id -g postgres)" = 70 ]
install -d -o postgres -g postgres -m 3777 /var/run/postgresql
install -d -o postgres -g postgres -m 1777 /var/lib/postgresql/data
install -d /docker-entrypoint-initdb.d
chmod 0755 /usr/local/bin/docker-entrypoint.sh
ln -sf usr/local/bin/docker-entrypoint.sh /docker-entrypoint.sh
# Debian's cluster tooling is not used (no /etc/postgresql clusters); the binaries are on PATH directly.
test -x /usr/lib/postgresql/$PG_MAJOR/bin/postgres
test -x /usr/lib/postgresql/$PG_MAJOR/bin/pg_isready
test -x /usr/lib/postgresql/$PG_MAJOR/bin/psql
