package diagnosis

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"
)

// Rule is one entry of rules.yaml.
type Rule struct {
	ID     string      `yaml:"id"`
	Kind   string      `yaml:"kind"`
	When   []Condition `yaml:"when"`
	Unless []string    `yaml:"unless"`
	Say    string      `yaml:"say"`
	say    *template.Template
}

// Condition compares one fact with a number; every bound set must hold.
type Condition struct {
	Fact string   `yaml:"fact"`
	GE   *float64 `yaml:"ge"`
	GT   *float64 `yaml:"gt"`
	LE   *float64 `yaml:"le"`
	LT   *float64 `yaml:"lt"`
}

//go:embed rules.yaml
var rulesSource []byte

// Rules are the diagnosis's rules, from rules.yaml.
var Rules = mustRules(rulesSource)

func mustRules(b []byte) []Rule {
	rules, err := ParseRules(b)
	if err != nil {
		panic("internal/diagnosis/rules.yaml: " + err.Error())
	}
	return rules
}

// ParseRules reads and checks rules: every rule needs an id, a kind, a condition and a sentence that parses.
func ParseRules(b []byte) ([]Rule, error) {
	var rules []Rule
	if err := yaml.Unmarshal(b, &rules); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, r := range rules {
		if r.ID == "" || r.Kind == "" || len(r.When) == 0 || r.Say == "" {
			return nil, fmt.Errorf("rule %d (%q): id, kind, when and say are all needed", i+1, r.ID)
		}
		for _, u := range r.Unless {
			if !seen[u] {
				return nil, fmt.Errorf("rule %s: unless %q names no rule before it", r.ID, u)
			}
		}
		seen[r.ID] = true
		t, err := template.New(r.ID).Funcs(funcs).Option("missingkey=zero").Parse(strings.TrimSpace(r.Say))
		if err != nil {
			return nil, fmt.Errorf("rule %s: %v", r.ID, err)
		}
		rules[i].say = t
	}
	return rules, nil
}

// facts are the figures the rules read, by dotted name.
type facts map[string]any

func (f facts) num(k string) float64 {
	v, _ := f[k].(float64)
	return v
}

// tree nests the dotted names for the templates: db.lock_share is .db.lock_share.
func (f facts) tree() map[string]any {
	root := map[string]any{}
	for k, v := range f {
		parts := strings.Split(k, ".")
		m := root
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = v
	}
	return root
}

func (c Condition) holds(f facts) bool {
	v, ok := f[c.Fact].(float64)
	if !ok {
		return false
	}
	return (c.GE == nil || v >= *c.GE) && (c.GT == nil || v > *c.GT) && (c.LE == nil || v <= *c.LE) && (c.LT == nil || v < *c.LT)
}

// evaluate returns the findings of the rules that hold, in the rules' order.
func evaluate(rules []Rule, f facts) []Finding {
	held := map[string]bool{}
	data := f.tree()
	var out []Finding
	for _, r := range rules {
		ok := true
		for _, c := range r.When {
			ok = ok && c.holds(f)
		}
		for _, u := range r.Unless {
			ok = ok && !held[u]
		}
		if !ok {
			continue
		}
		var b strings.Builder
		if err := r.say.Execute(&b, data); err != nil {
			b.WriteString(r.ID + ": " + err.Error())
		}
		held[r.ID] = true
		out = append(out, Finding{Rule: r.ID, Kind: r.Kind, Sentence: strings.Join(strings.Fields(b.String()), " ")})
	}
	return out
}

var funcs = template.FuncMap{
	"pct": func(v any) string { return pct(toF(v)) },
	"cpu": func(v any) string { return strconv.FormatFloat(math.Round(toF(v)), 'f', -1, 64) + " %" },
	"ms":  func(v any) string { return trim(toF(v)) + " ms" },
	"num": func(v any) string { return trim(toF(v)) },
	"clock": func(v any) string {
		s := int(math.Round(toF(v)))
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	},
}

func pct(v float64) string { return strconv.FormatFloat(math.Round(v*100), 'f', -1, 64) + " %" }

// trim shows a figure the way a reader wants it: whole above 100, else up to two significant decimals.
func trim(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	case a >= 10:
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	default:
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	}
}

func toF(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return 0
}
