# Official layout: nginx.conf + conf.d/default.conf (from rootfs/), logs to the container's stdout/stderr.
rm -rf /etc/nginx/sites-available /etc/nginx/sites-enabled /etc/nginx/modules-available /etc/nginx/modules-enabled \
  /var/www/html
install -d -o nginx -g nginx /var/cache/nginx
ln -sfn /usr/lib/nginx/modules /etc/nginx/modules # official layout: load_module modules/x.so from /etc/nginx
ln -sf /dev/stdout /var/log/nginx/access.log
ln -sf /dev/stderr /var/log/nginx/error.log
chmod 0755 /docker-entrypoint.sh /docker-entrypoint.d/*.sh /usr/local/sbin/nginx
test -e /usr/lib/nginx/modules/ngx_stream_module.so
test -e /usr/lib/nginx/modules/ngx_mail_module.so
