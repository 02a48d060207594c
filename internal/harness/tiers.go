package harness

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Tier is one folder of k6/ and everything that treats its scenarios apart from another tier's: the
// aliases of TIER, the stacks they run on, the settings they force, the compose profiles their services
// carry, the make target that runs them, and their line in TIER's doc. Config, the docs, help, README's
// table and the Makefile's tier targets are rendered or checked from Tiers, as the knobs are from Knobs.
type Tier struct {
	Name string
	// Default: TIER=default (make loadtest) runs it.
	Default bool
	// InAll: TIER=all runs it. A tier out of it says why in Note.
	InAll bool
	// Note is the tier's parenthetical in TIER's doc, where it is named among those all leaves out.
	Note string
	// OwnStack: each scenario runs on a stack of its own, one after another (OneAfterAnother).
	OwnStack bool
	// Forces are certctl settings the tier runs with: the knob left unset gets the value, and another
	// value is refused with Why.
	Forces []Forced
	// Alone says why no other tier may run beside it; "" when others may.
	Alone string
	// Profiles are the compose profiles its services carry (docker-compose.yml).
	Profiles []string
	// OneProcess says why its scenarios run as one k6 process (SEGMENTS is refused); "" when they split.
	OneProcess string
	// NotExternal says why an external certctl (TARGET=external) cannot run it; "" when it can.
	NotExternal string
	// PerMinute: its arrival rates are per minute (the progress line's unit).
	PerMinute bool
	// Make is the make target that runs it whole (the default tiers' is loadtest); "" for none, when
	// `make loadtest TIER=<name>` does. Help is that target's line in `make help` (which adds what
	// TIER=all runs for a tier all runs beside the default ones).
	Make, Help string
}

// Forced is a setting a tier runs with, and why another value is refused.
type Forced struct{ Knob, Value, Why string }

// The tiers other code names.
const (
	ConnectorTier = "connector"
	ScaleTier     = "scale"
	// LimiterTier judges certctl's answers with its rate limiter on.
	LimiterTier = "limiter"
	// DeployTier has certctl's agents deploy to real targets.
	DeployTier = "deploy"
	// PKITier judges certctl as a certificate authority: signed ACME orders, issuance throughput,
	// revocation checks.
	PKITier = "pki"
	// GrowthTier holds the growth mix's operations no other tier has (the dashboard's counts, agents'
	// work polls).
	GrowthTier = "growth"
	// AuthTier logs in to certctl through a real OpenID provider (Keycloak, compose profile auth) and
	// uses the sessions it gets: docs/auth.md.
	AuthTier = "auth"
)

