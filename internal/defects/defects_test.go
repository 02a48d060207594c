package defects

import (
	"certctl-loadtest/internal/findings"
	"certctl-loadtest/internal/testbed"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func registry(t *testing.T) []Entry {
	t.Helper()
	reg, err := Registry()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// Every entry is a defect docs/certctl-findings.md explains under its id.
func TestRegistryNamesFindings(t *testing.T) {
	doc, err := os.ReadFile("../../docs/certctl-findings.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range registry(t) {
		if !strings.Contains(string(doc), `<a id="`+e.ID+`"></a>`) {
			t.Errorf("%s: no such anchor in docs/certctl-findings.md", e.ID)
		}
	}
}

// registry.yaml, the copy a team starts its DEFECTS_REGISTRY from, reads as the built-in registry (the
// records' registry parts) does: make docs renders it, and a stale one fails TestDocsMatchTheCode.
func TestRegistryFileIsTheBuiltIn(t *testing.T) {
	b, err := os.ReadFile("registry.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	builtIn := registry(t)
	for i := range builtIn {
		builtIn[i].Reproduced = nil // the records' own; a registry file does not say
	}
	if !reflect.DeepEqual(file, builtIn) {
		t.Errorf("registry.yaml is not the records' registry: run make docs")
	}
}

func TestRegistryRefusesWhatCannotClassify(t *testing.T) {
	const ok = `id: a, title: A, scenarios: [s], evidence: {counter: c}`
	for _, c := range []struct{ yaml, want string }{
		{`- {id: a, title: A, scenarios: [s], explains: [x count==0]}`, "needs one evidence"},
		{`- {id: a, title: A, scenarios: [s], explains: [x count==0], evidence: {counter: c, setup: v, at_least: 1}}`, "needs one evidence"},
		// A budget as evidence: what session-pbkdf2-per-request had, which made any slow login known.
		{`- {id: a, title: A, scenarios: [s], explains: ["x med<50"], evidence: {threshold: "x med<50"}}`, "is a threshold"},
		{`- {id: a, title: A, scenarios: [s], explains: ["x med<50"], evidence: {setup: v}}`, "at_least above 0"},
		{`- {id: a, title: A, scenarios: [s], explains: [x count==0], evidence: {setup: v, at_least: 5}}`, "a measured cost accounts for no number"},
		{`- {id: a, title: A, explains: [x count==0], evidence: {counter: c}}`, "names no scenario"},
		{`- {` + ok + `, explains: ["x p(95)<1 (no sample)"]}`, "names no operation it stops"},
		{`- {` + ok + `, explains: [x count>0]}`, "mark it"},
		{`- {` + ok + `, explains: [x fast]}`, "not a metric and a threshold expression"},
		{`- {` + ok + `, stops: "x p(95)<1", explains: [x count==0]}`, "not a rate threshold"},
		{`- {` + ok + `, explains: [x count==0], recorded: [{build: b, testbed: {cpus: 2}, scenarios: {t: {rate_per_s: 1, largest: {"x count==0": 1}}}}]}`, "not among its scenarios"},
		{`- {` + ok + `, explains: ["x p(95)<1"], recorded: [{build: b, testbed: {cpus: 2}, scenarios: {s: {rate_per_s: 1, largest: {"y p(95)<1": 1}}}}]}`, "does not explain as measured"},
		{`- {` + ok + `, explains: ["x p(95)<1"], recorded: [{build: b, scenarios: {}}]}`, "no build or no testbed"},
		{`- {` + ok + `, explains: [x], detector: {}}`, "field detector not found"},
		{"- {" + ok + ", explains: [x count==0]}\n- {" + ok + ", explains: [x count==0]}", "a: twice"},
	} {
		if _, err := Parse([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.yaml, err, c.want)
		}
	}
}

// th is a broken threshold as a record states it: value v of its aggregate; a rate's samples with
// trues true samples of n.
func th(key string, v float64) Threshold {
	p, _ := parse(key)
	m := p.agg + "=" + num(v)
	return Threshold{Key: key, Value: &v, Measured: m}
}

func rate(key string, trues, n float64) Threshold {
	r := round(trues/n, 6)
	f := n - trues
	x := th(key, r)
	x.Passes, x.Fails = &trues, &f
	return x
}

func held(t Threshold) Threshold { t.OK = true; return t }

func noSample(key string) Threshold {
	return Threshold{Key: key, NoSample: true, Measured: "no sample"}
}

func classify(t *testing.T, reg []Entry, build string, sc Scenario) Verdict {
	t.Helper()
	sc.Judged = true
	return Classify(reg, Run{Build: build, Testbed: &bed}, []Scenario{sc})
}

var bed = testbed.Calibration{CPUs: 2, CPUModel: "AMD EPYC", CPUSingle: 25000, CPUAll: 48000, FsyncP50Ms: 0.2}

func keys(bs []Breach) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Threshold)
	}
	return out
}

