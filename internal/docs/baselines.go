package docs

import (
	"bufio"
	"certctl-loadtest/internal/results"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A baseline set is every summary.json of one certctl build, kept under docs/baselines/<build>/ and
// named after what ran (<what>.json: default, api, acme, connector, scale-bulk, …). The same run set
// recorded for two builds in one sitting is what lets them be set side by side.
type baseline struct {
	build string // folder name: the certctl build
	what  string // file name without .json
	file  string // path relative to docs/
	sum   results.Summary
}

func loadBaselines(root string) ([]baseline, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "baselines", "*", "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []baseline
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var s results.Summary
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rel, _ := filepath.Rel(filepath.Join(root, "docs"), f)
		out = append(out, baseline{
			build: filepath.Base(filepath.Dir(f)),
			what:  strings.TrimSuffix(filepath.Base(f), ".json"),
			file:  filepath.ToSlash(rel),
			sum:   s,
		})
	}
	return out, nil
}

// pinnedRelease is the tag of the certctl image .env pins: the reference every other build's
// baselines are compared with.
func pinnedRelease(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, ".env"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "CERTCTL_IMAGE="); ok {
			if i := strings.LastIndex(v, ":"); i >= 0 {
				return v[i+1:], nil
			}
		}
	}
	return "", fmt.Errorf(".env pins no CERTCTL_IMAGE with a tag")
}

// recorded is what every generated table of measurements starts from: the recorded runs, and the
// pinned release they are set against.
func recorded(root string) ([]baseline, string, error) {
	all, err := loadBaselines(root)
	if err != nil {
		return nil, "", err
	}
	ref, err := pinnedRelease(root)
	if err != nil {
		return nil, "", err
	}
	return all, ref, nil
}

// BaselineTable renders the measured baselines: first the pinned release against every other build,
// run set by run set, then every scenario of every recorded run with its provenance. The figures come
// from those recorded runs only.
func BaselineTable(root string) (string, error) {
	all, ref, err := recorded(root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(comparison(all, ref))
	b.WriteString("\n")
	b.WriteString(runTable(all))
	return b.String(), nil
}

func builds(all []baseline, ref string) []string {
	seen := map[string]bool{}
	var out []string
	for _, bl := range all {
		if !seen[bl.build] && bl.build != ref {
			seen[bl.build] = true
			out = append(out, bl.build)
		}
	}
	return out
}

type scenarioKey struct{ what, scenario string }

func index(all []baseline) map[string]map[scenarioKey]results.Scenario {
	out := map[string]map[scenarioKey]results.Scenario{}
	for _, bl := range all {
		if out[bl.build] == nil {
			out[bl.build] = map[scenarioKey]results.Scenario{}
		}
		for _, sc := range bl.sum.Scenarios {
			out[bl.build][scenarioKey{bl.what, sc.Name}] = sc
		}
	}
	return out
}

func latencies(sc results.Scenario) string {
	if sc.Record == nil {
		return "no results"
	}
	l := sc.Record.LatencyMS
	return fmt.Sprintf("%s / %s / %s", ms(l.P50), ms(l.P95), ms(l.P99))
}

func ms(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// comparison sets each other build beside the pinned release: same run set, same scenario.
func comparison(all []baseline, ref string) string {
	idx := index(all)
	var b strings.Builder
	for _, other := range builds(all, ref) {
		if idx[ref] == nil {
			break
		}
		fmt.Fprintf(&b, "**%s against %s** (p50 / p95 / p99 ms; %s's p50 and p95 as multiples of %s's; results):\n\n", other, ref, other, ref)
		fmt.Fprintf(&b, "| run | scenario | %s | %s | p50 × | p95 × | result |\n|---|---|---|---|---|---|---|\n", ref, other)
		var keys []scenarioKey
		for k := range idx[other] {
			if _, ok := idx[ref][k]; ok {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].what != keys[j].what {
				return keys[i].what < keys[j].what
			}
			return keys[i].scenario < keys[j].scenario
		})
		for _, k := range keys {
			a, o := idx[ref][k], idx[other][k]
			var r50, r95 string
			if a.Record != nil && o.Record != nil {
				r50, r95 = ratio(o.Record.LatencyMS.P50, a.Record.LatencyMS.P50), ratio(o.Record.LatencyMS.P95, a.Record.LatencyMS.P95)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s / %s |\n", k.what, k.scenario, latencies(a), latencies(o), r50, r95, a.Status, o.Status)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func ratio(x, base float64) string {
	if base <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", x/base)
}

func runTable(all []baseline) string {
	var b strings.Builder
	b.WriteString("| build | run | scenario | tier | target | achieved | requests | errors | p50 ms | p95 ms | p99 ms | max ms | result | provenance (date · host · command) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, bl := range all {
		s := bl.sum
		prov := fmt.Sprintf("%s · %d CPUs · `%s` ([summary](%s))",
			s.Run.StartedAt.UTC().Format("2006-01-02"), s.Run.Host.CPUs, s.Run.Command, bl.file)
		for _, sc := range s.Scenarios {
			r := sc.Record
			if r == nil {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | | | | | | | | | %s | %s |\n", bl.build, bl.what, sc.Name, sc.Tier, sc.Status, prov)
				continue
			}
			l := r.LatencyMS
			target, achieved := r.RateCells()
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.0f | %.2f %% | %.2f | %.2f | %.2f | %.1f | %s | %s |\n",
				bl.build, bl.what, sc.Name, sc.Tier, target, achieved, r.Requests, r.ErrorRate*100,
				l.P50, l.P95, l.P99, l.Max, sc.Status, prov)
		}
	}
	return b.String()
}
