// Package harness drives one load-test run: it checks the input, brings the Compose stack up, runs one
// k6 container per scenario, keeps whatever results the run produced and tears everything down.
package harness

import (
	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/results"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is everything a run needs, read once from the environment.
type Config struct {
	// DefectsRegistry is DEFECTS_REGISTRY's registry, checked; nil for the built-in one.
	DefectsRegistry []byte
	Root            string // repository root: docker-compose.yml, k6/, seed/ live here
	RunID           string
	Tiers           []string
	// Profiles are compose profiles a scenario needs besides its tier's (renewal_scan: the scale seeder).
	Profiles  []string
	Scenarios []Scenario
	// Duration is DURATION as given, in k6's syntax (what k6 receives); Length its value, parsed once.
	Duration     string
	Length       time.Duration
	Offline      bool
	ResultsDir   string
	StartTimeout time.Duration
	Project      string
	// Dist is a certctl build (CERTCTL_DIST) that `loadtest run` packages into the images it runs.
	Dist string
	// Faults puts the fault proxy (cmd/fault-proxy) between k6 and certctl: FAULT_* is set.
	Faults bool
	// Spotcheck: the scripts are k6/spotcheck/*.js (`loadtest spotcheck`), run one after another.
	Spotcheck bool
	// Env is what docker compose (and through it k6) is given on top of the caller's environment.
	Env map[string]string
	// Secrets are values of Env to redact wherever the config is written down.
	Secrets []string
	// ProgressEvery is how often a running scenario prints a progress line (PROGRESS_INTERVAL; 0: never).
	ProgressEvery time.Duration
	// Observability adds compose.observability.yml: Prometheus and Grafana, k6 writing to Prometheus.
	Observability bool
	// Collector and Containers are the diagnosis's two samplers (DIAGNOSIS): the collector container
	// (PostgreSQL and certctl's metrics) and the harness's reads of the containers' cgroups and the
	// host's CPU, both into server/ in the run directory.
	Collector, Containers bool
	// K6Outputs are the --out arguments K6_OUT asks for, given to every k6 beside the harness's own
	// (k6 ignores K6_OUT once --out is on its command line).
	K6Outputs []string
	// Segments is how many k6 processes run each scenario, each an execution segment of its load
	// (SEGMENTS, `loadtest run --segments N`); 1: one process with the whole load.
	Segments int
	// External is the certctl to load when the harness starts none (TARGET=external); nil: the stack.
	External *External
	// Skipped are the selected scenarios an external certctl cannot run, each with Unavailable's reason.
	Skipped []Scenario
}

// Scenario is one k6 script: k6/<tier>/<name>.js.
type Scenario struct {
	Tier string `json:"tier"`
	Name string `json:"name"`
	Path string `json:"path"` // relative to the repository root
}

// Harness knobs passed through to k6 by name when set; RATE_<SCENARIO> is checked per scenario.
var k6Passthrough = []string{"MAX_VUS", "PRE_VUS"}

// K6ServiceEnv are the knobs compose's k6 service sets in its own environment (docker-compose.yml;
// internal/docs holds the two together): k6 gets them from there, not by name from the harness.
var K6ServiceEnv = []string{"CERTCTL_URL", "CERTCTL_TOKEN", "RUN_ID", "RESULTS_DIR",
	"LT_TEAM_ID", "LT_OWNER_ID", "LT_POLICY_ID", "LT_ISSUER_ID", "LT_PROFILE_ID"}

// K6Env reports whether a variable of the run's environment goes to the k6 containers by name: any
// knob the registry says k6 reads (Knobs), but those the k6 service sets itself and K6_OUT, which the
// harness turns into k6's --out flags.
func K6Env(name string) bool {
	k, ok := LookupKnob(name)
	return ok && k.ReadBy("k6") && !slices.Contains(K6ServiceEnv, k.Name) && k.Name != "K6_OUT"
}

// getter reads a knob: its trimmed value, or def when unset or empty.
type getter func(k, def string) string

// DeployJobProcessorInterval is the job processor interval the deploy tier runs with when none is
// given. certctl's own 30 s makes the processor claim every agent's Deployment job before the agent's
// next poll, 30 s after the signing that created it, so no renewal would ever be deployed
// (docs/certctl-findings.md#job-processor-steals). Renewals through the API do not wait for the processor
// (agent key generation starts them AwaitingCSR), so a long interval costs the loop nothing.
const DeployJobProcessorInterval = "1h"

// RenewalScan is the deploy scenario that waits for certctl's scheduled renewal scan. It runs with
// certctl's shortest renewal check (1 m: the scan comes within a minute of boot, not an hour) and a
// job processor at 10 s (the drain it measures starts at the processor's next tick). Its certificates
// have no target, so no Deployment job exists for the processor to steal.
const (
	RenewalScan                     = "renewal_scan"
	RenewalScanCheckInterval        = "1m"
	RenewalScanJobProcessorInterval = "10s"
)

// SpotcheckRenewalCheckInterval is the spot checks' renewal check when none is given:
// tick_renewal_scan waits for a scheduled scan (certctl has no trigger that works), and one every 3
// minutes, not the hourly default, keeps that wait inside the check's 240 s.
const SpotcheckRenewalCheckInterval = "3m"

// FleetRotation is the deploy scenario that brings a fleet of agents and targets (compose profile fleet).
const FleetRotation = "fleet_rotation"

// loadDeployKnobs checks the deploy tier's knobs that are set, each by its type in the registry, and
// passes them on (k6 reads DEPLOY_*; compose the reload faults and the seed's count).
func (c *Config) loadDeployKnobs(get getter) error {
	for _, k := range Knobs {
		if !strings.HasPrefix(k.Name, "DEPLOY_") || k.Name == "DEPLOY_PROBE_URL" {
			continue
		}
		if v := get(k.Name, ""); v != "" {
			if err := k.check(v); err != nil {
				return err
			}
			c.Env[k.Name] = v
		}
	}
	// certctl's defects on the PKI paths (docs/certctl-findings.md#acme-finalize, #ocsp-500): each
	// workaround is applied only when asked, by a one-shot service of its own profile, and stated in run.json.
	for _, w := range []struct{ knob, profile, fixture string }{
		{"ACME_FINALIZE_WORKAROUND", "acme-workaround", "acme-finalize-workaround.sql"},
		{"OCSP_RESPONDER_WORKAROUND", "ocsp-workaround", "ocsp-responder-workaround.sql"},
	} {
		switch v := get(w.knob, "0"); v {
		case "0":
		case "1":
			c.Profiles = append(c.Profiles, w.profile)
			c.Env[w.knob] = v
		default:
			return fmt.Errorf("%s=%q: use 1 (apply fixtures/pki/%s) or 0", w.knob, v, w.fixture)
		}
	}
	switch v := get("PKI_ISSUANCE_PATH", "agent"); v {
	case "agent", "acme":
		c.Env["PKI_ISSUANCE_PATH"] = v
	default:
		return fmt.Errorf("PKI_ISSUANCE_PATH=%q: use agent (create + the agent's CSR) or acme (a signed ACME order)", v)
	}
	for _, name := range []string{"ACME_CHALLENGE_WRONG", "ACME_REVOKE_SHARE", "ACME_SLOW_VUS", "CHALLENGE_SLOW_LATENCY"} {
		if v := get(name, ""); v != "" {
			k, _ := LookupKnob(name)
			if err := k.check(v); err != nil {
				return err
			}
			c.Env[name] = v
		}
	}
	if v := get("DEPLOY_PROBE_URL", ""); v != "" {
		if u, err := url.Parse(v); err != nil || u.Scheme != "http" || u.Host == "" {
			return fmt.Errorf("DEPLOY_PROBE_URL=%q: want http://host:port of the TLS probe", v)
		}
		c.Env["DEPLOY_PROBE_URL"] = v
	}
	if c.Env["DEPLOY_MASS_CERTS"] != "" {
		per, _ := strconv.Atoi(get("DEPLOY_CERTS_PER_TARGET", KnobDefault("DEPLOY_CERTS_PER_TARGET")))
		if n, _ := strconv.Atoi(c.Env["DEPLOY_MASS_CERTS"]); n > 4*per {
			return fmt.Errorf("DEPLOY_MASS_CERTS=%d: the four deploy targets have %d certificates each (DEPLOY_CERTS_PER_TARGET); raise that to at least %d", n, per, (n+3)/4)
		}
	}
	return nil
}

// loadAuth settles the auth tier: the realm's two client secrets (generated per run, redacted), certctl's
// private-address guard off (the provider is on loadnet), the back-channel logout's shape and the
// workarounds of the defects between a login and a usable session.
func (c *Config) loadAuth(get getter) error {
	if !slices.Contains(c.Tiers, AuthTier) {
		return nil
	}
	for _, k := range []string{"AUTH_CLIENT_SECRET", "AUTH_ADMIN_SECRET"} {
		v := get(k, randomHex(16))
		c.Env[k] = v
		c.Secrets = append(c.Secrets, v)
	}
	switch v := get("AUTH_BCL_SID", KnobDefault("AUTH_BCL_SID")); v {
	case "true", "false":
		c.Env["AUTH_BCL_SID"] = v
	default:
		return fmt.Errorf("AUTH_BCL_SID=%q: true (Keycloak names the session in its logout token, its default) or false (the user only)", v)
	}
	if v := get("AUTH_USERS", ""); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n <= 0 || n > 1000 {
			return fmt.Errorf("AUTH_USERS=%q: a number of realm users from 1 to 1000", v)
		}
		c.Env["AUTH_USERS"] = v
	}
	v := get("AUTH_WORKAROUNDS", KnobDefault("AUTH_WORKAROUNDS"))
	c.Env["AUTH_WORKAROUNDS"] = v // k6 reads it too: whether the login carries the API key
	switch v {
	case "0":
	case "1":
		c.Profiles = append(c.Profiles, "auth-workaround")
		// Keycloak's back-channel logout through the relay that adds the API key (docker-compose.yml).
		c.Env["AUTH_BCL_URL"] = "https://auth-relay:8443/auth/oidc/back-channel-logout"
	default:
		return fmt.Errorf("AUTH_WORKAROUNDS=%q: use 1 (work around the defects between a login and a session, docs/auth.md) or 0", v)
	}
	return nil
}

