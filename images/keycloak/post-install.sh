# Upstream (quay.io/keycloak/keycloak): the server in /opt/keycloak, owned by and run as keycloak (uid 1000,
# group root, as upstream), ENTRYPOINT kc.sh. The zip build.sh fetched is in /tmp/fetch.
zip=$(ls /tmp/fetch/keycloak-quarkus-dist-*.zip)
unzip -q "$zip" -d /opt
mv /opt/keycloak-* /opt/keycloak
rm -f /opt/keycloak/bin/*.bat
useradd --uid 1000 --gid 0 --no-create-home --home-dir /opt/keycloak --shell /usr/sbin/nologin keycloak
mkdir -p /opt/keycloak/data/import
chown -R 1000:0 /opt/keycloak
chmod -R g+rwX /opt/keycloak
# The version for VERSION_CMD, from the distribution itself.
printf 'version=%s\n' "$(ls /opt/keycloak/lib/lib/main/ | sed -n 's/^org\.keycloak\.keycloak-core-\(.*\)\.jar$/\1/p')" >/opt/keycloak/version.txt
apt-get -y -q purge unzip
