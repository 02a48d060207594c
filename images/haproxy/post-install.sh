# Upstream: user/group haproxy with uid/gid 99, home /var/lib/haproxy (the working directory). Debian's
# postinst creates a system user (adduser refuses a pre-made uid below 100), so renumber it here.
old_uid=$(id -u haproxy) old_gid=$(id -g haproxy)
groupmod --gid 99 haproxy
usermod --uid 99 --gid 99 --home /var/lib/haproxy --shell /sbin/nologin haproxy
find / -xdev \( -uid "$old_uid" -o -gid "$old_gid" \) -exec chown -h haproxy:haproxy {} +
[ "$(id -u haproxy)" = 99 ] && [ "$(id -g haproxy)" = 99 ]
install -d -o haproxy -g haproxy /var/lib/haproxy
# The official image reads /usr/local/etc/haproxy/haproxy.cfg (mounted by the user; none is shipped).
install -d /usr/local/etc/haproxy
rm -f /etc/haproxy/haproxy.cfg
chmod 0755 /usr/local/bin/docker-entrypoint.sh
# /usr/local/sbin/haproxy like the official image (the binary is Debian's /usr/sbin/haproxy).
ln -sf /usr/sbin/haproxy /usr/local/sbin/haproxy
haproxy -v