// loadScheduler settles the certctl scheduler knobs that bound the deploy tier's loop and puts the values
// in force in the run's configuration, defaults included, so run.json says which clocks the run had
// (docs/deploy.md#the-loop-and-its-clocks). The deploy tier gets its own job processor default, and
// renewal_scan its own clocks and the scale seeder's due certificates.
func (c *Config) loadScheduler(get getter) error {
	const k = "CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL"
	jobs, check := "30s", "1h"
	if slices.Contains(c.Tiers, DeployTier) {
		jobs = DeployJobProcessorInterval
	}
	if slices.ContainsFunc(c.Scenarios, func(s Scenario) bool { return s.Name == RenewalScan }) {
		jobs, check = RenewalScanJobProcessorInterval, RenewalScanCheckInterval
		c.Profiles = append(c.Profiles, "scale")
	}
	if slices.ContainsFunc(c.Scenarios, func(s Scenario) bool { return s.Name == FleetRotation }) {
		c.Profiles = append(c.Profiles, "fleet")
		// The fleet registers through certctl's API before the load, an agent and its targets a call
		// each, about 0.3 s a call at best (71 s for the default 50 × 4): the stack's start allows for it.
		if get("START_TIMEOUT", "") == "" {
			agents, _ := strconv.Atoi(get("DEPLOY_FLEET_AGENTS", KnobDefault("DEPLOY_FLEET_AGENTS")))
			targets, _ := strconv.Atoi(get("DEPLOY_FLEET_TARGETS", KnobDefault("DEPLOY_FLEET_TARGETS")))
			c.StartTimeout += time.Duration(agents*(1+targets)) * 400 * time.Millisecond
		}
	}
	for _, kv := range [][2]string{{k, get(k, jobs)}, {"CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL", get("CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL", check)}} {
		d, err := ParseDuration(kv[0], kv[1])
		if err != nil {
			return err
		}
		if d < time.Second {
			return fmt.Errorf("%s=%s: certctl refuses less than 1s", kv[0], kv[1])
		}
		c.Env[kv[0]] = kv[1]
	}
	verify := get("CERTCTL_VERIFY_DEPLOYMENT", "true")
	if verify != "true" && verify != "false" {
		return fmt.Errorf("CERTCTL_VERIFY_DEPLOYMENT=%s: want true or false", verify)
	}
	c.Env["CERTCTL_VERIFY_DEPLOYMENT"] = verify
	return nil
}

