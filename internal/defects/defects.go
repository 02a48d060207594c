// Package defects is the registry of certctl's known defects that a run's budgets meet (the `registry:`
// part of a finding's record, docs/findings/<id>.md, in registry.yaml's form) and the classification of a run's
// breaches against it. A broken threshold is known only as far as the defect's own signature in the
// same record accounts for it: a count or a rate up to what the signature's events explain, a budget
// that judged no sample only when the signature accounts for every attempt that is missing, a latency
// only up to what the entry recorded on this build and testbed. The rest is new, or, when the registry
// recorded the latency on another testbed or load, unjudged (the run is inconclusive). An entry seen on
// the build that ran, whose scenario ran without its signature and without its workaround, did not
// appear. It reads nothing but the registry: the run's records come in as Scenarios.
package defects

import (
	"certctl-loadtest/internal/findings"
	"certctl-loadtest/internal/testbed"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Entry is one defect of the registry.
type Entry struct {
	ID        string   `yaml:"id" json:"id"`
	Title     string   `yaml:"title" json:"title"`
	Seen      []string `yaml:"seen" json:"seen"`
	Scenarios []string `yaml:"scenarios" json:"-"`
	Evidence  Evidence `yaml:"evidence" json:"-"`
	// Stops is the operation the defect stops, as a rate threshold (or a count==0 one) of its scenarios:
	// a budget marked NoSample is explained only when every sample of this one is a failure the evidence
	// accounts for.
	Stops          string      `yaml:"stops,omitempty" json:"-"`
	Explains       []Explained `yaml:"explains" json:"-"`
	WorkedAroundBy *Workaround `yaml:"worked_around_by,omitempty" json:"-"`
	Remedy         string      `yaml:"remedy,omitempty" json:"remedy,omitempty"`
	// Recorded: per build, the largest value each latency budget it explains measured, on a testbed
	// at a load. A latency is explained only on a build with a recording, up to that value and noise.
	Recorded []Recording `yaml:"recorded,omitempty" json:"-"`
	// Reproduced: the builds its script (docs/findings/repro/<id>.sh) reproduces it on without the
	// harness, from the finding's record (a registry file does not say).
	Reproduced []string `yaml:"-" json:"reproduced,omitempty"`
}

// Evidence is the defect's own signature in a scenario's record, independent of every budget the entry
// explains: a counter of events that carry it (a 500 with certctl's own words, a 429 in its text/plain
// shape), or a setup() value measured before the load (the session's fixed cost on an idle server).
type Evidence struct {
	Counter string  `yaml:"counter,omitempty"`  // a record counter; a trailing * sums every counter it prefixes
	Setup   string  `yaml:"setup,omitempty"`    // a setup() value …
	AtLeast float64 `yaml:"at_least,omitempty"` // … at least this
	// Threshold is refused: a budget is broken by any slowness or failure, not only by the defect.
	Threshold string `yaml:"threshold,omitempty"`
}

// Explained is a threshold an entry explains, as a scenario states it (metric without the scenario's
// tag, then the expression).
type Explained struct {
	Threshold string
	// NoSample: explained only when it judged no sample, and Stops' every sample is the defect's.
	NoSample bool
	// Each: how many of the threshold's failed samples (a rate's) or counts (a count's) one evidence
	// event accounts for, at most; 1 unless the registry says.
	Each float64
}

// NoSample marks an explained threshold that counts only when it judged no sample.
const NoSample = " (no sample)"

func (x Explained) String() string {
	if x.NoSample {
		return x.Threshold + NoSample
	}
	return x.Threshold
}

// UnmarshalYAML reads "metric expr", "metric expr (no sample)" or {threshold: …, each: n}.
func (x *Explained) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		x.Threshold, x.NoSample = strings.CutSuffix(n.Value, NoSample)
		x.Each = 1
		return nil
	}
	var m struct {
		Threshold string  `yaml:"threshold"`
		Each      float64 `yaml:"each"`
	}
	dec := n.Decode
	if err := dec(&m); err != nil {
		return err
	}
	x.Threshold, x.NoSample = strings.CutSuffix(m.Threshold, NoSample)
	x.Each = m.Each
	return nil
}