func knownKeys(ks []Known) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Threshold)
	}
	return out
}

// ACME orders on v2.1.7: every failure a finalize 500 is known, the order's latency over no sample too;
// a latency measured slow is new.
func TestClassify(t *testing.T) {
	reg := registry(t)
	acme := Scenario{Name: "acme_order_flow", Counters: map[string]float64{"finalize_500": 12}, Thresholds: []Threshold{
		rate("acme_order_ok rate>0.99", 0, 12), th("acme_finalize_500 count==0", 12), rate("http_req_failed rate<0.01", 12, 60),
		rate("checks rate>0.99", 36, 48), noSample("acme_order_ms p(95)<2000"),
	}}
	v := classify(t, reg, "v2.1.7", acme)
	if len(v.New) != 0 || len(v.Known) != 5 || v.Known[0].Defects[0] != "acme-finalize" {
		t.Errorf("every order a finalize 500: %+v", v)
	}
	if want := "finalize_500 accounts for 12 of 12 failed"; v.Known[0].Why != want {
		t.Errorf("why %q, want %q", v.Known[0].Why, want)
	}
	acme.Thresholds[4] = th("acme_order_ms p(95)<2000", 2400)
	if v := classify(t, reg, "v2.1.7", acme); !slices.Equal(keys(v.New), []string{"acme_order_ms p(95)<2000"}) {
		t.Errorf("a slow order: new %v", keys(v.New))
	}
	// Without the signature (finalize answered, the orders failed elsewhere) every breach is new.
	acme.Counters = map[string]float64{}
	if v := classify(t, reg, "v2.1.7", acme); len(v.New) != 5 || len(v.Known) != 0 {
		t.Errorf("without evidence: %+v", v)
	}
}

