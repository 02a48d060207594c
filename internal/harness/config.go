// Package harness drives one load-test run: it checks the input, brings the Compose stack up, runs one
// k6 container per scenario, keeps whatever results the run produced and tears everything down.
package harness

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Exit codes of `loadtest run`. k6's own codes (99 thresholds breached, 107 script error, 108 aborted
// by the script, e.g. a failed setup probe) are passed through unchanged.
const (
	ExitOK          = 0
	ExitBadInput    = 2
	ExitEnvironment = 3
	ExitNoResults   = 4
	ExitThresholds  = 99
)

// Config is everything a run needs, read once from the environment.
type Config struct {
	Root         string // repository root: docker-compose.yml, k6/, seed/ live here
	RunID        string
	Tiers        []string
	Scenarios    []Scenario
	Duration     string
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
}

// Scenario is one k6 script: k6/<tier>/<name>.js.
type Scenario struct {
	Tier string `json:"tier"`
	Name string `json:"name"`
	Path string `json:"path"` // relative to the repository root
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

// Harness knobs passed through to k6 by name when set; RATE_<SCENARIO> is checked per scenario.
var k6Passthrough = []string{"MAX_VUS", "PRE_VUS"}

// K6Env reports whether a variable of the run's environment goes to the k6 containers.
func K6Env(name string) bool {
	switch name {
	case "MAX_VUS", "PRE_VUS", "REQUEST_TIMEOUT", "EXPECT_TLS_VERSION", "BATCH_SIZE":
		return true
	}
	return strings.HasPrefix(name, "RATE_") || strings.HasPrefix(name, "VUS_") || strings.HasPrefix(name, "CONNECTOR_")
}

// Load reads the run's configuration. getenv is os.Getenv in production.
func Load(root string, getenv func(string) string, now time.Time) (Config, error) {
	c := Config{Root: root, Env: map[string]string{}}
	get := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}

	tiers, err := DiscoverTiers(root)
	if err != nil {
		return c, err
	}
	c.Tiers, err = selectTiers(get("TIER", "default"), tiers)
	if err != nil {
		return c, err
	}
	for _, t := range c.Tiers {
		c.Scenarios = append(c.Scenarios, tiers[t]...)
	}

	if v := get("CERTCTL_DIST", ""); v != "" {
		abs, err := filepath.Abs(v)
		if err == nil {
			_, err = os.Stat(filepath.Join(abs, "server"))
		}
		if err != nil {
			return c, fmt.Errorf("CERTCTL_DIST=%s is not a certctl build: it must hold certctl's server and agent binaries and migrations/", v)
		}
		c.Dist = abs
		c.Env["CERTCTL_DIST"] = abs
	}
	if err := loadFaults(get, c.Env); err != nil {
		return c, err
	}
	c.Faults = c.Env["FAULT_LATENCY"] != "" || c.Env["FAULT_ERROR_RATE"] != "" || c.Env["FAULT_ROUTE"] != ""
	if c.Faults {
		// k6 reaches certctl through the proxy; the proxy's certificate carries this name (TLS_NAMES).
		c.Env["CERTCTL_URL"] = "https://certctl-faults:8443"
	}

	c.Duration = get("DURATION", "5m")
	if _, err := ParseDuration("DURATION", c.Duration); err != nil {
		return c, err
	}
	st, err := ParseDuration("START_TIMEOUT", get("START_TIMEOUT", "120s"))
	if err != nil {
		return c, err
	}
	c.StartTimeout = st

	switch v := get("IMAGES", "upstream"); v {
	case "upstream":
	case "offline":
		c.Offline = true
	default:
		return c, fmt.Errorf("IMAGES=%q: use upstream (the pinned images in .env) or offline (the stand-ins `make images` builds)", v)
	}

	if spec := get("SCENARIOS", ""); spec != "" {
		if c.Scenarios, err = selectScenarios(spec, c.Scenarios); err != nil {
			return c, err
		}
	}
	for _, s := range c.Scenarios {
		for _, k := range []string{"RATE_" + strings.ToUpper(s.Name), "VUS_" + strings.ToUpper(s.Name)} {
			if v := get(k, ""); v != "" {
				if n, err := strconv.Atoi(v); err != nil || n <= 0 {
					return c, fmt.Errorf("%s=%q must be a positive whole number", k, v)
				}
				c.Env[k] = v
			}
		}
	}
	for _, k := range []string{"SEED_BULK_CERTS", "SEED_AGENTS"} {
		if v := get(k, ""); v != "" {
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				return c, fmt.Errorf("%s=%q must be a whole number of rows", k, v)
			}
			c.Env[k] = v
		}
	}
	if v := get("SEED_DIR", ""); v != "" {
		if !filepath.IsAbs(v) {
			v = filepath.Join(root, v)
		}
		if st, err := os.Stat(v); err != nil || !st.IsDir() {
			return c, fmt.Errorf("SEED_DIR=%s is not a directory of *.sql fixtures", v)
		}
		c.Env["SEED_DIR"] = v
	}
	if v := get("BATCH_SIZE", ""); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n <= 0 || n > 500 {
			return c, fmt.Errorf("BATCH_SIZE=%q must be a whole number from 1 to 500 (ids per bulk-renew request)", v)
		}
		c.Env["BATCH_SIZE"] = v
	}
	for _, k := range k6Passthrough {
		if v := get(k, ""); v != "" {
			if n, err := strconv.Atoi(v); err != nil || n <= 0 {
				return c, fmt.Errorf("%s=%q must be a positive whole number", k, v)
			}
			c.Env[k] = v
		}
	}

	switch v := get("EXPECT_TLS_VERSION", ""); v {
	case "":
	case "tls1.2", "tls1.3":
		c.Env["EXPECT_TLS_VERSION"] = v
	default:
		return c, fmt.Errorf("EXPECT_TLS_VERSION=%q: use tls1.2 or tls1.3 (k6's names)", v)
	}
	for _, t := range []string{"NGINX", "APACHE", "HAPROXY", "F5"} {
		if v := get("CONNECTOR_"+t+"_URL", ""); v != "" {
			c.Env["CONNECTOR_"+t+"_URL"] = v
		}
	}
	if v := get("REQUEST_TIMEOUT", ""); v != "" {
		if _, err := ParseDuration("REQUEST_TIMEOUT", v); err != nil {
			return c, err
		}
		c.Env["REQUEST_TIMEOUT"] = v
	}

	c.RunID = get("RUN_ID", "")
	if c.RunID == "" {
		c.RunID = now.UTC().Format("20060102-150405") + "-" + randomHex(2)
	}
	if !runIDRE.MatchString(c.RunID) {
		return c, fmt.Errorf("RUN_ID=%q: use lower-case letters, digits and dashes, at most 40", c.RunID)
	}
	c.ResultsDir = get("RESULTS_DIR", filepath.Join(root, "results"))
	if !filepath.IsAbs(c.ResultsDir) {
		c.ResultsDir = filepath.Join(root, c.ResultsDir)
	}
	c.Project = get("COMPOSE_PROJECT_NAME", "certctl-lt-"+strings.ReplaceAll(c.RunID, ".", "-"))

	token := get("CERTCTL_TOKEN", "lt-"+randomHex(16))
	c.Env["CERTCTL_TOKEN"] = token
	c.Env["CERTCTL_CONFIG_ENCRYPTION_KEY"] = get("CERTCTL_CONFIG_ENCRYPTION_KEY", randomHex(24))
	c.Secrets = append(c.Secrets, token, c.Env["CERTCTL_CONFIG_ENCRYPTION_KEY"])
	if v := get("CLIENT_TOKEN", ""); v != "" {
		c.Env["CLIENT_TOKEN"] = v
		c.Secrets = append(c.Secrets, v)
	}
	// Effective even when unset, so run.json says whether certctl's limiter was in the way.
	c.Env["CERTCTL_RATE_LIMIT_ENABLED"] = get("CERTCTL_RATE_LIMIT_ENABLED", "false")
	c.Env["DURATION"] = c.Duration
	c.Env["RUN_ID"] = c.RunID
	c.Env["RUN_DIR"] = c.RunDir()
	c.Env["COMPOSE_PROJECT_NAME"] = c.Project
	return c, nil
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