// loadDist checks CERTCTL_DIST, the certctl build to package.
func (c *Config) loadDist(get getter) error {
	if v := get("CERTCTL_DIST", ""); v != "" {
		abs, err := filepath.Abs(v)
		if err == nil {
			_, err = os.Stat(filepath.Join(abs, "server"))
		}
		if err != nil {
			return fmt.Errorf("CERTCTL_DIST=%s is not a certctl build: it must hold certctl's server and agent binaries and migrations/", v)
		}
		c.Dist = abs
		c.Env["CERTCTL_DIST"] = abs
	}
	return nil
}

// loadFaultProxy reads the fault knobs; any of them puts the fault proxy between k6 and certctl.
func (c *Config) loadFaultProxy(get getter) error {
	if err := loadFaults(get, c.Env); err != nil {
		return err
	}
	for _, k := range FaultKnobs {
		c.Faults = c.Faults || c.Env[k] != ""
	}
	if c.Faults {
		// k6 reaches certctl through the proxy; the proxy's certificate carries this name (TLS_NAMES).
		c.Env["CERTCTL_URL"] = "https://certctl-faults:8443"
	}

	return nil
}

// loadTimes reads DURATION and START_TIMEOUT.
func (c *Config) loadTimes(get getter) error {
	c.Duration = get("DURATION", KnobDefault("DURATION"))
	var err error
	if c.Length, err = ParseDuration("DURATION", c.Duration); err != nil {
		return err
	}
	st, err := ParseDuration("START_TIMEOUT", get("START_TIMEOUT", KnobDefault("START_TIMEOUT")))
	if err != nil {
		return err
	}
	c.StartTimeout = st
	if v := get("PROGRESS_INTERVAL", KnobDefault("PROGRESS_INTERVAL")); v != "0" {
		if c.ProgressEvery, err = ParseDuration("PROGRESS_INTERVAL", v); err != nil {
			return fmt.Errorf("%v (0: no progress lines)", err)
		}
	}

	return nil
}

