package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The registry and the repository agree: every tier has its folder of scenarios, every folder of
// scenarios is a tier, and every profile a tier names is one docker-compose.yml's services carry.
func TestTiersAreTheFoldersOfK6(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	found, err := DiscoverTiers(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tier := range Tiers {
		if len(found[tier.Name]) == 0 {
			t.Errorf("tier %s has no scenarios under k6/%s/", tier.Name, tier.Name)
		}
	}
	compose, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var profiles []string
	for _, m := range regexp.MustCompile(`(?m)^\s+profiles: \[([^\]]*)\]`).FindAllStringSubmatch(string(compose), -1) {
		for _, p := range strings.Split(m[1], ",") {
			profiles = append(profiles, strings.Trim(strings.TrimSpace(p), `"`))
		}
	}
	for _, tier := range Tiers {
		for _, p := range tier.Profiles {
			if !slices.Contains(profiles, p) {
				t.Errorf("tier %s names compose profile %s, which no service of docker-compose.yml carries", tier.Name, p)
			}
		}
		// A profile named after a tier that the tier does not name would never be started.
		if slices.Contains(profiles, tier.Name) && !slices.Contains(tier.Profiles, tier.Name) {
			t.Errorf("docker-compose.yml has services of profile %s, which tier %s does not name", tier.Name, tier.Name)
		}
	}
}

// A folder of scenarios no tier describes would run under defaults no one chose, TIER=all among them.
func TestAFolderOfNoTierIsRefused(t *testing.T) {
	root := fakeRepo(t, "k6/api/a.js", "k6/newtier/b.js")
	_, err := Load(root, env(), now)
	if err == nil || !strings.Contains(err.Error(), "k6/newtier/ holds scenarios of no tier: describe the tier in internal/harness/tiers.go") {
		t.Fatalf("an unregistered folder: %v", err)
	}
}

// What a tier forces is in force when it runs, and a knob set otherwise is refused with the tier's
// reason; a tier that runs alone refuses company.
func TestTierForcesItsSettings(t *testing.T) {
	root := fakeRepo(t, "k6/api/a.js", "k6/limiter/b.js", "k6/auth/c.js", "k6/pki/d.js")
	for _, tier := range Tiers {
		for _, f := range tier.Forces {
			if tier.Name != LimiterTier && tier.Name != AuthTier && tier.Name != PKITier {
				t.Fatalf("tier %s forces %s: give it a folder in this test", tier.Name, f.Knob)
			}
			c, err := Load(root, env("TIER="+tier.Name), now)
			if err != nil || c.Env[f.Knob] != f.Value {
				t.Errorf("TIER=%s: %s=%q (%v), want %s", tier.Name, f.Knob, c.Env[f.Knob], err, f.Value)
			}
			_, err = Load(root, env("TIER="+tier.Name, f.Knob+"=other"), now)
			if want := f.Knob + "=other: the " + tier.Name + " tier " + f.Why + "; leave it unset"; err == nil || err.Error() != want {
				t.Errorf("TIER=%s %s=other: %v, want %q", tier.Name, f.Knob, err, want)
			}
		}
	}
	if _, err := Load(root, env("TIER=api,auth"), now); err != nil {
		t.Errorf("TIER=api,auth: %v: auth forces a setting but runs beside others", err)
	}
	if _, err := Load(root, env("TIER=api,limiter"), now); err == nil || !strings.Contains(err.Error(), "the limiter tier runs alone") {
		t.Errorf("TIER=api,limiter: %v", err)
	}
}

// TIER's doc is the registry's, so a new tier is named in it (and through it in docs/configuration.md,
// make help and k6/lib/knobs.js) without another edit, with why all leaves it out when it does.
func TestTierDocNamesEveryTier(t *testing.T) {
	k, _ := LookupKnob("TIER")
	for _, tier := range Tiers {
		want := "`" + tier.Name + "`"
		if !tier.InAll && tier.Note != "" {
			want += " (" + tier.Note + ")"
		}
		if !strings.Contains(k.Doc, want) {
			t.Errorf("TIER's doc does not say %s: %s", want, k.Doc)
		}
	}
}

// The challenge-mode orders are named for the responder's loadnet aliases (Docker's DNS resolves them
// for certctl's validator): k6/lib/pki.js's CHALLENGE_HOSTS names, ch-0 … ch-<N-1>, are the aliases.
func TestChallengeNamesAreTheResponderAliases(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(root, "k6", "lib", "pki.js"))
	if err != nil {
		t.Fatal(err)
	}
	compose, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	// The fast names are the responder's; the slow ones the slow responder's (the fault proxy before it).
	for _, c := range []struct{ count, service, prefix string }{
		{"CHALLENGE_HOSTS", "challenge-responder", "ch"},
		{"SLOW_HOSTS", "challenge-slow", "slow"},
	} {
		m := regexp.MustCompile(`(?m)^export const ` + c.count + ` = (\d+);`).FindSubmatch(js)
		if m == nil {
			t.Fatalf("k6/lib/pki.js declares no %s", c.count)
		}
		a := regexp.MustCompile(`(?s)\n  ` + c.service + `:\n.*?aliases: \[([^\]]*)\]`).FindSubmatch(compose)
		if a == nil {
			t.Fatalf("docker-compose.yml's %s has no loadnet aliases", c.service)
		}
		var want []string
		n := 0
		fmt.Sscan(string(m[1]), &n)
		for i := range n {
			want = append(want, fmt.Sprintf("%s-%d.challenge.loadtest.example.com", c.prefix, i))
		}
		var got []string
		for _, s := range strings.Split(string(a[1]), ",") {
			got = append(got, strings.TrimSpace(s))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s's aliases %q; want the %d names k6 orders for, %q", c.service, got, n, want)
		}
	}
}