// DiscoverTiers finds the scenarios by glob: k6/<tier>/*.js. k6/lib, k6/test and k6/spotcheck hold no
// scenarios.
func DiscoverTiers(root string) (map[string][]Scenario, error) {
	files, err := filepath.Glob(filepath.Join(root, "k6", "*", "*.js"))
	if err != nil {
		return nil, err
	}
	tiers := map[string][]Scenario{}
	for _, f := range files {
		tier := filepath.Base(filepath.Dir(f))
		if tier == "lib" || tier == "test" || tier == SpotcheckDir {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".js")
		rel, _ := filepath.Rel(root, f)
		tiers[tier] = append(tiers[tier], Scenario{Tier: tier, Name: name, Path: filepath.ToSlash(rel)})
	}
	if len(tiers) == 0 {
		return nil, fmt.Errorf("no scenarios under %s/k6/<tier>/*.js: is this the certctl-loadtest repository?", root)
	}
	return tiers, nil
}

// Tiers that `make loadtest` runs when TIER is not given, as certctl's own harness documents its laptop
// run: the API tier and the connector tier. ACME has its own target; `all` adds it. Scale runs only when
// asked (make loadtest-scale): each of its scenarios wants a stack of its own.
var (
	defaultTiers = []string{"api", "connector"}
	allExcluded  = map[string]bool{"scale": true}
)