// loadImages reads IMAGES: the pinned upstream images or the offline stand-ins.
func (c *Config) loadImages(get getter) error {
	switch v := get("IMAGES", KnobDefault("IMAGES")); v {
	case "upstream":
	case "offline":
		c.Offline = true
	default:
		return fmt.Errorf("IMAGES=%q: use upstream (the pinned images in .env) or offline (the stand-ins `make images` builds)", v)
	}

	return nil
}

// loadLoadShape reads what shapes the scenarios' load: rates, VUs, seeds, batch size.
func (c *Config) loadLoadShape(get getter) error {
	for _, s := range c.Scenarios {
		for _, k := range []string{"RATE_" + strings.ToUpper(s.Name), "VUS_" + strings.ToUpper(s.Name)} {
			if v := get(k, ""); v != "" {
				if n, err := strconv.Atoi(v); err != nil || n <= 0 {
					return fmt.Errorf("%s=%q must be a positive whole number", k, v)
				}
				c.Env[k] = v
			}
		}
		if k := "TIME_UNIT_" + strings.ToUpper(s.Name); get(k, "") != "" {
			if v := get(k, ""); v != "s" && v != "m" {
				return fmt.Errorf("%s=%q: use s (RATE_%s a second) or m (a minute)", k, v, strings.ToUpper(s.Name))
			}
			c.Env[k] = get(k, "")
		}
	}
	for _, k := range []string{"SEED_BULK_CERTS", "SEED_AGENTS", "SEED_INVENTORY"} {
		if v := get(k, ""); v != "" {
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				return fmt.Errorf("%s=%q must be a whole number of rows", k, v)
			}
			c.Env[k] = v
		}
	}
	if v := get("SEED_INVENTORY_AUDIT", ""); v != "" {
		if v != "all" && v != "service" && v != "none" {
			return fmt.Errorf("SEED_INVENTORY_AUDIT=%q: all (every audit row a year leaves), service (without the API middleware's) or none", v)
		}
		c.Env["SEED_INVENTORY_AUDIT"] = v
	}
	// A year of a fleet's history under the load, whatever the tiers (make growth sets it per size).
	if n, _ := strconv.Atoi(c.Env["SEED_INVENTORY"]); n > 0 {
		c.Profiles = append(c.Profiles, InventoryProfile)
		// The history goes in before certctl starts (docker-compose.yml), so its start waits for it:
		// 7-10 ms a certificate measured at 1,000 (docs/growth.md), given half again.
		if get("START_TIMEOUT", "") == "" {
			c.StartTimeout += time.Duration(n) * 15 * time.Millisecond
		}
	}
	if v := get("SEED_DIR", ""); v != "" {
		if !filepath.IsAbs(v) {
			v = filepath.Join(c.Root, v)
		}
		if st, err := os.Stat(v); err != nil || !st.IsDir() {
			return fmt.Errorf("SEED_DIR=%s is not a directory of *.sql fixtures", v)
		}
		c.Env["SEED_DIR"] = v
	}
	if v := get("BATCH_SIZE", ""); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n <= 0 || n > 500 {
			return fmt.Errorf("BATCH_SIZE=%q must be a whole number from 1 to 500 (ids per bulk-renew request)", v)
		}
		c.Env["BATCH_SIZE"] = v
	}
	if v := get("SPOTCHECK_REVOKE_WAYS", ""); v != "" {
		for _, w := range strings.Split(v, ",") {
			if w = strings.TrimSpace(w); w != "ids" && w != "owner" {
				return fmt.Errorf("SPOTCHECK_REVOKE_WAYS=%q: %q is neither ids nor owner (comma-separated, e.g. ids,owner)", v, w)
			}
		}
		c.Env["SPOTCHECK_REVOKE_WAYS"] = v
	}
	if c.Env["SEED_BULK_CERTS"] == "" && slices.ContainsFunc(c.Scenarios, func(s Scenario) bool { return s.Name == "bulk_renewal" }) {
		c.Env["SEED_BULK_CERTS"] = bulkPool(*c, c.Length)
	}
	if err := c.loadDeployKnobs(get); err != nil {
		return err
	}
	if v := get("ABORT_ON_FAIL", ""); v != "" {
		d, err := ParseDuration("ABORT_ON_FAIL", v)
		if err != nil {
			return err
		}
		if d >= c.Length {
			return fmt.Errorf("ABORT_ON_FAIL=%s is not shorter than DURATION=%s: no threshold would be judged before the load ends", v, c.Duration)
		}
		c.Env["ABORT_ON_FAIL"] = v
	}
	for _, k := range k6Passthrough {
		if v := get(k, ""); v != "" {
			if n, err := strconv.Atoi(v); err != nil || n <= 0 {
				return fmt.Errorf("%s=%q must be a positive whole number", k, v)
			}
			c.Env[k] = v
		}
	}

	return nil
}

