// Package docs renders the tables the documentation carries from the code itself: each scenario's
// load shape and thresholds as k6 resolves them (`k6 inspect`), so no number is typed twice. Generated
// blocks sit between `<!-- generated:NAME -->` and `<!-- end:NAME -->` markers; a test fails when a
// document's block differs from what the code renders.
package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/results"
)

// Inspector returns `k6 inspect <script>` for a script path relative to the repository root.
type Inspector func(script string) ([]byte, error)

// K6Inspector runs the k6 pinned in go.mod, from the repository root, without the caller's knobs.
func K6Inspector(root string) Inspector {
	return func(script string) ([]byte, error) {
		cmd := exec.Command("go", "tool", "k6", "inspect", script)
		cmd.Dir = root
		cmd.Env = CleanEnv(os.Environ())
		return cmd.Output()
	}
}

// Row is one scenario as k6 sees it.
type Row struct {
	Tier, Scenario, Script string
	Executor               string
	Rate                   float64
	TimeUnit               string
	Duration               string
	StartTime              string // after setup; the runner starts every scenario's k6 at once
	PreVUs, MaxVUs         int
	VUs                    int                 // constant-vus: the closed loop's size (no rate)
	Iterations             int                 // per-vu-iterations: each VU's iterations (an event, no rate)
	Thresholds             map[string][]string // metric selector without the scenario tag → expressions
}

type inspected struct {
	Scenarios map[string]struct {
		Executor        string  `json:"executor"`
		Rate            float64 `json:"rate"`
		TimeUnit        string  `json:"timeUnit"`
		Duration        string  `json:"duration"`
		MaxDuration     string  `json:"maxDuration"`
		Iterations      int     `json:"iterations"`
		StartTime       string  `json:"startTime"`
		PreAllocatedVUs int     `json:"preAllocatedVUs"`
		MaxVUs          int     `json:"maxVUs"`
		VUs             int     `json:"vus"`
	} `json:"scenarios"`
	Thresholds map[string][]string `json:"thresholds"`
}

