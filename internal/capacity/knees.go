package capacity

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KneeSchema is knees.json: two builds' capacity searches of one scenario, side by side.
const KneeSchema = "certctl-loadtest/knees@1"

// Knee is a search's knee as an interval: it held at Low and a confirmed breach came at High, so the
// true knee is in [Low, High). High is 0 when the search's maximum held (the knee is above Low); Low is 0
// when even the lowest rate tried breached (the knee is below High).
type Knee struct {
	Label string  `json:"label"`
	Dir   string  `json:"dir"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	Unit  string  `json:"unit"`
	Steps int     `json:"steps"`
	TookS float64 `json:"took_s"`
}

// KneeChange is where the knee moved: lower (worse) only when the new interval lies wholly below the old
// one, higher (better) only when wholly above, otherwise the searches cannot tell them apart (their
// precision is the bisection's).
type KneeChange struct {
	Schema   string  `json:"schema"`
	Scenario string  `json:"scenario"`
	Old      Knee    `json:"old"`
	New      Knee    `json:"new"`
	Verdict  string  `json:"verdict"` // lower | higher | ~ | no knee
	Text     string  `json:"text"`
	Change   float64 `json:"change,omitempty"` // new ÷ old, from the intervals' middles (the rate that held where no breach bounds it)
}

// ReadResult reads a capacity search's capacity.json.
func ReadResult(dir string) (Result, error) {
	var r Result
	b, err := os.ReadFile(filepath.Join(dir, "capacity.json"))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, "capacity.json"), err)
	}
	if r.Schema != Schema {
		return r, fmt.Errorf("%s: schema %q, want %q", filepath.Join(dir, "capacity.json"), r.Schema, Schema)
	}
	return r, nil
}

func kneeOf(label, dir string, r Result) Knee {
	return Knee{Label: label, Dir: dir, Low: r.Knee, High: r.Ceiling, Unit: r.Unit, Steps: len(r.Steps), TookS: r.TookS}
}

// interval reads [low, high) with its open ends.
func (k Knee) interval() string {
	switch {
	case k.Low == 0 && k.High == 0:
		return "no verdict"
	case k.Low == 0:
		return fmt.Sprintf("below %g/%s", k.High, k.Unit)
	case k.High == 0:
		return fmt.Sprintf("above %g/%s", k.Low, k.Unit)
	}
	return fmt.Sprintf("[%g, %g)/%s", k.Low, k.High, k.Unit)
}

// CompareKnees sets two searches of one scenario side by side. A lower knee is a regression: the build
// breaches its budget at a load the other carried.
func CompareKnees(oldLabel, oldDir string, a Result, newLabel, newDir string, b Result) (KneeChange, error) {
	if a.Scenario != b.Scenario {
		return KneeChange{}, fmt.Errorf("the searches are of two scenarios, %s and %s", a.Scenario, b.Scenario)
	}
	if a.Unit != b.Unit {
		return KneeChange{}, fmt.Errorf("the searches count rates per %s and per %s", a.Unit, b.Unit)
	}
	c := KneeChange{Schema: KneeSchema, Scenario: a.Scenario, Old: kneeOf(oldLabel, oldDir, a), New: kneeOf(newLabel, newDir, b)}
	o, n := c.Old, c.New
	switch {
	case (o.Low == 0 && o.High == 0) || (n.Low == 0 && n.High == 0):
		c.Verdict = "no knee"
	case n.High != 0 && n.High <= o.Low:
		c.Verdict = "lower"
	case o.High != 0 && n.Low >= o.High:
		c.Verdict = "higher"
	default:
		c.Verdict = "~"
	}
	mid := func(k Knee) float64 {
		if k.Low == 0 || k.High == 0 {
			return k.Low + k.High
		}
		return (k.Low + k.High) / 2
	}
	if mid(o) > 0 && c.Verdict != "no knee" {
		c.Change = mid(n) / mid(o)
	}
	what := map[string]string{
		"lower":   "the knee moved down: " + n.Label + " breaches at a load " + o.Label + " carried",
		"higher":  "the knee moved up: " + n.Label + " carries a load " + o.Label + " breached at",
		"~":       "the knees' intervals overlap: no move the searches' precision can tell",
		"no knee": "a search gave no verdict: no comparison",
	}[c.Verdict]
	c.Text = fmt.Sprintf("%s knee: %s %s, %s %s: %s", c.Scenario, o.Label, o.interval(), n.Label, n.interval(), what)
	return c, nil
}

// KneeMarkdown is the knee comparison as a job summary reads it.
func KneeMarkdown(c KneeChange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Knee of %s\n\n%s\n\n| build | knee (held … breached) | steps | search |\n|---|---|---:|---:|\n", c.Scenario, c.Text)
	for _, k := range []Knee{c.Old, c.New} {
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f s |\n", k.Label, k.interval(), k.Steps, k.TookS)
	}
	return b.String()
}
