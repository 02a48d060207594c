// Package defects is the registry of certctl's known defects that a run's budgets meet
// (registry.yaml, one entry per docs/certctl-findings.md anchor) and the classification of a run's
// breaches against it: each broken threshold is new (no entry explains it) or known (with the entries
// that do), and an entry seen on the build that ran, whose scenario ran without its evidence, did not
// appear. It reads nothing but the registry: the run's records come in as Scenarios.
package defects

import (
	"certctl-loadtest/internal/findings"
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed registry.yaml
var registrySource []byte

// Entry is one defect of the registry.
type Entry struct {
	ID             string      `yaml:"id" json:"id"`
	Title          string      `yaml:"title" json:"title"`
	Seen           []string    `yaml:"seen" json:"seen"`
	Scenarios      []string    `yaml:"scenarios" json:"-"`
	Evidence       Evidence    `yaml:"evidence" json:"-"`
	Explains       []string    `yaml:"explains" json:"-"`
	WorkedAroundBy *Workaround `yaml:"worked_around_by" json:"-"`
	Remedy         string      `yaml:"remedy" json:"remedy,omitempty"`
	// Reproduced: the builds its script (docs/findings/repro/<id>.sh) reproduces it on without the
	// harness, from internal/findings' catalogue (the registry's own file does not say).
	Reproduced []string `yaml:"-" json:"reproduced,omitempty"`
}

// Evidence is what in a scenario's record shows the defect happened.
type Evidence struct {
	Counter   string `yaml:"counter"`   // a record counter above 0; a trailing * matches every counter it prefixes
	Threshold string `yaml:"threshold"` // a threshold broken whose metric counts the defect itself
}

// Workaround is the setup() value that says the run worked the defect around.
type Workaround struct {
	Setup  string `yaml:"setup"`
	Equals any    `yaml:"equals"`
}

// Link is where docs/certctl-findings.md explains the entry.
func (e Entry) Link() string { return "docs/certctl-findings.md#" + e.ID }

// Registry is the registry, checked: every entry has an id, a title, scenarios, one kind of evidence
// and the thresholds it explains.
// Each entry carries the builds its reproduction script reproduces it on, from the findings catalogue.
func Registry() ([]Entry, error) {
	reg, err := Parse(registrySource)
	if err != nil {
		return nil, err
	}
	cat, err := findings.Load()
	if err != nil {
		return nil, err
	}
	for i := range reg {
		if e, ok := cat.Find(reg[i].ID); ok {
			reg[i].Reproduced = e.Reproduces
		}
	}
	return reg, nil
}

// Parse reads a registry in registry.yaml's form (a team's own, DEFECTS_REGISTRY), checked alike.
func Parse(b []byte) ([]Entry, error) {
	var reg []Entry
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&reg); err != nil {
		return nil, fmt.Errorf("registry.yaml: %w", err)
	}
	seen := map[string]bool{}
	for i, e := range reg {
		switch {
		case e.ID == "" || e.Title == "":
			return nil, fmt.Errorf("registry.yaml: entry %d has no id or title", i+1)
		case seen[e.ID]:
			return nil, fmt.Errorf("registry.yaml: %s twice", e.ID)
		case len(e.Scenarios) == 0 || len(e.Explains) == 0:
			return nil, fmt.Errorf("registry.yaml: %s names no scenario or no threshold it explains", e.ID)
		case (e.Evidence.Counter == "") == (e.Evidence.Threshold == ""):
			return nil, fmt.Errorf("registry.yaml: %s needs one evidence: a counter or a threshold", e.ID)
		case e.Evidence.Threshold != "" && !slices.Contains(e.Explains, e.Evidence.Threshold):
			return nil, fmt.Errorf("registry.yaml: %s's evidence %q is not among the thresholds it explains", e.ID, e.Evidence.Threshold)
		case e.WorkedAroundBy != nil && e.WorkedAroundBy.Setup == "":
			return nil, fmt.Errorf("registry.yaml: %s: worked_around_by names no setup value", e.ID)
		}
		seen[e.ID] = true
	}
	return reg, nil
}