// k6OutputRE is one entry of K6_OUT: an output's name, then its own argument (a file, a URL).
var k6OutputRE = regexp.MustCompile(`^[a-z][a-z0-9-]*(=.+)?$`)

// loadK6Outputs turns K6_OUT into --out arguments. Their settings (K6_PROMETHEUS_RW_*, K6_OTEL_*, …) go
// to k6 as they are, from the environment (K6OutputSetting); run.json records the outputs' names only,
// as their arguments may hold credentials.
func (c *Config) loadK6Outputs(get getter) error {
	samplers, err := diagnosisSources(get("DIAGNOSIS", KnobDefault("DIAGNOSIS")))
	if err != nil {
		return err
	}
	c.Collector, c.Containers = slices.Contains(samplers, DiagnosisCollector), slices.Contains(samplers, DiagnosisContainers)
	switch v := get("KNOWN_DEFECTS", KnobDefault("KNOWN_DEFECTS")); v {
	case "pass", "fail":
		c.Env["KNOWN_DEFECTS"] = v
	default:
		return fmt.Errorf("KNOWN_DEFECTS=%q: use pass (a breach a registered defect of certctl explains is listed as known, not failed) or fail", v)
	}
	if p := get("DEFECTS_REGISTRY", ""); p != "" {
		b, err := os.ReadFile(p)
		if err == nil {
			_, err = defects.Parse(b)
		}
		if err != nil {
			return fmt.Errorf("DEFECTS_REGISTRY=%s: %v", p, err)
		}
		c.DefectsRegistry = b
	}
	switch v := get("MACHINE_CHECK", KnobDefault("MACHINE_CHECK")); v {
	case "true", "false":
		c.Env["MACHINE_CHECK"] = v
	default:
		return fmt.Errorf("MACHINE_CHECK=%q: use true (a timing breach while work outside the run took the machine is inconclusive, exit %d) or false", v, results.ExitInconclusive)
	}
	switch v := get("PG_STAT_STATEMENTS", KnobDefault("PG_STAT_STATEMENTS")); v {
	case "false":
		c.Env["PG_SHARED_PRELOAD"], c.Env["COLLECT_STATEMENTS"] = "", "off"
	case "true":
		c.Env["PG_SHARED_PRELOAD"], c.Env["COLLECT_STATEMENTS"] = "pg_stat_statements", "on"
	default:
		return fmt.Errorf("PG_STAT_STATEMENTS=%q: use true (load pg_stat_statements: the diagnosis's statements by total time, at a cost to certctl's latency) or false", v)
	}
	switch v := get("OBSERVABILITY", KnobDefault("OBSERVABILITY")); v {
	case "false":
	case "true":
		c.Observability = true
	default:
		return fmt.Errorf("OBSERVABILITY=%q: use true (Prometheus and Grafana beside the stack, k6 writing to them) or false", v)
	}
	v := get("K6_OUT", "")
	if c.Observability {
		// The live view's defaults; what the caller set wins.
		if v == "" {
			v = "experimental-prometheus-rw"
		}
		for k, def := range map[string]string{
			"K6_PROMETHEUS_RW_SERVER_URL": "http://prometheus:9090/api/v1/write",
			// The dashboard's latency panels read these; k6 sends only counters and gauges by default.
			"K6_PROMETHEUS_RW_TREND_STATS": "p(95),p(99),min,max",
		} {
			c.Env[k] = get(k, def)
		}
	}
	if v == "" {
		return nil
	}
	var names []string
	for _, o := range strings.Split(v, ",") {
		o = strings.TrimSpace(o)
		if !k6OutputRE.MatchString(o) {
			return fmt.Errorf("K6_OUT=%q: %q is not an output: use k6's syntax, name[=argument], comma-separated (e.g. experimental-prometheus-rw or csv=/results/k6.csv)", v, o)
		}
		c.K6Outputs = append(c.K6Outputs, "--out", o)
		name, _, _ := strings.Cut(o, "=")
		names = append(names, name)
	}
	c.Env["K6_OUT"] = strings.Join(names, ",")
	return nil
}