// MarshalYAML writes the short form unless Each says more than 1.
func (x Explained) MarshalYAML() (any, error) {
	if x.Each == 1 || x.NoSample {
		return x.String(), nil
	}
	return map[string]any{"threshold": x.String(), "each": x.Each}, nil
}

// Workaround is the setup() value that says the run worked the defect around: the entry then explains
// nothing in that run (whatever breaks is not the defect's), and its absence is not "fixed?".
type Workaround struct {
	Setup  string `yaml:"setup"`
	Equals any    `yaml:"equals"`
}

// Recording is what the latencies an entry explains measured on one build, with the testbed and the
// load they were measured at: a breach beyond it (and Noise) is the defect's no longer.
type Recording struct {
	Build   string `yaml:"build"`
	Date    string `yaml:"date"`
	Command string `yaml:"command"`
	Testbed Bed    `yaml:"testbed"`
	// Scenarios: per scenario, the arrival rate it ran at and, per threshold, the largest value its
	// expression judged over the runs.
	Scenarios map[string]RecordedLoad `yaml:"scenarios"`
}

// Bed is a recording's testbed, in run.json's calibration terms.
type Bed struct {
	CPUs       int     `yaml:"cpus"`
	CPUModel   string  `yaml:"cpu_model"`
	CPUSingle  float64 `yaml:"cpu_single_ops_s"`
	CPUAll     float64 `yaml:"cpu_all_ops_s"`
	FsyncP50Ms float64 `yaml:"fsync_p50_ms"`
}

func (b Bed) calibration() testbed.Calibration {
	return testbed.Calibration{CPUs: b.CPUs, CPUModel: b.CPUModel, CPUSingle: b.CPUSingle, CPUAll: b.CPUAll, FsyncP50Ms: b.FsyncP50Ms}
}

// RecordedLoad is one scenario of a recording.
type RecordedLoad struct {
	RatePerS float64            `yaml:"rate_per_s"`
	Runs     int                `yaml:"runs"`
	Largest  map[string]float64 `yaml:"largest"`
}

// Noise is how far past its recorded largest value a latency may measure and still be the defect's:
// the spread of one build against itself in the gate's A/A sittings (docs/comparing.md: a median moved
// by 15–20 % from run to run, a p99 once by +60 %). A median or a mean gets the first, a tail the second.
func Noise(aggregate string) float64 {
	switch aggregate {
	case "med", "avg", "p(50)":
		return 0.25
	}
	return 0.6
}

// Link is where docs/certctl-findings.md explains the entry.
func (e Entry) Link() string { return findings.Link(e.ID) }

// Registry is the built-in registry: the findings' records' registry parts, read and checked as a
// DEFECTS_REGISTRY file is (Parse). Each entry carries the builds its reproduction script reproduces it on.
func Registry() ([]Entry, error) {
	cat, err := findings.Load()
	if err != nil {
		return nil, err
	}
	return fromCatalog(cat)
}

// fromCatalog reads each record's registry part on its own, so that an error names the record.
func fromCatalog(cat findings.Catalog) ([]Entry, error) {
	var reg []Entry
	for _, f := range cat.Findings {
		src, err := f.RegistryYAML()
		switch {
		case err != nil:
			return nil, err
		case src == nil:
			continue
		}
		one, err := parseRegistry(src, "docs/findings/"+f.ID+".md: registry")
		if err != nil {
			return nil, err
		}
		one[0].Reproduced = f.Reproduces
		reg = append(reg, one[0])
	}
	return reg, nil
}

// Sentence is a finding's line in a run's summary (its record's summary:), with its registry entry's
// workaround when it has one: the line then says whether the run applied it.
type Sentence struct {
	findings.Sentence
	ID     string
	around *Workaround
}

