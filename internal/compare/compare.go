// Package compare sets two sets of runs side by side, scenario by scenario, and says which changes are
// larger than the runs' own noise: benchstat's idea (labelled inputs, "~" inside the noise) for k6 runs,
// with the statistics on per-request samples (stats.go) and, when the runs recorded it, the server side's
// account of where the time went.
package compare

import (
	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/testbed"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

const Schema = "certctl-loadtest/compare@1"

// Side is one set of runs: their directories and the name the report gives them.
type Side struct {
	Label string
	Dirs  []string
}

// Options are the judgement's knobs.
type Options struct {
	// Noise is how much two runs of one build differ on this kind of machine: a change is significant
	// only when its whole interval lies beyond it. 0.10 by default.
	Noise float64
	// Tolerance is how much worse a significant change may be before the comparison fails: 0 fails on
	// every significant regression.
	Tolerance float64
	// Confidence is the intervals' level, 0.95 by default. A verdict over several rows at once (a budget
	// on every scenario's p50) asks for more, so that the family, not each row, is wrong 1 time in 20.
	Confidence float64
	Draws      int    // bootstrap replicates, 2000 by default
	Seed       uint64 // of the bootstrap, fixed so that a comparison reads the same every time
	// Judged are the metrics that can fail the comparison (p50, p95, p99, error rate, throughput); empty:
	// every one. The others are still marked worse or better, and shown.
	Judged []string
	// AcrossTestbeds compares sides whose calibrations differ as if they were one testbed, the difference
	// a warning: stacks run side by side on purpose (the test suites, MACHINE_CHECK=false).
	AcrossTestbeds bool
}

// judged says whether a row of metric can fail the comparison.
func (o Options) judged(metric string) bool {
	return len(o.Judged) == 0 || slices.Contains(o.Judged, metric)
}

func (o *Options) defaults() {
	if o.Noise == 0 {
		o.Noise = 0.10
	}
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.Draws == 0 {
		o.Draws = 2000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// Result is the comparison: compare.json.
type Result struct {
	Schema    string   `json:"schema"`
	Old       SideInfo `json:"old"`
	New       SideInfo `json:"new"`
	Noise     float64  `json:"noise"`
	Tolerance float64  `json:"tolerance"`
	// Confidence is the intervals' level (0.95 unless asked otherwise).
	Confidence float64 `json:"confidence"`
	// Judged are the metrics that can fail it; empty: every one.
	Judged   []string `json:"judged,omitempty"`
	Block    float64  `json:"block_s"`
	Warnings []string `json:"warnings"`
	Rows     []Row    `json:"rows"`
	Cause    *Cause   `json:"cause,omitempty"`
	Verdict  string   `json:"verdict"` // not comparable | regressed | changed | no significant change
	// NotComparable says how the two sides' testbeds differ (their runs' calibrations, beyond
	// testbed.Tolerances): then the verdict is "not comparable", whatever the rows show.
	NotComparable []string   `json:"not_comparable,omitempty"`
	Regressed     []string   `json:"regressed"`
	Loads         []LoadPair `json:"loads"`
	// Defects are each side's breaches against certctl's known defects, over its runs: what a release
	// fixed or newly broke, beside what it made slower.
	Defects [2]SideDefects `json:"defects"`
}

// SideDefects are a side's breaches, classified, over all its runs: the new ones ("scenario: threshold"),
// the known defects met and the ones seen on its build that did not appear, by id.
type SideDefects struct {
	Label        string   `json:"label"`
	New          []string `json:"new"`
	Known        []string `json:"known"`
	NotAppearing []string `json:"not_appearing"`
}

// sideDefects gathers a side's classified breaches; a run recorded before breaches were classified
// adds nothing.
func sideDefects(l loaded) SideDefects {
	d := SideDefects{Label: l.info.Label, New: []string{}, Known: []string{}, NotAppearing: []string{}}
	add := func(list *[]string, v string) {
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, s := range l.summaries {
		if s.Breaches == nil {
			continue
		}
		for _, b := range s.Breaches.Failing() {
			add(&d.New, b.Scenario+": "+b.Threshold)
		}
		for _, k := range s.Breaches.Known {
			for _, id := range k.Defects {
				add(&d.Known, id)
			}
		}
		for _, a := range s.Breaches.NotAppearing {
			add(&d.NotAppearing, a.Defect)
		}
	}
	sort.Strings(d.New)
	sort.Strings(d.Known)
	sort.Strings(d.NotAppearing)
	return d
}

// SideInfo says what ran on a side.
type SideInfo struct {
	Label string    `json:"label"`
	Runs  []RunInfo `json:"runs"`
}

type RunInfo struct {
	Dir       string    `json:"dir"`
	RunID     string    `json:"run_id"`
	StartedAt time.Time `json:"started_at"`
	Certctl   string    `json:"certctl"`
	ServerSHA string    `json:"server_sha256,omitempty"`
	CPUs      int       `json:"cpus"`
	Command   string    `json:"command"`
	Passed    bool      `json:"passed"`
}

// LoadPair is a scenario's load on each side, summed over the side's runs.
// Record is the load as a record, for the one rendering of a rate (results.Record.RateCells).
func (l Load) Record() results.Record {
	r := results.Record{Tier: l.Tier, Executor: l.Executor, RateUnit: l.RateUnit, TargetRatePerS: l.TargetPerS, AchievedRatePerS: l.AchievedPerS}
	r.VUs.Max = l.VUs
	return r
}

type LoadPair struct {
	Scenario string `json:"scenario"`
	Old      Load   `json:"old"`
	New      Load   `json:"new"`
}

type Load struct {
	Tier         string  `json:"tier,omitempty"`
	Executor     string  `json:"executor,omitempty"`
	RateUnit     string  `json:"rate_unit,omitempty"`
	VUs          int     `json:"vus,omitempty"`
	TargetPerS   float64 `json:"target_per_s"`
	AchievedPerS float64 `json:"achieved_per_s"`
	Requests     float64 `json:"requests"`
	Dropped      float64 `json:"dropped_iterations"`
	DurationS    float64 `json:"duration_s"`
}

// Row is one metric of one scenario (or one of its endpoints).
type Row struct {
	Scenario string  `json:"scenario"` // with "/endpoint" for an endpoint's own row
	Metric   string  `json:"metric"`   // p50 | p95 | p99 | error rate | throughput (closed-model scenarios: successful requests per second)
	Old      float64 `json:"old"`
	New      float64 `json:"new"`
	// Change is new/old for a percentile and the throughput, new−old (a share) for the error rate; Low and
	// High bound it.
	Change  float64  `json:"change"`
	Low     *float64 `json:"low,omitempty"`
	High    *float64 `json:"high,omitempty"`
	Verdict string   `json:"verdict"` // worse | better | ~ | no samples
	Fails   bool     `json:"fails"`
	Samples [2]int   `json:"samples"` // requests behind old and new
}

// Compare reads both sides' runs and compares them.
func Compare(old, new Side, o Options) (Result, error) {
	o.defaults()
	res := Result{Schema: Schema, Noise: o.Noise, Tolerance: o.Tolerance, Confidence: o.Confidence, Judged: o.Judged, Warnings: []string{}, Regressed: []string{}, Rows: []Row{}, Loads: []LoadPair{}}
	sides := [2]loaded{}
	for i, s := range []Side{old, new} {
		l, err := load(s)
		if err != nil {
			return res, err
		}
		sides[i] = l
	}
	labelSides(&sides, old.Label, new.Label)
	res.Old, res.New = sides[0].info, sides[1].info
	res.NotComparable = testbeds(sides, &res.Warnings)
	if o.AcrossTestbeds && len(res.NotComparable) > 0 {
		res.Warnings = append(res.Warnings, "compared across testbeds, as asked: "+strings.Join(res.NotComparable, ": "))
		res.NotComparable = nil
	}
	res.Warnings = append(res.Warnings, warnings(sides)...)
	res.Defects = [2]SideDefects{sideDefects(sides[0]), sideDefects(sides[1])}

	rng := newRand(o.Seed)
	for _, name := range scenarioNames(sides) {
		a, b := sides[0].scenarios[name], sides[1].scenarios[name]
		if a == nil || b == nil {
			continue
		}
		res.Loads = append(res.Loads, LoadPair{Scenario: name, Old: a.load, New: b.load})
		rows, block, missing := compareScenario(name, a, b, o, rng)
		if block > 0 && (res.Block == 0 || block < res.Block) {
			res.Block = block
		}
		if missing != "" {
			res.Warnings = append(res.Warnings, missing)
		}
		res.Rows = append(res.Rows, rows...)
	}
	if row, ok := databaseRow(sides, o); ok {
		res.Rows = append(res.Rows, row)
	}
	for i := range res.Rows {
		sanitize(&res.Rows[i])
		if !o.judged(res.Rows[i].Metric) {
			res.Rows[i].Fails = false
		}
	}
	res.Cause = cause(sides)
	res.Verdict = "no significant change"
	for _, r := range res.Rows {
		if r.Verdict == "worse" || r.Verdict == "better" {
			res.Verdict = "changed"
		}
	}
	res.Regressed = regressed(res.Rows)
	if len(res.Regressed) > 0 {
		res.Verdict = "regressed"
	}
	if len(res.NotComparable) > 0 {
		res.Verdict = VerdictNotComparable
	}
	return res, nil
}

// VerdictNotComparable is the verdict when the sides ran on different testbeds: a difference between
// machines is not certctl's.
const VerdictNotComparable = "not comparable"

// testbeds sets every run of one side against every run of the other by their calibrations and says
// how the first pair that differs does. A run with no calibration (recorded before runs carried one) is
// set apart by its host's CPUs and model only, with a warning; runs of one side on different testbeds
// add a warning too.
func testbeds(s [2]loaded, warn *[]string) []string {
	// The host's CPU model stands in where the calibration has none (recorded before it kept one).
	of := func(x results.Summary) testbed.Calibration {
		c := testbed.FromHost(x.Run.Host.CPUs, x.Run.Host.CPUModel)
		if x.Run.Testbed != nil {
			c = *x.Run.Testbed
			if c.CPUModel == "" {
				c.CPUModel = x.Run.Host.CPUModel
			}
		}
		return c
	}
	var unknown []string
	for _, l := range s {
		for i, sum := range l.summaries {
			if sum.Run.Testbed == nil {
				unknown = append(unknown, l.info.Label+" "+l.info.Runs[i].RunID)
			}
		}
		for i := 1; i < len(l.summaries); i++ {
			if d := testbed.Differences(of(l.summaries[0]), of(l.summaries[i])); len(d) > 0 {
				*warn = append(*warn, fmt.Sprintf("%s's runs %s and %s ran on different testbeds (%s): their spread is the machines' too", l.info.Label, l.info.Runs[0].RunID, l.info.Runs[i].RunID, strings.Join(d, "; ")))
			}
		}
	}
	if len(unknown) > 0 {
		*warn = append(*warn, fmt.Sprintf("testbed unknown for %s (no calibration: recorded before runs carried one): whether the machine moved cannot be told", strings.Join(unknown, ", ")))
	}
	for i, a := range s[0].summaries {
		for j, b := range s[1].summaries {
			d := testbed.Differences(of(a), of(b))
			// Another major version of the database is another stack under certctl, not certctl's change.
			if pa, pb := a.Run.PostgresMajor(), b.Run.PostgresMajor(); pa != "" && pb != "" && pa != pb {
				d = append(d, fmt.Sprintf("PostgreSQL %s vs %s", pa, pb))
			}
			if len(d) > 0 {
				return append([]string{fmt.Sprintf("%s (run %s) and %s (run %s) ran on different testbeds", s[0].info.Label, s[0].info.Runs[i].RunID, s[1].info.Label, s[1].info.Runs[j].RunID)}, d...)
			}
		}
	}
	return nil
}

// regressed says which scenarios failed and by how much, one entry a scenario; an endpoint's rows only
// when its scenario's own did not fail.
func regressed(rows []Row) []string {
	var order []string
	by := map[string][]string{}
	for _, r := range rows {
		if !r.Fails {
			continue
		}
		top, _, _ := strings.Cut(r.Scenario, "/")
		if r.Scenario != top && len(by[top]) > 0 {
			continue
		}
		if by[r.Scenario] == nil {
			order = append(order, r.Scenario)
		}
		by[r.Scenario] = append(by[r.Scenario], r.Metric+" "+changeText(r))
	}
	out := []string{}
	for _, sc := range order {
		out = append(out, sc+" "+strings.Join(by[sc], ", "))
	}
	return out
}

// loaded is a side read from disk.
type loaded struct {
	info      SideInfo
	summaries []results.Summary
	scenarios map[string]*scenarioRuns
}

// scenarioRuns is one scenario across a side's runs.
type scenarioRuns struct {
	tier    string
	records []*results.Record
	raw     []string // per run, "" when the run kept no raw samples
	load    Load
}

func load(s Side) (loaded, error) {
	l := loaded{info: SideInfo{Label: s.Label}, scenarios: map[string]*scenarioRuns{}}
	if len(s.Dirs) == 0 {
		return l, fmt.Errorf("no runs given for %s", s.Label)
	}
	for _, dir := range s.Dirs {
		sum, err := readSummary(dir)
		if err != nil {
			return l, err
		}
		l.summaries = append(l.summaries, sum)
		certctl := sum.Run.Certctl.Build
		if certctl == "" {
			certctl = sum.Run.Certctl.Image
		}
		l.info.Runs = append(l.info.Runs, RunInfo{
			Dir: dir, RunID: sum.RunID, StartedAt: sum.Run.StartedAt, Certctl: certctl, ServerSHA: sum.Run.Certctl.ServerSHA256,
			CPUs: sum.Run.Host.CPUs, Command: sum.Run.Command, Passed: sum.Passed,
		})
		for _, sc := range sum.Scenarios {
			if sc.Record == nil {
				continue
			}
			r := l.scenarios[sc.Name]
			if r == nil {
				r = &scenarioRuns{tier: sc.Tier}
				l.scenarios[sc.Name] = r
			}
			// A scenario missing from some runs compares over the runs that have it.
			r.records = append(r.records, sc.Record)
			r.raw = append(r.raw, rawPath(dir, sc.Name))
			rec := sc.Record
			// How the rate reads (results.Record.RateCells): the scenario's unit, or its VUs.
			r.load.Tier, r.load.Executor, r.load.RateUnit, r.load.VUs = rec.Tier, rec.Executor, rec.RateUnit, rec.VUs.Max
			r.load.TargetPerS += rec.TargetRatePerS
			r.load.AchievedPerS += rec.AchievedRatePerS
			r.load.Requests += rec.Requests
			r.load.Dropped += rec.DroppedIterations
			r.load.DurationS += rec.DurationS
		}
	}
	for _, r := range l.scenarios {
		k := float64(len(r.records))
		r.load.TargetPerS, r.load.AchievedPerS, r.load.DurationS = round(r.load.TargetPerS/k, 2), round(r.load.AchievedPerS/k, 2), round(r.load.DurationS/k, 1)
	}
	return l, nil
}

// readSummary is the run's own summary.json, what it judged and diagnosed when it ran (a downloaded
// artifact or a recorded baseline need not carry the server/ files a re-assembly reads); a run that wrote
// none is assembled from its records.
func readSummary(dir string) (results.Summary, error) {
	path := filepath.Join(dir, "summary.json")
	if strings.HasSuffix(dir, ".json") {
		path = dir // a baseline: docs/baselines/<build>/<name>.json
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return results.Load(dir)
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	if s.Schema != results.SummarySchema {
		return s, fmt.Errorf("%s: schema %q, want %q", path, s.Schema, results.SummarySchema)
	}
	return s, nil
}

// labelSides names each side after the certctl it ran, unless the caller named it: the build's folder
// (v2.1.7) or the image's tag; "old" and "new" when both would read the same.
func labelSides(s *[2]loaded, oldLabel, newLabel string) {
	name := func(l loaded) string {
		if len(l.info.Runs) == 0 {
			return ""
		}
		c := l.info.Runs[0].Certctl
		if strings.Contains(c, "/") && !strings.Contains(filepath.Base(c), ":") {
			return filepath.Base(c)
		}
		if i := strings.LastIndex(c, ":"); i >= 0 {
			return c[i+1:]
		}
		return c
	}
	labels := [2]string{oldLabel, newLabel}
	for i := range labels {
		if labels[i] == "" {
			labels[i] = name(s[i])
		}
	}
	if labels[0] == labels[1] && (oldLabel == "" || newLabel == "") {
		if labels[0] == "" {
			labels = [2]string{"old", "new"}
		} else {
			labels = [2]string{"old " + labels[0], "new " + labels[1]}
		}
	}
	s[0].info.Label, s[1].info.Label = labels[0], labels[1]
}

func scenarioNames(s [2]loaded) []string {
	var names []string
	for _, l := range s {
		for n := range l.scenarios {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

// compareScenario compares one scenario's percentiles, per endpoint too, and its error rate.
func compareScenario(name string, a, b *scenarioRuns, o Options, rng *rand.Rand) (rows []Row, block float64, missing string) {
	metric := a.records[0].LatencyMetric
	read := func(s *scenarioRuns) ([]samples, bool) {
		var out []samples
		for _, p := range s.raw {
			if p == "" {
				return nil, false
			}
			ss, err := readSamples(p, metric)
			if err != nil || len(ss[""]) == 0 {
				return nil, false
			}
			out = append(out, ss)
		}
		return out, true
	}
	sa, okA := read(a)
	sb, okB := read(b)
	if !okA || !okB {
		return summaryRows(name, a, b), 0, fmt.Sprintf("%s: a run without raw samples (raw/%s.json.gz): its figures are shown from the summaries, not tested", name, name)
	}
	groups := []string{""}
	for g := range sa[0] {
		if g != "" && sb[0][g] != nil {
			groups = append(groups, g)
		}
	}
	sort.Strings(groups[1:])
	for _, g := range groups {
		ra, rb := groupRuns(sa, g), groupRuns(sb, g)
		bl := blockLength(append(append([][]sample(nil), ra...), rb...))
		if g == "" {
			block = bl
		}
		ba, bb := blocksAll(ra, bl), blocksAll(rb, bl)
		lo, hi := binRange(ba, bb)
		ea, eb := pooled(ra), pooled(rb)
		repA := bootstrap(ba, o.Draws, rng, lo, hi)
		repB := bootstrap(bb, o.Draws, rng, lo, hi)
		for qi := range quantiles {
			widen(repA.q[qi], ea.q[qi], len(ba), true)
			widen(repB.q[qi], eb.q[qi], len(bb), true)
		}
		widen(repA.err, ea.errorRate(), len(ba), false)
		widen(repB.err, eb.errorRate(), len(bb), false)
		label := name
		if g != "" {
			_, ep, _ := strings.Cut(g, "=")
			label = name + "/" + ep
		}
		for qi, p := range quantiles {
			ratios := make([]float64, o.Draws)
			for d := range ratios {
				ratios[d] = repB.q[qi][d] / repA.q[qi][d]
			}
			low, high := interval(ratios, o.Confidence)
			r := Row{Scenario: label, Metric: fmt.Sprintf("p%d", int(math.Round(p*100))), Old: round(ea.q[qi], 2), New: round(eb.q[qi], 2),
				Change: round(eb.q[qi]/ea.q[qi], 3), Low: ptr(round(low, 3)), High: ptr(round(high, 3)), Samples: [2]int{ea.n - ea.failed, eb.n - eb.failed}}
			judgeRatio(&r, o)
			rows = append(rows, r)
		}
		if g != "" {
			continue
		}
		diffs := make([]float64, o.Draws)
		for d := range diffs {
			diffs[d] = repB.err[d] - repA.err[d]
		}
		low, high := interval(diffs, o.Confidence)
		r := Row{Scenario: label, Metric: "error rate", Old: round(ea.errorRate(), 5), New: round(eb.errorRate(), 5),
			Change: round(eb.errorRate()-ea.errorRate(), 5), Low: ptr(round(low, 5)), High: ptr(round(high, 5)), Samples: [2]int{ea.n, eb.n}}
		judgeDiff(&r)
		rows = append(rows, r)
		if closedModel(a.load.Executor) && closedModel(b.load.Executor) {
			rows = append(rows, throughputRow(label, ba, bb, bl, o))
		}
	}
	return rows, block, ""
}

// closedModel: a fixed number of clients, each sending its next request when the last is answered
// (constant-vus and the like). Their throughput is the figure, where an arrival-rate scenario's is the
// rate it was given.
func closedModel(executor string) bool {
	return executor != "" && !strings.HasSuffix(executor, "arrival-rate")
}

// ThroughputMetric is the row of a closed-model scenario's successful requests per second.
const ThroughputMetric = "throughput"

// throughputRow compares a closed-model scenario's successful requests per second, with the interval of
// their ratio over the same blocks the percentiles resample; lower is worse. Its own generator, so that
// the other rows read the same as without it.
func throughputRow(label string, ba, bb []runBlocks, blockS float64, o Options) Row {
	rng := newRand(o.Seed ^ 0x7468726f75676870)
	ta, tb := throughputs(ba, blockS, o.Draws, rng), throughputs(bb, blockS, o.Draws, rng)
	widen(ta, meanThroughput(ba, blockS), len(ba), true)
	widen(tb, meanThroughput(bb, blockS), len(bb), true)
	ratios := make([]float64, o.Draws)
	for d := range ratios {
		ratios[d] = tb[d] / ta[d]
	}
	low, high := interval(ratios, o.Confidence)
	ea, eb := meanThroughput(ba, blockS), meanThroughput(bb, blockS)
	r := Row{Scenario: label, Metric: ThroughputMetric, Old: round(ea, 2), New: round(eb, 2), Change: round(eb/ea, 3),
		Low: ptr(round(low, 3)), High: ptr(round(high, 3)), Samples: [2]int{okSamples(ba), okSamples(bb)}}
	r.Verdict = "~"
	if math.IsNaN(r.Change) || math.IsNaN(low) {
		r.Verdict = "no samples"
		return r
	}
	factor := r.Change
	if factor < 1 && factor > 0 {
		factor = 1 / factor
	}
	if factor-1 < o.Noise {
		return r
	}
	switch {
	case high < 1/(1+o.Noise):
		// The regression is how much longer the same work takes: 1/change − 1, as a slower percentile's.
		r.Verdict, r.Fails = "worse", 1/r.Change-1 > o.Tolerance
	case low > 1+o.Noise:
		r.Verdict = "better"
	}
	return r
}

func groupRuns(runs []samples, g string) [][]sample {
	out := make([][]sample, 0, len(runs))
	for _, s := range runs {
		if len(s[g]) > 0 {
			out = append(out, s[g])
		}
	}
	return out
}

func blocksAll(runs [][]sample, blockS float64) []runBlocks {
	out := make([]runBlocks, 0, len(runs))
	for _, ss := range runs {
		out = append(out, blocksOf(ss, blockS))
	}
	return out
}

// judgeRatio: a change is significant when its interval leaves out the noise band, not only 1: two runs
// of one build differ by up to the noise, so a change that may be that small is one of them. A significant
// slowdown beyond the tolerance fails the comparison. (The full suite of 2026-12-06 gated v2.1.7 against
// itself, alone: issuance p50 +39 %, interval +5 % … +62 %, REGRESSED under the interval-leaves-out-1 rule.)
func judgeRatio(r *Row, o Options) {
	r.Verdict = "~"
	if r.Low == nil || math.IsNaN(*r.Low) || math.IsNaN(r.Change) {
		r.Verdict = "no samples"
		return
	}
	factor := r.Change
	if factor < 1 && factor > 0 {
		factor = 1 / factor
	}
	if factor-1 < o.Noise {
		return
	}
	switch {
	case *r.Low > 1+o.Noise:
		r.Verdict = "worse"
		r.Fails = r.Change-1 > o.Tolerance
	case *r.High < 1/(1+o.Noise):
		r.Verdict = "better"
	}
}

// errorNoise is the smallest change of the error rate called significant: a tenth of a percentage point.
const errorNoise = 0.001

func judgeDiff(r *Row) {
	r.Verdict = "~"
	if math.Abs(r.Change) < errorNoise || r.Low == nil {
		return
	}
	switch {
	case *r.Low > 0:
		r.Verdict, r.Fails = "worse", true
	case *r.High < 0:
		r.Verdict = "better"
	}
}

// summaryRows are the figures of runs without raw samples: shown, not judged.
func summaryRows(name string, a, b *scenarioRuns) []Row {
	mean := func(s *scenarioRuns, f func(results.Latency) float64) float64 {
		t := 0.0
		for _, r := range s.records {
			t += f(r.LatencyMS)
		}
		return t / float64(len(s.records))
	}
	var rows []Row
	for _, q := range []struct {
		name string
		f    func(results.Latency) float64
	}{{"p50", func(l results.Latency) float64 { return l.P50 }}, {"p95", func(l results.Latency) float64 { return l.P95 }}, {"p99", func(l results.Latency) float64 { return l.P99 }}} {
		o, n := mean(a, q.f), mean(b, q.f)
		rows = append(rows, Row{Scenario: name, Metric: q.name, Old: round(o, 2), New: round(n, 2), Change: round(n/o, 3), Verdict: "no samples"})
	}
	return rows
}

// sideKnobs are the settings that tell a compare's sides apart by design (which certctl ran) or that
// name a run without changing it.
var sideKnobs = []string{"CERTCTL_DIST", "CERTCTL_IMAGE", "CERTCTL_AGENT_IMAGE", "CERTCTL_NEXT_DIST", "RUN_ID", "RESULTS_DIR"}

// warnings say when the two sides did not measure the same thing, or cannot tell much.
func warnings(s [2]loaded) []string {
	var w []string
	for _, l := range s {
		if len(l.info.Runs) == 1 {
			w = append(w, fmt.Sprintf("%s has one run: its intervals cover the variation within that run, not between runs, which on a shared machine is larger; give 3 runs a side", l.info.Label))
			break
		}
	}
	for _, name := range scenarioNames(s) {
		a, b := s[0].scenarios[name], s[1].scenarios[name]
		switch {
		case a == nil:
			w = append(w, fmt.Sprintf("%s ran only in %s", name, s[1].info.Label))
			continue
		case b == nil:
			w = append(w, fmt.Sprintf("%s ran only in %s", name, s[0].info.Label))
			continue
		}
		if a.load.TargetPerS != b.load.TargetPerS || a.load.DurationS != b.load.DurationS {
			at, _ := a.load.Record().RateCells()
			bt, _ := b.load.Record().RateCells()
			w = append(w, fmt.Sprintf("%s: the loads differ (%s: %s for %gs; %s: %s for %gs): the change is the load's as much as certctl's",
				name, s[0].info.Label, at, a.load.DurationS, s[1].info.Label, bt, b.load.DurationS))
		}
	}
	differ := func(what string, f func(results.Summary) string) {
		vals := [2][]string{}
		for i, l := range s {
			for _, sum := range l.summaries {
				if v := f(sum); !slices.Contains(vals[i], v) {
					vals[i] = append(vals[i], v)
				}
			}
		}
		sort.Strings(vals[0])
		sort.Strings(vals[1])
		if !slices.Equal(vals[0], vals[1]) {
			w = append(w, fmt.Sprintf("the %s differ: %s %s, %s %s", what, s[0].info.Label, strings.Join(vals[0], " | "), s[1].info.Label, strings.Join(vals[1], " | ")))
		}
	}
	differ("tiers", func(x results.Summary) string { return strings.Join(x.Run.Tiers, ",") })
	differ("hosts", func(x results.Summary) string { return fmt.Sprintf("%d CPUs", x.Run.Host.CPUs) })
	differ("instruments (they move certctl's figures: docs/diagnosis.md#the-cost-of-looking)", Instruments)
	for _, k := range []string{"CERTCTL_RATE_LIMIT_ENABLED", "FAULT_LATENCY", "FAULT_ERROR_RATE"} {
		differ(k+" settings", func(x results.Summary) string { return k + "=" + x.Run.Config[k] })
	}
	// Every other knob in force (run.json's settings, kept since the harness records them): a side
	// that set one the other did not measured another experiment. What picks the certctl is what is
	// compared; a run's id and results directory change nothing.
	recorded := true
	keys := map[string]bool{}
	for _, l := range s {
		for _, sum := range l.summaries {
			recorded = recorded && sum.Run.Settings != nil
			for k := range sum.Run.Settings {
				keys[k] = true
			}
		}
	}
	if recorded {
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if slices.Contains(sideKnobs, k) || slices.Contains(instrumentKnobs, k) || slices.Contains([]string{"CERTCTL_RATE_LIMIT_ENABLED", "FAULT_LATENCY", "FAULT_ERROR_RATE"}, k) {
				continue
			}
			differ(k+" settings", func(x results.Summary) string {
				if v, ok := x.Run.Settings[k]; ok {
					return k + "=" + v
				}
				return k + " at its default"
			})
		}
	}
	for i, l := range s {
		for _, r := range l.info.Runs {
			if !r.Passed {
				w = append(w, fmt.Sprintf("%s: run %s did not pass its own budgets", s[i].info.Label, r.RunID))
			}
		}
	}
	return w
}

// instrumentKnobs switch the run's own instruments: Instruments says how a run had them.
var instrumentKnobs = []string{"DIAGNOSIS", "PG_STAT_STATEMENTS", "PROGRESS_INTERVAL"}

// Instruments is how a run had its instruments, from its record: what two sides must share for their
// difference to be certctl's. A setting a run recorded before the harness kept it reads "?".
func Instruments(x results.Summary) string {
	diag := x.Run.Config["DIAGNOSIS"]
	if diag == "" {
		diag = x.Run.Settings["DIAGNOSIS"]
	}
	if diag == "" {
		diag = strconv.FormatBool(x.Diagnosis != nil)
	}
	stmts := map[string]string{"on": "true", "off": "false"}[x.Run.Config["COLLECT_STATEMENTS"]]
	if stmts == "" {
		stmts = "?"
	}
	progress := x.Run.Settings["PROGRESS_INTERVAL"]
	switch {
	case progress != "":
	case x.Run.Settings != nil:
		progress = "default" // run.json keeps the knobs set to other than their defaults
	default:
		progress = "?"
	}
	return fmt.Sprintf("DIAGNOSIS=%s PG_STAT_STATEMENTS=%s PROGRESS_INTERVAL=%s", diag, stmts, progress)
}

func round(v float64, d int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func ptr(v float64) *float64 { return &v }

// sanitize leaves no NaN for JSON: a side without a successful request has no percentile to compare.
func sanitize(r *Row) {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	if bad(r.Old) || bad(r.New) || bad(r.Change) {
		r.Old, r.New, r.Change = zero(r.Old), zero(r.New), 0
		r.Verdict, r.Fails, r.Low, r.High = "no samples", false, nil, nil
	}
	if r.Low != nil && (bad(*r.Low) || bad(*r.High)) {
		r.Low, r.High = nil, nil
	}
}

func zero(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// DatabaseMetric is the database's time per request (the row of "database"): every statement's execution time over the load
// (pg_stat_statements) divided by the requests k6 sent, one figure a run. Latency at a light load can
// hide a statement grown many times dearer (main-151107c's audit INSERT, ×23 at the pull-request gate's
// rates, with the medians unmoved): this row does not.
const DatabaseMetric = "time per request"

// databaseRow compares the database's time per request, when every run of both sides recorded its
// statements: a bootstrap over runs, widened as the percentiles are.
func databaseRow(s [2]loaded, o Options) (Row, bool) {
	var per [2][]float64
	for i, l := range s {
		for _, sum := range l.summaries {
			d := sum.Diagnosis
			var requests float64
			for _, sc := range sum.Scenarios {
				if sc.Record != nil {
					requests += sc.Record.Requests
				}
			}
			if d == nil || len(d.Statements) == 0 || d.Statements[0].TimeShare <= 0 || requests == 0 {
				return Row{}, false
			}
			per[i] = append(per[i], d.Statements[0].TotalMS/d.Statements[0].TimeShare/requests)
		}
	}
	mean := func(v []float64) float64 {
		t := 0.0
		for _, x := range v {
			t += x
		}
		return t / float64(len(v))
	}
	rng := newRand(o.Seed ^ 0x6461746162617365)
	draw := func(v []float64) []float64 {
		out := make([]float64, o.Draws)
		for d := range out {
			t := 0.0
			for range v {
				t += v[rng.IntN(len(v))]
			}
			out[d] = t / float64(len(v))
		}
		widen(out, mean(v), len(v), true)
		return out
	}
	ea, eb := mean(per[0]), mean(per[1])
	if len(per[0]) < 2 || len(per[1]) < 2 {
		// One figure a run: with one run a side there is no spread to judge it by. Shown, not judged.
		return Row{Scenario: "database", Metric: DatabaseMetric, Old: round(ea, 3), New: round(eb, 3), Change: round(eb/ea, 3),
			Verdict: "~", Samples: [2]int{len(per[0]), len(per[1])}}, true
	}
	a, b := draw(per[0]), draw(per[1])
	ratios := make([]float64, o.Draws)
	for d := range ratios {
		ratios[d] = b[d] / a[d]
	}
	low, high := interval(ratios, o.Confidence)
	r := Row{Scenario: "database", Metric: DatabaseMetric, Old: round(ea, 3), New: round(eb, 3), Change: round(eb/ea, 3),
		Low: ptr(round(low, 3)), High: ptr(round(high, 3)), Samples: [2]int{len(per[0]), len(per[1])}}
	judgeRatio(&r, o)
	return r, true
}