// Tiers are every tier, in the order TIER's doc and README's table name them. The API and connector
// tiers are what `make loadtest` runs, as certctl's own harness documents its laptop run. A tier whose
// scenarios each get a stack of their own does so because together one would load the server (scale,
// pki) or the agents (deploy) the other measures, or turn the provider's keys cold and end the sessions
// the other measures (auth).
var Tiers = []Tier{
	{Name: "api", Default: true, InAll: true, Make: "loadtest"},
	{Name: ConnectorTier, Default: true, InAll: true, Profiles: []string{ConnectorTier}, PerMinute: true, Make: "loadtest",
		NotExternal: "its targets are the harness's own TLS sidecars, not certctl"},
	{Name: "acme", InAll: true, Make: "loadtest-acme",
		Help: "The ACME tier (directory, nonce, renewal-info) against certctl"},
	// Each of its scenarios wants a stack of its own: it runs only when asked.
	{Name: ScaleTier, OwnStack: true, Profiles: []string{ScaleTier}, Make: "loadtest-scale",
		Help: "Every scale scenario (SCENARIOS=a,b: those) in turn, one fresh stack and one results directory each (<RUN_ID>-<scenario>); fails if any failed"},
	{Name: LimiterTier, Note: "which runs alone, with certctl's rate limiter on",
		Alone:       "certctl's rate limiter, on for it, would throttle the other tiers' load",
		Forces:      []Forced{{Knob: "CERTCTL_RATE_LIMIT_ENABLED", Value: "true", Why: "measures certctl with its rate limiter on"}},
		OneProcess:  "certctl's limiter counts per client address: N processes from N addresses are not the load it judges",
		NotExternal: "it needs certctl's limiter switched on, a server setting the harness cannot change",
		Make:        "loadtest-limiter", Help: "The limiter tier alone, certctl's rate limiter on: are excess ACME requests answered in RFC 8555's shape?"},
	// Timed by the agents' 30-second poll.
	{Name: DeployTier, Note: "real agents, loops of a minute: docs/deploy.md", OwnStack: true, Profiles: []string{DeployTier},
		OneProcess:  "its setup registers agents and targets and rotates them: once per process would be N deployments, not one split",
		NotExternal: "it runs certctl's agents and targets beside the server, on the harness's stack",
		Make:        "loadtest-deploy", Help: "Deploy tier: real certctl agents renew and deploy to nginx, Apache, HAProxy and the F5 stand-in; each scenario on a stack of its own (docs/deploy.md)"},
	// certctl signs as fast as it can, one concurrency level after another.
	{Name: PKITier, Note: "certctl signing as fast as it can: docs/pki.md", OwnStack: true,
		OneProcess:  "certctl's signing, not the load generator, is its limit, and issuance_c1 has one VU to split",
		NotExternal: "it reads the stack's CA and applies fixtures to certctl's database",
		Make:        "loadtest-pki", Help: "PKI tier: signed ACME orders, issuance throughput at 1, 4 and 16 clients, OCSP and CRL; each scenario on a stack of its own (docs/pki.md); ACME_FINALIZE_WORKAROUND=1 works around certctl's finalize 500"},
	// Cost against an inventory, which the default stack has not: make growth seeds one per size.
	{Name: GrowthTier, Note: "the growth mix's own operations, for an inventory: docs/growth.md"},
	{Name: AuthTier, Note: "logins through a real Keycloak, each scenario on a stack of its own: docs/auth.md", OwnStack: true, Profiles: []string{AuthTier},
		Forces: []Forced{{Knob: "CERTCTL_BLOCK_RFC1918_OUTBOUND", Value: "false", Why: "logs in through a provider with a private address on the stack's network, which the guard refuses"}},
		Make:   "loadtest-auth", Help: "Auth tier: OIDC logins through a real Keycloak, API calls by session beside the API key, cold provider keys, logout and back-channel logout; each scenario on a stack of its own (docs/auth.md); AUTH_WORKAROUNDS=1 works around the certctl defects between a login and a session"},
}

// LookupTier finds a tier by name.
func LookupTier(name string) (Tier, bool) {
	i := slices.IndexFunc(Tiers, func(t Tier) bool { return t.Name == name })
	if i < 0 {
		return Tier{}, false
	}
	return Tiers[i], true
}

// TierIndex is the tier's place in Tiers (len(Tiers) for a folder that is none): the order runs and
// tables list tiers in.
func TierIndex(name string) int {
	if i := slices.IndexFunc(Tiers, func(t Tier) bool { return t.Name == name }); i >= 0 {
		return i
	}
	return len(Tiers)
}

// DefaultTiers are the tiers TIER=default (make loadtest) runs.
func DefaultTiers() []string { return tierNames(func(t Tier) bool { return t.Default }) }

// AllExcluded are the tiers TIER=all leaves out, sorted.
func AllExcluded() []string {
	out := tierNames(func(t Tier) bool { return !t.InAll })
	sort.Strings(out)
	return out
}

// OwnStackEach reports whether each scenario of tier runs on a stack of its own, one after another.
func OwnStackEach(tier string) bool {
	t, _ := LookupTier(tier)
	return t.OwnStack
}

// perMinute reports whether the tier's arrival rates are per minute.
func perMinute(tier string) bool {
	t, _ := LookupTier(tier)
	return t.PerMinute
}

func tierNames(keep func(Tier) bool) []string {
	var out []string
	for _, t := range Tiers {
		if keep(t) {
			out = append(out, t.Name)
		}
	}
	return out
}

// AllMeaning is what TIER=all selects, in words, in the registry's order of the tiers it leaves out.
func AllMeaning() string {
	return "every tier but " + AndList(tierNames(func(t Tier) bool { return !t.InAll }))
}

// AndList joins names as a sentence does: "a, b and c".
func AndList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// tierDoc is TIER's line in the knob registry: every tier, what the aliases select, and why each tier
// all leaves out is left out.
func tierDoc() string {
	quote := func(s string) string { return "`" + s + "`" }
	var names, out, def []string
	for _, t := range Tiers {
		names = append(names, quote(t.Name))
		if t.Default {
			def = append(def, t.Name)
		}
		if !t.InAll {
			o := quote(t.Name)
			if t.Note != "" {
				o += " (" + t.Note + ")"
			}
			out = append(out, o)
		}
	}
	return fmt.Sprintf("Tiers to run: folders of `k6/` (%s); `default` is `%s`, `all` every tier but %s.",
		strings.Join(names, ", "), strings.Join(def, ","), AndList(out))
}

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