// Sentences are the findings' summary lines, in the records' order.
func Sentences() ([]Sentence, error) {
	cat, err := findings.Load()
	if err != nil {
		return nil, err
	}
	reg, err := fromCatalog(cat)
	if err != nil {
		return nil, err
	}
	var out []Sentence
	for _, f := range cat.Findings {
		if f.Summary == nil {
			continue
		}
		s := Sentence{Sentence: *f.Summary, ID: f.ID}
		if i := slices.IndexFunc(reg, func(e Entry) bool { return e.ID == f.ID }); i >= 0 {
			s.around = reg[i].WorkedAroundBy
		}
		if s.IfWorkedAround != "" && s.around == nil {
			return nil, fmt.Errorf("docs/findings/%s.md: summary: if_worked_around, but its registry part names no worked_around_by", f.ID)
		}
		out = append(out, s)
	}
	return out, nil
}

// In is the sentence for a scenario whose record counts the finding; false when it counts none.
func (s Sentence) In(sc Scenario) (string, bool) {
	n := sc.Counters[s.Counter]
	if n <= 0 {
		return "", false
	}
	return s.Text(s.ID, sc.Name, n, s.around.holds(sc)), true
}

var exprRE = regexp.MustCompile(`^(\S+) (rate|count|med|avg|min|max|p\(\d+(?:\.\d+)?\))\s*(<=|>=|==|!=|<|>)\s*([0-9.]+)$`)

// parsed is a threshold key read: its aggregate, comparison and bound.
type parsed struct {
	agg, op string
	bound   float64
}

func parse(key string) (parsed, bool) {
	m := exprRE.FindStringSubmatch(key)
	if m == nil {
		return parsed{}, false
	}
	v, err := strconv.ParseFloat(m[4], 64)
	return parsed{agg: m[2], op: m[3], bound: v}, err == nil
}

func (p parsed) latency() bool { return p.agg != "rate" && p.agg != "count" }

func (p parsed) holds(v float64) bool {
	switch p.op {
	case "<":
		return v < p.bound
	case "<=":
		return v <= p.bound
	case ">":
		return v > p.bound
	case ">=":
		return v >= p.bound
	case "==":
		return v == p.bound
	}
	return v != p.bound
}

// Parse reads a registry in registry.yaml's form (a team's own, DEFECTS_REGISTRY), checked alike: every
// entry has an id, a title, scenarios, one evidence of the defect's own and the thresholds it explains.
func Parse(b []byte) ([]Entry, error) { return parseRegistry(b, "registry.yaml") }

// parseRegistry reads a registry, its errors prefixed by where it came from.
func parseRegistry(b []byte, from string) ([]Entry, error) {
	var reg []Entry
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&reg); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	seen := map[string]bool{}
	for i, e := range reg {
		if err := e.check(seen); err != nil {
			if e.ID == "" {
				return nil, fmt.Errorf("%s: entry %d %s", from, i+1, err)
			}
			return nil, fmt.Errorf("%s: %s: %s", from, e.ID, err)
		}
		seen[e.ID] = true
	}
	return reg, nil
}