// Proportion: one finalize 500 beside downloads that broke explains one failed order, not forty; the
// failures left over are judged by the budget itself.
func TestClassifyExplainsOnlyWhatTheSignatureAccountsFor(t *testing.T) {
	reg := registry(t)
	one := Scenario{Name: "acme_order_flow", Counters: map[string]float64{"finalize_500": 1}, Thresholds: []Threshold{
		rate("acme_order_ok rate>0.99", 60, 100), th("acme_finalize_500 count==0", 1), rate("http_req_failed rate<0.01", 1, 500),
		rate("checks rate>0.99", 460, 500),
	}}
	v := classify(t, reg, "v2.1.7", one)
	if want := []string{"acme_order_ok rate>0.99", "checks rate>0.99"}; !slices.Equal(keys(v.New), want) {
		t.Errorf("new %v, want %v", keys(v.New), want)
	}
	if want := "acme-finalize: finalize_500 accounts for 1 of 40 failed; without them the rate is 0.6061"; v.New[0].Why != want {
		t.Errorf("why %q\nwant %q", v.New[0].Why, want)
	}
	// The order's latency over no sample: some orders succeeded, so it is not the defect's; every
	// order failing with fewer finalize 500s than failures is not either.
	one.Thresholds = []Threshold{rate("acme_order_ok rate>0.99", 0, 40), noSample("acme_order_ms p(95)<2000")}
	if v := classify(t, reg, "v2.1.7", one); len(v.New) != 2 || !strings.Contains(v.New[1].Why, "40 failed attempts of acme_order_ok rate>0.99, 1 of them the defect's") {
		t.Errorf("no sample, one finalize 500 of forty failures: %+v", v.New)
	}
	// A small rest stays within the budget: 1 failure left of 1,000 requests is under 1 %.
	one.Counters["finalize_500"] = 30
	one.Thresholds = []Threshold{rate("http_req_failed rate<0.01", 31, 1000)}
	if v := classify(t, reg, "v2.1.7", one); len(v.Known) != 1 {
		t.Errorf("a rest within budget: %+v", v)
	}
	// Counts: a front-channel logout that stopped revoking is not the back-channel defect's.
	logout := Scenario{Name: "logout", Counters: map[string]float64{"backchannel_kept": 3}, Setup: map[string]any{"bcl_sid": true},
		Thresholds: []Threshold{th("session_revoked_accepted count==0", 6), rate("session_revoked_refused rate>0.99", 14, 20)}}
	if v := classify(t, reg, "main-151107c", logout); len(v.New) != 2 {
		t.Errorf("front-channel kept too: %+v", v)
	}
	logout.Thresholds = []Threshold{th("session_revoked_accepted count==0", 3), rate("session_revoked_refused rate>0.99", 17, 20)}
	if v := classify(t, reg, "main-151107c", logout); len(v.Known) != 2 || len(v.New) != 0 {
		t.Errorf("back-channel only: %+v", v)
	}
	// A filter that matched nothing fails its checks without the cap's signature: the capped case's
	// two checks are the defect's, the other two are new.
	bulk := Scenario{Name: "bulk_revoke", Counters: map[string]float64{"filter_capped": 1},
		Thresholds: []Threshold{th("bulk_revoke_filter_capped count==0", 1), rate("checks{way:owner} rate==1", 2, 6)}}
	if v := classify(t, reg, "v2.1.7", bulk); !slices.Equal(keys(v.New), []string{"checks{way:owner} rate==1"}) {
		t.Errorf("bulk revoke: %+v", v)
	}
	// The limiter: a missing Replay-Nonce fails checks the 429s' shape does not account for.
	limiter := Scenario{Name: "acme_rate_limit", Counters: map[string]float64{"rate_limit_text_plain": 300},
		Thresholds: []Threshold{th("acme_rate_limit_shape_ok count>0", 0), th("acme_rate_limit_other count==0", 300), rate("checks rate>0.99", 5400, 6000)}}
	if v := classify(t, reg, "v2.1.7", limiter); len(v.Known) != 2 || !slices.Equal(keys(v.New), []string{"checks rate>0.99"}) {
		t.Errorf("limiter with nonces missing: known %v new %v", knownKeys(v.Known), keys(v.New))
	}
	limiter.Thresholds[2] = rate("checks rate>0.99", 5700, 6000)
	if v := classify(t, reg, "v2.1.7", limiter); len(v.Known) != 3 {
		t.Errorf("limiter: %+v", v)
	}
	// 429s of another shape than certctl's (a proxy's) are not its.
	limiter.Counters["rate_limit_text_plain"] = 100
	if v := classify(t, reg, "v2.1.7", limiter); len(v.New) != 3 {
		t.Errorf("other 429s: %+v", v)
	}
}

// A workaround in force means the entry explains nothing: agents that stop finishing jobs under the
// deploy tier's 1 h job processor are not the steal. A build the defect was never seen on explains
// nothing either.
func TestClassifyWorkaroundsAndSeen(t *testing.T) {
	reg := registry(t)
	stuck := Scenario{Name: "deploy_latency", Counters: map[string]float64{"stolen": 3, "stolen_nginx": 0, "stolen_f5": 3},
		Setup: map[string]any{"job_processor_interval": "10s"}, Thresholds: []Threshold{rate("deploy_loop_ok rate>0.95", 0, 3)}}
	if v := classify(t, reg, "main-151107c", stuck); len(v.Known) != 1 || v.Known[0].Defects[0] != "job-processor-steals" {
		t.Errorf("a 10 s job processor: %+v", v)
	}
	stuck.Setup["job_processor_interval"] = "1h"
	v := classify(t, reg, "main-151107c", stuck)
	if len(v.New) != 1 || v.New[0].Why != "job-processor-steals: worked around in this run (job_processor_interval=1h)" || len(v.NotAppearing) != 0 {
		t.Errorf("the deploy tier's own interval: %+v", v)
	}
	acme := Scenario{Name: "acme_order_flow", Counters: map[string]float64{"finalize_500": 12}, Thresholds: []Threshold{rate("acme_order_ok rate>0.99", 0, 12)}}
	// A build the registry never names (a pull request's head): no claim of fixed, the signature says it.
	if v := classify(t, reg, "pr-head", acme); len(v.Known) != 1 || len(v.New) != 0 {
		t.Errorf("a build the registry does not name: %+v", v)
	}
	named := slices.Clone(reg)
	i := slices.IndexFunc(named, func(e Entry) bool { return e.ID == "ocsp-500" })
	named[i].Seen = append(slices.Clone(named[i].Seen), "v9.9.9")
	if v := classify(t, named, "v9.9.9", acme); len(v.New) != 1 || v.New[0].Why != "acme-finalize: not recorded on v9.9.9" {
		t.Errorf("a build the registry names, without this defect: %+v", v)
	}
}

