package harness

import (
	"fmt"
	"slices"
	"sort"
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
	// Its profile's service is the ACME challenge responder the challenge-mode orders are validated against.
	{Name: PKITier, Note: "certctl signing as fast as it can: docs/pki.md", OwnStack: true, Profiles: []string{PKITier},
		Forces:      []Forced{{Knob: "CERTCTL_BLOCK_RFC1918_OUTBOUND", Value: "false", Why: "validates ACME challenges at the stack's responder, a private address on the stack's network, which the guard (on by the harness's default) refuses"}},
		OneProcess:  "certctl's signing, not the load generator, is its limit, and issuance_c1 has one VU to split",
		NotExternal: "it reads the stack's CA and applies fixtures to certctl's database",
		Make:        "loadtest-pki", Help: "PKI tier: signed ACME orders, orders whose http-01 challenge certctl validates at 1, 5 and 25 clients, issuance throughput at 1, 4 and 16 clients, OCSP and CRL; each scenario on a stack of its own (docs/pki.md); ACME_FINALIZE_WORKAROUND=1 works around certctl's finalize 500"},
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