func (e Entry) check(seen map[string]bool) error {
	switch {
	case e.ID == "" || e.Title == "":
		return fmt.Errorf("has no id or title")
	case seen[e.ID]:
		return fmt.Errorf("twice")
	case len(e.Scenarios) == 0 || len(e.Explains) == 0:
		return fmt.Errorf("names no scenario or no threshold it explains")
	case e.Evidence.Threshold != "":
		return fmt.Errorf("evidence %q is a threshold: a budget breaks for any slowness or failure, not only the defect's; name a counter of the defect's own signature, or a setup value measured before the load", e.Evidence.Threshold)
	case (e.Evidence.Counter == "") == (e.Evidence.Setup == ""):
		return fmt.Errorf("needs one evidence: a counter of the defect's signature or a setup value")
	case e.Evidence.Setup != "" && e.Evidence.AtLeast <= 0:
		return fmt.Errorf("evidence setup %s needs at_least above 0", e.Evidence.Setup)
	case e.WorkedAroundBy != nil && e.WorkedAroundBy.Setup == "":
		return fmt.Errorf("worked_around_by names no setup value")
	}
	if e.Stops != "" {
		if p, ok := parse(e.Stops); !ok || (p.agg != "rate" && !(p.agg == "count" && p.op == "==")) {
			return fmt.Errorf("stops %q is not a rate threshold or a count==0 one", e.Stops)
		}
	}
	for _, x := range e.Explains {
		p, ok := parse(x.Threshold)
		switch {
		case !ok:
			return fmt.Errorf("explains %q: not a metric and a threshold expression (rate, count, a percentile, med, avg, min or max)", x.Threshold)
		case x.Each < 0:
			return fmt.Errorf("explains %q: each %v below 0", x.Threshold, x.Each)
		case x.NoSample && e.Stops == "":
			return fmt.Errorf("explains %q over no sample but names no operation it stops (stops:)", x.Threshold)
		case !x.NoSample && !p.latency() && e.Evidence.Setup != "":
			return fmt.Errorf("explains %q, a count or a rate, with a setup value: a measured cost accounts for no number of failures", x.Threshold)
		case !x.NoSample && p.agg == "count" && (p.op == ">" || p.op == ">="):
			return fmt.Errorf("explains %q: a count that must rise breaks when nothing is counted, so mark it %q", x.Threshold, NoSample)
		}
	}
	for _, r := range e.Recorded {
		if r.Build == "" || r.Testbed.CPUs == 0 {
			return fmt.Errorf("a recording names no build or no testbed")
		}
		for sc, l := range r.Scenarios {
			if !slices.Contains(e.Scenarios, sc) {
				return fmt.Errorf("recorded on %s for %s, not among its scenarios", r.Build, sc)
			}
			for th := range l.Largest {
				if !slices.ContainsFunc(e.Explains, func(x Explained) bool { return x.Threshold == th && !x.NoSample }) {
					return fmt.Errorf("recorded %q on %s, which it does not explain as measured", th, r.Build)
				}
			}
		}
	}
	return nil
}

// Threshold is one threshold of a scenario's record, as the classification reads it.
type Threshold struct {
	Key      string // the metric without the scenario's own tags, then the expression
	OK       bool
	NoSample bool
	Value    *float64 // what the expression judged
	Measured string   // "p(95)=910 ms", "no sample"
	// Passes and Fails are a rate's true and false samples; nil for other metrics and in records
	// written before they were kept.
	Passes, Fails *float64
}

// Scenario is what the classification reads of one scenario's record.
type Scenario struct {
	Name string
	// Judged: its setup ran and its thresholds judged the load (an aborted setup judges nothing).
	Judged     bool
	Thresholds []Threshold
	Counters   map[string]float64
	Setup      map[string]any
	// RatePerS is the arrival rate the scenario was asked for (0 for a closed model).
	RatePerS float64
}

// Run is what the classification reads of the run: the build and the testbed it ran on.
type Run struct {
	Build   string // the certctl build the entries' Seen and Recorded are read against ("" when unknown)
	Testbed *testbed.Calibration
	// named: the registry names Build in some entry's seen or recorded. A build it never names (a pull
	// request's head, an image built elsewhere) has no claim of fixed or not: there a signature alone
	// says the defect, and its latencies are unjudged.
	named bool
}

// Breach is one broken threshold: its scenario, its key (the metric without the scenario's own tags,
// then the expression: "checks{walk:cursor} rate==1"), what it measured, and why it is in its group.
type Breach struct {
	Scenario  string `json:"scenario"`
	Threshold string `json:"threshold"`
	Measured  string `json:"measured,omitempty"`
	Why       string `json:"why,omitempty"`
}

// Known is a breach the registry explains (or would, were it not worse than recorded or unjudged).
type Known struct {
	Breach
	Defects []string `json:"defects"` // the entries' ids
}

// Absent is a defect seen on this build that the run did not meet where it should have.
type Absent struct {
	Defect    string   `json:"defect"`
	Title     string   `json:"title"`
	Scenarios []string `json:"scenarios"`
}