// Inspect is one script's scenarios as k6 resolves them (script relative to the repository root).
func Inspect(tier, script string, inspect Inspector) ([]Row, error) {
	out, err := inspect(script)
	if err != nil {
		return nil, fmt.Errorf("k6 inspect %s: %w", script, err)
	}
	var in inspected
	if err := json.Unmarshal(out, &in); err != nil {
		return nil, fmt.Errorf("k6 inspect %s: %w", script, err)
	}
	var rows []Row
	for name, sc := range in.Scenarios {
		r := Row{Tier: tier, Scenario: name, Script: script, Executor: sc.Executor, Rate: sc.Rate,
			TimeUnit: shortDuration(sc.TimeUnit), Duration: shortDuration(sc.Duration), StartTime: shortDuration(sc.StartTime), PreVUs: sc.PreAllocatedVUs,
			MaxVUs: sc.MaxVUs, VUs: sc.VUs, Iterations: sc.Iterations, Thresholds: map[string][]string{}}
		if r.Duration == "" {
			r.Duration = shortDuration(sc.MaxDuration) // per-vu-iterations: the bound on the event
		}
		for sel, exprs := range in.Thresholds {
			if len(exprs) == 0 {
				continue // recorded for the summary, not judged
			}
			r.Thresholds[unscoped(sel, name)] = exprs
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// Collect inspects every k6/<tier>/*.js scenario (found by glob, like the runner does).
func Collect(root string, inspect Inspector) ([]Row, error) {
	files, err := filepath.Glob(filepath.Join(root, "k6", "*", "*.js"))
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, f := range files {
		tier := filepath.Base(filepath.Dir(f))
		if tier == "lib" || tier == "test" || tier == harness.SpotcheckDir || tier == harness.ExternalDir { // spot checks: their own block; external: no scenarios
			continue
		}
		rel, _ := filepath.Rel(root, f)
		got, err := Inspect(tier, filepath.ToSlash(rel), inspect)
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Tier != rows[j].Tier {
			return tierOrder(rows[i].Tier) < tierOrder(rows[j].Tier)
		}
		return rows[i].Scenario < rows[j].Scenario
	})
	return rows, nil
}

func tierOrder(t string) string {
	order := map[string]string{"api": "1", "connector": "2", "acme": "3", "scale": "4"}
	if o, ok := order[t]; ok {
		return o
	}
	return "9" + t
}

// unscoped drops the tags thresholds.js adds to every budget, the scenario's and a latency's
// expected_response:true (docs/configuration.md says so once): `x{a:b,scenario:s}` → `x{a:b}`,
// `x{scenario:s}` → `x`.
func unscoped(sel, scenario string) string {
	name, tags, ok := strings.Cut(strings.TrimSuffix(sel, "}"), "{")
	if !ok {
		return sel
	}
	var kept []string
	for _, t := range strings.Split(tags, ",") {
		if t != "scenario:"+scenario && t != "expected_response:true" {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return name
	}
	return name + "{" + strings.Join(kept, ",") + "}"
}

// shortDuration: k6 prints 5m0s and 1m0s; docs say 5m and 1m.
func shortDuration(d string) string {
	for _, suffix := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(d, suffix) {
			d = strings.TrimSuffix(d, "0s")
		}
	}
	return d
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

// Plan renders the rows as `loadtest check` prints them: each scenario's load, when it starts and for
// how long, then the load's wall time (Stacks).
// external: the certctl is not the harness's, so no stack starts before the load.
func Plan(rows []Row, oneAfterAnother, external bool) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\ttier\texecutor\tload\tstarts at\tduration\tVUs pre/max")
	for _, r := range rows {
		load := results.UnitRate(r.Rate, r.TimeUnit)
		vus := fmt.Sprintf("%d/%d", r.PreVUs, r.MaxVUs)
		if r.Executor == "constant-vus" {
			load, vus = fmt.Sprintf("%d VUs, closed loop", r.VUs), fmt.Sprintf("%d", r.VUs)
		}
		if r.Executor == "per-vu-iterations" {
			load, vus = fmt.Sprintf("%d×%d iterations, once", r.VUs, r.Iterations), fmt.Sprintf("%d", r.VUs)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Scenario, r.Tier, r.Executor, load, orZero(r.StartTime), r.Duration, vus)
	}
	tw.Flush()
	loads := Stacks(rows, oneAfterAnother)
	if external {
		fmt.Fprintf(&b, "\nload: %s from the first k6 start, all scenarios at once; no stack starts (the certctl is not the harness's); add setup and up to 15 s of graceful stop\n", loads[0])
		return b.String()
	}
	if oneAfterAnother {
		var total time.Duration
		for _, d := range loads {
			total += d
		}
		fmt.Fprintf(&b, "\nload: %s in all, one script after another, each on a fresh stack; add each stack's start (tens of seconds, more with a large seed), setup and up to 15 s of graceful stop\n", total)
		return b.String()
	}
	fmt.Fprintf(&b, "\nload: %s from the first k6 start, all scenarios at once; add the stack's start (tens of seconds), setup and up to 15 s of graceful stop\n", loads[0])
	return b.String()
}

// Stacks is the load each stack of a run carries, from its first k6 start to its last scenario's end:
// one stack whose scenarios run at once, or (oneAfterAnother) a fresh stack per script, in the rows'
// order. The e2e gate's budget (test/e2e TestGatePlan) is planned from it.
func Stacks(rows []Row, oneAfterAnother bool) []time.Duration {
	var order []string
	perScript := map[string]time.Duration{}
	for _, r := range rows {
		s, _ := time.ParseDuration(orZero(r.StartTime))
		d, _ := time.ParseDuration(r.Duration)
		if _, ok := perScript[r.Script]; !ok {
			order = append(order, r.Script)
		}
		perScript[r.Script] = max(perScript[r.Script], s+d)
	}
	if !oneAfterAnother {
		var longest time.Duration
		for _, d := range perScript {
			longest = max(longest, d)
		}
		return []time.Duration{longest}
	}
	loads := make([]time.Duration, len(order))
	for i, s := range order {
		loads[i] = perScript[s]
	}
	return loads
}

func orZero(d string) string {
	if d == "" {
		return "0s"
	}
	return d
}
