// Package docs renders the tables the documentation carries from the code itself: each scenario's
// load shape and thresholds as k6 resolves them (`k6 inspect`), so no number is typed twice. Generated
// blocks sit between `<!-- generated:NAME -->` and `<!-- end:NAME -->` markers; a test fails when a
// document's block differs from what the code renders.
package docs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/plan"
	"certctl-loadtest/internal/results"
)

// Row and Inspector are the plan's: the docs render the rows the runs are planned from.
type (
	Row       = plan.Row
	Inspector = plan.Inspector
)

// shortDuration is plan's; facts.go's seed formula calls it by this name.
func shortDuration(d string) string { return plan.ShortDuration(d) }

// K6Inspector runs the k6 pinned in go.mod, from the repository root, without the caller's knobs.
func K6Inspector(root string) Inspector {
	return func(script string) ([]byte, error) {
		cmd := exec.Command("go", "tool", "k6", "inspect", script)
		cmd.Dir = root
		cmd.Env = harness.CleanEnv(os.Environ())
		return cmd.Output()
	}
}

// Collect inspects every k6/<tier>/*.js scenario (found by glob, like the runner does), as many at
// once as there are CPUs: each inspect is a k6 process of its own, and there are dozens.
func Collect(root string, inspect Inspector) ([]Row, error) {
	files, err := filepath.Glob(filepath.Join(root, "k6", "*", "*.js"))
	if err != nil {
		return nil, err
	}
	type job struct{ tier, rel string }
	var jobs []job
	for _, f := range files {
		tier := filepath.Base(filepath.Dir(f))
		if tier == "lib" || tier == "test" || tier == harness.SpotcheckDir || tier == harness.ExternalDir { // spot checks: their own block; external: no scenarios
			continue
		}
		rel, _ := filepath.Rel(root, f)
		jobs = append(jobs, job{tier, filepath.ToSlash(rel)})
	}
	got := make([][]Row, len(jobs))
	errs := make([]error, len(jobs))
	slots := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			got[i], errs[i] = plan.Inspect(j.tier, j.rel, inspect)
		}()
	}
	wg.Wait()
	var rows []Row
	for i := range jobs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		rows = append(rows, got[i]...)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Tier != rows[j].Tier {
			return harness.TierIndex(rows[i].Tier) < harness.TierIndex(rows[j].Tier)
		}
		return rows[i].Scenario < rows[j].Scenario
	})
	return rows, nil
}

// ScenarioTable renders one Markdown row per scenario: load shape and every threshold.
func ScenarioTable(rows []Row) string {
	var b strings.Builder
	b.WriteString("| tier | scenario | executor | rate | starts at | duration | VUs pre/max | thresholds (fail the run) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		sels := make([]string, 0, len(r.Thresholds))
		for s := range r.Thresholds {
			sels = append(sels, s)
		}
		sort.Strings(sels)
		var th []string
		for _, s := range sels {
			th = append(th, fmt.Sprintf("`%s` %s", s, strings.Join(quoteAll(r.Thresholds[s]), ", ")))
		}
		start := r.StartTime
		if start == "" {
			start = "0s"
		}
		rate, vus := results.UnitRate(r.Rate, r.TimeUnit), fmt.Sprintf("%d / %d", r.PreVUs, r.MaxVUs)
		if r.Executor == "constant-vus" {
			// A closed loop: as fast as its VUs go, no rate asked for.
			rate, vus = "closed loop", fmt.Sprintf("%d", r.VUs)
		}
		if r.Executor == "per-vu-iterations" {
			rate, vus = fmt.Sprintf("%d per VU, once", r.Iterations), fmt.Sprintf("%d", r.VUs)
		}
		// From the repository's root ("/k6/…", as GitHub resolves it): the table sits in README.md and in docs/.
		fmt.Fprintf(&b, "| %s | [`%s`](/%s) | %s | %s | %s | %s | %s | %s |\n",
			r.Tier, r.Scenario, r.Script, r.Executor, rate, start, r.Duration, vus, strings.Join(th, "; "))
	}
	return b.String()
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return out
}

// Replace swaps the block NAME of doc for content and reports whether it changed.
func Replace(doc []byte, name, content string) ([]byte, bool, error) {
	re := regexp.MustCompile(`(?s)(<!-- generated:` + regexp.QuoteMeta(name) + ` [^>]*-->\n).*?(<!-- end:` + regexp.QuoteMeta(name) + ` -->)`)
	loc := re.FindSubmatchIndex(doc)
	if loc == nil {
		return doc, false, fmt.Errorf("no <!-- generated:%s … --> … <!-- end:%s --> block", name, name)
	}
	out := append([]byte{}, doc[:loc[3]]...)
	out = append(out, content...)
	out = append(out, doc[loc[4]:]...)
	return out, string(out) != string(doc), nil
}

// Sync rewrites (write=true) or checks every generated block of the given documents.
func Sync(root string, blocks map[string]string, docs []string, write bool) (stale []string, err error) {
	for _, d := range docs {
		path := filepath.Join(root, d)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		out := b
		for name, content := range blocks {
			if !strings.Contains(string(out), "<!-- generated:"+name+" ") {
				continue
			}
			var changed bool
			out, changed, err = Replace(out, name, content)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", d, err)
			}
			if changed {
				stale = append(stale, d+" ("+name+")")
			}
		}
		if write && string(out) != string(b) {
			if err := os.WriteFile(path, out, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return stale, nil
}