// Verdict is a run's breaches, classified. Worse counts as new; Unjudged makes a run inconclusive
// unless something is new.
type Verdict struct {
	Build string   `json:"build"`
	New   []Breach `json:"new"`
	Known []Known  `json:"known"`
	// Worse: a latency a known defect explains, measured beyond what the registry recorded on this build
	// and testbed by more than Noise: known, and worse than recorded.
	Worse []Known `json:"worse,omitempty"`
	// Unjudged: a latency a known defect explains, recorded on another testbed or at another load than
	// this run's: its size cannot be told from the defect's.
	Unjudged     []Known  `json:"unjudged,omitempty"`
	NotAppearing []Absent `json:"not_appearing"`
}

// IsKnown reports whether the verdict lists the scenario's breach of the threshold as known.
func (v *Verdict) IsKnown(scenario, threshold string) bool {
	for _, k := range v.Known {
		if k.Scenario == scenario && k.Threshold == threshold {
			return true
		}
	}
	return false
}

// Failing is the breaches that count as new: the new ones, and the known ones worse than recorded.
func (v *Verdict) Failing() []Breach {
	out := slices.Clone(v.New)
	for _, k := range v.Worse {
		out = append(out, k.Breach)
	}
	return out
}

// IsUnjudged reports whether the verdict lists the scenario's breach of the threshold as unjudged.
func (v *Verdict) IsUnjudged(scenario, threshold string) bool {
	for _, k := range v.Unjudged {
		if k.Scenario == scenario && k.Threshold == threshold {
			return true
		}
	}
	return false
}

// outcome is what one entry says of one breach.
type outcome int

const (
	notExplained outcome = iota
	unjudged
	worse
	explained
)

// Classify sorts the breaches of a run into new, known, worse than recorded and unjudged, and lists the
// entries seen on its build that the run did not meet.
func Classify(reg []Entry, run Run, scenarios []Scenario) Verdict {
	v := Verdict{Build: run.Build, New: []Breach{}, Known: []Known{}, NotAppearing: []Absent{}}
	run.named = slices.ContainsFunc(reg, func(e Entry) bool {
		return slices.Contains(e.Seen, run.Build) || slices.ContainsFunc(e.Recorded, func(r Recording) bool { return r.Build == run.Build })
	})
	absent := map[string][]string{}
	for _, sc := range scenarios {
		for _, e := range reg {
			if !slices.Contains(e.Scenarios, sc.Name) || !sc.Judged || !slices.Contains(e.Seen, run.Build) {
				continue
			}
			if _, ok := e.evidence(sc); !ok && !e.workedAround(sc) && !e.masked(sc) {
				absent[e.ID] = append(absent[e.ID], sc.Name)
			}
		}
		if !sc.Judged {
			continue
		}
		for _, t := range sc.Thresholds {
			if t.OK {
				continue
			}
			b := Breach{Scenario: sc.Name, Threshold: t.Key, Measured: t.Measured}
			best, ids, whys := notExplained, []string(nil), []string(nil)
			for _, e := range reg {
				if !slices.Contains(e.Scenarios, sc.Name) {
					continue
				}
				o, why := e.explain(sc, t, run)
				if o == notExplained && why == "" {
					continue
				}
				switch {
				case o > best:
					best, ids, whys = o, []string{e.ID}, []string{why}
				case o == best && o != notExplained:
					ids, whys = append(ids, e.ID), append(whys, why)
				case o == notExplained && best == notExplained:
					whys = append(whys, e.ID+": "+why)
				}
			}
			whys = slices.DeleteFunc(whys, func(s string) bool { return s == "" })
			// An entry that names the threshold only over no sample (or only as measured) says little
			// beside one that names it as it broke: keep its reason only when it is the only one.
			if best == notExplained {
				if kept := slices.DeleteFunc(slices.Clone(whys), offSample); len(kept) > 0 {
					whys = kept
				}
			}
			b.Why = strings.Join(whys, "; ")
			switch best {
			case explained:
				v.Known = append(v.Known, Known{Breach: b, Defects: ids})
			case worse:
				v.Worse = append(v.Worse, Known{Breach: b, Defects: ids})
			case unjudged:
				v.Unjudged = append(v.Unjudged, Known{Breach: b, Defects: ids})
			default:
				v.New = append(v.New, b)
			}
		}
	}
	for _, e := range reg {
		if scs, ok := absent[e.ID]; ok {
			sort.Strings(scs)
			v.NotAppearing = append(v.NotAppearing, Absent{Defect: e.ID, Title: e.Title, Scenarios: scs})
		}
	}
	return v
}

