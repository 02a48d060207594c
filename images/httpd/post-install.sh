# The official image's layout under /usr/local/apache2, pointing at Debian's files.
P=/usr/local/apache2
install -d $P/logs $P/cgi-bin
ln -sfn /usr/lib/apache2/modules $P/modules
ln -sfn /usr/share/apache2/error $P/error
ln -sfn /usr/share/apache2/icons $P/icons
ln -sf /etc/mime.types $P/conf/mime.types
for b in ab htpasswd htdigest htdbm htcacheclean logresolve rotatelogs checkgid httxt2dbm fcgistarter; do
  for d in /usr/bin /usr/sbin; do
    if [ -x "$d/$b" ]; then ln -sf "$d/$b" "$P/bin/$b"; break; fi
  done
done
chmod 0755 $P/bin/httpd $P/bin/apachectl /usr/local/bin/httpd-foreground
# Modules compiled into Debian's apache2 (a LoadModule line for them is a fatal error): the httpd wrapper
# comments such lines out of the configuration it hands to apache2.
install -d /usr/local/share/httpd-offline
/usr/sbin/apache2 -l | sed -n -E 's/^[[:space:]]*(mod_)?([a-z0-9_]+)\.c$/\2/p' |
  sed -E 's/^http_core$/http/' | sed 's/$/_module/' | LC_ALL=C sort >/usr/local/share/httpd-offline/builtin-modules
cat /usr/local/share/httpd-offline/builtin-modules
grep -qx unixd_module /usr/local/share/httpd-offline/builtin-modules
install -d -m 1777 /run/httpd-offline
test -e $P/modules/mod_ssl.so
test -e $P/modules/mod_socache_shmcb.so
