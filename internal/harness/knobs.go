package harness

// Knob is one environment variable the harness reads. docs/configuration.md renders this table, and a
// test fails when the code reads a variable the table does not list.
type Knob struct {
	Name    string
	Type    string
	Default string
	Read    string // who reads it: loadtest, k6, compose, seed, fault-proxy
	Doc     string
}

// Knobs lists every variable, in the order the configuration page shows them.
var Knobs = []Knob{
	{"TIER", "comma list", "default", "loadtest", "Tiers to run: folders of `k6/` (`api`, `connector`, `acme`, `scale`); `default` is `api,connector`, `all` every tier but `scale`."},
	{"SCENARIOS", "comma list", "all of the tiers'", "loadtest", "Only these scenarios of the selected tiers (file names under `k6/<tier>/`)."},
	{"DURATION", "duration", "5m", "loadtest, k6", "Length of every scenario, in k6's syntax (`30s`, `1m30s`)."},
	{"RATE_<SCENARIO>", "integer", "the scenario's", "k6", "Iterations per time unit of an arrival-rate scenario (per second; per minute for the connector tier), e.g. `RATE_LIST_CERTIFICATES=20`."},
	{"VUS_<SCENARIO>", "integer", "the scenario's", "k6", "VUs of a constant-VU scenario, e.g. `VUS_ACME_BURST=50`."},
	{"PRE_VUS", "integer", "the scenario's", "k6", "VUs allocated before the start of every arrival-rate scenario (VUs added mid-run start late)."},
	{"MAX_VUS", "integer", "the scenario's", "k6", "Cap on VUs for every scenario; with a slow server, a low cap shows as dropped iterations."},
	{"REQUEST_TIMEOUT", "duration", "10s", "k6", "Per-request timeout; kept under the scenarios' 15 s graceful stop so a hung request counts as failed."},
	{"EXPECT_TLS_VERSION", "tls1.2 \\| tls1.3", "tls1.3", "k6", "TLS version the connector checks require."},
	{"CONNECTOR_<TYPE>_URL", "URL", "https://<type>/", "k6", "Where a connector target is served (`NGINX`, `APACHE`, `HAPROXY`, `F5`)."},
	{"BATCH_SIZE", "1–500", "50", "k6", "Certificate ids per bulk-renew request."},
	{"SEED_BULK_CERTS", "integer", "10000", "seed", "Certificates `seed/01_bulk_renewal_certs.sql` writes (scale tier)."},
	{"SEED_AGENTS", "integer", "5000", "seed", "Agents `seed/02_agent_fleet.sql` writes (scale tier)."},
	{"SEED_DIR", "directory", "seed/", "compose", "Fixtures the scale seeder applies, `*.sql` in lexical order."},
	{"IMAGES", "upstream \\| offline", "upstream", "loadtest", "`offline` switches every image to the stand-ins `make images` builds (`images/offline.env`)."},
	{"CERTCTL_IMAGE", "image", "ghcr.io/certctl-io/certctl-server:v2.1.7", "compose", "The certctl server image (pinned in `.env`)."},
	{"CERTCTL_DIST", "directory", "unset", "loadtest", "A certctl build (`server`, `agent`, `migrations/`, `LICENSE`): `loadtest run` packages it into `certctl-loadtest/certctl-server:<folder>-local` (`images/certctl/build.sh`) and runs that instead of `CERTCTL_IMAGE`."},
	{"IMAGE_POSTGRES, IMAGE_K6, IMAGE_OPENSSL, IMAGE_NGINX, IMAGE_HTTPD, IMAGE_HAPROXY", "image", "see `.env`", "compose", "The other images, pinned in `.env`."},
	{"IMAGE_F5, IMAGE_FAULT_PROXY", "image", "see `.env`", "compose", "Tags of our own images, built from `cmd/f5-standin/Dockerfile` and `cmd/fault-proxy/Dockerfile`."},
	{"IMAGE_GOLANG, IMAGE_BASE", "image", "golang:1.26.8-alpine, alpine:3.19", "compose", "Build and runtime bases of our own images and of a packaged certctl build."},
	{"PULL_POLICY", "never \\| missing \\| always", "missing", "compose", "Compose's pull policy for upstream images; `never` also stops `loadtest run` from pulling a missing one."},
	{"CERTCTL_RATE_LIMIT_ENABLED", "boolean", "false", "compose", "certctl's per-IP limiter (50 rps, burst 100, before auth): on, it throttles the load generator itself."},
	{"CERTCTL_LOG_LEVEL", "string", "warn", "compose", "certctl's log level."},
	{"CERTCTL_TOKEN", "string", "generated per run", "loadtest, compose, k6", "certctl's admin API key; also the agent bootstrap token. Redacted in `run.json`."},
	{"CLIENT_TOKEN", "string", "CERTCTL_TOKEN", "k6", "The key k6 sends, when it must differ from the server's (tests of a wrong token)."},
	{"CERTCTL_CONFIG_ENCRYPTION_KEY", "string ≥ 32 bytes", "generated per run", "compose", "certctl's key for database-stored issuer configuration. Redacted."},
	{"CERTCTL_URL", "URL", "https://certctl-server:8443", "k6", "certctl as k6 reaches it inside the stack."},
	{"LT_TEAM_ID, LT_OWNER_ID, LT_POLICY_ID, LT_ISSUER_ID, LT_PROFILE_ID", "id", "lt-team, lt-owner, lt-policy, lt-issuer-local, lt-profile", "compose, seed, k6", "Ids of the base rows `seed/00_base.sql` writes and every scenario references."},
	{"TLS_NAMES", "names", "certctl-server certctl-faults localhost", "compose", "Names on certctl's server certificate (the fault proxy serves the same one). Without `localhost` the healthcheck cannot verify it: the tests use that for a server that never turns healthy."},
	{"STARTER_NAMES", "names", "nginx apache haproxy f5 localhost", "compose", "Names on the connector targets' starter certificate."},
	{"SPOTCHECK_CSR_DIR", "directory", "/tls/ari", "k6", "Where `k6/spotcheck/bulk_revoke.js` reads its CSRs (`1.csr`, `2.csr`, …, reused in turn), when run outside the stack."},
	{"ARI_CSRS", "integer", "8", "compose", "CSRs `tls-init` writes for the certificates renewal-info asks about."},
	{"START_TIMEOUT", "duration", "120s", "loadtest", "How long the stack may take to become healthy."},
	{"RESULTS_DIR", "directory", "results", "loadtest", "Where run directories go; `latest` points at the newest."},
	{"RUN_ID", "[a-z0-9-]{1,40}", "UTC time + random", "loadtest", "Name of the run directory and of the compose project (`certctl-lt-<run id>`)."},
	{"COMPOSE_PROJECT_NAME", "string", "certctl-lt-<run id>", "loadtest", "The compose project of the run."},
	{"FAULT_LATENCY", "duration", "unset", "loadtest, fault-proxy", "Put the fault proxy (`cmd/fault-proxy`) between k6 and certctl and delay the matching requests by this much."},
	{"FAULT_ERROR_RATE", "0–1", "unset", "loadtest, fault-proxy", "Share of matching requests the fault proxy answers 500 itself, in certctl's error shape."},
	{"FAULT_ROUTE", "routes", "all but /health, /ready", "loadtest, fault-proxy", "Which requests the faults hit: `METHOD /path-prefix`, a trailing `$` for an exact path, comma-separated (`GET /api/v1/certificates$,POST`)."},
}