func offSample(why string) bool {
	return strings.Contains(why, ": explains it only over no sample") || strings.Contains(why, ": explains it only as measured")
}

// explain says what the entry makes of a broken threshold t of sc, and why when that is not plain: ""
// with notExplained when the entry does not name it at all.
func (e Entry) explain(sc Scenario, t Threshold, run Run) (outcome, string) {
	p, ok := parse(t.Key)
	if !ok {
		return notExplained, ""
	}
	// A count that must rise and counted nothing judged no sample of what it counts.
	noSample := t.NoSample || (p.agg == "count" && (p.op == ">" || p.op == ">=") && t.Value != nil && *t.Value == 0)
	i := slices.IndexFunc(e.Explains, func(x Explained) bool { return x.Threshold == t.Key && x.NoSample == noSample })
	if i < 0 {
		switch {
		case !slices.ContainsFunc(e.Explains, func(x Explained) bool { return x.Threshold == t.Key }):
			return notExplained, ""
		case noSample:
			return notExplained, "explains it only as measured, and it judged no sample"
		}
		return notExplained, "explains it only over no sample, and it measured " + t.Measured
	}
	x := e.Explains[i]
	if run.named && !slices.Contains(e.Seen, run.Build) {
		return notExplained, fmt.Sprintf("not recorded on %s", buildName(run.Build))
	}
	if e.workedAround(sc) {
		return notExplained, fmt.Sprintf("worked around in this run (%s=%v)", e.WorkedAroundBy.Setup, e.WorkedAroundBy.Equals)
	}
	n, ok := e.evidence(sc)
	if !ok {
		return notExplained, "its signature is not in the record (" + e.Evidence.String() + ")"
	}
	switch {
	case x.NoSample:
		return e.stopped(sc, n)
	case p.latency():
		return e.magnitude(sc, t, p, run)
	}
	return accounted(t, p, n*x.Each, e.Evidence.Counter)
}

// evidence is the entry's signature in the scenario's record: the events counted, or 1 for a setup
// value at its mark; false when it is not there.
func (e Entry) evidence(sc Scenario) (float64, bool) {
	if s := e.Evidence.Setup; s != "" {
		v, ok := number(sc.Setup[s])
		return 1, ok && v >= e.Evidence.AtLeast
	}
	c := e.Evidence.Counter
	n := sc.Counters[c]
	if prefix, ok := strings.CutSuffix(c, "*"); ok {
		n = 0
		for k, v := range sc.Counters {
			if strings.HasPrefix(k, prefix) {
				n += v
			}
		}
	}
	return n, n > 0
}

func (ev Evidence) String() string {
	if ev.Setup != "" {
		return fmt.Sprintf("setup %s ≥ %v", ev.Setup, ev.AtLeast)
	}
	return "counter " + ev.Counter + " above 0"
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case string:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	}
	return 0, false
}

// accounted: a rate or a count the evidence's events explain up to acc of its failures; what is left
// is judged by the threshold's own expression.
func accounted(t Threshold, p parsed, acc float64, counter string) (outcome, string) {
	if p.agg == "count" {
		if t.Value == nil {
			return notExplained, "the record gives no count"
		}
		left := math.Max(0, *t.Value-acc)
		if p.holds(left) {
			return explained, fmt.Sprintf("%s accounts for %s", counter, num(math.Min(*t.Value, acc)))
		}
		return notExplained, fmt.Sprintf("%s accounts for %s of %s", counter, num(acc), num(*t.Value))
	}
	if t.Passes == nil || t.Fails == nil {
		return notExplained, "the record gives no count of the rate's samples"
	}
	trues, falses := *t.Passes, *t.Fails
	// A rate that must stay low fails on its true samples (failed requests), one that must stay high
	// on its false ones (failed orders).
	lowBad := p.op == "<" || p.op == "<="
	bad := falses
	if lowBad {
		bad = trues
	}
	took := math.Min(bad, acc)
	if lowBad {
		trues -= took
	} else {
		falses -= took
	}
	if trues+falses == 0 || p.holds(trues/(trues+falses)) {
		return explained, fmt.Sprintf("%s accounts for %s of %s failed", counter, num(took), num(bad))
	}
	return notExplained, fmt.Sprintf("%s accounts for %s of %s failed; without them the rate is %s", counter, num(took), num(bad), num(round(trues/(trues+falses), 4)))
}

