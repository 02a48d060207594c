// Package plan is what a run will do before it does it: each scenario's load as k6 resolves it (k6
// inspect), rendered as `loadtest check` prints it, and the load each stack carries. The runs are planned
// from it (check, capacity's rate, the e2e gate's budget); the docs render its rows.
package plan

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"certctl-loadtest/internal/results"
)

// Inspector returns `k6 inspect <script>` for a script path relative to the repository root.
type Inspector func(script string) ([]byte, error)

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
	Thresholds map[string]expressions `json:"thresholds"`
}

// expressions are a metric's thresholds as k6 inspect prints them: each a string, or k6's object form
// ({"threshold": "p(95)<800", "abortOnFail": true, …}) when ABORT_ON_FAIL is set.
type expressions []string

func (e *expressions) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, r := range raw {
		var s string
		if json.Unmarshal(r, &s) == nil {
			*e = append(*e, s)
			continue
		}
		var o struct {
			Threshold string `json:"threshold"`
		}
		if err := json.Unmarshal(r, &o); err != nil || o.Threshold == "" {
			return fmt.Errorf("a threshold that is neither an expression nor k6's object form: %s", r)
		}
		*e = append(*e, o.Threshold)
	}
	return nil
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
			TimeUnit: ShortDuration(sc.TimeUnit), Duration: ShortDuration(sc.Duration), StartTime: ShortDuration(sc.StartTime), PreVUs: sc.PreAllocatedVUs,
			MaxVUs: sc.MaxVUs, VUs: sc.VUs, Iterations: sc.Iterations, Thresholds: map[string][]string{}}
		if r.Duration == "" {
			r.Duration = ShortDuration(sc.MaxDuration) // per-vu-iterations: the bound on the event
		}
		for sel, exprs := range in.Thresholds {
			if len(exprs) == 0 {
				continue // recorded for the summary, not judged
			}
			r.Thresholds[unscoped(sel, name)] = []string(exprs)
		}
		rows = append(rows, r)
	}
	return rows, nil
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

// ShortDuration: k6 prints 5m0s and 1m0s; docs say 5m and 1m.
func ShortDuration(d string) string {
	for _, suffix := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(d, suffix) {
			d = strings.TrimSuffix(d, "0s")
		}
	}
	return d
}

// Text renders the rows as `loadtest check` prints them: each scenario's load, when it starts and for
// how long, then the load's wall time (Stacks).
// external: the certctl is not the harness's, so no stack starts before the load.
func Text(rows []Row, oneAfterAnother, external bool) string {
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
// order. CI's budget (test/ciplan TestCIPlan) is planned from it.
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
