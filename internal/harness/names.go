package harness

import (
	"fmt"
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
