package history

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// ChangePoint is a step in a series: the index of its first point after the step, the series' means
// on either side, and the significance the detector gave it.
type ChangePoint struct {
	Index  int     `json:"index"`
	Before float64 `json:"mean_before"`
	After  float64 `json:"mean_after"`
	PValue float64 `json:"pvalue"`
}

// Detector finds the change points of named series in one call (Otava's: OtavaDetector).
type Detector func(series map[string][]float64) (map[string][]ChangePoint, error)

// MinWeeks is the shortest series judged: change points need weeks on both sides of a step.
const MinWeeks = 5

// Confirm is how many weeks a step must have behind it to count: the newest week alone, however far
// from the others, may be one noisy week (it is reported as such, never as a regression).
const Confirm = 2

// Step is a change point of one figure's series, as the report shows it.
type Step struct {
	Scenario string  `json:"scenario"`
	Metric   string  `json:"metric"`
	Week     string  `json:"week"` // the first week after the step
	Before   float64 `json:"mean_before"`
	After    float64 `json:"mean_after"`
	Change   float64 `json:"change"` // after over before, minus one
	PValue   float64 `json:"pvalue"`
	Worse    bool    `json:"worse"` // the way that is worse: latency up, the rate achieved down
	// Weeks is how many weeks the series has from the step on, the newest included.
	Weeks int `json:"weeks"`
	// Held: every one of those weeks is past the median of the weeks before the step, the same way, by
	// more than the tolerance: a step, not one noisy week among them.
	Held bool `json:"held"`
	// New: this week confirmed it; without it, the series had no confirmed step there.
	New bool `json:"new"`
}

// Verdict is one run label's series on the newest week's testbed.
type Verdict struct {
	Label string `json:"label"`
	Weeks int    `json:"weeks"` // the series' length, the newest week included
	Apart int    `json:"apart"` // the label's weeks on other testbeds, left out
	// Note says why the series was not judged (too short, a testbed's first week).
	Note  string `json:"note,omitempty"`
	Steps []Step `json:"steps"`
	// Regressed are the steps this week confirmed the worse way, every week since past the tolerance:
	// the verdict.
	Regressed []Step `json:"regressed"`
	// Suspect are the figures whose newest week alone stands apart from the series (a change point with
	// only the newest week after it): a noisy week or a step's first, said, not judged.
	Suspect []Step `json:"suspect,omitempty"`
}

// Judge judges each newest entry (one a run label) against its series in entries: every change point
// of every figure, and the ones this week made appear the worse way beyond tolerance (0.25: 25 %).
func Judge(entries, newest []Entry, detect Detector, tolerance float64) ([]Verdict, error) {
	type ref struct {
		verdict  int
		scenario string
		metric   Metric
		weeks    []string
		vals     []float64
	}
	var out []Verdict
	in := map[string][]float64{}
	refs := map[string]ref{}
	for _, n := range newest {
		series, apart := Series(entries, n)
		v := Verdict{Label: n.Label, Weeks: len(series), Apart: apart, Steps: []Step{}, Regressed: []Step{}}
		switch {
		case len(series) == 1 && apart > 0:
			v.Note = fmt.Sprintf("a new testbed: its series starts this week (%d earlier weeks ran on other testbeds: %s)", apart, strings.Join(differences(entries, n), "; "))
		case len(series) < MinWeeks:
			v.Note = fmt.Sprintf("%d weeks on this testbed: change points are judged from %d on", len(series), MinWeeks)
		}
		out = append(out, v)
		if v.Note != "" {
			continue
		}
		for scenario := range n.Scenarios {
			for _, m := range Metrics {
				var vals []float64
				var weeks []string
				for _, e := range series {
					if f, ok := e.Scenarios[scenario]; ok && !math.IsNaN(f.value(m.Name)) {
						vals, weeks = append(vals, f.value(m.Name)), append(weeks, e.Week)
					}
				}
				if len(vals) < MinWeeks {
					continue
				}
				key := fmt.Sprintf("%s/%s/%s", n.Label, scenario, m.Name)
				in[key], in[key+"#before"] = vals, vals[:len(vals)-1]
				refs[key] = ref{len(out) - 1, scenario, m, weeks, vals}
			}
		}
	}
	if len(in) == 0 {
		return out, nil
	}
	found, err := detect(in)
	if err != nil {
		return out, fmt.Errorf("change points: %w", err)
	}
	keys := make([]string, 0, len(refs))
	for k := range refs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		r := refs[key]
		before := found[key+"#before"]
		for _, cp := range found[key] {
			if cp.Index <= 0 || cp.Index >= len(r.weeks) {
				continue
			}
			s := Step{Scenario: r.scenario, Metric: r.metric.Name, Week: r.weeks[cp.Index], Before: cp.Before, After: cp.After,
				PValue: cp.PValue, Worse: (cp.After > cp.Before) == r.metric.HigherWorse, Weeks: len(r.vals) - cp.Index,
				Held: held(r.vals, cp.Index, cp.After > cp.Before, tolerance)}
			if cp.Before != 0 {
				s.Change = cp.After/cp.Before - 1
			}
			// Confirmed before this week: a change point near it in the series without the newest week,
			// with Confirm weeks behind it there too.
			s.New = !confirmedBefore(before, cp.Index, len(r.vals)-1)
			v := &out[r.verdict]
			v.Steps = append(v.Steps, s)
			switch {
			case s.Weeks < Confirm:
				v.Suspect = append(v.Suspect, s)
			case s.New && s.Worse && s.Held:
				v.Regressed = append(v.Regressed, s)
			}
		}
	}
	return out, nil
}

// confirmedBefore: the series without the newest week (n weeks) had a change point at or next to index
// (the detector may place a step a week apart as the series grows) with Confirm weeks behind it.
func confirmedBefore(cps []ChangePoint, index, n int) bool {
	for _, c := range cps {
		if c.Index >= index-1 && c.Index <= index+1 && n-c.Index >= Confirm {
			return true
		}
	}
	return false
}

// held: every week from the step on is past the median of the weeks before it, by more than tolerance,
// up when up is the step's way (worse for a latency), down otherwise.
func held(vals []float64, index int, up bool, tolerance float64) bool {
	before := slices.Clone(vals[:index])
	slices.Sort(before)
	m := before[len(before)/2]
	if len(before)%2 == 0 {
		m = (before[len(before)/2-1] + before[len(before)/2]) / 2
	}
	if m == 0 {
		return false
	}
	for _, v := range vals[index:] {
		change := v/m - 1
		if up && change <= tolerance || !up && change >= -tolerance {
			return false
		}
	}
	return true
}

// differences says how the newest entry's testbed differs from the label's latest week on another.
func differences(entries []Entry, n Entry) []string {
	for i := len(entries) - 1; i >= 0; i-- {
		if e := entries[i]; e.Label == n.Label && e.Week != n.Week {
			if d := sameTestbed(e, n); len(d) > 0 {
				return append([]string{"against " + e.Week}, d...)
			}
		}
	}
	return nil
}
