package harness

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Knob is one environment variable the harness reads. This registry is the one place a knob's default
// lives: `make docs` renders docs/configuration.md, README.md's common knobs, `make help` and the
// defaults k6 reads (k6/lib/knobs.js) from it, and tests in internal/docs fail when docker-compose.yml,
// .env, the seeds or a script fall back to another value.
type Knob struct {
	Name string // a <PLACEHOLDER> stands for a family: RATE_<SCENARIO>
	Type string
	// Default is the literal every reader falls back to when the variable is unset or empty; "" when
	// there is none, and then Note says what happens instead.
	Default string
	// Note is the default in words when it is not one literal ("the scenario's", "generated per run"),
	// or PinnedInEnv for an image .env pins. With Default set too, it says who does not use Default.
	Note   string
	Read   string // who reads it: loadtest, k6, compose, seed, fault-proxy
	Doc    string
	Common bool // also in README.md's short table and `make help`
}

// PinnedInEnv is the Note of the image knobs: their value is in .env and nowhere else.
const PinnedInEnv = "pinned in `.env`"

// check is the knob's value checked against its type, for the types whose check is the type alone.
func (k Knob) check(v string) error {
	switch k.Type {
	case "integer":
		if n, err := strconv.Atoi(v); err != nil || n <= 0 {
			return fmt.Errorf("%s=%q must be a positive whole number", k.Name, v)
		}
	case "duration":
		_, err := ParseDuration(k.Name, v)
		return err
	case "number":
		if f, err := strconv.ParseFloat(v, 64); err != nil || !(f > 0) || math.IsInf(f, 0) {
			return fmt.Errorf("%s=%q must be a positive number", k.Name, v)
		}
	case "0/1":
		if v != "0" && v != "1" {
			return fmt.Errorf("%s=%q: use 1 (on) or 0", k.Name, v)
		}
	case "share":
		if f, err := strconv.ParseFloat(v, 64); err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("%s=%q must be a share between 0 and 1", k.Name, v)
		}
	case "seconds":
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return fmt.Errorf("%s=%q must be a whole number of seconds", k.Name, v)
		}
	default:
		return fmt.Errorf("%s: the registry's type %q has no check of its own", k.Name, k.Type)
	}
	return nil
}

// ReadBy reports whether reader (k6, compose, …) reads the knob.
func (k Knob) ReadBy(reader string) bool {
	for _, r := range strings.Split(k.Read, ", ") {
		if r == reader {
			return true
		}
	}
	return false
}