// stopped: a budget that judged no sample is the defect's when every attempt of the operation it stops
// failed, each by the defect (its evidence counts at least as many).
func (e Entry) stopped(sc Scenario, n float64) (outcome, string) {
	i := slices.IndexFunc(sc.Thresholds, func(t Threshold) bool { return t.Key == e.Stops })
	if i < 0 {
		return notExplained, "the record has no " + e.Stops
	}
	t := sc.Thresholds[i]
	p, _ := parse(e.Stops)
	var done, failed float64
	switch {
	case p.agg == "count" && t.Value != nil:
		failed = *t.Value
	case t.Passes != nil && t.Fails != nil && (p.op == "<" || p.op == "<="):
		done, failed = *t.Fails, *t.Passes
	case t.Passes != nil && t.Fails != nil:
		done, failed = *t.Passes, *t.Fails
	case t.NoSample:
		return notExplained, e.Stops + " judged no attempt either"
	default:
		return notExplained, "the record gives no count of " + e.Stops
	}
	switch {
	case done > 0:
		return notExplained, fmt.Sprintf("%s of %s's attempts succeeded, and it still judged no sample", num(done), e.Stops)
	case failed > n:
		return notExplained, fmt.Sprintf("%s failed attempts of %s, %s of them the defect's (%s)", num(failed), e.Stops, num(n), e.Evidence.Counter)
	}
	return explained, fmt.Sprintf("every attempt (%s) stopped by the defect", num(failed))
}

// magnitude: a latency is the defect's up to what the entry recorded on this build, for this scenario
// at this load, on this testbed, and Noise past it.
func (e Entry) magnitude(sc Scenario, t Threshold, p parsed, run Run) (outcome, string) {
	if t.Value == nil {
		return notExplained, "the record gives no value"
	}
	var others []string
	for _, r := range e.Recorded {
		l, ok := r.Scenarios[sc.Name]
		largest, has := l.Largest[t.Key]
		if r.Build != run.Build || !ok || !has {
			continue
		}
		if l.RatePerS != sc.RatePerS {
			others = append(others, fmt.Sprintf("recorded at %s/s, this run at %s/s", num(l.RatePerS), num(sc.RatePerS)))
			continue
		}
		if run.Testbed == nil {
			others = append(others, "this run recorded no testbed")
			continue
		}
		if d := testbed.Differences(r.Testbed.calibration(), *run.Testbed); len(d) > 0 {
			others = append(others, fmt.Sprintf("recorded on another testbed (%s)", strings.Join(d, ", ")))
			continue
		}
		limit := largest * (1 + Noise(p.agg))
		if *t.Value <= limit {
			return explained, fmt.Sprintf("within the %s recorded on %s (%s)", num(largest), r.Build, r.Date)
		}
		return worse, fmt.Sprintf("%s past the %s recorded on %s (%s) by more than its noise (%s)", num(*t.Value), num(largest), r.Build, r.Date, num(limit))
	}
	if len(others) > 0 {
		return unjudged, strings.Join(others, "; ")
	}
	if !run.named {
		return unjudged, fmt.Sprintf("%s is a build the registry does not name: its size there is not recorded", buildName(run.Build))
	}
	return notExplained, fmt.Sprintf("its size was never recorded on %s", buildName(run.Build))
}

// masked reports whether the entry's evidence is a setup value setup() could not measure: no login
// got a session, so the run cannot say whether the derivation is there.
func (e Entry) masked(sc Scenario) bool {
	if e.Evidence.Setup == "" {
		return false
	}
	_, ok := sc.Setup[e.Evidence.Setup]
	return !ok
}

