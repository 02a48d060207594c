// Package gate judges a candidate certctl build against a reference build run beside it: the same load,
// the two builds alternating (ABBA…) on one machine in one sitting, each run on a fresh stack, then the
// two sets compared (internal/compare). A recording from another day or machine is another testbed; a
// reference measured beside the candidate shares its machine, its neighbours and its drift, so that
// what differs between the sides is the builds'. `loadtest compare-builds` runs it; the pull-request
// workflow and `make compare-builds` call that.
package gate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/results"
)

const Schema = "certctl-loadtest/gate@1"

// The two sides.
const (
	Reference = "reference"
	Candidate = "candidate"
)

// The verdicts, one word each: the workflow's output and the first word of the sentence.
const (
	Pass         = "pass"
	Regressed    = "regressed"
	NewBreach    = "new-breach"
	Inconclusive = "inconclusive"
	Failed       = "failed"
)

// Code is a verdict's exit code: results' codes where they mean the same (99 a budget no registered
// defect explains, 6 the machine decided), compare's 1 for a regression; a failed gate keeps the code
// of what failed.
func Code(verdict string, failed int) int {
	switch verdict {
	case Pass:
		return results.ExitOK
	case Regressed:
		return 1
	case NewBreach:
		return results.ExitThresholds
	case Inconclusive:
		return results.ExitInconclusive
	}
	if failed == results.ExitOK || failed == results.ExitThresholds || failed == results.ExitInconclusive || failed == 1 {
		return results.ExitNoResults
	}
	return failed
}

// Schedule is the order of the runs, runs a side: reference first, each pair the last one reversed
// (A B B A A B …), so that a drift through the sitting falls on both sides alike.
func Schedule(runs int) []string {
	out := make([]string, 0, 2*runs)
	for i := range runs {
		if i%2 == 0 {
			out = append(out, Reference, Candidate)
		} else {
			out = append(out, Candidate, Reference)
		}
	}
	return out
}

// Side is one build: what it is called and where it is.
type Side struct {
	Label string `json:"label"`
	// Build is a certctl build directory (CERTCTL_DIST) or a server image (CERTCTL_IMAGE).
	Build string `json:"build"`
	// Knobs are NAME=value set on this side's runs only (a fault injected into the candidate to show
	// that the gate catches it).
	Knobs []string `json:"knobs,omitempty"`
}

// Plan is what the gate will run, and how long it takes.
type Plan struct {
	Reference Side     `json:"reference"`
	Candidate Side     `json:"candidate"`
	RunsASide int      `json:"runs_a_side"`
	Order     []string `json:"order"`
	Tier      string   `json:"tier"`
	Scenarios string   `json:"scenarios,omitempty"`
	Duration  string   `json:"duration"`
	Tolerance float64  `json:"tolerance"`
	// Judged are the metrics that can fail it, Family the confidence for all their rows at once (0: each
	// row at Confidence): Options.
	Judged     []string `json:"judged,omitempty"`
	Family     float64  `json:"family_confidence,omitempty"`
	Confidence float64  `json:"confidence,omitempty"`
	// AcrossTestbeds: MACHINE_CHECK=false, the two sides judged even when their calibrations differ.
	AcrossTestbeds bool `json:"across_testbeds,omitempty"`
	// Rates are the RATE_<SCENARIO> the plan set (its own, or the environment's).
	Rates map[string]string `json:"rates,omitempty"`
	// Stacks is each run's stacks: 1, or a tier's scenarios each on a stack of its own.
	Stacks int `json:"stacks"`
	// RunS is a run's planned wall time: its stacks' start, load and teardown. WallS is every run's.
	RunS  int `json:"run_s"`
	WallS int `json:"wall_s"`
}

