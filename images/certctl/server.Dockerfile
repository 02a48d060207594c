# certctl's server, packaged from a build directory (CERTCTL_DIST: server, migrations/, LICENSE) the way
# certctl's own Dockerfile lays it out, so the harness runs the real server with the layout, user and
# working directory of ghcr.io/certctl-io/certctl-server. Built by images/certctl/build.sh; the build
# directory is the context, so nothing of certctl ever enters this repository.
# BASE_IMAGE: build.sh passes IMAGE_BASE (.env's pin, upstream's alpine); any base with curl (the
# healthcheck) works, e.g. the offline kit's.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
# Upstream installs ca-certificates, tzdata and curl; a base that already has them needs no registry.
RUN if ! command -v curl >/dev/null 2>&1; then apk add --no-cache ca-certificates tzdata curl; fi && curl --version >/dev/null
WORKDIR /app
COPY server /app/server
COPY migrations /app/migrations
COPY LICENSE /app/LICENSE
# The dashboard is not part of a server build; an index.html is what turns on certctl's dashboard mode
# (docs/certctl-findings.md#dashboard-mode), kept so the image behaves like upstream's.
RUN mkdir -p /app/web/dist && echo '<!doctype html><title>certctl</title>' >/app/web/dist/index.html \
 && chown -R 1000:1000 /app && chmod 0755 /app/server
USER 1000:1000
EXPOSE 8443
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 CMD ["curl", "-fsSk", "-o", "/dev/null", "https://localhost:8443/health"]
ENTRYPOINT ["/app/server"]