// K6OutputSetting reports whether a variable configures one of k6's outputs: each k6 gets it as set.
func K6OutputSetting(name string) bool {
	for _, p := range []string{"K6_PROMETHEUS_RW_", "K6_OTEL_", "K6_INFLUXDB_", "K6_STATSD_", "K6_DATADOG_", "K6_CSV_", "K6_KAFKA_", "K6_TIMESCALEDB_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// loadK6Checks reads what k6 checks against: TLS version, connector URLs, request timeout.
func (c *Config) loadK6Checks(get getter) error {
	switch v := get("EXPECT_TLS_VERSION", ""); v {
	case "":
	case "tls1.2", "tls1.3":
		c.Env["EXPECT_TLS_VERSION"] = v
	default:
		return fmt.Errorf("EXPECT_TLS_VERSION=%q: use tls1.2 or tls1.3 (k6's names)", v)
	}
	for _, t := range []string{"NGINX", "APACHE", "HAPROXY", "F5"} {
		if v := get("CONNECTOR_"+t+"_URL", ""); v != "" {
			c.Env["CONNECTOR_"+t+"_URL"] = v
		}
	}
	if v := get("REQUEST_TIMEOUT", ""); v != "" {
		if _, err := ParseDuration("REQUEST_TIMEOUT", v); err != nil {
			return err
		}
		c.Env["REQUEST_TIMEOUT"] = v
	}

	return nil
}

// loadRunID names the run, its results directory and its compose project.
func (c *Config) loadRunID(get getter, now time.Time) error {
	c.RunID = get("RUN_ID", "")
	if c.RunID == "" {
		c.RunID = now.UTC().Format("20060102-150405") + "-" + randomHex(2)
	}
	if !runIDRE.MatchString(c.RunID) {
		return fmt.Errorf("RUN_ID=%q: use lower-case letters, digits and dashes, at most 40", c.RunID)
	}
	c.ResultsDir = get("RESULTS_DIR", filepath.Join(c.Root, KnobDefault("RESULTS_DIR")))
	if !filepath.IsAbs(c.ResultsDir) {
		c.ResultsDir = filepath.Join(c.Root, c.ResultsDir)
	}
	c.Project = get("COMPOSE_PROJECT_NAME", "certctl-lt-"+strings.ReplaceAll(c.RunID, ".", "-"))

	return nil
}

// loadSecrets sets certctl's API key and encryption key (generated per run unless given) and the client's key.
func (c *Config) loadSecrets(get getter) error {
	token := get("CERTCTL_TOKEN", "lt-"+randomHex(16))
	c.Env["CERTCTL_TOKEN"] = token
	c.Env["CERTCTL_CONFIG_ENCRYPTION_KEY"] = get("CERTCTL_CONFIG_ENCRYPTION_KEY", randomHex(24))
	c.Secrets = append(c.Secrets, token, c.Env["CERTCTL_CONFIG_ENCRYPTION_KEY"])
	if v := get("CLIENT_TOKEN", ""); v != "" {
		c.Env["CLIENT_TOKEN"] = v
		c.Secrets = append(c.Secrets, v)
	}
	return nil
}

// loadLimiter records whether certctl's rate limiter is on (the limiter tier then forces it on).
func (c *Config) loadLimiter(get getter) error {
	// Effective even when unset, so run.json says whether certctl's limiter was in the way.
	c.Env["CERTCTL_RATE_LIMIT_ENABLED"] = get("CERTCTL_RATE_LIMIT_ENABLED", KnobDefault("CERTCTL_RATE_LIMIT_ENABLED"))
	return nil
}

// The diagnosis's samplers, as DIAGNOSIS names them.
const (
	DiagnosisCollector  = "collector"
	DiagnosisContainers = "containers"
)

// diagnosisSources reads DIAGNOSIS: true (both samplers), false (neither), or a list of them.
func diagnosisSources(v string) ([]string, error) {
	switch v {
	case "true":
		return []string{DiagnosisCollector, DiagnosisContainers}, nil
	case "false":
		return nil, nil
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s != DiagnosisCollector && s != DiagnosisContainers || slices.Contains(out, s) {
			return nil, fmt.Errorf("DIAGNOSIS=%q: use true (sample certctl's database, metrics and containers beside the load, and say where the time went), false, or one of %s and %s (the collector container; the containers' and the host's CPU)", v, DiagnosisCollector, DiagnosisContainers)
		}
		out = append(out, s)
	}
	return out, nil
}

// Diagnosis reports whether any of the diagnosis's samplers runs: server/ is written, and analysed.
func (c Config) Diagnosis() bool { return c.Collector || c.Containers }

// DiagnosisSetting is DIAGNOSIS as the run had it: true, false, or the one sampler that ran.
func (c Config) DiagnosisSetting() string {
	switch {
	case c.Collector && c.Containers:
		return "true"
	case c.Collector:
		return DiagnosisCollector
	case c.Containers:
		return DiagnosisContainers
	}
	return "false"
}

// RunDir is where this run's results go; nothing from an earlier run is ever written there.
func (c Config) RunDir() string { return filepath.Join(c.ResultsDir, c.RunID) }

// Redacted is the effective configuration with every secret value replaced, for run.json.
func (c Config) Redacted() map[string]string {
	out := map[string]string{
		"TIER":          strings.Join(c.Tiers, ","),
		"DURATION":      c.Duration,
		"START_TIMEOUT": c.StartTimeout.String(),
		"IMAGES":        map[bool]string{true: "offline", false: "upstream"}[c.Offline],
		// The diagnosis reads it: a sampler switched off is not one that failed.
		"DIAGNOSIS": c.DiagnosisSetting(),
	}
	for k, v := range c.Env {
		out[k] = v
	}
	for k, v := range out {
		for _, s := range c.Secrets {
			if s != "" && strings.Contains(v, s) {
				out[k] = "[redacted]"
			}
		}
	}
	delete(out, "RUN_DIR") // a host path, not configuration
	return out
}

// BulkPool is the bulk-renewal seed a run with bulk_renewal gets when SEED_BULK_CERTS is unset, for
// the given knobs (RATE_BULK_RENEWAL, BATCH_SIZE; nil: their defaults) and duration.
func BulkPool(env map[string]string, duration time.Duration) string {
	return bulkPool(Config{Env: env}, duration)
}

// InventoryProfile is the compose profile of the inventory seeder (seed/inventory/, SEED_INVENTORY).
const InventoryProfile = "inventory"

// bulkPool sizes the bulk-renewal seed for one pass without revisiting a certificate (certctl skips one
// with an open renewal job, so a second visit measures only its skip path): (rate × duration + 1) × batch,
// never under the registry's default. k6/scale/bulk_renewal.js refuses a smaller pool in setup, so a
// drift between these numbers and the script's fails early and says so.
func bulkPool(c Config, duration time.Duration) string {
	const defaultRate, defaultBatch = 5, 50 // k6/scale/bulk_renewal.js
	rate, batch := defaultRate, defaultBatch
	if n, err := strconv.Atoi(c.Env["RATE_BULK_RENEWAL"]); err == nil && n > 0 {
		rate = n
	}
	if n, err := strconv.Atoi(c.Env["BATCH_SIZE"]); err == nil && n > 0 {
		batch = n
	}
	// k6 starts an arrival-rate scenario's first iteration at 0 s: rate × duration + 1 in all.
	need := (int(math.Ceil(float64(rate)*duration.Seconds())) + 1) * batch
	if floor, err := strconv.Atoi(KnobDefault("SEED_BULK_CERTS")); err == nil && need < floor {
		need = floor
	}
	return strconv.Itoa(need)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// SpotcheckDir is k6/spotcheck: the operator spot checks (docs/performance-baselines.md). Not a tier.
const SpotcheckDir = "spotcheck"

// ExternalDir holds the scripts that seed and clean an external certctl (k6/external): no tier.
const ExternalDir = "external"

// FaultKnobs are the fault proxy's settings: any of them set puts the proxy between k6 and certctl.
var FaultKnobs = []string{"FAULT_LATENCY", "FAULT_ERROR_RATE", "FAULT_BODY_RATE", "FAULT_ROUTE"}

// loadFaults reads the fault proxy's knobs, strictly: a typo in one would run the test without its fault.
func loadFaults(get func(k, def string) string, env map[string]string) error {
	if v := get("FAULT_LATENCY", ""); v != "" {
		if _, err := ParseDuration("FAULT_LATENCY", v); err != nil {
			return err
		}
		env["FAULT_LATENCY"] = v
	}
	for k, what := range map[string]string{"FAULT_ERROR_RATE": "answered 500", "FAULT_BODY_RATE": "whose successful answer loses its body"} {
		if v := get(k, ""); v != "" {
			if f, err := strconv.ParseFloat(v, 64); err != nil || !(f >= 0 && f <= 1) {
				return fmt.Errorf("%s=%q must be a number from 0 to 1 (the share of matching requests %s)", k, v, what)
			}
			env[k] = v
		}
	}
	if v := get("FAULT_ROUTE", ""); v != "" {
		for _, r := range strings.Split(v, ",") {
			if !faultRouteRE.MatchString(strings.TrimSpace(r)) {
				return fmt.Errorf("FAULT_ROUTE=%q: %q is not a route; use METHOD or METHOD /path-prefix, with a trailing $ for an exact path, comma-separated", v, strings.TrimSpace(r))
			}
		}
		env["FAULT_ROUTE"] = v
	}
	return nil
}

var faultRouteRE = regexp.MustCompile(`^[A-Z]+( /[^$]*\$?)?$`)

// External is a certctl the harness did not start (TARGET=external).
type External struct {
	URL      string
	CABundle string // PEM file of the CAs to trust; empty: the system's
	Verify   bool
	Public   bool // the address is public and ALLOW_PUBLIC_TARGET=yes said so
	// AllowPublic: ALLOW_PUBLIC_TARGET=yes, the operator's word that this certctl is theirs to load.
	AllowPublic bool
	Network     string
}
