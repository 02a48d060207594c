# certctl's agent, packaged from a build directory (CERTCTL_DIST) like ghcr.io/certctl-io/certctl-agent:
# /app/agent, uid 1000, keys in /var/lib/certctl/keys (0700). Built by images/certctl/build.sh.
# BASE_IMAGE: build.sh passes IMAGE_BASE (.env's pin).
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN if ! command -v pgrep >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then apk add --no-cache ca-certificates curl procps; fi \
 && pgrep --version >/dev/null && curl --version >/dev/null
WORKDIR /app
COPY agent /app/agent
COPY LICENSE /app/LICENSE
RUN mkdir -p /var/lib/certctl/keys && chmod 0700 /var/lib/certctl/keys \
 && chown -R 1000:1000 /app /var/lib/certctl && chmod 0755 /app/agent
USER 1000:1000
HEALTHCHECK --interval=30s --timeout=5s --retries=3 CMD ["pgrep", "-f", "/app/agent"]
ENTRYPOINT ["/app/agent"]
