package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeRepo lays out k6/<tier>/*.js like the real repository.
func fakeRepo(t *testing.T, files ...string) string {
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("// scenario\n"), 0o644)
	}
	return root
}

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

var now = time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)

func TestTiersFoundByGlob(t *testing.T) {
	root := fakeRepo(t, "k6/api/a.js", "k6/api/b.js", "k6/scale/c.js", "k6/lib/x.js", "k6/test/y.js", "k6/acme/d.js", "k6/connector/e.js")
	c, err := Load(root, env(), now)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Tiers, ","); got != "api,connector" {
		t.Errorf("default tiers %q: the laptop run is the API and connector tiers", got)
	}
	c, err = Load(root, env("TIER=all"), now)
	if got := strings.Join(c.Tiers, ","); err != nil || got != "acme,api,connector" {
		t.Errorf("TIER=all: %q %v: every tier but scale, lib and test are not tiers", got, err)
	}
	c, err = Load(root, env("TIER=scale"), now)
	if err != nil || len(c.Scenarios) != 1 || c.Scenarios[0].Path != "k6/scale/c.js" {
		t.Errorf("TIER=scale: %+v %v", c.Scenarios, err)
	}
}

func TestBadInput(t *testing.T) {
	root := fakeRepo(t, "k6/api/list_certificates.js")
	for _, c := range []struct{ env, want string }{
		{"TIER=nope", `TIER="nope": unknown tier "nope"; known tiers: api (or default: api,connector; all: ` + AllMeaning() + `)`},
		{"DURATION=5", `DURATION="5" is not a duration`},
		{"DURATION=0s", `DURATION="0s" is not a duration`},
		{"DURATION=1m30", `DURATION="1m30" is not a duration`},
		{"START_TIMEOUT=soon", `START_TIMEOUT="soon" is not a duration`},
		{"RATE_LIST_CERTIFICATES=-3", `RATE_LIST_CERTIFICATES="-3" must be a positive whole number`},
		{"MAX_VUS=0", `MAX_VUS="0" must be a positive whole number`},
		{"ABORT_ON_FAIL=soon", `ABORT_ON_FAIL="soon" is not a duration`},
		{"ABORT_ON_FAIL=5m,DURATION=1m", `ABORT_ON_FAIL=5m is not shorter than DURATION=1m: no threshold would be judged before the load ends`},
		{"IMAGES=mine", `IMAGES="mine"`},
		{"RUN_ID=../etc", `RUN_ID="../etc"`},
		{"CERTCTL_DIST=/nonexistent", `CERTCTL_DIST=/nonexistent is not a certctl build`},
		{"FAULT_LATENCY=slow", `FAULT_LATENCY="slow" is not a duration`},
		{"FAULT_ERROR_RATE=2", `FAULT_ERROR_RATE="2" must be a number from 0 to 1`},
		{"FAULT_ROUTE=/api/v1", `FAULT_ROUTE="/api/v1": "/api/v1" is not a route`},
		{"PROGRESS_INTERVAL=often", `PROGRESS_INTERVAL="often" is not a duration`},
		{"K6_OUT=Prometheus RW", `K6_OUT="Prometheus RW": "Prometheus RW" is not an output`},
		{"K6_OUT=/results/a.csv", `"/results/a.csv" is not an output`},
	} {
		_, err := Load(root, env(strings.Split(c.env, ",")...), now)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.env, err, c.want)
		}
	}
}

// ABORT_ON_FAIL goes to k6 as given; unset, no run stops early.
func TestAbortOnFailGoesToK6(t *testing.T) {
	root := fakeRepo(t, "k6/api/list_certificates.js")
	c, err := Load(root, env("ABORT_ON_FAIL=30s", "DURATION=2m"), now)
	if err != nil || c.Env["ABORT_ON_FAIL"] != "30s" {
		t.Errorf("env %v, err %v", c.Env, err)
	}
	if c, _ := Load(root, env(), now); c.Env["ABORT_ON_FAIL"] != "" {
		t.Errorf("unset, yet ABORT_ON_FAIL=%q", c.Env["ABORT_ON_FAIL"])
	}
}

// A fault knob puts the proxy in the stack and k6 behind it.
func TestFaultsRouteK6ThroughTheProxy(t *testing.T) {
	root := fakeRepo(t, "k6/api/list_certificates.js")
	c, err := Load(root, env("FAULT_LATENCY=2s", "FAULT_ROUTE=GET /api/v1/certificates$,POST"), now)
	if err != nil || !c.Faults || c.Env["CERTCTL_URL"] != "https://certctl-faults:8443" || c.Env["FAULT_ROUTE"] != "GET /api/v1/certificates$,POST" {
		t.Errorf("faults %v, env %v, err %v", c.Faults, c.Env, err)
	}
	if args := strings.Join(Compose{Cfg: c}.base(), " "); !strings.Contains(args, "--profile faults") {
		t.Errorf("compose %s: no faults profile", args)
	}
	c, _ = Load(root, env(), now)
	if c.Faults || c.Env["CERTCTL_URL"] != "" {
		t.Errorf("no fault knob, yet faults %v, CERTCTL_URL %q", c.Faults, c.Env["CERTCTL_URL"])
	}
}

func TestDurationsK6Accepts(t *testing.T) {
	for s, want := range map[string]time.Duration{"5m": 5 * time.Minute, "1m30s": 90 * time.Second, "500ms": 500 * time.Millisecond, "1.5h": 90 * time.Minute} {
		if d, err := ParseDuration("DURATION", s); err != nil || d != want {
			t.Errorf("%s: %v %v", s, d, err)
		}
	}
}

func TestSecretsRedacted(t *testing.T) {
	root := fakeRepo(t, "k6/api/a.js")
	c, err := Load(root, env("CLIENT_TOKEN=client-secret"), now)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Redacted()
	for k, v := range r {
		for _, s := range append(c.Secrets, "client-secret") {
			if strings.Contains(v, s) {
				t.Errorf("%s=%s leaks a secret", k, v)
			}
		}
	}
	if r["CERTCTL_TOKEN"] != "[redacted]" || r["CLIENT_TOKEN"] != "[redacted]" || r["DURATION"] != "5m" {
		t.Errorf("%v", r)
	}
}

func TestRunIDIsFreshAndDirsNeverReused(t *testing.T) {
	root := fakeRepo(t, "k6/api/a.js")
	a, _ := Load(root, env(), now)
	b, _ := Load(root, env(), now)
	if a.RunID == b.RunID {
		t.Errorf("two runs in the same second share run id %s", a.RunID)
	}
	dir := filepath.Join(t.TempDir(), "r1")
	if err := makeRunDir(dir, Owner{os.Geteuid(), os.Getegid()}); err != nil {
		t.Fatal(err)
	}
	if err := makeRunDir(dir, Owner{os.Geteuid(), os.Getegid()}); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Errorf("second makeRunDir: %v", err)
	}
}

// The limiter tier runs alone, with certctl's limiter on; `all` leaves it out.
func TestLimiterTier(t *testing.T) {
	root := fakeRepo(t, "k6/api/a.js", "k6/limiter/acme_rate_limit.js", "k6/scale/c.js")
	c, err := Load(root, env("TIER=limiter"), now)
	if err != nil || c.Env["CERTCTL_RATE_LIMIT_ENABLED"] != "true" {
		t.Errorf("TIER=limiter: limiter %q, %v", c.Env["CERTCTL_RATE_LIMIT_ENABLED"], err)
	}
	c, err = Load(root, env("TIER=all"), now)
	if got := strings.Join(c.Tiers, ","); err != nil || got != "api" || c.Env["CERTCTL_RATE_LIMIT_ENABLED"] != "false" {
		t.Errorf("TIER=all: %q limiter %q %v: limiter and scale are left out", got, c.Env["CERTCTL_RATE_LIMIT_ENABLED"], err)
	}
	for _, e := range []struct{ env, want string }{
		{"TIER=api,limiter", "the limiter tier runs alone"},
		{"TIER=limiter CERTCTL_RATE_LIMIT_ENABLED=false", "measures certctl with its rate limiter on"},
	} {
		if _, err := Load(root, env(strings.Fields(e.env)...), now); err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%s: %v, want %q", e.env, err, e.want)
		}
	}
}

// The bulk-renewal pool covers one pass at the configured rate, duration and batch, never less than the
// registry's default; a given SEED_BULK_CERTS wins.
func TestBulkPoolSizedForOnePass(t *testing.T) {
	root := fakeRepo(t, "k6/scale/bulk_renewal.js", "k6/scale/agent_storm.js")
	for _, c := range []struct {
		env  string
		want string
	}{
		{"TIER=scale", "75050"},
		{"TIER=scale DURATION=10s", KnobDefault("SEED_BULK_CERTS")},
		{"TIER=scale DURATION=2m RATE_BULK_RENEWAL=10 BATCH_SIZE=100", "120100"},
		{"TIER=scale SEED_BULK_CERTS=500", "500"},
		{"TIER=scale SCENARIOS=agent_storm", ""},
	} {
		cfg, err := Load(root, env(strings.Fields(c.env)...), now)
		if err != nil || cfg.Env["SEED_BULK_CERTS"] != c.want {
			t.Errorf("%s: SEED_BULK_CERTS %q %v, want %q", c.env, cfg.Env["SEED_BULK_CERTS"], err, c.want)
		}
	}
}

// K6_OUT becomes --out arguments; run.json keeps the outputs' names, never their arguments.
func TestK6Outputs(t *testing.T) {
	root := fakeRepo(t, "k6/api/list_certificates.js")
	c, err := Load(root, env("K6_OUT=experimental-prometheus-rw, influxdb=http://u:pw@influx:8086/k6"), now)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.K6Outputs, " "); got != "--out experimental-prometheus-rw --out influxdb=http://u:pw@influx:8086/k6" {
		t.Errorf("k6 arguments %q", got)
	}
	if got := c.Redacted()["K6_OUT"]; got != "experimental-prometheus-rw,influxdb" {
		t.Errorf("run.json's K6_OUT %q", got)
	}
	if c.ProgressEvery != 20*time.Second {
		t.Errorf("progress every %v by default", c.ProgressEvery)
	}
	if c, _ := Load(root, env("PROGRESS_INTERVAL=0"), now); c.ProgressEvery != 0 {
		t.Errorf("PROGRESS_INTERVAL=0: every %v", c.ProgressEvery)
	}
	for _, k := range []string{"K6_PROMETHEUS_RW_SERVER_URL", "K6_OTEL_EXPORTER_TYPE"} {
		if !K6OutputSetting(k) {
			t.Errorf("%s does not reach k6", k)
		}
	}
	// k6 reads K6_DURATION, K6_VUS, …: they would replace the scenarios' own shapes.
	for _, k := range []string{"K6_DURATION", "K6_VUS", "K6_OUT"} {
		if K6OutputSetting(k) {
			t.Errorf("%s reaches k6", k)
		}
	}
}

// OBSERVABILITY=true adds the live view's compose file and points every k6 at its Prometheus, unless
// the caller chose another output.
func TestObservability(t *testing.T) {
	root := fakeRepo(t, "k6/api/list_certificates.js")
	c, err := Load(root, env("OBSERVABILITY=true"), now)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.K6Outputs, " "); got != "--out experimental-prometheus-rw" {
		t.Errorf("k6 outputs %q", got)
	}
	if c.Env["K6_PROMETHEUS_RW_SERVER_URL"] != "http://prometheus:9090/api/v1/write" || c.Env["K6_PROMETHEUS_RW_TREND_STATS"] != "p(95),p(99),min,max" {
		t.Errorf("remote write settings %v", c.Env)
	}
	base := strings.Join(Compose{Cfg: c}.base(), " ")
	if !strings.Contains(base, "compose.observability.yml --profile observability --profile grafana") {
		t.Errorf("compose arguments %q", base)
	}
	// Offline, Prometheus alone: the kit has no Grafana.
	c, _ = Load(root, env("OBSERVABILITY=true", "IMAGES=offline"), now)
	if base := strings.Join(Compose{Cfg: c}.base(), " "); !strings.Contains(base, "--profile observability") || strings.Contains(base, "grafana") {
		t.Errorf("offline compose arguments %q; want the observability profile without grafana's", base)
	}
	c, _ = Load(root, env("OBSERVABILITY=true", "K6_OUT=opentelemetry"), now)
	if got := strings.Join(c.K6Outputs, " "); got != "--out opentelemetry" {
		t.Errorf("K6_OUT set: k6 outputs %q", got)
	}
	c, _ = Load(root, env(), now)
	if c.Observability || strings.Contains(strings.Join(Compose{Cfg: c}.base(), " "), "observability") || len(c.K6Outputs) > 0 {
		t.Errorf("by default: %+v", c)
	}
	if _, err := Load(root, env("OBSERVABILITY=yes"), now); err == nil || !strings.Contains(err.Error(), `OBSERVABILITY="yes"`) {
		t.Errorf("OBSERVABILITY=yes: %v", err)
	}
}

// The deploy tier runs with a job processor interval its loop survives, unless told otherwise; other
// tiers run with certctl's own, stated in the configuration like the other scheduler knobs; each of its scenarios gets a stack of its own; `all` leaves it out.
func TestDeployTier(t *testing.T) {
	root := fakeRepo(t, "k6/api/a.js", "k6/deploy/deploy_latency.js", "k6/deploy/mass_rotation.js")
	const k = "CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL"
	c, err := Load(root, env("TIER=deploy"), now)
	if err != nil || c.Env[k] != DeployJobProcessorInterval || len(OneAfterAnother(c)) != 2 {
		t.Errorf("TIER=deploy: %s=%q, %d in sequence, %v", k, c.Env[k], len(OneAfterAnother(c)), err)
	}
	if c, err = Load(root, env("TIER=deploy", k+"=30s"), now); err != nil || c.Env[k] != "30s" {
		t.Errorf("TIER=deploy %s=30s: %q %v", k, c.Env[k], err)
	}
	if c, err = Load(root, env("TIER=api"), now); err != nil || c.Env[k] != "30s" ||
		c.Env["CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL"] != "1h" || c.Env["CERTCTL_VERIFY_DEPLOYMENT"] != "true" {
		t.Errorf("TIER=api: certctl's defaults are not stated: %v %v", c.Env, err)
	}
	// renewal_scan waits for certctl's scan of the scale seeder's certificates: short clocks, unless told.
	scan := fakeRepo(t, "k6/deploy/deploy_latency.js", "k6/deploy/renewal_scan.js")
	const check = "CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL"
	if c, err = Load(scan, env("TIER=deploy", "SCENARIOS=renewal_scan"), now); err != nil || c.Env[k] != RenewalScanJobProcessorInterval ||
		c.Env[check] != RenewalScanCheckInterval || strings.Join(c.Profiles, ",") != "scale" {
		t.Errorf("SCENARIOS=renewal_scan: %s=%q %s=%q profiles %v %v", k, c.Env[k], check, c.Env[check], c.Profiles, err)
	}
	if c, err = Load(scan, env("TIER=deploy", "SCENARIOS=renewal_scan", k+"=3m", check+"=2m"), now); err != nil || c.Env[k] != "3m" || c.Env[check] != "2m" {
		t.Errorf("SCENARIOS=renewal_scan with its clocks set: %q %q %v", c.Env[k], c.Env[check], err)
	}
	if c, err = Load(scan, env("TIER=deploy", "SCENARIOS=deploy_latency"), now); err != nil || c.Env[check] != "1h" || len(c.Profiles) != 0 {
		t.Errorf("SCENARIOS=deploy_latency: %s=%q profiles %v %v", check, c.Env[check], c.Profiles, err)
	}
	for _, bad := range []string{"CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL=0s", "CERTCTL_VERIFY_DEPLOYMENT=yes"} {
		if _, err := Load(root, env("TIER=api", bad), now); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if c, err = Load(root, env("TIER=all"), now); err != nil || strings.Join(c.Tiers, ",") != "api" {
		t.Errorf("TIER=all: %v %v", c.Tiers, err)
	}
	for _, v := range []string{"500ms", "soon"} {
		if _, err := Load(root, env("TIER=deploy", k+"="+v), now); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
	for _, bad := range []string{"DEPLOY_MASS_CERTS=0", "DEPLOY_MASS_CERTS=1001", "DEPLOY_STUCK_AFTER=soon", "DEPLOY_RELOAD_BROKEN=yes",
		"DEPLOY_RELOAD_LAG=-1", "DEPLOY_PROBE_URL=tlsprobe:8080", "DEPLOY_MASS_DEADLINE=10",
		"DEPLOY_FLEET_AGENTS=0", "DEPLOY_FLEET_TARGETS=x", "DEPLOY_FLEET_COMPRESSION=0", "DEPLOY_FLEET_ROTATION_DAYS=47d"} {
		if _, err := Load(root, env("TIER=deploy", bad), now); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	c, err = Load(root, env("TIER=deploy", "DEPLOY_MASS_CERTS=40", "DEPLOY_RELOAD_LAG=5", "DEPLOY_CERTS_PER_TARGET=10"), now)
	if err != nil || c.Env["DEPLOY_MASS_CERTS"] != "40" || c.Env["DEPLOY_RELOAD_LAG"] != "5" {
		t.Errorf("the deploy knobs set are not passed on: %v %v", c.Env, err)
	}
	if !K6Env(k) || !K6Env("DEPLOY_STUCK_AFTER") {
		t.Error("k6 does not get the interval or the deploy knobs: the records could not show them")
	}
}

func TestNaturalCompare(t *testing.T) {
	names := []string{"issuance_c16", "acme_order_flow", "issuance_c4", "issuance_c1", "ocsp_crl"}
	slices.SortFunc(names, naturalCompare)
	if want := []string{"acme_order_flow", "issuance_c1", "issuance_c4", "issuance_c16", "ocsp_crl"}; !slices.Equal(names, want) {
		t.Errorf("sorted %q, want %q", names, want)
	}
}

// Every deploy knob is checked by its registry type: a new type without a check is caught here, not
// on the first run that sets it.
func TestDeployKnobTypesChecked(t *testing.T) {
	for _, k := range Knobs {
		if !strings.HasPrefix(k.Name, "DEPLOY_") || k.Name == "DEPLOY_PROBE_URL" {
			continue
		}
		if err := k.check("x"); err == nil || strings.Contains(err.Error(), "no check of its own") {
			t.Errorf("%s (%s): %v", k.Name, k.Type, err)
		}
	}
}

// ACME_CHALLENGE_WRONG and ACME_REVOKE_SHARE are shares of the signed orders: refused early outside
// [0, 1], passed on to k6 inside it.
func TestOrderShares(t *testing.T) {
	root := fakeRepo(t, "k6/pki/a.js")
	for _, name := range []string{"ACME_CHALLENGE_WRONG", "ACME_REVOKE_SHARE"} {
		for _, bad := range []string{"1.5", "-0.1", "some", "NaN"} {
			if _, err := Load(root, env("TIER=pki", name+"="+bad), now); err == nil || !strings.Contains(err.Error(), "must be a share between 0 and 1") {
				t.Errorf("%s=%s: %v; want a refusal", name, bad, err)
			}
		}
		c, err := Load(root, env("TIER=pki", name+"=0.1"), now)
		if err != nil || c.Env[name] != "0.1" || !K6Env(name) {
			t.Errorf("%s=0.1 not passed on to k6: %v %v", name, c.Env[name], err)
		}
	}
}

// The saturation scenario's shape: its slow clients and their responder's latency, refused early when
// malformed, passed to k6 and (the latency) to compose's challenge-slow.
func TestSaturationKnobs(t *testing.T) {
	root := fakeRepo(t, "k6/pki/a.js")
	for _, bad := range []string{"ACME_SLOW_VUS=0", "ACME_SLOW_VUS=many", "CHALLENGE_SLOW_LATENCY=8", "CHALLENGE_SLOW_LATENCY=-1s"} {
		if _, err := Load(root, env("TIER=pki", bad), now); err == nil || !strings.Contains(err.Error(), strings.Split(bad, "=")[0]) {
			t.Errorf("%s: %v; want a refusal naming it", bad, err)
		}
	}
	c, err := Load(root, env("TIER=pki", "ACME_SLOW_VUS=45", "CHALLENGE_SLOW_LATENCY=12s"), now)
	if err != nil || c.Env["ACME_SLOW_VUS"] != "45" || c.Env["CHALLENGE_SLOW_LATENCY"] != "12s" || !K6Env("ACME_SLOW_VUS") || !K6Env("CHALLENGE_SLOW_LATENCY") {
		t.Errorf("not passed on: %v %v %v", c.Env["ACME_SLOW_VUS"], c.Env["CHALLENGE_SLOW_LATENCY"], err)
	}
	if k, _ := LookupKnob("CHALLENGE_SLOW_LATENCY"); !k.ReadBy("compose") {
		t.Error("compose's challenge-slow reads CHALLENGE_SLOW_LATENCY")
	}
}

// TIME_UNIT_<SCENARIO>: a rate a minute for an arrival-rate scenario, refused early when not s or m.
func TestRateUnit(t *testing.T) {
	root := fakeRepo(t, "k6/api/list_certificates.js")
	if _, err := Load(root, env("TIER=api", "TIME_UNIT_LIST_CERTIFICATES=h"), now); err == nil || !strings.Contains(err.Error(), `TIME_UNIT_LIST_CERTIFICATES="h": use s`) {
		t.Errorf("TIME_UNIT_LIST_CERTIFICATES=h: %v; want a refusal", err)
	}
	c, err := Load(root, env("TIER=api", "RATE_LIST_CERTIFICATES=3", "TIME_UNIT_LIST_CERTIFICATES=m"), now)
	if err != nil || c.Env["TIME_UNIT_LIST_CERTIFICATES"] != "m" || !K6Env("TIME_UNIT_LIST_CERTIFICATES") {
		t.Errorf("not passed on to k6: %v %v", c.Env["TIME_UNIT_LIST_CERTIFICATES"], err)
	}
}
