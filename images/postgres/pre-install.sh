# Runs in the chroot before the packages are installed.
# The user exists before postgresql-common's postinst so it keeps the upstream alpine uid/gid (70).
groupadd --system --gid 70 postgres
useradd --system --uid 70 --gid postgres --home-dir /var/lib/postgresql --shell /bin/bash \
  --comment 'PostgreSQL administrator' postgres
mkdir -p /var/lib/postgresql && chown postgres:postgres /var/lib/postgresql
# Like the official Debian-based image: no "main" cluster at install time; the entrypoint runs initdb.
mkdir -p /etc/postgresql-common/createcluster.d
echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.d/00-offline-image.conf