func (e Entry) workedAround(sc Scenario) bool { return e.WorkedAroundBy.holds(sc) }

// holds reports whether the scenario's setup says the run worked the defect around.
func (w *Workaround) holds(sc Scenario) bool {
	return w != nil && fmt.Sprint(sc.Setup[w.Setup]) == fmt.Sprint(w.Equals)
}

func buildName(b string) string {
	if b == "" {
		return "an unnamed build"
	}
	return b
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func round(v float64, d int) float64 {
	f := math.Pow(10, float64(d))
	return math.Round(v*f) / f
}

// Record is what runs of one build measured of the latencies the entry explains: per scenario of the
// entry, its arrival rate and, per latency threshold it explains as measured, the largest value over
// the runs (a threshold held counts too: the runs are the defect's size, not its breaches). Each run is
// its scenarios and its testbed; the recording's testbed is the runs' median calibration. It refuses
// runs of one scenario at different rates, runs on different testbeds, and runs without the entry's
// signature or with its workaround (they are not the defect's size).
func (e Entry) Record(build, date, command string, runs []RecordedRun) (Recording, error) {
	r := Recording{Build: build, Date: date, Command: command, Scenarios: map[string]RecordedLoad{}}
	var beds []testbed.Calibration
	for _, run := range runs {
		if run.Testbed == nil {
			return r, fmt.Errorf("%s recorded no testbed", run.Name)
		}
		for _, b := range beds {
			if d := testbed.Differences(b, *run.Testbed); len(d) > 0 {
				return r, fmt.Errorf("%s ran on another testbed than the runs before it: %s", run.Name, strings.Join(d, ", "))
			}
		}
		beds = append(beds, *run.Testbed)
		for _, sc := range run.Scenarios {
			if !slices.Contains(e.Scenarios, sc.Name) || !sc.Judged {
				continue
			}
			if _, ok := e.evidence(sc); !ok || e.workedAround(sc) {
				return r, fmt.Errorf("%s: %s ran without the defect's signature (%s) or worked around: not its size", run.Name, sc.Name, e.Evidence)
			}
			l, seen := r.Scenarios[sc.Name]
			if seen && l.RatePerS != sc.RatePerS {
				return r, fmt.Errorf("%s: %s ran at %s/s, the runs before it at %s/s", run.Name, sc.Name, num(sc.RatePerS), num(l.RatePerS))
			}
			l.RatePerS, l.Runs = sc.RatePerS, l.Runs+1
			if l.Largest == nil {
				l.Largest = map[string]float64{}
			}
			for _, t := range sc.Thresholds {
				p, ok := parse(t.Key)
				if !ok || !p.latency() || t.NoSample || t.Value == nil ||
					!slices.ContainsFunc(e.Explains, func(x Explained) bool { return x.Threshold == t.Key && !x.NoSample }) {
					continue
				}
				l.Largest[t.Key] = math.Max(l.Largest[t.Key], *t.Value)
			}
			r.Scenarios[sc.Name] = l
		}
	}
	if len(r.Scenarios) == 0 {
		return r, fmt.Errorf("no run holds a scenario of %s (%s)", e.ID, strings.Join(e.Scenarios, ", "))
	}
	median := func(f func(testbed.Calibration) float64) float64 {
		v := make([]float64, len(beds))
		for i, b := range beds {
			v[i] = f(b)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	r.Testbed = Bed{CPUs: beds[0].CPUs, CPUModel: beds[0].CPUModel,
		CPUSingle:  math.Round(median(func(c testbed.Calibration) float64 { return c.CPUSingle })),
		CPUAll:     math.Round(median(func(c testbed.Calibration) float64 { return c.CPUAll })),
		FsyncP50Ms: round(median(func(c testbed.Calibration) float64 { return c.FsyncP50Ms }), 3)}
	return r, nil
}

// RecordedRun is one run given to Record: its name (for errors), testbed and scenarios.
type RecordedRun struct {
	Name      string
	Testbed   *testbed.Calibration
	Scenarios []Scenario
}