// Text is the plan in one line, printed before anything starts.
func (p Plan) Text() string {
	stacks := "on a fresh stack"
	if p.Stacks > 1 {
		stacks = fmt.Sprintf("%d fresh stacks, one a scenario", p.Stacks)
	}
	judged := "every row"
	if len(p.Judged) > 0 {
		judged = strings.Join(p.Judged, ", ")
	}
	level := compare.Percent(p.Confidence) + " % each"
	if p.Family > 0 {
		level = compare.Percent(p.Family) + " % for them all"
	}
	return fmt.Sprintf("%s against %s: %d runs a side alternating (%s), TIER=%s%s%s DURATION=%s, each run %s, about %s a run: about %s in all; judged on %s (%s), regressed beyond %s %%",
		p.Candidate.Label, p.Reference.Label, p.RunsASide, orderText(p.Order), p.Tier, scenariosText(p.Scenarios), ratesText(p.Rates), p.Duration, stacks,
		minutes(p.RunS), minutes(p.WallS), judged, level, compare.Percent(p.Tolerance))
}

func orderText(order []string) string {
	var b strings.Builder
	for _, s := range order {
		if s == Reference {
			b.WriteByte('A')
		} else {
			b.WriteByte('B')
		}
	}
	return b.String()
}

func ratesText(r map[string]string) string {
	var kv []string
	for k, v := range r {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	if len(kv) == 0 {
		return ""
	}
	return " " + strings.Join(kv, " ")
}

func scenariosText(s string) string {
	if s == "" {
		return ""
	}
	return " SCENARIOS=" + s
}

func minutes(s int) string {
	if s < 90 {
		return fmt.Sprintf("%d s", s)
	}
	return fmt.Sprintf("%.1f min", float64(s)/60)
}

// Run is one run of the gate: its side, its results and how it ended.
type Run struct {
	Side  string `json:"side"`
	RunID string `json:"run_id"`
	// Dirs are its results, relative to the gate's directory: one, or one per scenario of a tier whose
	// scenarios run on stacks of their own.
	Dirs []string `json:"dirs"`
	Code int      `json:"exit_code"`
	// New are the budgets it broke that no registered defect explains ("scenario: threshold"); Known the
	// defects that explained the rest.
	New   []string `json:"new"`
	Known []string `json:"known"`
	// Machine says what took the machine when it decided the run's breaches (its exit 6).
	Machine string `json:"machine,omitempty"`
	// Outside says what took the machine from outside the run, by the machine check's own samples
	// (MACHINE_CHECK=true), breaches or none: other work on the runner, or its hypervisor's steal. A run
	// whose figures something else moved cannot make a difference between the sides certctl's. The
	// run's own stack saturating the machine is not outside: beside a reference that held, it is the
	// candidate's cost.
	Outside string `json:"outside,omitempty"`
}

// outsideRules are the machine check's rules that name something outside the run (rules.yaml).
var outsideRules = []string{"machine-outside", "machine-steal"}

// MachineDecided is what the machine check says took the machine from outside a run, from its
// summaries' diagnoses ("" when nothing did, or the check was off).
func MachineDecided(sums []results.Summary) string {
	for _, s := range sums {
		if s.Diagnosis == nil {
			continue
		}
		for _, f := range s.Diagnosis.Findings {
			if slices.Contains(outsideRules, f.Rule) {
				return f.Sentence
			}
		}
	}
	return ""
}

// Breaches reads a run's classified breaches from its summaries.
func Breaches(sums []results.Summary) (news, known []string, machine string) {
	add := func(list *[]string, v string) {
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, s := range sums {
		if s.Inconclusive != "" {
			machine = s.Inconclusive
		}
		if s.Breaches == nil {
			// Classified runs only: one before the registry, or without it, lists its failures.
			for _, f := range s.FailedChecks {
				add(&news, f)
			}
			continue
		}
		for _, b := range s.Breaches.Failing() {
			add(&news, b.Scenario+": "+b.Threshold)
		}
		for _, k := range s.Breaches.Known {
			for _, id := range k.Defects {
				add(&known, id)
			}
		}
	}
	sort.Strings(news)
	sort.Strings(known)
	return news, known, machine
}

// Result is gate.json.
type Result struct {
	Schema   string `json:"schema"`
	RunID    string `json:"run_id"`
	Command  string `json:"command"`
	Plan     Plan   `json:"plan"`
	Runs     []Run  `json:"runs"`
	Complete bool   `json:"complete"`
	// Problem is why the gate has no verdict on the builds: a run that left no results, a compare
	// that could not read them.
	Problem string `json:"problem,omitempty"`
	// Verdict is one of pass, regressed, new-breach, inconclusive, failed; Sentence says it, the verdict
	// first, in one sentence.
	Verdict  string `json:"verdict"`
	Sentence string `json:"sentence"`
	Code     int    `json:"exit_code"`
	// Regressed are compare's regressed rows, worst first per scenario, with the endpoints among them.
	Regressed []string `json:"regressed"`
	// Cause is where the time went, from both sides' diagnoses: the statement whose cost moved most,
	// the leading findings.
	Cause string `json:"cause,omitempty"`
	// NewBreaches are budgets the candidate broke in every run while the reference held them in every
	// run, and no registered defect explains.
	NewBreaches []string `json:"new_breaches"`
	// Undecided are budgets this runner cannot judge the candidate on: broken on the reference too, or in
	// some of the candidate's runs only.
	Undecided []string `json:"undecided"`
	// Testbeds says how the two sides' machines differ, when they do (compare's not comparable).
	Testbeds []string `json:"testbeds,omitempty"`
	// Compare is the comparison of the two sets (compare.json beside gate.json).
	Compare *compare.Result `json:"-"`
}

// Judge sets the verdict from the runs and their comparison (nil when there is none: Problem says why).
// In order: a gate without an answer fails; two sides on different testbeds are inconclusive; a
// significant regression beyond the tolerance is one, with the cause; a budget only the candidate broke
// in every run and no defect explains is a new breach; a budget the runner decides (broken on the
// reference too, or in some of the candidate's runs only) is inconclusive; else it passes.
func Judge(r *Result, failedCode int) {
	r.Regressed, r.NewBreaches, r.Undecided, r.Testbeds, r.Cause = []string{}, []string{}, []string{}, nil, ""
	set := func(v, s string) {
		r.Verdict, r.Sentence, r.Code = v, v+": "+s, Code(v, failedCode)
	}
	c := r.Compare
	if r.Problem != "" || c == nil {
		set(Failed, "no answer on the builds: "+orUnknown(r.Problem))
		return
	}
	cand, ref := r.Plan.Candidate.Label, r.Plan.Reference.Label
	if len(c.NotComparable) > 0 {
		r.Testbeds = c.NotComparable
		set(Inconclusive, fmt.Sprintf("%s and %s ran on different testbeds (%s): the machine moved during the sitting, and their difference is not certctl's", cand, ref, strings.Join(c.NotComparable[1:], "; ")))
		return
	}
	r.Regressed = regressedRows(*c)
	r.Cause = causeText(c.Cause, ref, cand)
	r.NewBreaches, r.Undecided = breachesOnlyCandidate(r.Runs)
	if len(r.Regressed) > 0 || len(r.NewBreaches) > 0 {
		// A difference measured while the machine was taken (a noisy runner, another job beside the gate)
		// is the machine's before it is certctl's: the gate says which run, and what took it.
		for _, run := range r.Runs {
			if run.Outside != "" {
				set(Inconclusive, fmt.Sprintf("the machine decided run %s (%s): %s; what moved between %s and %s is not certctl's to answer for", run.RunID, sideLabel(r.Plan, run.Side), run.Outside, ref, cand))
				return
			}
		}
	}
	news := ""
	if len(r.NewBreaches) > 0 {
		news = "; it also broke " + strings.Join(r.NewBreaches, ", ") + ", which " + ref + " held"
	}
	withCause := func(s string) string {
		if r.Cause != "" {
			return s + "; " + r.Cause
		}
		return s
	}
	switch {
	case len(r.Regressed) > 0:
		set(Regressed, withCause(fmt.Sprintf("%s is significantly slower than %s beyond %s %%: %s", cand, ref, compare.Percent(c.Tolerance), strings.Join(r.Regressed, "; ")))+news)
	case len(r.NewBreaches) > 0:
		// The medians' intervals may be too wide to call (a saturated runner queues both sides), but the
		// diagnoses still say where the candidate's time went.
		set(NewBreach, withCause(fmt.Sprintf("%s broke %s in every run, which %s held in every run and no registered defect explains", cand, strings.Join(r.NewBreaches, ", "), ref)))
	case len(r.Undecided) > 0:
		set(Inconclusive, fmt.Sprintf("this runner decides %s (%s); nothing else moved beyond the runs' noise", strings.Join(r.Undecided, ", "), undecidedWhy(r.Runs)))
	default:
		s := fmt.Sprintf("%s is within the runs' noise of %s (%d runs a side, alternating)", cand, ref, r.Plan.RunsASide)
		if changed(*c) {
			s = fmt.Sprintf("%s differs from %s, nothing worse beyond %s %% (%d runs a side, alternating)", cand, ref, compare.Percent(c.Tolerance), r.Plan.RunsASide)
		}
		set(Pass, s)
	}
}

func sideLabel(p Plan, side string) string {
	if side == Candidate {
		return p.Candidate.Label
	}
	return p.Reference.Label
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// breachesOnlyCandidate sorts the unexplained budgets: broken in every candidate run and in no
// reference run (new), else broken somewhere (undecided: the reference broke it too, or not every
// candidate run did).
func breachesOnlyCandidate(runs []Run) (news, undecided []string) {
	count := map[string][2]int{}
	var sides [2]int
	for _, r := range runs {
		i := 0
		if r.Side == Candidate {
			i = 1
		}
		sides[i]++
		for _, b := range r.New {
			n := count[b]
			n[i]++
			count[b] = n
		}
	}
	news, undecided = []string{}, []string{}
	for b, n := range count {
		if n[0] == 0 && n[1] == sides[1] && sides[1] > 0 {
			news = append(news, b)
		} else {
			undecided = append(undecided, b)
		}
	}
	sort.Strings(news)
	sort.Strings(undecided)
	return news, undecided
}

// undecidedWhy counts, for the sentence, on which side the undecided budgets broke.
func undecidedWhy(runs []Run) string {
	var ref, cand, refN, candN int
	for _, r := range runs {
		if r.Side == Reference {
			refN++
			if len(r.New) > 0 {
				ref++
			}
		} else {
			candN++
			if len(r.New) > 0 {
				cand++
			}
		}
	}
	return fmt.Sprintf("unexplained breaches in %d of %d reference runs and %d of %d candidate runs", ref, refN, cand, candN)
}

// regressedRows are compare's failing rows, one entry a scenario. When endpoints of it failed, the
// entry leads with the worst of them, the request that moved, and names the others; else with the
// scenario's worst row.
func regressedRows(c compare.Result) []string {
	type failing struct {
		scenario  *compare.Row
		endpoints []string
		worst     map[string]compare.Row
	}
	var order []string
	by := map[string]*failing{}
	for _, row := range c.Rows {
		if !row.Fails {
			continue
		}
		top, ep, _ := strings.Cut(row.Scenario, "/")
		f := by[top]
		if f == nil {
			f = &failing{worst: map[string]compare.Row{}}
			by[top] = f
			order = append(order, top)
		}
		if ep == "" {
			if f.scenario == nil || worse(row, *f.scenario) {
				r := row
				f.scenario = &r
			}
			continue
		}
		if w, ok := f.worst[ep]; !ok || worse(row, w) {
			if !ok {
				f.endpoints = append(f.endpoints, ep)
			}
			f.worst[ep] = row
		}
	}
	out := []string{}
	for _, sc := range order {
		f := by[sc]
		if len(f.endpoints) == 0 {
			out = append(out, sc+" "+f.scenario.Metric+" "+f.scenario.ShortChange())
			continue
		}
		lead := f.endpoints[0]
		for _, ep := range f.endpoints[1:] {
			if worse(f.worst[ep], f.worst[lead]) {
				lead = ep
			}
		}
		w := f.worst[lead]
		s := w.Scenario + " " + w.Metric + " " + w.ShortChange()
		if others := slices.DeleteFunc(slices.Clone(f.endpoints), func(ep string) bool { return ep == lead }); len(others) > 0 {
			s += " (also " + strings.Join(others, ", ") + ")"
		}
		out = append(out, s)
	}
	return out
}

// worse: a larger factor, an error rate's rise counting as the larger.
func worse(a, b compare.Row) bool {
	if (a.Metric == "error rate") != (b.Metric == "error rate") {
		return a.Metric == "error rate"
	}
	return a.Change > b.Change
}

// causeText is the cause in a clause: the statement whose share of the database's time grew most,
// and the candidate's leading finding.
func causeText(c *compare.Cause, ref, cand string) string {
	if c == nil {
		return ""
	}
	var parts []string
	var top *compare.StatementChange
	for i, s := range c.Statements {
		// A statement is the cause when it took a tenth of the database's time more, or a tenth of it at
		// a cost a call half again the reference's: a share moving by points is the runs' noise.
		grew := s.NewShare-s.OldShare >= 0.10 || (s.NewShare >= 0.10 && s.OldMeanMS > 0 && s.NewMeanMS >= 1.5*s.OldMeanMS)
		if grew && (top == nil || s.NewShare-s.OldShare > top.NewShare-top.OldShare) {
			top = &c.Statements[i]
		}
	}
	if top != nil {
		p := fmt.Sprintf("the time went to %s (%s %% of the database's time on %s, %s %% on %s", top.Query,
			compare.Percent(top.NewShare), cand, compare.Percent(top.OldShare), ref)
		if top.NewMeanMS > 0 && top.OldMeanMS > 0 {
			p += fmt.Sprintf("; %.3g ms a call against %.3g", top.NewMeanMS, top.OldMeanMS)
		} else if top.NewMeanMS > 0 {
			p += fmt.Sprintf("; %.3g ms a call", top.NewMeanMS)
		}
		parts = append(parts, p+")")
	}
	if top == nil && len(c.New) > 0 && (len(c.Old) == 0 || c.New[0] != c.Old[0]) {
		parts = append(parts, cand+"'s diagnosis: "+c.New[0])
	}
	return strings.Join(parts, "; ")
}

// Options are how the gate compares its two sets of runs.
type Options struct {
	Tolerance float64
	// Judged are the metrics that can fail it (compare.Options.Judged); empty: every one.
	Judged []string
	// Family, when set, is the confidence for every judged row at once: each row's interval is then at
	// 1 − (1 − Family)/k for the k rows judged (Bonferroni), as `make overhead` judges its budget; a
	// verdict read from a score of rows at 99 % each is wrong far more often than 1 time in 100.
	Family float64
	// Confidence is each row's level when Family is not set.
	Confidence float64
	// AcrossTestbeds judges two sides whose calibrations differ rather than calling the gate
	// inconclusive: MACHINE_CHECK=false, stacks side by side on purpose (compare.Options).
	AcrossTestbeds bool
}

// Compare compares the reference's runs (old) with the candidate's (new) as the gate judges them.
func Compare(ref, cand compare.Side, o Options) (compare.Result, error) {
	co := compare.Options{Tolerance: o.Tolerance, Confidence: o.Confidence, Judged: o.Judged, AcrossTestbeds: o.AcrossTestbeds}
	if o.Family <= 0 {
		return compare.Compare(ref, cand, co)
	}
	// A first pass counts the rows judged; the second draws enough replicates for the tails it reads
	// (ten beyond each end of the interval at least).
	co.Confidence = o.Family
	first, err := compare.Compare(ref, cand, co)
	if err != nil {
		return first, err
	}
	k := 0
	for _, r := range first.Rows {
		if r.Low != nil && (len(o.Judged) == 0 || slices.Contains(o.Judged, r.Metric)) {
			k++
		}
	}
	co.Confidence = 1 - (1-o.Family)/float64(max(k, 1))
	co.Draws = min(20000, max(2000, int(20/(1-co.Confidence))+1))
	return compare.Compare(ref, cand, co)
}

// changed: a judged row moved beyond the noise, either way (the rows shown but not judged do not count).
func changed(c compare.Result) bool {
	for _, r := range c.Rows {
		if (r.Verdict == "worse" || r.Verdict == "better") && (len(c.Judged) == 0 || slices.Contains(c.Judged, r.Metric)) {
			return true
		}
	}
	return false
}