// What did not appear: finalize fixed, no workaround. Worked around, on a build it was never seen
// on, a setup that judged nothing, or a setup value setup() could not measure: not "fixed?".
func TestClassifyNotAppearing(t *testing.T) {
	reg := registry(t)
	clean := Scenario{Name: "acme_order_flow", Judged: true, Counters: map[string]float64{"finalize_500": 0}, Setup: map[string]any{"acme_finalize_workaround": false}}
	if v := Classify(reg, Run{Build: "v2.1.7"}, []Scenario{clean}); len(v.NotAppearing) != 1 || v.NotAppearing[0].Defect != "acme-finalize" {
		t.Errorf("fixed: %+v", v.NotAppearing)
	}
	around := clean
	around.Setup = map[string]any{"acme_finalize_workaround": true}
	aborted := clean
	aborted.Judged = false
	noLogin := Scenario{Name: "session_api", Judged: true}
	for name, c := range map[string]struct {
		build string
		sc    Scenario
	}{"worked around": {"v2.1.7", around}, "another build": {"v9.9.9", clean}, "aborted": {"v2.1.7", aborted}, "no session to measure": {"v2.1.7", noLogin}} {
		if v := Classify(reg, Run{Build: c.build}, []Scenario{c.sc}); len(v.NotAppearing) != 0 {
			t.Errorf("%s: %+v", name, v.NotAppearing)
		}
	}
	cheap := Scenario{Name: "session_api", Judged: true, Setup: map[string]any{"session_cost_ms": 0.4}}
	if v := Classify(reg, Run{Build: "v2.1.7"}, []Scenario{cheap}); len(v.NotAppearing) != 1 || v.NotAppearing[0].Defect != "session-pbkdf2-per-request" {
		t.Errorf("a session as cheap as a key: %+v", v.NotAppearing)
	}
}

// Magnitude: a latency is the derivation's up to what was recorded on this build, at this load, on this
// testbed, and its noise; a stall of seconds on the callback is worse than recorded; on another testbed
// or at another rate the size cannot be judged; without the setup's measured cost, nothing is known.
func TestClassifyMagnitude(t *testing.T) {
	reg, err := Parse([]byte(`
- id: session-pbkdf2-per-request
  title: T
  seen: [main-151107c, v2.1.7]
  scenarios: [oidc_login]
  evidence: {setup: session_cost_ms, at_least: 20}
  explains: ["oidc_callback_ms p(99)<25", "session_added_ms med<50"]
  recorded:
    - build: main-151107c
      date: "2026-11-29"
      command: make loadtest-auth
      testbed: {cpus: 2, cpu_model: AMD EPYC, cpu_single_ops_s: 26000, cpu_all_ops_s: 50000, fsync_p50_ms: 0.25}
      scenarios:
        oidc_login: {rate_per_s: 0.5, runs: 3, largest: {"oidc_callback_ms p(99)<25": 1404, "session_added_ms med<50": 150}}
`))
	if err != nil {
		t.Fatal(err)
	}
	login := func(callback, added float64) Scenario {
		return Scenario{Name: "oidc_login", RatePerS: 0.5, Setup: map[string]any{"session_cost_ms": 120.0},
			Thresholds: []Threshold{th("oidc_callback_ms p(99)<25", callback), th("session_added_ms med<50", added)}}
	}
	if v := classify(t, reg, "main-151107c", login(1800, 160)); len(v.Known) != 2 {
		t.Errorf("within noise: %+v", v)
	}
	// On a build the registry does not name, a latency's size is unjudged, not known at any size.
	if v := classify(t, reg, "pr-head", login(1800, 160)); len(v.Unjudged) != 2 || !strings.Contains(v.Unjudged[0].Why, "pr-head is a build the registry does not name") {
		t.Errorf("a latency on a build the registry does not name: %+v", v)
	}
	v := classify(t, reg, "main-151107c", login(4600, 160))
	if len(v.Worse) != 1 || v.Worse[0].Threshold != "oidc_callback_ms p(99)<25" || len(v.Known) != 1 {
		t.Errorf("a stall on the callback: %+v", v)
	}
	if want := "4600 past the 1404 recorded on main-151107c (2026-11-29) by more than its noise (2246.4)"; v.Worse[0].Why != want {
		t.Errorf("why %q\nwant %q", v.Worse[0].Why, want)
	}
	// A median has less noise than a tail.
	if v := classify(t, reg, "main-151107c", login(1400, 200)); len(v.Worse) != 1 || v.Worse[0].Threshold != "session_added_ms med<50" {
		t.Errorf("the median past 1.25×: %+v", v)
	}
	faster := login(1800, 160)
	faster.RatePerS = 1
	if v := classify(t, reg, "main-151107c", faster); len(v.Unjudged) != 2 || v.Unjudged[0].Why != "recorded at 0.5/s, this run at 1/s" {
		t.Errorf("another rate: %+v", v)
	}
	other := bed
	other.CPUs = 4
	if v := Classify(reg, Run{Build: "main-151107c", Testbed: &other}, []Scenario{func() Scenario { s := login(1800, 160); s.Judged = true; return s }()}); len(v.Unjudged) != 2 || !strings.Contains(v.Unjudged[0].Why, "another testbed (2 CPUs vs 4)") {
		t.Errorf("another testbed: %+v", v)
	}
	if v := classify(t, reg, "v2.1.7", login(1800, 160)); len(v.New) != 2 {
		t.Errorf("a build without a recording: %+v", v)
	}
	// Beside the registry's entries that name the callback only over no sample, the reason is the one
	// entry that names it as measured.
	full := append(registry(t)[:0:0], registry(t)...)
	full = slices.DeleteFunc(full, func(e Entry) bool { return e.ID == "session-pbkdf2-per-request" })
	full = append(full, reg[0])
	if v := classify(t, full, "v2.1.7", login(1800, 160)); len(v.New) != 2 || v.New[0].Why != "session-pbkdf2-per-request: its size was never recorded on v2.1.7" {
		t.Errorf("the reason among entries: %q", v.New[0].Why)
	}
	cheap := login(1800, 160)
	cheap.Setup["session_cost_ms"] = 3.0
	if v := classify(t, reg, "main-151107c", cheap); len(v.New) != 2 || !strings.Contains(v.New[0].Why, "its signature is not in the record (setup session_cost_ms ≥ 20)") {
		t.Errorf("without the derivation's cost: %+v", v)
	}
}