// Knobs lists every variable, in the order the configuration page shows them.
var Knobs = []Knob{
	{Name: "TIER", Type: "comma list", Default: "default", Read: "loadtest", Common: true, Doc: tierDoc()},
	{Name: "SCENARIOS", Type: "comma list", Note: "all of the tiers'", Read: "loadtest", Common: true, Doc: "Only these scenarios of the selected tiers (file names under `k6/<tier>/`), e.g. `SCENARIOS=list_certificates`."},
	{Name: "DURATION", Type: "duration", Default: "5m", Read: "loadtest, k6, compose", Common: true, Doc: "Length of every scenario, in k6's syntax (`30s`, `1m30s`)."},
	{Name: "RATE_<SCENARIO>", Type: "integer", Note: "the scenario's", Read: "k6", Common: true, Doc: "Iterations per time unit of an arrival-rate scenario (per second; per minute for the connector tier), e.g. `RATE_LIST_CERTIFICATES=20`."},
	{Name: "TIME_UNIT_<SCENARIO>", Type: "s or m", Note: "the scenario's", Read: "k6", Doc: "The time unit of an arrival-rate scenario's `RATE_<SCENARIO>`: `s` per second, `m` per minute, e.g. `RATE_ACME_ORDER_FLOW=3 TIME_UNIT_ACME_ORDER_FLOW=m` for three orders a minute (`loadtest fleet` gives a fleet's slow operations so)."},
	{Name: "VUS_<SCENARIO>", Type: "integer", Note: "the scenario's", Read: "k6", Doc: "VUs of a constant-VU scenario, e.g. `VUS_ACME_BURST=50`."},
	{Name: "PRE_VUS", Type: "integer", Note: "the scenario's", Read: "k6", Doc: "VUs allocated before the start of every arrival-rate scenario (VUs added mid-run start late)."},
	{Name: "MAX_VUS", Type: "integer", Note: "the scenario's", Read: "k6", Doc: "Cap on VUs for every scenario; with a slow server, a low cap shows as dropped iterations."},
	{Name: "OTAVA_PYTHON", Type: "command", Default: "python3", Read: "loadtest", Doc: "`loadtest trend report --store`: the Python that runs Apache Otava's change points (`tools/otava/changepoints.py`), one with `tools/otava/requirements.txt` installed (`scripts/install-deps.sh` makes one in the build cache)."},
	{Name: "ABORT_ON_FAIL", Type: "duration", Note: "off: every run loads for its whole duration", Read: "loadtest, k6", Doc: "End the load once a threshold fails, judged from this far into it on (k6's `abortOnFail` with `delayAbortEval`: the warm-up is never judged). `make capacity` sets it for its steps (a quarter of `CAPACITY_STEP`): a step whose budget broke has its verdict, and the table says where it stopped. Shorter than `DURATION`."},
	{Name: "REQUEST_TIMEOUT", Type: "duration", Default: "10s", Read: "k6", Doc: "Per-request timeout; kept under the scenarios' 15 s graceful stop so a hung request counts as failed."},
	{Name: "EXPECT_TLS_VERSION", Type: "tls1.2 \\| tls1.3", Default: "tls1.3", Read: "k6", Doc: "TLS version the connector checks require."},
	{Name: "CONNECTOR_<TYPE>_URL", Type: "URL", Default: "https://<type>/", Read: "k6", Doc: "Where a connector target is served (`NGINX`, `APACHE`, `HAPROXY`, `F5`)."},
	{Name: "BATCH_SIZE", Type: "1–500", Default: "50", Read: "loadtest, k6", Doc: "Certificate ids per bulk-renew request."},
	{Name: "SEED_BULK_CERTS", Type: "integer", Default: "10000", Read: "loadtest, compose, seed", Common: true, Doc: "Certificates `seed/01_bulk_renewal_certs.sql` writes (scale tier). Unset, when `bulk_renewal` runs: enough for one pass without revisiting a certificate ((its rate × `DURATION` + 1) × `BATCH_SIZE`: 75050 at the defaults), at least this default. `1000000` for a large-fleet rehearsal."},
	{Name: "SEED_AGENTS", Type: "integer", Default: "5000", Read: "loadtest, compose, seed", Common: true, Doc: "Agents `seed/02_agent_fleet.sql` writes (scale tier)."},
	{Name: "SEED_INVENTORY", Type: "integer", Note: "unset: none", Read: "loadtest, compose, seed", Doc: "Before the load, seed certctl with a year of a fleet's history at 47-day rotation for this many certificates (`seed/inventory/`: the certificates, their versions, the jobs and the audit rows their rotations leave), whatever the tiers; `make growth` runs its mix at several such sizes."},
	{Name: "SEED_INVENTORY_AUDIT", Type: "all, service or none", Default: "all", Read: "loadtest, compose, seed", Doc: "Which audit rows the inventory seed writes: `all` (91 a certificate: every row its rotations leave), `service` (58: without the API middleware's), `none`. The audit rows are most of a large inventory's seeding time and disk (docs/growth.md)."},
	{Name: "SEED_DIR", Type: "directory", Default: "./seed", Read: "loadtest, compose", Doc: "Fixtures the scale seeder applies, `*.sql` in lexical order."},
	{Name: "SEGMENTS", Type: "1–16", Default: "1", Read: "loadtest", Doc: "k6 processes per scenario (`loadtest run --segments N`): each runs an execution segment of the load, and their records merge into one with percentiles recomputed from the pooled samples (docs/distributed.md). Not for the deploy, limiter and pki tiers."},
	{Name: "TARGET", Type: "stack \\| external", Default: "stack", Read: "loadtest", Doc: "`external` loads a certctl the harness did not start (`CERTCTL_URL`, `CERTCTL_API_KEY`): no stack, no seeding but `make seed-external`; the scenarios that need the harness's database or sidecars are left out, each with its reason (docs/distributed.md)."},
	{Name: "CERTCTL_API_KEY", Type: "string", Note: "unset", Read: "loadtest", Doc: "`TARGET=external`: an admin API key of that certctl. Redacted in `run.json`."},
	{Name: "CERTCTL_CA_BUNDLE", Type: "file", Note: "the system's CAs", Read: "loadtest", Doc: "`TARGET=external`: PEM file of the CAs that verify certctl's certificate."},
	{Name: "CERTCTL_TLS_VERIFY", Type: "true \\| false", Default: "true", Read: "loadtest, compose", Doc: "`TARGET=external`: `false` skips verifying certctl's certificate (stated in `run.json`)."},
	{Name: "ALLOW_PUBLIC_TARGET", Type: "yes", Note: "unset", Read: "loadtest", Doc: "`TARGET=external`: a `CERTCTL_URL` that resolves to a public address is refused unless this says `yes` (the certctl is yours to load)."},
	{Name: "EXTERNAL_NETWORK", Type: "docker network", Default: "host", Read: "loadtest, compose", Doc: "`TARGET=external`: the Docker network k6 runs on; `host` reaches what this machine reaches, a network's name a certctl in another compose project."},
	{Name: "CONFIRM", Type: "yes", Note: "unset", Read: "loadtest", Doc: "`make seed-external` and `make clean-external` write to an external certctl only with `CONFIRM=yes`."},
	{Name: "IMAGES", Type: "upstream \\| offline", Default: "upstream", Read: "loadtest", Common: true, Doc: "`offline` switches every image to the stand-ins `make images` builds (`images/offline.env`)."},
	{Name: "CERTCTL_IMAGE", Type: "image", Note: PinnedInEnv, Read: "compose", Common: true, Doc: "The certctl server image."},
	{Name: "CERTCTL_DIST", Type: "directory", Note: "unset", Read: "loadtest", Common: true, Doc: "A certctl build (`server`, `agent`, `migrations/`, `LICENSE`): `loadtest run` packages it into `certctl-loadtest/certctl-server:<folder>-local` (`images/certctl/build.sh`) and runs that instead of `CERTCTL_IMAGE`."},
	{Name: "CERTCTL_AGENT_IMAGE", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "certctl's agent image, the deploy tier's agents; `CERTCTL_DIST` packages one from the build (`certctl-loadtest/certctl-agent:<folder>-local`)."},
	{Name: "IMAGE_POSTGRES", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "PostgreSQL, certctl's database; also runs the seeders' psql."},
	{Name: "IMAGE_K6", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "k6, one container per scenario."},
	{Name: "IMAGE_OPENSSL", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "OpenSSL with a shell, for the one-shot `tls-init` (`fixtures/tls-init.sh`)."},
	{Name: "IMAGE_NGINX", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "The nginx connector target."},
	{Name: "IMAGE_HTTPD", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "The Apache httpd connector target."},
	{Name: "IMAGE_HAPROXY", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "The HAProxy connector target."},
	{Name: "IMAGE_DEPLOY_NGINX", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Tag of the deploy tier's nginx host: `IMAGE_NGINX` with certctl's agent from `CERTCTL_AGENT_IMAGE` (`images/deploy/Dockerfile`)."},
	{Name: "IMAGE_DEPLOY_APACHE", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Tag of the deploy tier's Apache host: `IMAGE_HTTPD` with certctl's agent."},
	{Name: "IMAGE_DEPLOY_HAPROXY", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Tag of the deploy tier's HAProxy host: `IMAGE_HAPROXY` with certctl's agent."},
	{Name: "IMAGE_TLSPROBE", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Tag of our TLS probe (`cmd/tlsprobe`): tells the deploy tier's k6 which certificate a target serves."},
	{Name: "IMAGE_F5", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Tag of our F5 BIG-IP stand-in, built from `cmd/f5-standin/Dockerfile`."},
	{Name: "IMAGE_CHALLENGE_RESPONDER", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Tag of our ACME challenge responder (Let's Encrypt's challtestsrv, the PKI tier's `acme_http01_*`), built from `cmd/challenge-responder/Dockerfile`."},
	{Name: "IMAGE_COLLECTOR", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Tag of our collector (DIAGNOSIS), built from `cmd/collector/Dockerfile`."},
	{Name: "IMAGE_FAULT_PROXY", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Tag of our fault proxy, built from `cmd/fault-proxy/Dockerfile`."},
	{Name: "IMAGE_NETGUARD", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Tag of our netguard, built from `cmd/netguard/Dockerfile`: it holds the network namespace of certctl and PostgreSQL with no route out (`stack-net`)."},
	{Name: "IMAGE_KEYCLOAK", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Keycloak, the auth tier's identity provider (profile `auth`); offline, Keycloak's own distribution on Debian's OpenJDK (images/README.md)."},
	{Name: "KEYCLOAK_LOG_LEVEL", Type: "string", Default: "warn", Read: "compose", Doc: "Keycloak's log level in the auth tier (`KC_LOG_LEVEL`: `info` shows each back-channel logout it sends)."},
	{Name: "IMAGE_PROMETHEUS", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Prometheus of the live view (`compose.observability.yml`, OBSERVABILITY): receives every k6's remote write."},
	{Name: "IMAGE_GRAFANA", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Grafana of the live view, with k6's published dashboard."},
	{Name: "IMAGE_BASE", Type: "image", Note: PinnedInEnv, Read: "compose", Doc: "Runtime base of our own images and of a packaged certctl build."},
	{Name: "PULL_POLICY", Type: "never \\| missing \\| always", Default: "missing", Read: "loadtest, compose", Doc: "Compose's pull policy for upstream images; `never` also stops `loadtest run` from pulling a missing one."},
	{Name: "CERTCTL_RATE_LIMIT_ENABLED", Type: "boolean", Default: "false", Read: "loadtest, compose", Common: true, Doc: "certctl's per-IP limiter (50 rps, burst 100, before auth): on, it throttles the load generator itself. The `limiter` tier turns it on and refuses `false`."},
	{Name: "CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL", Type: "duration ≥ 1s", Default: "30s", Note: "`1h` for the deploy tier, `10s` for `renewal_scan`", Read: "loadtest, compose, k6", Doc: "How often certctl's job processor claims Pending jobs (certctl's own default, set explicitly). It also claims the agents' Pending Deployment jobs and never hands them back, so at 30 s no renewal is ever deployed: the deploy tier runs with `1h` unless told otherwise, and counts the stolen jobs (docs/deploy.md#the-loop-and-its-clocks)."},
	{Name: "CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL", Type: "duration ≥ 1s", Default: "1h", Note: "`1m` for `renewal_scan`", Read: "loadtest, compose, k6", Doc: "How often certctl's scheduler looks for certificates inside their renewal window and creates renewal jobs (certctl's own default, set explicitly). `loadtest spotcheck` sets `3m` when unset: the `tick_renewal_scan` check waits for a scan. The deploy tier renews through the API and does not wait for it, except `renewal_scan`, which waits for the scan (and runs the job processor at `10s`)."},
	{Name: "CERTCTL_VERIFY_DEPLOYMENT", Type: "true/false", Default: "true", Read: "loadtest, compose", Doc: "certctl's post-deployment TLS verification by the agent (certctl's default, set explicitly)."},
	{Name: "DEPLOY_CERTS_PER_TARGET", Type: "integer", Default: "250", Read: "compose, seed, k6", Doc: "Certificates `seed/deploy/bindings.sql` binds to each deploy target (four targets: 1000 in all, `mass_rotation`'s default)."},
	{Name: "DEPLOY_PROBE_URL", Type: "URL", Default: "http://tlsprobe:8080", Read: "k6", Doc: "The TLS probe (`cmd/tlsprobe`) the deploy tier asks which certificate a target serves."},
	{Name: "DEPLOY_STUCK_AFTER", Type: "duration", Default: "75s", Read: "k6", Doc: "How long after its creation a Deployment job may stay Pending or Running before the deploy tier gives up on it: stolen when it went Running while its agent did not poll (certctl's job processor claimed it), stuck otherwise. The agent's next poll is at most 30 s away, a missed one 30 s more."},
	{Name: "DEPLOY_MASS_CERTS", Type: "integer", Default: "1000", Read: "k6", Doc: "Certificates `mass_rotation` renews at once, spread evenly over the four deploy targets; at most four times `DEPLOY_CERTS_PER_TARGET`."},
	{Name: "DEPLOY_MASS_DEADLINE", Type: "duration", Default: "5m", Read: "k6", Doc: "How long after the bulk renewal every deploy target must serve a new certificate for `mass_rotation` to pass (`deploy_mass_ok`): its budget. A shorter `DURATION` shortens it (the record says which applied)."},
	{Name: "DEPLOY_FLEET_AGENTS", Type: "integer", Default: "50", Read: "compose, k6", Doc: "Agents of `fleet_rotation`'s fleet, registered through the API and run as processes of one container (`fixtures/deploy/fleet-agents.sh`)."},
	{Name: "DEPLOY_FLEET_TARGETS", Type: "integer", Default: "4", Read: "compose, k6", Doc: "File targets per fleet agent, one certificate bound to each (`seed/deploy/fleet.sql`): 50 × 4 = 200 certificates by default."},
	{Name: "DEPLOY_FLEET_ROTATION_DAYS", Type: "number", Default: "47", Read: "k6", Doc: "Days between two rotations of one fleet certificate: the rotation rate `fleet_rotation` compresses (47: the CA/Browser Forum's 2029 maximum lifetime)."},
	{Name: "DEPLOY_FLEET_COMPRESSION", Type: "number", Default: "10000", Read: "k6", Doc: "How many times faster than real time `fleet_rotation` rotates the fleet: renewals a minute = certificates × compression ÷ (rotation days × 1440), rounded to a whole number (the record states the compression that rounding gives). 10000: 200 certificates, 30 renewals a minute, 5 minutes of load for 35 days of the fleet's life."},
	{Name: "ACME_FINALIZE_WORKAROUND", Type: "0/1", Default: "0", Read: "loadtest, k6", Doc: "`1` applies `fixtures/pki/acme-finalize-workaround.sql` before the load: the placeholder rows and the fingerprint trigger without which certctl's ACME finalize answers 500 (docs/certctl-findings.md#acme-finalize), so the rest of the order flow can be measured. The run's record says it was applied."},
	{Name: "OCSP_RESPONDER_WORKAROUND", Type: "0/1", Default: "0", Read: "loadtest, k6", Doc: "`1` applies `fixtures/pki/ocsp-responder-workaround.sql` before the load: a responder row pointing at a delegated OCSP responder `fixtures/tls-init.sh` issued under the issuing CA, without which certctl answers every OCSP request 500 (docs/certctl-findings.md#ocsp-500). The run's record says it was applied."},
	{Name: "PKI_ISSUANCE_PATH", Type: "agent/acme", Default: "agent", Read: "loadtest, k6", Doc: "The path `issuance_c1`, `issuance_c4` and `issuance_c16` issue through: `agent` (create + the agent's CSR signed) or `acme` (a whole signed ACME order, with `ACME_FINALIZE_WORKAROUND=1` on certctl builds whose finalize fails)."},
	{Name: "ACME_CHALLENGE_WRONG", Type: "share", Default: "0", Read: "loadtest, k6", Doc: "Share of the `acme_http01_*` orders whose responder serves a wrong key authorization, spread evenly through the run: certctl must refuse each (its authorization invalid), counted by outcome (`wrong_refused`, `wrong_accepted`, `wrong_undecided`); such an order is judged ok by `acme_order_ok` only when refused, and issued certificates count only the others."},
	{Name: "ACME_REVOKE_SHARE", Type: "share", Default: "0", Read: "loadtest, k6", Doc: "Share of the signed ACME orders (`acme_order_flow`, `acme_http01_*`) whose client then revokes the issued certificate through revokeCert, spread evenly through the run, as Boulder's load plan ends its orders: timed as the step `revoke`, counted by outcome (`revoked`, `revoke_refused`, `revoke_unanswered`, and `revoke_leading_zero_404` apart: certctl's known 404 for a serial starting with a zero digit); any other refusal fails `checks`. 0 by default, so that the issuance figures are issuance alone."},
	{Name: "ACME_SLOW_VUS", Type: "integer", Default: "15", Read: "loadtest, k6", Doc: "Clients of `acme_http01_saturated` whose orders name the slow responder: each holds one of certctl's http-01 validation slots (10 by default) for `CHALLENGE_SLOW_LATENCY`, so more than 10 keep the pool full with a queue; its two other clients order names answered at once."},
	{Name: "CHALLENGE_SLOW_LATENCY", Type: "duration", Default: "8s", Read: "loadtest, compose, k6", Doc: "How long the slow challenge responder (`challenge-slow`: the fault proxy in front of the responder) holds every answer. Under 10 s certctl's validator waits for it (its answer-header timeout) and the slow orders are issued; at 10 s or more every slow validation fails, each after holding a slot 10 s."},
	{Name: "AUTH_WORKAROUNDS", Type: "0/1", Default: "0", Read: "loadtest, k6", Doc: "`1` works around the three certctl defects that stand between an OIDC login and a usable session, so the auth tier can measure what lies behind them: `fixtures/auth/auth-workarounds.sql` stores a provider enabled and grants a user its group's role (docs/certctl-findings.md#oidc-provider-disabled, #oidc-roles-unused), and k6 sends the harness's API key on the login and the callback, which certctl's API-only server puts behind its API authentication (#auth-routes-behind-auth). `0`: the tier counts the failures. The run's record says which."},
	{Name: "AUTH_USERS", Type: "integer", Default: "20", Read: "k6", Doc: "Users the auth tier creates in the Keycloak realm (`lt-user-0` …) and logs in as, each in the group certctl maps to `r-operator`. A back-channel logout ends every session of its user, so each logout VU needs a user of its own."},
	{Name: "AUTH_BCL_SID", Type: "boolean", Default: "false", Read: "loadtest, k6, compose", Doc: "Whether Keycloak's back-channel logout token names the session (`sid`) besides the user (`sub`). Keycloak's own default is `true`; certctl then revokes nothing, because it does not store the provider's session id (docs/certctl-findings.md#bcl-sid-revokes-nothing), so the tier's default is `false`."},
	{Name: "AUTH_BCL_URL", Type: "URL", Default: "https://certctl-server:8443/auth/oidc/back-channel-logout", Note: "`AUTH_WORKAROUNDS=1`: the relay's, `https://auth-relay:8443/auth/oidc/back-channel-logout`", Read: "loadtest, compose", Doc: "Where Keycloak posts its back-channel logout tokens: certctl itself, or with the workarounds the relay that adds the harness's API key to `/auth/*` (docs/certctl-findings.md#auth-routes-behind-auth)."},
	{Name: "AUTH_CLIENT_SECRET", Type: "string", Note: "generated per run", Read: "loadtest, k6, compose", Doc: "The secret of certctl's client in the Keycloak realm; k6 gives it to certctl with the provider. Redacted."},
	{Name: "AUTH_ADMIN_SECRET", Type: "string", Note: "generated per run", Read: "loadtest, k6, compose", Doc: "The secret of the realm's `loadtest-admin` service account, through which k6 creates users, rotates signing keys and ends sessions. Redacted."},
	{Name: "CERTCTL_BLOCK_RFC1918_OUTBOUND", Type: "boolean", Default: "true", Read: "loadtest, compose", Doc: "certctl's guard that refuses its own outbound calls to private addresses. The auth tier sets `false`: main's OIDC client dials through it, and the provider has a private address on `loadnet`; the stack still has no route out (netguard)."},
	{Name: "DEPLOY_TARGET_VERIFY", Type: "0/1", Default: "1", Read: "compose", Doc: "`1`: the nginx, Apache and HAProxy targets are registered with certctl's post-deployment TLS check on their own host, so a deployment is Completed only once the new certificate is served (`fixtures/deploy/register.sh`); `0` registers them without it, as certctl's defaults leave them (docs/certctl-findings.md#deploy-verify-skipped)."},
	{Name: "DEPLOY_RELOAD_BROKEN", Type: "0/1", Default: "0", Read: "compose", Doc: "`1` makes every deploy target's reload command fail (`fixtures/deploy/reload`): the breach test's broken target."},
	{Name: "DEPLOY_RELOAD_DELAY", Type: "seconds", Default: "0", Read: "compose", Doc: "Seconds every deploy target's reload command waits before reloading (`fixtures/deploy/reload`): a slow target, which the breach test uses to break the loop's latency budget."},
	{Name: "DEPLOY_RELOAD_HARD", Type: "0/1", Default: "0", Read: "compose", Doc: "`1` makes every deploy target's reload stop the server and start it 4 s later (`fixtures/deploy/reload`): clients are refused meanwhile, which `rotation_under_traffic` must count."},
	{Name: "DEPLOY_RELOAD_LAG", Type: "seconds", Default: "0", Read: "compose", Doc: "Seconds after the reload command returns that the reload takes effect (`fixtures/deploy/reload`): certctl marks the deployment Completed while the old certificate is still served, which `rotation_under_traffic` must count."},
	{Name: "CERTCTL_AGENT_LOG_LEVEL", Type: "string", Default: "info", Read: "compose", Doc: "The deploy tier's agents' log level."},
	{Name: "CERTCTL_LOG_LEVEL", Type: "string", Default: "warn", Read: "compose", Doc: "certctl's log level."},
	{Name: "CERTCTL_TOKEN", Type: "string", Note: "generated per run", Read: "loadtest, compose, k6", Doc: "certctl's admin API key; also the agent bootstrap token. Redacted in `run.json`."},
	{Name: "CLIENT_TOKEN", Type: "string", Note: "`CERTCTL_TOKEN`", Read: "loadtest, compose", Doc: "The key k6 sends, when it must differ from the server's (tests of a wrong token)."},
	{Name: "CERTCTL_CONFIG_ENCRYPTION_KEY", Type: "string ≥ 32 bytes", Note: "generated per run", Read: "loadtest, compose", Doc: "certctl's key for database-stored issuer configuration. Redacted."},
	{Name: "CERTCTL_URL", Type: "URL", Default: "https://certctl-server:8443", Read: "compose, k6", Doc: "certctl as k6 reaches it inside the stack."},
	{Name: "LT_TEAM_ID", Type: "id", Default: "lt-team", Read: "compose, seed, k6", Doc: "Team every seeded and created row belongs to (`seed/00_base.sql`)."},
	{Name: "LT_OWNER_ID", Type: "id", Default: "lt-owner", Read: "compose, seed, k6", Doc: "Owner of the seeded and created certificates."},
	{Name: "LT_POLICY_ID", Type: "id", Default: "lt-policy", Read: "compose, seed, k6", Doc: "Renewal policy (30-day window) of the seeded and created certificates."},
	{Name: "LT_ISSUER_ID", Type: "id", Default: "lt-issuer-local", Read: "compose, seed, k6", Doc: "Local CA issuer every scenario issues from."},
	{Name: "LT_PROFILE_ID", Type: "id", Default: "lt-profile", Read: "compose, seed, k6", Doc: "Certificate profile; also certctl's default ACME profile."},
	{Name: "TLS_NAMES", Type: "names", Default: "certctl-server certctl-faults keycloak auth-relay localhost", Read: "compose", Doc: "Names on certctl's server certificate (the fault proxy, Keycloak and the auth tier's relay serve the same one). Without `localhost` the healthcheck cannot verify it: the tests use that for a server that never turns healthy."},
	{Name: "STARTER_NAMES", Type: "names", Default: "nginx apache haproxy f5 deploy-nginx deploy-apache deploy-haproxy localhost", Read: "compose", Doc: "Names on the starter certificate the connector and deploy targets serve before any deployment."},
	{Name: "SPOTCHECK_REVOKE_WAYS", Type: "list", Default: "ids,owner", Read: "k6", Doc: "Which ways `k6/spotcheck/bulk_revoke.js` picks certificates: `ids` (certificate_ids), `owner` (the owner filter), or both, comma-separated; each way revokes 100 and 1000."},
	{Name: "SPOTCHECK_CSR_DIR", Type: "directory", Default: "/tls/ari", Read: "k6", Doc: "Where `k6/spotcheck/bulk_revoke.js` reads its CSRs (`1.csr`, `2.csr`, …, reused in turn), when run outside the stack."},
	{Name: "ARI_CSRS", Type: "integer", Default: "8", Read: "compose", Doc: "CSRs `tls-init` writes for the certificates renewal-info asks about."},
	{Name: "START_TIMEOUT", Type: "duration", Default: "120s", Read: "loadtest", Doc: "How long the stack may take to become healthy. When unset, `fleet_rotation` adds 0.4 s per agent and target it registers."},
	{Name: "PROGRESS_INTERVAL", Type: "duration", Default: "20s", Read: "loadtest", Doc: "How often each running scenario prints a progress line (elapsed, rate achieved, dropped iterations, errors, p95 so far, from k6's REST API, read over the stack's network: one HTTP request, no process; `docker exec … k6 stats` where the host cannot reach the containers); 0 for none."},
	{Name: "DIAGNOSIS", Type: "true/false, or list", Default: "true", Read: "loadtest", Common: true, Doc: "Record the server side beside the load and say where the time went: the collector (`cmd/collector`) samples PostgreSQL (`pg_stat_activity` every second, every 250 ms while backends wait on locks, `pg_stat_database`, `pg_stat_statements` with PG_STAT_STATEMENTS) and certctl's Prometheus endpoint, the harness every container's CPU and memory from its cgroup, all into `server/`; the summary's diagnosis section and index.html's charts come from them. `collector` or `containers` runs that sampler alone (what `loadtest overhead` turns off in turn). See docs/diagnosis.md."},
	{Name: "COLLECT_ACTIVITY_INTERVAL", Type: "duration ≥ 50ms", Default: "1s", Read: "compose, collector", Doc: "How often the collector samples `pg_stat_activity` (DIAGNOSIS): the resolution of the wait-event shares, while no backend waits on a lock."},
	{Name: "COLLECT_ACTIVITY_FINE_INTERVAL", Type: "duration ≥ 50ms", Default: "250ms", Read: "compose, collector", Doc: "How often the collector samples `pg_stat_activity` for 30 s after a sample in which a backend waits on a lock: the lock diagnosis's resolution, paid for only while there are lock waits. Each sample counts for the time it stands for."},
	{Name: "COLLECT_DATABASE_INTERVAL", Type: "duration ≥ 50ms", Default: "5s", Read: "compose, collector", Doc: "How often the collector reads `pg_stat_database`, `pg_stat_wal` and the waiting locks (DIAGNOSIS)."},
	{Name: "COLLECT_METRICS_INTERVAL", Type: "duration ≥ 50ms", Default: "30s", Read: "compose, collector", Doc: "How often the collector scrapes certctl's Prometheus endpoint during the load, besides once before and once after (DIAGNOSIS): the diagnosis reads the scrapes around its window, and certctl computes its metrics from the database on every scrape (docs/diagnosis.md#the-cost-of-looking)."},
	{Name: "COLLECT_TABLES_INTERVAL", Type: "duration ≥ 50ms", Default: "1m", Read: "compose, collector", Doc: "How often the collector reads every table's heap and index size, live and dead rows and vacuum counts (`server/pg_tables.jsonl`), besides once before and once after the load: a soak's bloat and autovacuum, any run's growth."},
	{Name: "KNOWN_DEFECTS", Type: "pass \\| fail", Default: "pass", Read: "loadtest", Doc: "How a breach that a registered defect of certctl explains counts (`internal/defects/registry.yaml`, docs/certctl-findings.md): `pass` lists it as known and fails the run only on new breaches, so a run that meets only known defects exits 0; `fail` fails on every breach, as before the registry. The summary shows new, known and not-appearing defects either way."},
	{Name: "DEFECTS_REGISTRY", Type: "file", Note: "the built-in registry", Read: "loadtest", Doc: "A registry of known defects in `internal/defects/registry.yaml`'s form to judge the run with instead of the built-in one (a team's own, or one with an entry taken out); checked before the run and kept in the run directory as `defects.yaml`."},
	{Name: "MACHINE_CHECK", Type: "true/false", Default: "true", Read: "loadtest", Doc: "Judge the machine beside certctl (DIAGNOSIS): the harness reads the host's own CPU (`/proc/stat`, steal, `/proc/pressure/cpu`) beside the containers', and when work outside the run took 20 % of the machine or more on average (or k6 itself 40 %, or steal 10 %), or the run's own containers saturated its CPUs from some time to the end, or commits queued on a disk the calibration found slow, a run whose only breaches are timing budgets exits 6, inconclusive, with one sentence saying what took the machine (and when, at what load), and the diagnosis blames nothing on certctl. `false` judges every breach as certctl's, and `loadtest gate` judges its two sides even when their calibrations differ (stacks side by side on purpose, as in the test suites). See docs/diagnosis.md."},
	{Name: "PG_STAT_STATEMENTS", Type: "true/false", Default: "true", Read: "loadtest", Doc: "Load `pg_stat_statements` in the stack's PostgreSQL, for the diagnosis's statements by total time, calls and mean (reset as the load starts). `false` leaves the hook out of the measured path; the statements' shares then come from the `pg_stat_activity` samples alone (docs/diagnosis.md#the-cost-of-looking)."},
	{Name: "OBSERVABILITY", Type: "true/false", Default: "false", Read: "loadtest", Common: true, Doc: "Watch the run live: adds `compose.observability.yml` (Prometheus and Grafana with k6's dashboard, on 127.0.0.1:9090 and :3000) and, unless K6_OUT is set, has every k6 write to that Prometheus (`experimental-prometheus-rw`, trend stats `p(95),p(99),min,max`). They stop with the stack. See docs/observability.md."},
	{Name: "PROMETHEUS_PORT", Type: "port", Default: "9090", Read: "loadtest, compose", Doc: "OBSERVABILITY: the host port, on 127.0.0.1, of the live view's Prometheus."},
	{Name: "GRAFANA_PORT", Type: "port", Default: "3000", Read: "loadtest, compose", Doc: "OBSERVABILITY: the host port, on 127.0.0.1, of the live view's Grafana."},
	{Name: "K6_BIN", Type: "file", Note: "unset: `go tool k6`", Read: "loadtest", Doc: "A k6 binary for what the harness runs of k6 on the host (`k6 inspect` for the plan of `check` and `run`, `capacity`): it must be the k6 go.mod pins, which the harness checks (`k6 version`) before using it. Unset, `go tool k6` compiles that k6 on first use (minutes with a cold Go cache). The workflows' jobs install it with grafana/setup-k6-action instead, and make's test targets build it as bin/k6 (the tests' plans and runs call k6 inspect hundreds of times, and go tool k6's staleness check costs about 0.8 s a call)."},
	{Name: "K6_OUT", Type: "outputs", Note: "none: the harness's own only", Read: "loadtest, k6", Common: true, Doc: "Extra k6 outputs for every scenario's k6, in k6's syntax (`experimental-prometheus-rw`, `opentelemetry`, `csv=/results/k6.csv`), comma-separated. Their settings (`K6_PROMETHEUS_RW_*`, `K6_OTEL_*`, `K6_INFLUXDB_*`, `K6_STATSD_*`, `K6_DATADOG_*`, `K6_CSV_*`, `K6_KAFKA_*`, `K6_TIMESCALEDB_*`) reach every k6 as set; a file output's path is inside the k6 container, under `/results` (the run directory), with `{scenario}` standing for the scenario's name (`csv=/results/{scenario}.csv.gz`: one file each). k6 runs on the stack's internal network: a collector must be in the stack (see OBSERVABILITY). run.json records the outputs' names only."},
	{Name: "SCENARIO", Type: "scenario", Note: "none: required", Read: "loadtest", Doc: "`make capacity`: the one arrival-rate scenario whose knee to search for (a file name under `k6/<tier>/`, e.g. `list_certificates`). See docs/capacity.md."},
	{Name: "FLEET", Type: "file", Default: "fleets/example.yaml", Read: "loadtest", Doc: "`make fleet`: the fleet's shape (rotation, ACME's share, agents, OCSP and renewal-info checks, dashboard users, the day's peak), every field stated; `loadtest fleet` searches its size."},
	{Name: "FLEET_GROWTH", Type: "file", Note: "unset: the bracket 1,000–100,000", Read: "loadtest", Doc: "`make fleet`: a growth record (`growth.json`, e.g. `docs/growth/v2.1.7.json`) whose curves bracket the search: a quarter to four times the size at which the first operation's p95 reaches its budget."},
	{Name: "FLEET_BRACKET", Type: "comma list", Note: "unset: FLEET_GROWTH's, else 1,000–100,000", Read: "loadtest", Doc: "`make fleet`: the bracket to start from, two sizes in certificates (`20000,50000`), when you know where the answer lies; the search widens it if it is wrong."},
	{Name: "FLEET_MAX", Type: "integer", Default: "10000000", Read: "loadtest", Doc: "`make fleet`: the largest size the search tries; a fleet that holds there is answered \"carries at least\" it, which bounds an evening's runs (and the seed's size)."},
	{Name: "FLEET_STEP", Type: "duration", Default: "2m", Read: "loadtest", Doc: "`make fleet`: how long each size's run of the fleet's load lasts."},
	{Name: "FLEET_RESUME", Type: "1", Note: "unset: a new search", Read: "loadtest", Doc: "`make fleet`: `1` goes on with the search `RUN_ID` names (`results/<RUN_ID>/fleet.json`): its runs are taken from the record as long as the search asks for the same sizes, and only the rest run. Refused for another fleet, step, build or testbed than the record's. For a search cut short, or one whose rules changed after it ran."},
	{Name: "GROWTH_SIZES", Type: "comma list", Default: "1000,10000,100000", Read: "loadtest", Doc: "`make growth`: the inventory sizes, in certificates, each run on a fresh stack seeded with that many certificates' year of history (`SEED_INVENTORY`); three at least for a fitted growth. Add `1000000` for a large fleet (its seed takes minutes)."},
	{Name: "SOAK_WINDOW", Type: "duration ≥ 10s", Default: "5m", Read: "loadtest", Doc: "`make soak`: the windows a soak is read in: each scenario's p95 and each service's memory per window; the first is the warm-up, and the run must hold four."},
	{Name: "SOAK_P95_DRIFT", Type: "ratio > 1", Default: "1.5", Read: "loadtest", Doc: "`make soak`: the most a scenario's p95 may grow from the second window to the last (a least-squares line through the windows' p95, its slope's 95 % interval above zero), 1.5 being +50 %; beyond it the soak breaches."},
	{Name: "SOAK_MEMORY_GROWTH", Type: "percent an hour", Default: "10", Read: "loadtest", Doc: "`make soak`: the most certctl's memory may grow over the run's second half (from its fifth minute at the earliest: a cold certctl's memory climbs before), in percent of its mean there per hour (a line through the minute means, its slope's 95 % interval above zero); beyond it the soak breaches. PostgreSQL's is reported, not judged: its shared buffers fill up to their bound."},
	{Name: "CAPACITY_START", Type: "integer", Note: "the scenario's rate", Read: "loadtest", Doc: "`make capacity`: the first rate tried, per the scenario's time unit."},
	{Name: "CAPACITY_FACTOR", Type: "number > 1", Default: "2", Read: "loadtest", Doc: "`make capacity`: each ramp step's rate is the last one's times this, until a breach is confirmed."},
	{Name: "CAPACITY_MAX", Type: "integer", Note: "32 × the start", Read: "loadtest", Doc: "`make capacity`: the highest rate tried; a search that holds there says the knee is higher."},
	{Name: "CAPACITY_PRECISION", Type: "fraction", Default: "0.1", Read: "loadtest", Doc: "`make capacity`: bisection stops when the lowest breach is within this share of the highest rate that held (or 1 apart)."},
	{Name: "CAPACITY_STEP", Type: "duration", Default: "1m", Read: "loadtest", Doc: "`make capacity`: each step's `DURATION`: one ordinary run on a fresh stack at one rate."},
	{Name: "OVERHEAD", Type: "list", Default: "collector,containers,statements,progress,all", Read: "loadtest", Doc: "`make overhead`: the instruments to switch off in turn, each against every instrument on: `collector` (DIAGNOSIS=containers), `containers` (DIAGNOSIS=collector), `statements` (PG_STAT_STATEMENTS=false), `progress` (PROGRESS_INTERVAL=0), and `all` of them at once, which the budget is judged on. See docs/diagnosis.md#the-cost-of-looking."},
	{Name: "OVERHEAD_RUNS", Type: "integer", Default: "4", Read: "loadtest", Doc: "`make overhead`: rounds, so runs a side (2 to 20); each round runs every instrument on and each configuration of OVERHEAD once, in alternating order."},
	{Name: "RESULTS_DIR", Type: "directory", Default: "results", Read: "loadtest, k6", Doc: "Where run directories go (relative to the repository); `latest` points at the newest."},
	{Name: "RUN_ID", Type: "[a-z0-9-]{1,40}", Default: "manual", Note: "`loadtest run`: UTC time + random", Read: "loadtest, compose, k6", Doc: "Name of the run directory and of the compose project (`certctl-lt-<run id>`)."},
	{Name: "COMPOSE_PROJECT_NAME", Type: "string", Note: "certctl-lt-<run id>", Read: "loadtest", Doc: "The compose project of the run."},
	{Name: "FAULT_LATENCY", Type: "duration", Default: "0s", Note: "unset: no fault proxy", Read: "loadtest, fault-proxy", Common: true, Doc: "Put the fault proxy (`cmd/fault-proxy`) between k6 and certctl and delay the matching requests by this much."},
	{Name: "FAULT_ERROR_RATE", Type: "0–1", Default: "0", Note: "unset: no fault proxy", Read: "loadtest, fault-proxy", Common: true, Doc: "Share of matching requests the fault proxy answers 500 itself, in certctl's error shape."},
	{Name: "FAULT_BODY_RATE", Type: "0–1", Default: "0", Note: "unset: no fault proxy", Read: "loadtest, fault-proxy", Doc: "Share of matching requests whose successful answer the fault proxy passes on with an empty JSON body (`{}`), status and headers kept: only a check of the body notices."},
	{Name: "FAULT_ROUTE", Type: "routes", Note: "all but /health, /ready", Read: "loadtest, fault-proxy", Common: true, Doc: "Which requests the faults hit: `METHOD /path-prefix`, a trailing `$` for an exact path, comma-separated (`GET /api/v1/certificates$,POST`)."},
}

// KnobDefault is the literal default of a knob. It panics for a name the registry does not hold or
// that has no literal default: that is a mistake in the code, and every test that loads a config
// finds it.
func KnobDefault(name string) string {
	for _, k := range Knobs {
		if k.Name == name {
			if k.Default == "" {
				panic(fmt.Sprintf("harness: knob %s has no literal default (%s)", name, k.Note))
			}
			return k.Default
		}
	}
	panic("harness: no knob " + name + " in Knobs")
}

// LookupKnob finds the knob a variable belongs to: RATE_LIST_CERTIFICATES is RATE_<SCENARIO>.
func LookupKnob(variable string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Name == variable || (strings.Contains(k.Name, "<") && k.pattern().MatchString(variable)) {
			return k, true
		}
	}
	return Knob{}, false
}

var placeholder = regexp.MustCompile(`<[A-Z]+>`)

// pattern matches the variables of a family: RATE_<SCENARIO> matches RATE_ and one or more of A-Z0-9_.
func (k Knob) pattern() *regexp.Regexp {
	parts := placeholder.Split(k.Name, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, "[A-Z0-9_]+") + "$")
}

var (
	durationRE = regexp.MustCompile(`^(\d+(\.\d+)?(ms|s|m|h))+$`)
	runIDRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)
)

// ParseDuration accepts what k6 accepts for a scenario duration and nothing else.
func ParseDuration(name, s string) (time.Duration, error) {
	bad := fmt.Errorf("%s=%q is not a duration: use a number with ms, s, m or h, e.g. 30s or 5m", name, s)
	if !durationRE.MatchString(s) {
		return 0, bad
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, bad
	}
	return d, nil
}

// CleanEnv drops every harness knob from an environment: k6 run on its own (k6 inspect, k6 archive, the
// docs' tables) then resolves a script with the defaults, whatever the caller has set.
func CleanEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := LookupKnob(k); ok {
			continue
		}
		out = append(out, kv)
	}
	return out
}