// Scenario is what the classification reads of one scenario's record.
type Scenario struct {
	Name string
	// Judged: its setup ran and its thresholds judged the load (an aborted setup judges nothing).
	Judged   bool
	Breached []Breach
	Counters map[string]float64
	Setup    map[string]any
}

// Breach is one broken threshold: its scenario, its key (the metric without the scenario's own tags,
// then the expression: "checks{walk:cursor} rate==1") and what it measured.
type Breach struct {
	Scenario  string `json:"scenario"`
	Threshold string `json:"threshold"`
	Measured  string `json:"measured,omitempty"`
}

// Known is a breach the registry explains.
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

// Verdict is a run's breaches, classified.
type Verdict struct {
	Build        string   `json:"build"` // the certctl build the entries' Seen was read against ("" when unknown)
	New          []Breach `json:"new"`
	Known        []Known  `json:"known"`
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

// Classify sorts the breaches of a run of build into new and known, and lists the entries seen on build
// that the run did not meet.
func Classify(reg []Entry, build string, scenarios []Scenario) Verdict {
	v := Verdict{Build: build, New: []Breach{}, Known: []Known{}, NotAppearing: []Absent{}}
	absent := map[string][]string{}
	for _, sc := range scenarios {
		for _, e := range reg {
			if !slices.Contains(e.Scenarios, sc.Name) || !sc.Judged || !slices.Contains(e.Seen, build) {
				continue
			}
			if !e.evident(sc) && !e.workedAround(sc) && !e.masked(sc) {
				absent[e.ID] = append(absent[e.ID], sc.Name)
			}
		}
		for _, b := range sc.Breached {
			var ids []string
			for _, e := range reg {
				if slices.Contains(e.Scenarios, sc.Name) && e.explains(b) && e.evident(sc) {
					ids = append(ids, e.ID)
				}
			}
			if len(ids) == 0 {
				v.New = append(v.New, b)
			} else {
				v.Known = append(v.Known, Known{Breach: b, Defects: ids})
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

// NoSample marks an explained threshold that counts only when it judged no sample.
const NoSample = " (no sample)"

// explains reports whether the entry explains the breach: its threshold is listed, and one marked
// NoSample judged nothing.
func (e Entry) explains(b Breach) bool {
	for _, x := range e.Explains {
		if t, ok := strings.CutSuffix(x, NoSample); ok {
			if t == b.Threshold && b.Measured == "no sample" {
				return true
			}
		} else if x == b.Threshold {
			return true
		}
	}
	return false
}

// evident reports whether the scenario's record shows the defect. A threshold that judged no sample
// shows nothing: it fails because something else stopped the operation it measures.
func (e Entry) evident(sc Scenario) bool {
	if t := e.Evidence.Threshold; t != "" {
		return slices.ContainsFunc(sc.Breached, func(b Breach) bool { return b.Threshold == t && b.Measured != "no sample" })
	}
	c := e.Evidence.Counter
	if prefix, ok := strings.CutSuffix(c, "*"); ok {
		for k, n := range sc.Counters {
			if strings.HasPrefix(k, prefix) && n > 0 {
				return true
			}
		}
		return false
	}
	return sc.Counters[c] > 0
}

// masked reports whether the entry's evidence is a threshold that judged no sample: the run cannot say
// whether the defect is there (another stopped every operation the threshold measures).
func (e Entry) masked(sc Scenario) bool {
	t := e.Evidence.Threshold
	return t != "" && slices.ContainsFunc(sc.Breached, func(b Breach) bool { return b.Threshold == t && b.Measured == "no sample" })
}

func (e Entry) workedAround(sc Scenario) bool {
	w := e.WorkedAroundBy
	return w != nil && fmt.Sprint(sc.Setup[w.Setup]) == fmt.Sprint(w.Equals)
}
