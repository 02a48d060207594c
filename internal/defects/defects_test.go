package defects

import (
	"certctl-loadtest/internal/findings"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
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

func TestRegistryRefusesWhatCannotClassify(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{`- {id: a, title: A, scenarios: [s], explains: [x count==0]}`, "needs one evidence"},
		{`- {id: a, title: A, scenarios: [s], explains: [x count==0], evidence: {counter: c, threshold: "x count==0"}}`, "needs one evidence"},
		{`- {id: a, title: A, scenarios: [s], explains: [x count==0], evidence: {threshold: "y count==0"}}`, "not among the thresholds"},
		{`- {id: a, title: A, explains: [x count==0], evidence: {counter: c}}`, "names no scenario"},
		{`- {id: a, title: A, scenarios: [s], explains: [x], evidence: {counter: c}, detector: {}}`, "field detector not found"},
		{"- {id: a, title: A, scenarios: [s], explains: [x], evidence: {counter: c}}\n- {id: a, title: B, scenarios: [s], explains: [x], evidence: {counter: c}}", "a twice"},
	} {
		if _, err := Parse([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.yaml, err, c.want)
		}
	}
}

// The PKI tier without its workarounds on v2.1.7: finalize's and OCSP's breaches are known, a latency
// budget is new; with the finalize workaround applied its defect is worked around, not absent.
func TestClassify(t *testing.T) {
	reg := registry(t)
	acme := Scenario{Name: "acme_order_flow", Judged: true, Counters: map[string]float64{"finalize_500": 12},
		Breached: []Breach{
			{Scenario: "acme_order_flow", Threshold: "acme_order_ok rate>0.99", Measured: "rate=0"},
			{Scenario: "acme_order_flow", Threshold: "acme_order_ms p(95)<2000", Measured: "p(95)=2400 ms"},
		}}
	ocsp := Scenario{Name: "ocsp_crl", Judged: true, Counters: map[string]float64{"ocsp_500": 40},
		Breached: []Breach{{Scenario: "ocsp_crl", Threshold: "pki_ocsp_ok rate>0.99"}}}
	none := Breach{Scenario: "acme_order_flow", Threshold: "acme_order_ms p(95)<2000", Measured: "no sample"}
	acme.Breached = append(acme.Breached, none)
	v := Classify(reg, "v2.1.7", []Scenario{acme, ocsp})
	acme.Breached = acme.Breached[:2]
	if want := []Breach{acme.Breached[1]}; !reflect.DeepEqual(v.New, want) {
		t.Errorf("new %+v, want %+v", v.New, want)
	}
	// The order's latency budget over no sample is finalize's; the same budget measured slow is new.
	if len(v.Known) != 3 || v.Known[0].Defects[0] != "acme-finalize" || v.Known[1].Breach != none || v.Known[2].Defects[0] != "ocsp-500" {
		t.Errorf("known %+v", v.Known)
	}
	if len(v.NotAppearing) != 0 {
		t.Errorf("not appearing %+v", v.NotAppearing)
	}

	// The same breach without its evidence (finalize answered, the orders failed elsewhere) is new.
	acme.Counters = map[string]float64{}
	if v := Classify(reg, "v2.1.7", []Scenario{acme}); len(v.New) != 2 || len(v.Known) != 0 {
		t.Errorf("without evidence: %+v", v)
	}
	// Finalize fixed, no workaround: the defect seen on this build did not appear.
	clean := Scenario{Name: "acme_order_flow", Judged: true, Counters: map[string]float64{"finalize_500": 0}, Setup: map[string]any{"acme_finalize_workaround": false}}
	if v := Classify(reg, "v2.1.7", []Scenario{clean}); len(v.NotAppearing) != 1 || v.NotAppearing[0].Defect != "acme-finalize" {
		t.Errorf("fixed: %+v", v.NotAppearing)
	}
	// Worked around, or on a build it was never seen on, or a setup that judged nothing: not "fixed?".
	around := clean
	around.Setup = map[string]any{"acme_finalize_workaround": true}
	aborted := clean
	aborted.Judged = false
	for name, c := range map[string]struct {
		build string
		sc    Scenario
	}{"worked around": {"v2.1.7", around}, "another build": {"v9.9.9", clean}, "aborted": {"v2.1.7", aborted}} {
		if v := Classify(reg, c.build, []Scenario{c.sc}); len(v.NotAppearing) != 0 {
			t.Errorf("%s: %+v", name, v.NotAppearing)
		}
	}
}

