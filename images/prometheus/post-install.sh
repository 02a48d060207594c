# Upstream (prom/prometheus): runs as nobody (65534), its data in /prometheus (the working directory), its
# config /etc/prometheus/prometheus.yml scraping only itself. Debian's default config also scrapes a node
# exporter on localhost:9100, which is not there: replaced by upstream's.
install -d -o nobody -g nogroup /prometheus
cat >/etc/prometheus/prometheus.yml <<'YAML'
global:
  scrape_interval: 15s
  evaluation_interval: 15s
scrape_configs:
  - job_name: prometheus
    static_configs:
      - targets: ["localhost:9090"]
YAML
chmod 0644 /etc/prometheus/prometheus.yml
# Debian's service wrapper and its defaults file play no part in a container.
rm -f /etc/default/prometheus
prometheus --version