func selectTiers(spec string, known map[string][]Scenario) ([]string, error) {
	names := make([]string, 0, len(known))
	for t := range known {
		names = append(names, t)
	}
	sort.Strings(names)
	switch spec {
	case "default":
		var out []string
		for _, t := range defaultTiers {
			if _, ok := known[t]; ok {
				out = append(out, t)
			}
		}
		return out, nil
	case "all":
		var out []string
		for _, t := range names {
			if !allExcluded[t] {
				out = append(out, t)
			}
		}
		return out, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range strings.Split(spec, ",") {
		t = strings.TrimSpace(t)
		if _, ok := known[t]; !ok {
			return nil, fmt.Errorf("TIER=%q: unknown tier %q; known tiers: %s (or default: api,connector; all: every tier but scale)", spec, t, strings.Join(names, ", "))
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// selectScenarios keeps the named scenarios of the selected tiers (SCENARIOS=bulk_renewal,agent_storm).
func selectScenarios(spec string, all []Scenario) ([]Scenario, error) {
	byName := map[string]Scenario{}
	var names []string
	for _, s := range all {
		byName[s.Name] = s
		names = append(names, s.Name)
	}
	var out []Scenario
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		s, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("SCENARIOS=%q: no scenario %q in the selected tiers; they have: %s", spec, n, strings.Join(names, ", "))
		}
		out = append(out, s)
	}
	return out, nil
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

// LoadSpotchecks is Load for `loadtest spotcheck`: the same stack and knobs, but the scripts are
// k6/spotcheck/*.js (SCENARIOS picks some of them), run one after another, in file-name order.
// TIER does not apply.
func LoadSpotchecks(root string, getenv func(string) string, now time.Time) (Config, error) {
	c, err := Load(root, func(k string) string {
		if k == "TIER" || k == "SCENARIOS" {
			return ""
		}
		return getenv(k)
	}, now)
	if err != nil {
		return c, err
	}
	files, err := filepath.Glob(filepath.Join(root, "k6", SpotcheckDir, "*.js"))
	if err != nil || len(files) == 0 {
		return c, fmt.Errorf("no spot checks under %s/k6/%s/*.js", root, SpotcheckDir)
	}
	// The scale profile brings the seeder: SEED_BULK_CERTS certificates (10000) give the inventory
	// walk something to walk; an empty inventory is one page and measures nothing.
	c.Tiers, c.Scenarios, c.Spotcheck = []string{SpotcheckDir, "scale"}, nil, true
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		c.Scenarios = append(c.Scenarios, Scenario{Tier: SpotcheckDir, Name: strings.TrimSuffix(filepath.Base(f), ".js"), Path: filepath.ToSlash(rel)})
	}
	if spec := strings.TrimSpace(getenv("SCENARIOS")); spec != "" {
		if c.Scenarios, err = selectScenarios(spec, c.Scenarios); err != nil {
			return c, err
		}
	}
	return c, nil
}

// loadFaults reads the fault proxy's knobs, strictly: a typo in one would run the test without its fault.
func loadFaults(get func(k, def string) string, env map[string]string) error {
	if v := get("FAULT_LATENCY", ""); v != "" {
		if _, err := ParseDuration("FAULT_LATENCY", v); err != nil {
			return err
		}
		env["FAULT_LATENCY"] = v
	}
	if v := get("FAULT_ERROR_RATE", ""); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 || f > 1 {
			return fmt.Errorf("FAULT_ERROR_RATE=%q must be a number from 0 to 1 (the share of matching requests answered 500)", v)
		}
		env["FAULT_ERROR_RATE"] = v
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