// A prefix counter (the deploy tier's stolen_<target type>) and the deploy tier's own job processor
// interval as the workaround.
func TestClassifyPrefixCounterAndSetupValue(t *testing.T) {
	reg := registry(t)
	stolen := Scenario{Name: "deploy_latency", Judged: true, Counters: map[string]float64{"stolen_nginx": 0, "stolen_f5": 3},
		Setup: map[string]any{"job_processor_interval": "10s"}, Breached: []Breach{{Scenario: "deploy_latency", Threshold: "deploy_loop_ok rate>0.95"}}}
	if v := Classify(reg, "main-151107c", []Scenario{stolen}); len(v.Known) != 1 || v.Known[0].Defects[0] != "job-processor-steals" {
		t.Errorf("stolen: %+v", v)
	}
	held := Scenario{Name: "deploy_latency", Judged: true, Counters: map[string]float64{"stolen_f5": 0}, Setup: map[string]any{"job_processor_interval": "1h"}}
	if v := Classify(reg, "main-151107c", []Scenario{held}); len(v.NotAppearing) != 0 || len(v.New) != 0 {
		t.Errorf("the deploy tier's own interval: %+v", v)
	}
}

// A threshold as evidence: the session's added cost measured above its median budget shows the key
// derivation; the same budget over no sample (no login got a session) shows nothing, and the breaches
// are the refused login's alone.
func TestClassifyThresholdEvidenceNeedsASample(t *testing.T) {
	reg := registry(t)
	slow := Scenario{Name: "oidc_login", Judged: true, Setup: map[string]any{"workarounds": true}, Breached: []Breach{
		{Scenario: "oidc_login", Threshold: "session_added_ms med<50", Measured: "med=170 ms"},
		{Scenario: "oidc_login", Threshold: "oidc_callback_ms p(99)<25", Measured: "p(99)=1000 ms"},
	}}
	if v := Classify(reg, "v2.1.7", []Scenario{slow}); len(v.New) != 0 || len(v.Known) != 2 || v.Known[1].Defects[0] != "session-pbkdf2-per-request" {
		t.Errorf("measured: %+v", v)
	}
	refused := Scenario{Name: "oidc_login", Judged: true, Counters: map[string]float64{"initiate_401": 5}, Setup: map[string]any{"workarounds": false},
		Breached: []Breach{
			{Scenario: "oidc_login", Threshold: "oidc_initiate_401 count==0", Measured: "count=5"},
			{Scenario: "oidc_login", Threshold: "session_added_ms med<50", Measured: "no sample"},
		}}
	v := Classify(reg, "v2.1.7", []Scenario{refused})
	for _, k := range v.Known {
		if len(k.Defects) != 1 || k.Defects[0] != "auth-routes-behind-auth" {
			t.Errorf("refused: %+v", k)
		}
	}
	// Nor does the derivation's evidence, over no sample, say it is gone.
	if len(v.Known) != 2 || len(v.New) != 0 || len(v.NotAppearing) != 0 {
		t.Errorf("refused: %+v", v)
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
	for _, e := range registry(t) {
		explained := map[string]bool{}
		for _, sc := range e.Scenarios {
			h := held(sc)
			if len(h) == 0 {
				t.Errorf("%s: scenario %s has no budget in k6/lib/thresholds.json", e.ID, sc)
			}
			for _, th := range e.Explains {
				if h[strings.TrimSuffix(th, NoSample)] {
					explained[th] = true
				}
			}
		}
		for _, th := range e.Explains {
			if !explained[th] {
				t.Errorf("%s explains %q, which none of %v holds", e.ID, th, e.Scenarios)
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
