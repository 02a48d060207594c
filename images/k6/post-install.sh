# Upstream: user k6, uid 12345, home /home/k6 (the working directory).
groupadd --gid 12345 k6
useradd --uid 12345 --gid k6 --create-home --home-dir /home/k6 --shell /bin/sh k6
test -x /usr/bin/k6
