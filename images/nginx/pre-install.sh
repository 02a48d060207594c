# Upstream: user/group nginx, uid/gid 101, home /var/cache/nginx.
groupadd --system --gid 101 nginx
useradd --system --uid 101 --gid nginx --no-create-home --home-dir /var/cache/nginx \
  --shell /sbin/nologin --comment nginx nginx
