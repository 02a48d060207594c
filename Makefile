# certctl-loadtest. `make` lists the targets. Configuration is read from the environment or make
# variables (make loadtest DURATION=60s); every knob is in docs/configuration.md.
SHELL := bash
.SHELLFLAGS := -e -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

# Make's own exit status is 2 whenever a recipe fails; the recipes print the code `loadtest` returned
# and results/latest/summary.json records it (what each code means: README.md, "Exit codes", rendered
# from harness.ExitCodes). Scripts that need the code itself call bin/loadtest directly.
LOADTEST := bin/loadtest
# The k6 go.mod pins, built once for the tests' plans (K6_BIN): `go tool k6` costs about 0.8 s a call in
# Go's staleness check alone, and the gate's plans and runs call k6 inspect hundreds of times.
K6 := bin/k6
# Each step of CI runs through STEP, which times it and, under .ci/run (CI_COSTS), records what it cost
# in .ci/costs.tsv: the figures TestCIPlan (test/ciplan) holds CI's budget with.
STEP = scripts/ci-step.sh $@
# Every file under cmd/ and internal/ but test data: the embedded ones (rules.yaml, templates) rebuild
# the binary too, and so do the findings' records (docs/findings, embedded there).
GO_SOURCES := $(shell find cmd internal -type f -not -path '*/testdata/*' 2>/dev/null) $(wildcard docs/findings/*.md docs/findings/*.go docs/findings/*.yaml) go.mod go.sum

.PHONY: help quickstart seed-external clean-external k8s judge capacity overhead findings compare compare-builds gate baseline loadtest loadtest-acme loadtest-deploy loadtest-pki loadtest-auth growth fleet soak coldstart loadtest-limiter certctl-images spotcheck loadtest-scale loadtest-scale-bulk loadtest-scale-acme loadtest-scale-agent check report docs images test test-full test-unit test-browser test-k6 test-e2e test-e2e-full test-workflow test-workflow-full clean deps

# The common knobs `make help` prints: rendered from internal/harness/knobs.go by `make docs` (a test
# fails when this block is stale), so help needs no build.
# <!-- generated:make-knobs do not edit: make docs -->
#:   TIER=default                       Tiers to run: folders of k6/ (api, connector, acme, scale, limiter, deploy, pki, growth, auth); default is api,connector, all every tier but scale, limiter (which runs alone, with certctl's rate limiter on), deploy (real agents, loops of a minute: docs/deploy.md), pki (certctl signing as fast as it can: docs/pki.md), growth (the growth mix's own operations, for an inventory: docs/growth.md) and auth (logins through a real Keycloak, each scenario on a stack of its own: docs/auth.md).
#:   SCENARIOS (all of the tiers')      Only these scenarios of the selected tiers (file names under k6/<tier>/), e.g. SCENARIOS=list_certificates.
#:   DURATION=5m                        Length of every scenario, in k6's syntax (30s, 1m30s).
#:   RATE_<SCENARIO> (the scenario's)   Iterations per time unit of an arrival-rate scenario (per second; per minute for the connector tier), e.g. RATE_LIST_CERTIFICATES=20.
#:   SEED_BULK_CERTS=10000              Certificates seed/01_bulk_renewal_certs.sql writes (scale tier). Unset, when bulk_renewal runs: enough for one pass without revisiting a certificate ((its rate × DURATION + 1) × BATCH_SIZE: 75050 at the defaults), at least this default. 1000000 for a large-fleet rehearsal.
#:   SEED_AGENTS=5000                   Agents seed/02_agent_fleet.sql writes (scale tier).
#:   IMAGES=upstream                    offline switches every image to the stand-ins make images builds (images/offline.env).
#:   CERTCTL_IMAGE=ghcr.io/certctl-io/certctl-server:v2.1.7 The certctl server image.
#:   CERTCTL_DIST (unset)               A certctl build (server, agent, migrations/, LICENSE): loadtest run packages it into certctl-loadtest/certctl-server:<folder>-local (images/certctl/build.sh) and runs that instead of CERTCTL_IMAGE.
#:   CERTCTL_RATE_LIMIT_ENABLED=false   certctl's per-IP limiter (50 rps, burst 100, before auth): on, it throttles the load generator itself. The limiter tier turns it on and refuses false.
#:   DIAGNOSIS=true                     Record the server side beside the load and say where the time went: the collector (cmd/collector) samples PostgreSQL (pg_stat_activity every second, every 250 ms while backends wait on locks, pg_stat_database, pg_stat_statements with PG_STAT_STATEMENTS) and certctl's Prometheus endpoint, the harness every container's CPU and memory from its cgroup, all into server/; the summary's diagnosis section and index.html's charts come from them. collector or containers runs that sampler alone (what loadtest overhead turns off in turn). See docs/diagnosis.md.
#:   OBSERVABILITY=false                Watch the run live: adds compose.observability.yml (Prometheus and Grafana with k6's dashboard, on 127.0.0.1:9090 and :3000) and, unless K6_OUT is set, has every k6 write to that Prometheus (experimental-prometheus-rw, trend stats p(95),p(99),min,max). They stop with the stack. See docs/observability.md.
#:   K6_OUT (none: the harness's own only) Extra k6 outputs for every scenario's k6, in k6's syntax (experimental-prometheus-rw, opentelemetry, csv=/results/k6.csv), comma-separated. Their settings (K6_PROMETHEUS_RW_*, K6_OTEL_*, K6_INFLUXDB_*, K6_STATSD_*, K6_DATADOG_*, K6_CSV_*, K6_KAFKA_*, K6_TIMESCALEDB_*) reach every k6 as set; a file output's path is inside the k6 container, under /results (the run directory), with {scenario} standing for the scenario's name (csv=/results/{scenario}.csv.gz: one file each). k6 runs on the stack's internal network: a collector must be in the stack (see OBSERVABILITY). run.json records the outputs' names only.
#:   FAULT_LATENCY=0s (unset: no fault proxy) Put the fault proxy (cmd/fault-proxy) between k6 and certctl and delay the matching requests by this much.
#:   FAULT_ERROR_RATE=0 (unset: no fault proxy) Share of matching requests the fault proxy answers 500 itself, in certctl's error shape.
#:   FAULT_ROUTE (all but /health, /ready) Which requests the faults hit: METHOD /path-prefix, a trailing $ for an exact path, comma-separated (GET /api/v1/certificates$,POST).
# <!-- end:make-knobs -->
help: ## List the targets and the common knobs
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-22s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@printf '\nCommon knobs (make loadtest VAR=value; every one: docs/configuration.md):\n'
	@sed -n 's/^#: //p' $(firstword $(MAKEFILE_LIST))

quickstart: $(LOADTEST) ## A first run of about two minutes: list_certificates for 1 min against certctl, then its verdict and results/latest (add IMAGES=offline CERTCTL_DIST=… as for loadtest)
	@LOADTEST_GOAL=$@ TIER=api SCENARIOS=list_certificates DURATION=1m $(LOADTEST) run || { code=$$?; echo "make: quickstart exited $$code (the loadtest line above says why, and which run)" >&2; exit $$code; }

loadtest: $(LOADTEST) ## API + connector tiers against certctl (CERTCTL_IMAGE, or the build in CERTCTL_DIST); results in results/latest
	@LOADTEST_GOAL=$@ $(LOADTEST) run || { code=$$?; echo "make: loadtest exited $$code (the loadtest line above says why, and which run)" >&2; exit $$code; }

# The targets that run a tier whole: rendered from internal/harness/tiers.go (Tiers) by `make docs`.
# <!-- generated:make-tiers do not edit: make docs -->
loadtest-acme: $(LOADTEST) ## The ACME tier (directory, nonce, renewal-info) against certctl; TIER=all runs every tier but scale, limiter, deploy, pki, growth and auth
	@LOADTEST_GOAL=$@ TIER=acme $(LOADTEST) run || { code=$$?; echo "make: $@ exited $$code" >&2; exit $$code; }

loadtest-scale: $(LOADTEST) ## Every scale scenario (SCENARIOS=a,b: those) in turn, one fresh stack and one results directory each (<RUN_ID>-<scenario>); fails if any failed
	@LOADTEST_GOAL=$@ TIER=scale $(LOADTEST) run || { code=$$?; echo "make: $@ exited $$code (the loadtest lines above say which scenario, and where its results are)" >&2; exit $$code; }

loadtest-limiter: $(LOADTEST) ## The limiter tier alone, certctl's rate limiter on: are excess ACME requests answered in RFC 8555's shape?
	@LOADTEST_GOAL=$@ TIER=limiter $(LOADTEST) run || { code=$$?; echo "make: $@ exited $$code" >&2; exit $$code; }

loadtest-deploy: $(LOADTEST) ## Deploy tier: real certctl agents renew and deploy to nginx, Apache, HAProxy and the F5 stand-in; each scenario on a stack of its own (docs/deploy.md)
	@LOADTEST_GOAL=$@ TIER=deploy $(LOADTEST) run || { code=$$?; echo "make: $@ exited $$code (the loadtest lines above say which scenario, and where its results are)" >&2; exit $$code; }

loadtest-pki: $(LOADTEST) ## PKI tier: signed ACME orders, orders whose http-01 challenge certctl validates at 1, 5 and 25 clients, issuance throughput at 1, 4 and 16 clients, OCSP and CRL; each scenario on a stack of its own (docs/pki.md); ACME_FINALIZE_WORKAROUND=1 works around certctl's finalize 500
	@LOADTEST_GOAL=$@ TIER=pki $(LOADTEST) run || { code=$$?; echo "make: $@ exited $$code (the loadtest lines above say which scenario, and where its results are)" >&2; exit $$code; }

loadtest-auth: $(LOADTEST) ## Auth tier: OIDC logins through a real Keycloak, API calls by session beside the API key, cold provider keys, logout and back-channel logout; each scenario on a stack of its own (docs/auth.md); AUTH_WORKAROUNDS=1 works around the certctl defects between a login and a session
	@LOADTEST_GOAL=$@ TIER=auth $(LOADTEST) run || { code=$$?; echo "make: $@ exited $$code (the loadtest lines above say which scenario, and where its results are)" >&2; exit $$code; }

# <!-- end:make-tiers -->

certctl-images: ## Package the certctl build in CERTCTL_DIST (server, agent, migrations/) into local images
	@images/certctl/build.sh

spotcheck: $(LOADTEST) ## Operator spot checks (k6/spotcheck), one after another, against certctl; see docs/performance-baselines.md
	@LOADTEST_GOAL=$@ $(LOADTEST) spotcheck || { code=$$?; echo "make: spotcheck exited $$code (the loadtest line above says why, and which run)" >&2; exit $$code; }

# The scale scenarios are the files of k6/scale/: the weekly workflow's matrix reads this list too.
.PHONY: loadtest-scale-scenarios
loadtest-scale-scenarios: ## The scale tier's scenarios (k6/scale/*.js), one per line
	@printf '%s\n' $(sort $(basename $(notdir $(wildcard k6/scale/*.js))))

loadtest-scale-bulk: $(LOADTEST) ## Scale: bulk renewal over the seeded certificates (SEED_BULK_CERTS; unset: one pass's worth, docs/scale.md#seeds)
	@LOADTEST_GOAL=$@ TIER=scale SCENARIOS=bulk_renewal $(LOADTEST) run || { code=$$?; echo "make: $@ exited $$code" >&2; exit $$code; }

loadtest-scale-acme: $(LOADTEST) ## Scale: ACME burst, 200 VUs on directory, new-nonce and renewal-info
	@LOADTEST_GOAL=$@ TIER=scale SCENARIOS=acme_burst $(LOADTEST) run || { code=$$?; echo "make: $@ exited $$code" >&2; exit $$code; }

loadtest-scale-agent: $(LOADTEST) ## Scale: heartbeat storm across the seeded agents (SEED_AGENTS, default 5000)
	@LOADTEST_GOAL=$@ TIER=scale SCENARIOS=agent_storm $(LOADTEST) run || { code=$$?; echo "make: $@ exited $$code" >&2; exit $$code; }

growth: $(LOADTEST) ## Growth: the same mix at each inventory size of GROWTH_SIZES (1k, 10k, 100k certificates' year of history), each on a fresh stack, then each operation's growth fitted (docs/growth.md)
	@LOADTEST_GOAL=$@ $(LOADTEST) growth || { code=$$?; echo "make: $@ exited $$code" >&2; exit $$code; }

fleet: $(LOADTEST) ## Fleet answer: the largest fleet of FLEET's shape (fleets/example.yaml) this certctl carries at 47-day rotation, searched by runs of its load on seeded inventories (FLEET_GROWTH brackets it; docs/fleet.md)
	@LOADTEST_GOAL=$@ $(LOADTEST) fleet || { code=$$?; echo "make: $@ exited $$code" >&2; exit $$code; }

soak: $(LOADTEST) ## Soak: growth's mix for DURATION (30m unless set), judged for p95 drift and certctl's memory growth per SOAK_WINDOW, with table sizes and autovacuum (docs/growth.md)
	@LOADTEST_GOAL=$@ $(LOADTEST) soak || { code=$$?; echo "make: $@ exited $$code" >&2; exit $$code; }

coldstart: $(LOADTEST) ## Cold start: certctl restarted at each inventory size of GROWTH_SIZES, idle and under load: seconds to healthy, the first hundred requests against warm ones (docs/growth.md)
	@LOADTEST_GOAL=$@ $(LOADTEST) coldstart || { code=$$?; echo "make: $@ exited $$code" >&2; exit $$code; }

seed-external: $(LOADTEST) ## TARGET=external: create the base rows on that certctl through its API (CERTCTL_URL, CERTCTL_API_KEY, CONFIRM=yes)
	@TARGET=external $(LOADTEST) seed-external

clean-external: $(LOADTEST) ## TARGET=external: archive and delete what the harness left on that certctl, rows named lt-… only (CONFIRM=yes)
	@TARGET=external $(LOADTEST) clean-external

k8s: $(LOADTEST) ## k6-operator TestRuns (SEGMENTS runners each) for the selected scenarios against CERTCTL_URL, into OUT (default k8s/<RUN_ID>)
	@$(LOADTEST) k8s --out $(or $(OUT),k8s/$(or $(RUN_ID),manual)) $(if $(NAMESPACE),--namespace $(NAMESPACE))

judge: $(LOADTEST) ## Judge a run from the records its k6 processes wrote, here or elsewhere (k6-operator runners): make judge RUN=<dir>
	@$(LOADTEST) judge $(RUN)

capacity: $(LOADTEST) ## Search SCENARIO's knee: highest arrival rate within its budget (ramp, confirm, bisect); results in results/<RUN_ID>/capacity.*
	@LOADTEST_GOAL=$@ $(LOADTEST) capacity || { code=$$?; echo "make: capacity exited $$code" >&2; exit $$code; }

overhead: $(LOADTEST) ## What the run's own instruments cost certctl: every instrument on vs each in OVERHEAD off, OVERHEAD_RUNS rounds alternating; results in results/<RUN_ID>/overhead.*
	@LOADTEST_GOAL=$@ $(LOADTEST) overhead || { code=$$?; echo "make: overhead exited $$code" >&2; exit $$code; }

findings: $(LOADTEST) ## Run every reproduction of certctl's findings (docs/findings/repro) against the stack's certctl (CERTCTL_DIST) or TARGET=external's; ISSUE=<id> prints one as an issue body instead, MEASURE=<id> runs docs/findings/cost/<id>.sh
	@LOADTEST_GOAL=$@ $(LOADTEST) findings $(if $(ISSUE),--issue $(ISSUE)) $(if $(ONLY),--only $(ONLY)) $(if $(MEASURE),--measure $(MEASURE))

compare: $(LOADTEST) ## Compare two sets of runs: make compare OLD=results/a[,results/b] NEW=results/c[,...] (TOLERANCE=0.2); exits 1 on a regression
	@$(LOADTEST) compare $(if $(TOLERANCE),--tolerance $(TOLERANCE)) $(if $(OUT),--out $(OUT)) "$(OLD)" "$(NEW)"

compare-builds: $(LOADTEST) ## Release vs next in one command: OLD (reference) and NEW builds (CERTCTL_DIST dirs or images), RUNS=3 runs a side alternating (TIER=api,acme DURATION=2m; TIER=pki or deploy too), one verdict (loadtest help compare-builds); KNEE=<scenario> adds each build's capacity search and compares the knees. Prints its plan and wall time first
	@scripts/compare-builds.sh

gate: $(LOADTEST) ## The pull-request gate on this machine: CANDIDATE (a CERTCTL_DIST dir or image) against REFERENCE (default: the release .env pins), two runs a side alternating; PLAN=1 prints the plan and its wall time only (loadtest help gate)
	@[ -n "$$CANDIDATE" ] || { echo "make gate: set CANDIDATE to a certctl build directory or image" >&2; exit 2; }
	@LOADTEST_GOAL=$@ $(LOADTEST) gate $${PLAN:+--plan} --candidate "$$CANDIDATE" $${REFERENCE:+--reference "$$REFERENCE"}

baseline: $(LOADTEST) ## Record a run in docs/baselines/<BUILD>/<NAME>.json with its samples, regenerate the docs (RUN=<dir>, else a run now; BUILD=weekly for the trend's)
	@if [ -z "$(RUN)" ]; then LOADTEST_GOAL=baseline $(LOADTEST) run || { code=$$?; [ $$code = 99 ] || exit $$code; }; fi
	@$(LOADTEST) baseline $(if $(NAME),--name $(NAME)) $(if $(BUILD),--build $(BUILD)) $(or $(RUN),results/latest)

check: $(LOADTEST) ## Validate the configuration and print the plan (each scenario's load as k6 resolves it) without running anything
	@$(LOADTEST) check

report: $(LOADTEST) ## Print a saved run's summary afresh from its records, exit with its verdict (RUN=results/latest)
	@$(LOADTEST) report $(or $(RUN),results/latest)

docs: $(LOADTEST) ## Regenerate the tables in the docs from the code (k6 inspect of every scenario)
	@$(LOADTEST) docs

images: ## Build the offline stand-ins of every image (cached; FORCE=1 rebuilds)
	@$(STEP) images/build.sh

test: images lint-workflows test-unit test-browser test-k6 test-e2e test-workflow ## The gate (what .ci/run calls, under 20 minutes): unit, browser, k6, workflow, and the e2e tests of the gate (test/e2e/gate_test.go)

test-full: images lint-workflows test-unit test-browser test-k6 test-e2e-full test-workflow-full ## Every test: the gate's, and every e2e breach, fault and statistic on live stacks (about two hours on 2 CPUs; before resolving a change to a tier or the run path)

.PHONY: lint-workflows
lint-workflows: ## Lint the GitHub workflows (actionlint, pinned in go.mod)
	$(STEP) go tool actionlint

# The Python with Apache Otava that internal/history's test and `loadtest trend report --store` run
# (scripts/install-deps.sh makes it).
export OTAVA_PYTHON ?= $(or $(LOADTEST_CACHE),/var/cache/certctl-loadtest)/otava/bin/python
# Jenkins' JUnit schema that internal/report validates junit.xml against (scripts/install-deps.sh fetches it).
export JUNIT_XSD ?= $(or $(LOADTEST_CACHE),/var/cache/certctl-loadtest)/junit/jenkins-junit.xsd

test-unit: $(K6) ## Go unit tests: config, report (golden files), docs tables, the stand-ins, seeds on certctl's migrated schema, the live view's compose file, k6/lib's JWS and CSR verified by Go's crypto
	K6_BIN=$(CURDIR)/$(K6) $(STEP) go test -count=1 ./cmd/... ./internal/... ./test/ciplan/ ./test/seed/ ./test/observability/ ./test/jose/

test-browser: ## A run's index.html in headless Chromium (make deps installs it): verdict, every scenario, every diagnosis chart drawn, links only to files of the run, nothing from the network
	$(STEP) go test -count=1 ./test/browser/

test-k6: ## k6 library modules tested under k6 itself (k6/test/lib.test.js), and its assertions count shown failing (test/k6lib)
	$(STEP) go test -count=1 ./test/k6lib/

test-e2e: $(LOADTEST) $(K6) ## The gate's e2e tests (short mode: the tests test/ciplan/gate.go plans; TestCIPlan holds all of CI to 15 minutes) against the real certctl in CERTCTL_DIST
	K6_BIN=$(CURDIR)/$(K6) $(STEP) go test -count=1 -short -parallel 3 -timeout 30m ./test/e2e/

# The plan first (no docker): all of CI's, and every test with its time in the last full rehearsal; then
# the suite, whose result lines, when it passes (pipefail: a failed suite stops here), are the next plan's
# record (test/e2e/testdata/full-suite.txt, with what the machine check excused in each test).
test-e2e-full: $(LOADTEST) $(K6) ## Every e2e test against the real certctl in CERTCTL_DIST, after its plan and expected time; fails when a threshold was never breached
	go test -count=1 -short -run '^TestCIPlan$$' -v ./test/ciplan/ | grep -v '^=== '
	go test -count=1 -short -run '^TestFullPlan$$' -v ./test/e2e/ | grep -v '^=== '
	@[ -n "$$CERTCTL_NEXT_DIST" ] || echo "make: CERTCTL_NEXT_DIST is not set: the next build's halves of TestFindings and TestKnownDefects, and TestCompareBuildsNamesTheRegression, will skip (.ci/run sets it)" >&2
	@mkdir -p results
	K6_BIN=$(CURDIR)/$(K6) go test -count=1 -parallel 3 -timeout 120m -v ./test/e2e/ 2>&1 | tee results/test-full.log
	scripts/full-record.sh results/test-full.log > test/e2e/testdata/full-suite.txt.new
	mv test/e2e/testdata/full-suite.txt.new test/e2e/testdata/full-suite.txt

test-workflow: ## The workflows' jobs on this host with act (tools/act), offline, against CERTCTL_DIST: the weekly plan and its jobs, the pull-request gate as certctl would call it
	$(STEP) go test -count=1 -short -parallel 2 -timeout 20m ./test/workflow/

test-workflow-full: ## test-workflow, and a dispatch of every tier under act (a stack each); its log is results/test-workflow-full.log
	@mkdir -p results
	go test -count=1 -parallel 2 -timeout 40m -v ./test/workflow/ 2>&1 | tee results/test-workflow-full.log | grep -E '^(--- |ok|FAIL|PASS)'

clean: ## Remove build output and any stack a killed run left behind (results are kept)
	rm -rf bin
	@for p in $$(docker compose ls --all --quiet --filter name=certctl-lt- 2>/dev/null); do \
		echo "removing stack $$p"; docker compose -p $$p down --volumes --remove-orphans --timeout 5 >/dev/null 2>&1 || true; \
	done

deps: ## Install what the harness needs on Debian: docker engine, compose v2 plugin (needs root)
	scripts/install-deps.sh

$(K6): go.mod go.sum
	@mkdir -p bin
	$(STEP) go build -o $@ go.k6.io/k6/v2

$(LOADTEST): $(GO_SOURCES)
	@mkdir -p bin
	@echo "go build -o $@ ./cmd/loadtest  (a minute or two the first time, with a cold Go cache)"
	@t0=$$(date +%s); ( while sleep 15 >/dev/null 2>&1; do echo "  still compiling $@, $$(( $$(date +%s) - t0 )) s so far"; done ) & hb=$$!; \
	$(STEP) go build -o $@ ./cmd/loadtest; rc=$$?; kill $$hb 2>/dev/null; exit $$rc
