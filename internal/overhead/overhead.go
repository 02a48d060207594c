// Package overhead is what the harness's own instruments cost certctl: the same load run with every
// instrument on and with each switched off in turn, in alternating order, compared run set against run
// set (`loadtest overhead`).
package overhead

import (
	"fmt"
	"slices"
	"strings"

	"certctl-loadtest/internal/compare"
)

const Schema = "certctl-loadtest/overhead@1"

// On names the runs with every instrument on, the baseline each configuration is compared against.
const On = "on"

// All is the configuration with every instrument off at once.
const All = "all"

// Off is one configuration of the measurement: what it switches off, and the knobs that do it.
type Off struct {
	Name     string            `json:"name"`
	What     string            `json:"what"`
	Settings map[string]string `json:"settings"`
}

// Instruments are the run's own instruments beside the load, each with the knobs that switch it off.
// What stays in every run (k6's own outputs, the stack's healthchecks, `docker events`, which the
// verdict needs) is not here: it is the same on both sides.
var Instruments = []Off{
	{Name: "collector", What: "the collector container: pg_stat_activity, pg_stat_database, pg_stat_statements and certctl's metrics, sampled",
		Settings: map[string]string{"DIAGNOSIS": "containers"}},
	{Name: "containers", What: "the harness's reads of every container's cgroup and of the host's CPU",
		Settings: map[string]string{"DIAGNOSIS": "collector"}},
	{Name: "statements", What: "pg_stat_statements loaded in PostgreSQL: its hook runs on every statement",
		Settings: map[string]string{"PG_STAT_STATEMENTS": "false"}},
	{Name: "progress", What: "the progress lines: each running k6's figures read every PROGRESS_INTERVAL",
		Settings: map[string]string{"PROGRESS_INTERVAL": "0"}},
}

// AllOff is the configuration with every instrument off at once.
func AllOff() Off {
	all := Off{Name: All, What: "every instrument above at once", Settings: map[string]string{}}
	for _, in := range Instruments {
		for k, v := range in.Settings {
			all.Settings[k] = v
		}
	}
	// The collector and the containers' sampling are DIAGNOSIS's two halves: both off is false.
	all.Settings["DIAGNOSIS"] = "false"
	return all
}

// Lookup is the configuration called name: an instrument's, or All (every instrument off).
func Lookup(name string) (Off, bool) {
	if name == All {
		return AllOff(), true
	}
	i := slices.IndexFunc(Instruments, func(o Off) bool { return o.Name == name })
	if i < 0 {
		return Off{}, false
	}
	return Instruments[i], true
}

// Names are the configurations OVERHEAD may name.
func Names() []string {
	var out []string
	for _, in := range Instruments {
		out = append(out, in.Name)
	}
	return append(out, All)
}

// Parse reads OVERHEAD: configurations by name, each once.
func Parse(v string) ([]Off, error) {
	var out []Off
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		o, ok := Lookup(n)
		if !ok || slices.ContainsFunc(out, func(x Off) bool { return x.Name == n }) {
			return nil, fmt.Errorf("OVERHEAD=%q: a list of %s, each once", v, strings.Join(Names(), ", "))
		}
		out = append(out, o)
	}
	return out, nil
}

// Schedule is the order of the runs: each round runs On and every configuration once, forwards in
// even rounds and backwards in odd ones, so that over two rounds every configuration sits as early
// and as late beside On as any other (ABBA): the machine's drift falls on both sides alike.
func Schedule(offs []Off, rounds int) [][]string {
	names := []string{On}
	for _, o := range offs {
		names = append(names, o.Name)
	}
	var out [][]string
	for r := range rounds {
		round := slices.Clone(names)
		if r%2 == 1 {
			slices.Reverse(round)
		}
		out = append(out, round)
	}
	return out
}

// Result is overhead.json: the runs, and each configuration compared with every instrument on.
type Result struct {
	Schema string `json:"schema"`
	RunID  string `json:"run_id"`
	// Command repeats the measurement.
	Command string `json:"command"`
	Rounds  int    `json:"rounds"`
	// Order is each round's configurations as they ran.
	Order [][]string `json:"order"`
	// Runs are each configuration's run directories, relative to the measurement's.
	Runs map[string][]string `json:"runs"`
	// Complete: every planned run gave a record; a cut-short measurement compares what ran.
	Complete bool `json:"complete"`
	// Problem is why the measurement stopped early.
	Problem     string     `json:"problem,omitempty"`
	Instruments []Measured `json:"instruments"`
	Budget      Budget     `json:"budget"`
}

