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
	"LANG": true, "TMPDIR": true, "HOSTNAME": true, "LOGNAME": true, "MAIL": true, "EDITOR": true, "PAGER": true, "DISPLAY": true, "TZ": true,
	// The JUnit schema internal/report's tests validate against (install-deps fetches it; CI exports it).
	"JUNIT_XSD": true}

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
