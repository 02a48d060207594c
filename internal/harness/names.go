package harness

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// CheckScenarioVars refuses a RATE_<SCENARIO> or VUS_<SCENARIO> that names no scenario of the
// repository (a typo such as RATE_LIST_CERTIFICATE would otherwise be ignored and the default rate
// run), naming the closest one. environ is the process's environment.
func CheckScenarioVars(root string, environ []string) error {
	tiers, err := DiscoverTiers(root)
	if err != nil {
		return err
	}
	var names []string
	for _, scs := range tiers {
		for _, s := range scs {
			names = append(names, strings.ToUpper(s.Name))
		}
	}
	sort.Strings(names)
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		for _, prefix := range []string{"RATE_", "VUS_"} {
			name, ok := strings.CutPrefix(k, prefix)
			if !ok || v == "" || contains(names, name) {
				continue
			}
			return fmt.Errorf("%s: no scenario is called %s; did you mean %s%s? (scenarios: %s)", k, strings.ToLower(name), prefix, Closest(name, names), strings.ToLower(strings.Join(names, ", ")))
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// CheckEnvironment refuses, before anything runs, the variables that look like knobs but are not
// read: a RATE_ or VUS_ of no scenario, and a name within a typo of a knob (DURATON, TEIR).
func CheckEnvironment(root string, environ []string) error {
	if err := CheckScenarioVars(root, environ); err != nil {
		return err
	}
	return CheckKnobNames(environ)
}

// notKnobs are variables the harness or its tools read that are not knobs of a run: never a typo.
var notKnobs = map[string]bool{"LOADTEST_GOAL": true, "RUN_DIR": true, "LT_OWNER": true, "LT_MORE_KEYS": true, "PGPASSWORD": true,
	"SSL_CERT_FILE": true, "PGURL": true, "TERM": true, "HOME": true, "PATH": true, "USER": true, "SHELL": true, "PWD": true, "OLDPWD": true,
	"LANG": true, "TMPDIR": true, "HOSTNAME": true, "LOGNAME": true, "MAIL": true, "EDITOR": true, "PAGER": true, "DISPLAY": true, "TZ": true}

// otherPrefixes are families of variables other tools own (k6 reads K6_* itself).
var otherPrefixes = []string{"K6_", "GITHUB_", "RUNNER_", "ACTIONS_", "GO", "DOCKER_", "BUILDKIT_", "XDG_", "LC_", "SSH_", "SUDO_", "MAKE", "MFLAGS", "CGO_", "LT_"}

// CheckKnobNames finds a variable set in the environment that is no knob but within a typo of one: one
// edit (a letter added, dropped, changed, or two swapped) for names up to six letters, two for longer
// ones. A family's prefix counts too: RAET_LIST_CERTIFICATES is RATE_LIST_CERTIFICATES mistyped.
func CheckKnobNames(environ []string) error {
	var names, prefixes []string
	for _, k := range Knobs {
		if p, _, fam := strings.Cut(k.Name, "<"); fam {
			if strings.HasSuffix(p, "_") && strings.HasSuffix(k.Name, ">") {
				prefixes = append(prefixes, p)
			}
			continue
		}
		names = append(names, k.Name)
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if v == "" || len(k) < 4 || notKnobs[k] || k != strings.ToUpper(k) {
			continue
		}
		if _, ok := LookupKnob(k); ok {
			continue
		}
		if slices.ContainsFunc(otherPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		if n := Near(k, names); n != "" {
			return fmt.Errorf("%s is set but no knob has that name: did you mean %s? (the knobs: docs/configuration.md; if %s is meant for something else, unset it for the run: env -u %s …)", k, n, k, k)
		}
		if head, rest, ok := strings.Cut(k, "_"); ok && rest != "" {
			for _, p := range prefixes {
				if head+"_" != p && Distance(head+"_", p) == 1 {
					return fmt.Errorf("%s is set but no knob has that name: did you mean %s%s? (the knobs: docs/configuration.md; if %s is meant for something else, unset it for the run: env -u %s …)", k, p, rest, k, k)
				}
			}
		}
	}
	return nil
}

// Near is the candidate within a typo of s (see CheckKnobNames), or "" when none is.
func Near(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		limit := 1
		if len(c) > 6 {
			limit = 2
		}
		if d := Distance(s, c); d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the optimal-string-alignment distance: Levenshtein's, with two adjacent letters swapped
// counting as one edit (TEIR is one edit from TIER).
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Closest is the candidate nearest to s: one that contains s or is contained in it first (a name cut
// short), then the smallest edit distance (the first of equals).
func Closest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(s, c)
		if !strings.Contains(c, s) && !strings.Contains(s, c) {
			d += 1000
		}
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is Levenshtein's distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
