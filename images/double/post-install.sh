# Like the official certctl image: user/group certctl 1000:1000 owning /app, binary /app/server.
groupadd --gid 1000 certctl
useradd --uid 1000 --gid certctl --no-create-home --home-dir /app --shell /bin/sh certctl
chown -R certctl:certctl /app
test -x /app/server
