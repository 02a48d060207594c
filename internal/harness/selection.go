package harness

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// DiscoverTiers finds the scenarios by glob: k6/<tier>/*.js. k6/lib, k6/test and k6/spotcheck hold no
// scenarios. A folder Tiers does not describe is refused: it would run under defaults no one chose
// (in TIER=all, beside every other tier).
func DiscoverTiers(root string) (map[string][]Scenario, error) {
	files, err := filepath.Glob(filepath.Join(root, "k6", "*", "*.js"))
	if err != nil {
		return nil, err
	}
	tiers := map[string][]Scenario{}
	for _, f := range files {
		tier := filepath.Base(filepath.Dir(f))
		if tier == "lib" || tier == "test" || tier == SpotcheckDir || tier == ExternalDir {
			continue
		}
		if _, ok := LookupTier(tier); !ok {
			return nil, fmt.Errorf("k6/%s/ holds scenarios of no tier: describe the tier in internal/harness/tiers.go (Tiers) first", tier)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".js")
		rel, _ := filepath.Rel(root, f)
		tiers[tier] = append(tiers[tier], Scenario{Tier: tier, Name: name, Path: filepath.ToSlash(rel)})
	}
	if len(tiers) == 0 {
		return nil, fmt.Errorf("no scenarios under %s/k6/<tier>/*.js: is this the certctl-loadtest repository?", root)
	}
	// Numbers in names in their numeric order: issuance_c1, issuance_c4, issuance_c16 run (and are
	// reported) as the curve they draw.
	for _, sc := range tiers {
		slices.SortFunc(sc, func(a, b Scenario) int { return naturalCompare(a.Name, b.Name) })
	}
	return tiers, nil
}

// naturalCompare orders strings by their runs of digits as numbers and the rest as text.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da != "" && db != "" {
			na, _ := strconv.Atoi(da)
			nb, _ := strconv.Atoi(db)
			if na != nb {
				return na - nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// loadTiers selects TIER's tiers (folders of k6/) and their scenarios, narrowed to SCENARIOS, and puts
// in force the settings the selected tiers force.
func (c *Config) loadTiers(get getter) error {
	tiers, err := DiscoverTiers(c.Root)
	if err != nil {
		return err
	}
	if c.Tiers, err = selectTiers(get("TIER", KnobDefault("TIER")), tiers); err != nil {
		return err
	}
	for _, t := range c.Tiers {
		c.Scenarios = append(c.Scenarios, tiers[t]...)
	}
	if spec := get("SCENARIOS", ""); spec != "" {
		// A scenario of a tier not selected gets its tier named, not the nearest name of those selected.
		elsewhere := map[string]string{}
		for t, scs := range tiers {
			for _, s := range scs {
				elsewhere[s.Name] = t
			}
		}
		if c.Scenarios, err = selectScenarios(spec, c.Scenarios, elsewhere, c.Tiers); err != nil {
			return err
		}
	}
	return nil
}

// forceTierSettings puts in force what the selected tiers force, and refuses a tier that runs alone
// beside another, or a forced knob set otherwise.
func (c *Config) forceTierSettings(get getter) error {
	for _, name := range c.Tiers {
		t, _ := LookupTier(name)
		if len(c.Tiers) > 1 && t.Alone != "" {
			return fmt.Errorf("TIER=%s: the %s tier runs alone (%s); use make %s", strings.Join(c.Tiers, ","), t.Name, t.Alone, t.Make)
		}
		for _, f := range t.Forces {
			if v := get(f.Knob, ""); v != "" && v != f.Value {
				return fmt.Errorf("%s=%s: the %s tier %s; leave it unset", f.Knob, v, t.Name, f.Why)
			}
			c.Env[f.Knob] = f.Value
		}
	}
	return nil
}

func selectTiers(spec string, known map[string][]Scenario) ([]string, error) {
	names := make([]string, 0, len(known))
	for t := range known {
		names = append(names, t)
	}
	sort.Strings(names)
	alias := func(keep func(Tier) bool) []string {
		var out []string
		for _, t := range Tiers {
			if _, ok := known[t.Name]; ok && keep(t) {
				out = append(out, t.Name)
			}
		}
		return out
	}
	switch spec {
	case "default":
		return alias(func(t Tier) bool { return t.Default }), nil
	case "all":
		// all runs its tiers in the order of their names, as it always has.
		out := alias(func(t Tier) bool { return t.InAll })
		sort.Strings(out)
		return out, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range strings.Split(spec, ",") {
		t = strings.TrimSpace(t)
		if _, ok := known[t]; !ok {
			return nil, fmt.Errorf("TIER=%q: unknown tier %q; known tiers: %s (or default: %s; all: %s)", spec, t, strings.Join(names, ", "), strings.Join(DefaultTiers(), ","), AllMeaning())
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// selectScenarios keeps the named scenarios of the selected tiers (SCENARIOS=bulk_renewal,agent_storm);
// elsewhere is every scenario's tier, to name the tier of one that is not among those selected.
func selectScenarios(spec string, all []Scenario, elsewhere map[string]string, selected []string) ([]Scenario, error) {
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
		if t, there := elsewhere[n]; !ok && there {
			return nil, fmt.Errorf("SCENARIOS=%q: %s is in tier %s, and TIER=%s does not select it: add TIER=%s", spec, n, t, strings.Join(selected, ","), t)
		}
		if !ok {
			return nil, fmt.Errorf("SCENARIOS=%q: no scenario %q in the selected tiers (did you mean %s?); they have: %s", spec, n, Closest(n, names), strings.Join(names, ", "))
		}
		out = append(out, s)
	}
	return out, nil
}

// OneAfterAnother is the scenarios of the configuration whose tier runs each on a stack of its own
// (Tier.OwnStack: scale, deploy, pki, auth), when they are more than one: loadtest run runs them one
// after another, each on a fresh stack, since one server, one set of agents or one provider would carry
// them all at once otherwise.
func OneAfterAnother(c Config) []Scenario {
	if c.Spotcheck {
		return nil
	}
	var seq []Scenario
	for _, s := range c.Scenarios {
		if OwnStackEach(s.Tier) {
			seq = append(seq, s)
		}
	}
	if len(seq) < 2 {
		return nil
	}
	return seq
}

// SequenceRunID names the run of one scenario of a sequence: the sequence's RUN_ID and the scenario.
func SequenceRunID(base, scenario string) string {
	return base + "-" + strings.ReplaceAll(scenario, "_", "-")
}