// Measured is one configuration's runs (the old side) against every instrument on (the new side): a
// change is what switching the instruments on did.
type Measured struct {
	Off
	Compare *compare.Result `json:"compare,omitempty"`
	// Significant are the changes of a percentile beyond the noise, one "scenario metric change [interval]"
	// each, at the scenarios' own level.
	Significant []string `json:"significant"`
	Error       string   `json:"error,omitempty"`
}

// BudgetRule is what the instruments must hold to, judged on the All configuration.
const BudgetRule = "with every instrument on, no scenario's p50 changes significantly against every instrument off"

// Budget is BudgetRule, judged.
type Budget struct {
	Rule string `json:"rule"`
	// Confidence is the level of the p50 intervals the budget is judged on: 1 − 0.05/Family, so that the
	// budget as a whole, not each scenario's p50, breaks 1 time in 20 when the instruments cost nothing.
	Confidence float64 `json:"confidence"`
	// Family is how many scenarios' p50 were judged at once.
	Family int `json:"family"`
	// Judged: the All configuration was measured; without it the budget is not judged, and not held.
	Judged   bool     `json:"judged"`
	Held     bool     `json:"held"`
	Breaches []string `json:"breaches"`
}

// Measure sets each configuration's comparison (done by cmp, compare.Compare on the runs at that
// confidence) and judges the budget.
//
// Each configuration's table is at 95 %, as compare's are: read row by row, one row in twenty of an
// instrument that costs nothing shows a change by chance. The budget is one verdict over every
// scenario's p50 at once; at 95 % each, six scenarios would break it one measurement in four by chance
// alone. So it is judged at 1 − 0.05/n for n scenarios (Bonferroni): wrong at most 1 time in 20 as a whole.
func (r *Result) Measure(offs []Off, cmp func(off, on []string, confidence float64) (compare.Result, error)) {
	r.Budget = Budget{Rule: BudgetRule, Breaches: []string{}}
	r.Instruments = nil
	for _, o := range offs {
		m := Measured{Off: o, Significant: []string{}}
		switch {
		case len(r.Runs[o.Name]) == 0 || len(r.Runs[On]) == 0:
			m.Error = "no run of both sides"
		default:
			res, err := cmp(r.Runs[o.Name], r.Runs[On], FamilyConfidence)
			if err != nil {
				m.Error = err.Error()
				break
			}
			m.Compare = &res
			m.Significant = Significant(res, "p50", "p95", "p99")
			if o.Name != All {
				break
			}
			n := len(scenarioRows(res, "p50"))
			conf := 1 - (1-FamilyConfidence)/float64(max(n, 1))
			fam, err := cmp(r.Runs[o.Name], r.Runs[On], conf)
			if err != nil {
				m.Error = err.Error()
				break
			}
			r.Budget.Judged, r.Budget.Confidence, r.Budget.Family = true, conf, n
			r.Budget.Breaches = Significant(fam, "p50")
			r.Budget.Held = len(r.Budget.Breaches) == 0
		}
		r.Instruments = append(r.Instruments, m)
	}
}

// FamilyConfidence is how often the budget as a whole may be wrong: 1 time in 20.
const FamilyConfidence = 0.95

// scenarioRows are res's rows of these metrics at a scenario's own level (not a tag's).
func scenarioRows(res compare.Result, metrics ...string) []compare.Row {
	var out []compare.Row
	for _, row := range res.Rows {
		if !strings.Contains(row.Scenario, "/") && slices.Contains(metrics, row.Metric) {
			out = append(out, row)
		}
	}
	return out
}

// Significant are res's rows of these metrics, at a scenario's own level, whose change is beyond the
// noise either way.
func Significant(res compare.Result, metrics ...string) []string {
	out := []string{}
	for _, row := range scenarioRows(res, metrics...) {
		if row.Verdict == "worse" || row.Verdict == "better" {
			out = append(out, fmt.Sprintf("%s %s %s", row.Scenario, row.Metric, row.ChangeText()))
		}
	}
	return out
}
