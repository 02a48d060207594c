package overhead

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/golden"
)

func TestParse(t *testing.T) {
	offs, err := Parse("progress, all")
	if err != nil || len(offs) != 2 || offs[0].Name != "progress" || offs[1].Name != All {
		t.Fatalf("%+v %v", offs, err)
	}
	// all is every instrument's switch, with DIAGNOSIS's two halves off as one false.
	want := map[string]string{"DIAGNOSIS": "false", "PG_STAT_STATEMENTS": "false", "PROGRESS_INTERVAL": "0"}
	if got := offs[1].Settings; len(got) != len(want) || got["DIAGNOSIS"] != "false" || got["PG_STAT_STATEMENTS"] != "false" || got["PROGRESS_INTERVAL"] != "0" {
		t.Errorf("all: %v, want %v", got, want)
	}
	for _, bad := range []string{"", "progress,progress", "dashboard", "on"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "collector, containers, statements, progress, all") {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}

// Over two rounds each configuration is run as early and as late beside every instrument on as the
// others: ABBA.
func TestScheduleAlternates(t *testing.T) {
	offs, _ := Parse("collector,all")
	got := Schedule(offs, 4)
	want := [][]string{{On, "collector", All}, {All, "collector", On}, {On, "collector", All}, {All, "collector", On}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("%v, want %v", got, want)
	}
	for _, name := range []string{"collector", All} {
		var sum int
		for _, round := range got {
			sum += slices.Index(round, name) - slices.Index(round, On)
		}
		if sum != 0 {
			t.Errorf("%s sits %d places after on over the rounds, want 0", name, sum)
		}
	}
}

func recorded(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, filepath.Join("..", "compare", "testdata", n))
	}
	return out
}

// Measured on compare's recorded runs: two runs of one build stand for an instrument that costs
// nothing; v2.1.7 against main-151107c for every instrument switched on, which would break the budget.
func TestMeasureJudgesTheBudget(t *testing.T) {
	offs, _ := Parse("progress,all")
	sides := map[string][2][]string{"progress": {recorded("v217-a"), recorded("v217-b")}, All: {recorded("v217-a", "v217-b"), recorded("main-a")}}
	r := Result{Schema: Schema, RunID: "ovh-test", Command: "make overhead OVERHEAD=progress,all", Rounds: 2,
		Order: Schedule(offs, 2), Complete: true,
		Runs: map[string][]string{On: {"on-1", "on-2"}, "progress": {"progress-1", "progress-2"}, All: {"all-1", "all-2"}}}
	r.Measure(offs, func(off, on []string, confidence float64) (compare.Result, error) {
		s := sides[strings.TrimSuffix(off[0], "-1")]
		return compare.Compare(compare.Side{Label: "off", Dirs: s[0]}, compare.Side{Label: "on", Dirs: s[1]}, compare.Options{Confidence: confidence})
	})
	if len(r.Instruments) != 2 || r.Instruments[0].Error != "" || len(r.Instruments[0].Significant) != 0 {
		t.Fatalf("progress: %+v", r.Instruments)
	}
	if !r.Budget.Judged || r.Budget.Held || !slices.ContainsFunc(r.Budget.Breaches, func(b string) bool { return strings.HasPrefix(b, "issuance_acceptance p50 ×") }) {
		t.Fatalf("budget %+v", r.Budget)
	}
	// Judged as one verdict over every scenario's p50: each at 1 − 0.05/n.
	if n := r.Budget.Family; n < 2 || math.Abs(r.Budget.Confidence-(1-0.05/float64(n))) > 1e-9 {
		t.Errorf("budget judged at %v over %d scenarios, want 1 − 0.05/n", r.Budget.Confidence, n)
	}
	golden.Check(t, "broken.txt", Text(r))
	golden.Check(t, "broken.md", Markdown(r))

	// Without the all-off configuration the budget judged nothing: it does not hold.
	r.Measure(offs[:1], func(off, on []string, _ float64) (compare.Result, error) {
		return compare.Compare(compare.Side{Dirs: recorded("v217-a")}, compare.Side{Dirs: recorded("v217-b")}, compare.Options{})
	})
	if r.Budget.Judged || r.Budget.Held {
		t.Errorf("budget without all: %+v", r.Budget)
	}
	// A configuration with no run on one side is named, not compared.
	r.Runs["progress"] = nil
	r.Measure(offs[:1], func(off, on []string, _ float64) (compare.Result, error) {
		t.Fatal("compared without runs")
		return compare.Result{}, nil
	})
	if r.Instruments[0].Error == "" || !strings.Contains(Text(r), "progress (PROGRESS_INTERVAL=0): not compared: no run of both sides") {
		t.Errorf("%+v\n%s", r.Instruments[0], Text(r))
	}
}