// Every entry's evidence is independent of what it explains: a record in which every threshold it
// explains is broken, far past any bound, without the entry's signature, is new throughout; and the
// signature's counter is one a scenario of k6/ records (a renamed counter would make every breach new
// without a word, a removed one the entry's evidence a budget again).
func TestEvidenceIsIndependent(t *testing.T) {
	src := k6Source(t)
	for _, e := range registry(t) {
		for _, sc := range e.Scenarios {
			s := Scenario{Name: sc, RatePerS: 1, Counters: map[string]float64{}, Setup: map[string]any{}}
			for _, x := range e.Explains {
				p, _ := parse(x.Threshold)
				switch {
				case x.NoSample && p.agg == "count":
					s.Thresholds = append(s.Thresholds, th(x.Threshold, 0))
				case x.NoSample:
					s.Thresholds = append(s.Thresholds, noSample(x.Threshold))
				case p.agg == "rate" && (p.op == "<" || p.op == "<="):
					s.Thresholds = append(s.Thresholds, rate(x.Threshold, 1000, 1000))
				case p.agg == "rate":
					s.Thresholds = append(s.Thresholds, rate(x.Threshold, 0, 1000))
				default:
					s.Thresholds = append(s.Thresholds, th(x.Threshold, 1e6))
				}
			}
			if e.Stops != "" && !slices.ContainsFunc(e.Explains, func(x Explained) bool { return x.Threshold == e.Stops }) {
				s.Thresholds = append(s.Thresholds, rate(e.Stops, 0, 1000))
			}
			for _, seen := range e.Seen {
				v := classify(t, []Entry{e}, seen, s)
				if len(v.Known)+len(v.Worse)+len(v.Unjudged) != 0 {
					t.Errorf("%s on %s, %s: without its signature it explains %v", e.ID, seen, sc, knownKeys(append(append(v.Known, v.Worse...), v.Unjudged...)))
				}
			}
		}
		name := strings.TrimSuffix(strings.TrimSuffix(e.Evidence.Counter+e.Evidence.Setup, "*"), "_")
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).Match(src) {
			t.Errorf("%s: evidence %s: no scenario of k6/ records it", e.ID, name)
		}
	}
}

func k6Source(t *testing.T) []byte {
	t.Helper()
	var all []byte
	for _, g := range []string{"../../k6/*/*.js", "../../k6/*/lib/*.js"} {
		files, _ := filepath.Glob(g)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
	}
	return all
}

// A registry survives a round trip through YAML (the e2e tests write edited registries).
func TestRegistryRoundTrip(t *testing.T) {
	reg := registry(t)
	for i := range reg {
		reg[i].Reproduced = nil
	}
	b, err := yaml.Marshal(reg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !reflect.DeepEqual(again, reg) {
		t.Errorf("round trip changed the registry:\n%s", b)
	}
}

// Ids are the findings' anchors: lower case words joined by hyphens.
func TestIDs(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	for _, e := range registry(t) {
		if !re.MatchString(e.ID) {
			t.Errorf("id %q", e.ID)
		}
	}
}

// Each entry explains thresholds its scenarios hold (k6/lib/thresholds.json, `_extends` resolved): a
// renamed budget or scenario would otherwise leave its breaches new without a word.
func TestRegistryNamesBudgets(t *testing.T) {
	// The tiers' budgets (thresholds.json) and the spot checks' baselines (spotchecks.json, under
	// "thresholds").
	budgets := map[string]map[string]any{}
	for _, f := range []string{"thresholds.json", "spotchecks.json"} {
		b, err := os.ReadFile("../../k6/lib/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal(b, &all); err != nil {
			t.Fatal(err)
		}
		for name, raw := range all {
			var m map[string]any
			if json.Unmarshal(raw, &m) != nil {
				continue
			}
			if th, ok := m["thresholds"].(map[string]any); ok && f == "spotchecks.json" {
				m = th
			}
			budgets[name] = m
		}
	}
	var held func(name string) map[string]bool
	held = func(name string) map[string]bool {
		out := map[string]bool{}
		for metric, v := range budgets[name] {
			switch exprs := v.(type) {
			case string:
				if metric == "_extends" {
					for k := range held(exprs) {
						out[k] = true
					}
				}
			case []any:
				for _, e := range exprs {
					out[metric+" "+e.(string)] = true
				}
			}
		}
		return out
	}
	// A scenario's budget is the one its file names (defineScenario's budget), or its own name.
	budgetOf := func(sc string) string {
		files, _ := filepath.Glob("../../k6/*/" + sc + ".js")
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				if m := regexp.MustCompile(`budget: '([a-z0-9_]+)'`).FindSubmatch(b); m != nil {
					return string(m[1])
				}
			}
		}
		return sc
	}
	for _, e := range registry(t) {
		explained := map[string]bool{}
		for _, sc := range e.Scenarios {
			h := held(budgetOf(sc))
			if len(h) == 0 {
				t.Errorf("%s: scenario %s has no budget in k6/lib/thresholds.json", e.ID, sc)
			}
			for _, x := range e.Explains {
				if h[x.Threshold] {
					explained[x.String()] = true
				}
			}
			if e.Stops != "" && !h[e.Stops] && slices.ContainsFunc(e.Explains, func(x Explained) bool { return x.NoSample && h[x.Threshold] }) {
				t.Errorf("%s stops %q, which %s does not hold", e.ID, e.Stops, sc)
			}
		}
		for _, x := range e.Explains {
			if !explained[x.String()] {
				t.Errorf("%s explains %q, which none of %v holds", e.ID, x, e.Scenarios)
			}
		}
	}
}

// The registry's defects are findings of the catalogue, seen on builds the catalogue has them observed
// on, and each carries the builds its reproduction script reproduces it on.
func TestRegistryAgreesWithTheCatalogue(t *testing.T) {
	c, err := findings.Load()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Registry()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range reg {
		e, ok := c.Find(d.ID)
		if !ok {
			t.Errorf("registry entry %s is not in the catalogue", d.ID)
			continue
		}
		if e.Kind != findings.KindDefect {
			t.Errorf("registry entry %s is a %s in the catalogue, not a defect", d.ID, e.Kind)
		}
		for _, b := range d.Seen {
			if how := e.Builds[b]; how != findings.Observed {
				t.Errorf("registry entry %s is seen on %s, the catalogue says %q", d.ID, b, how)
			}
		}
		if !slices.Equal(d.Reproduced, e.Reproduces) {
			t.Errorf("registry entry %s carries reproduced %v, the catalogue %v", d.ID, d.Reproduced, e.Reproduces)
		}
	}
}

// A recording is the largest value of each latency the entry explains over runs of one build, testbed
// and rate, held thresholds included; runs without the signature, at another rate or on another
// testbed are refused; and what it records, the classification then explains up to.
func TestRecord(t *testing.T) {
	reg := registry(t)
	e := reg[slices.IndexFunc(reg, func(e Entry) bool { return e.ID == "session-pbkdf2-per-request" })]
	login := func(callback float64, ok bool) Scenario {
		c := th("oidc_callback_ms p(99)<25", callback)
		c.OK = ok
		return Scenario{Name: "oidc_login", Judged: true, RatePerS: 0.5, Setup: map[string]any{"session_cost_ms": 150.0},
			Thresholds: []Threshold{c, th("session_added_ms med<50", 170), rate("oidc_login_ok rate>0.99", 30, 30)}}
	}
	other := bed
	other.CPUSingle = 26000
	runs := []RecordedRun{{Name: "a", Testbed: &bed, Scenarios: []Scenario{login(900, false)}}, {Name: "b", Testbed: &other, Scenarios: []Scenario{login(1400, false)}}}
	r, err := e.Record("main-151107c", "2026-11-29", "make loadtest-auth", runs)
	if err != nil {
		t.Fatal(err)
	}
	want := RecordedLoad{RatePerS: 0.5, Runs: 2, Largest: map[string]float64{"oidc_callback_ms p(99)<25": 1400, "session_added_ms med<50": 170}}
	if !reflect.DeepEqual(r.Scenarios["oidc_login"], want) || r.Testbed.CPUSingle != 26000 || r.Testbed.CPUs != 2 {
		t.Errorf("recording %+v", r)
	}
	e.Recorded = []Recording{r}
	if v := classify(t, []Entry{e}, "main-151107c", login(2000, false)); len(v.Known) != 2 {
		t.Errorf("within what it recorded: %+v", v)
	}
	for name, c := range map[string]struct {
		runs []RecordedRun
		want string
	}{
		"another rate":     {[]RecordedRun{runs[0], {Name: "c", Testbed: &bed, Scenarios: []Scenario{func() Scenario { s := login(900, false); s.RatePerS = 1; return s }()}}}, "ran at 1/s, the runs before it at 0.5/s"},
		"no signature":     {[]RecordedRun{{Name: "d", Testbed: &bed, Scenarios: []Scenario{func() Scenario { s := login(900, false); s.Setup = nil; return s }()}}}, "without the defect's signature"},
		"another testbed":  {[]RecordedRun{runs[0], {Name: "e", Testbed: &testbed.Calibration{CPUs: 4, CPUModel: "AMD EPYC"}, Scenarios: []Scenario{login(900, false)}}}, "another testbed"},
		"no such scenario": {[]RecordedRun{{Name: "f", Testbed: &bed, Scenarios: []Scenario{{Name: "list_certificates", Judged: true}}}}, "no run holds a scenario"},
	} {
		if _, err := e.Record("main-151107c", "", "", c.runs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", name, err, c.want)
		}
	}
}

// A finding's summary sentence says what the harness offers, or, when its registry entry's workaround
// held in the run, the record's words for that; a scenario that counts nothing says nothing.
func TestSentences(t *testing.T) {
	says, err := Sentences()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(says, func(s Sentence) bool { return s.ID == "ocsp-500" })
	if i < 0 {
		t.Fatal("no sentence for ocsp-500")
	}
	sc := Scenario{Name: "ocsp_crl", Counters: map[string]float64{"ocsp_500": 76}}
	want := "ocsp_crl: OCSP answered 500 76 times: this certctl's local issuer cannot create its OCSP responder key, so it answers no OCSP request (docs/certctl-findings.md#ocsp-500); OCSP_RESPONDER_WORKAROUND=1 gives it a responder, so OCSP is measured"
	if got, ok := says[i].In(sc); !ok || got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	sc.Setup = map[string]any{"ocsp_responder_workaround": true}
	if got, _ := says[i].In(sc); !strings.HasSuffix(got, "; the workaround was applied: this certctl fails even with it") {
		t.Errorf("worked around: %q", got)
	}
	if _, ok := says[i].In(Scenario{Name: "ocsp_crl"}); ok {
		t.Error("a scenario that counted nothing got a sentence")
	}
}
