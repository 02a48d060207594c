package gate

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/diagnosis"
	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/results"
)

func TestSchedule(t *testing.T) {
	for runs, want := range map[int]string{1: "AB", 2: "ABBA", 3: "ABBAAB", 4: "ABBAABBA"} {
		if got := orderText(Schedule(runs)); got != want {
			t.Errorf("Schedule(%d) = %s, want %s", runs, got, want)
		}
	}
}

func f(v float64) *float64 { return &v }

// plan is a gate of two runs a side; runs gives each run's unexplained breaches, in schedule order.
func judged(t *testing.T, c *compare.Result, problem string, breaches ...[]string) Result {
	t.Helper()
	p := Plan{Reference: Side{Label: "v2.1.7", Build: "/b/v2.1.7"}, Candidate: Side{Label: "pr", Build: "/b/pr"}, RunsASide: 2, Order: Schedule(2),
		Tier: "api,acme", Duration: "1m", Tolerance: 0.25, Stacks: 1, RunS: 85, WallS: 340,
		Judged: []string{"p50", "error rate", "throughput"}, Family: 0.95}
	r := Result{Schema: Schema, RunID: "g", Plan: p, Compare: c, Problem: problem}
	for i, side := range p.Order {
		run := Run{Side: side, RunID: "g-" + side[:1] + string(rune('1'+i/2)), Dirs: []string{"x"}, New: []string{}, Known: []string{}}
		if i < len(breaches) {
			run.New = breaches[i]
			if len(run.New) > 0 {
				run.Code = results.ExitThresholds
			}
		}
		r.Runs = append(r.Runs, run)
	}
	Judge(&r, results.ExitOK)
	return r
}

func quiet() *compare.Result {
	return &compare.Result{Verdict: "no significant change", Tolerance: 0.25, Old: compare.SideInfo{Label: "v2.1.7"}, New: compare.SideInfo{Label: "pr"}, Rows: []compare.Row{
		{Scenario: "list_certificates", Metric: "p50", Old: 5, New: 5.2, Change: 1.04, Low: f(0.9), High: f(1.2), Verdict: "~"},
	}}
}

func TestJudge(t *testing.T) {
	slow := &compare.Result{Verdict: "regressed", Tolerance: 0.25, Rows: []compare.Row{
		{Scenario: "acme_flow", Metric: "p50", Old: 2, New: 2.1, Change: 1.05, Low: f(0.95), High: f(1.1), Verdict: "~"},
		{Scenario: "list_certificates", Metric: "p50", Old: 5, New: 160, Change: 32, Low: f(30), High: f(34), Verdict: "worse", Fails: true},
		{Scenario: "list_certificates", Metric: "p95", Old: 9, New: 170, Change: 18.9, Low: f(17), High: f(20), Verdict: "worse", Fails: true},
		{Scenario: "list_certificates/list", Metric: "p50", Old: 5, New: 160, Change: 32, Low: f(30), High: f(34), Verdict: "worse", Fails: true},
	}, Cause: &compare.Cause{Old: []string{"headroom"}, New: []string{"the statement that took most of the database's time: `INSERT INTO audit_events`"},
		Statements: []compare.StatementChange{
			{Query: "SELECT certificates", Basis: "pg_stat_statements", OldMeanMS: 1, NewMeanMS: 1, OldShare: 0.5, NewShare: 0.2},
			{Query: "INSERT INTO audit_events", Basis: "pg_stat_statements", OldMeanMS: 0.1, NewMeanMS: 5, OldShare: 0.1, NewShare: 0.6},
		}}}
	for _, tc := range []struct {
		name, verdict string
		code          int
		c             *compare.Result
		problem       string
		breaches      [][]string
		outside       string // what took the machine during the first run
		want          []string
	}{
		{name: "the same", verdict: Pass, code: 0, c: quiet(), want: []string{"pass: pr is within the runs' noise of v2.1.7 (2 runs a side, alternating)"}},
		{name: "slower, with its cause", verdict: Regressed, code: 1, c: slow,
			want: []string{"regressed: pr is significantly slower than v2.1.7 beyond 25 %: list_certificates/list p50 ×32.0;", "the time went to INSERT INTO audit_events (60 % of the database's time on pr, 10 % on v2.1.7; 5 ms a call against 0.1)"}},
		{name: "a budget only the candidate broke, every run", verdict: NewBreach, code: 99, c: quiet(),
			breaches: [][]string{nil, {"acme_flow: checks rate>0.99"}, {"acme_flow: checks rate>0.99"}, nil},
			want:     []string{"new-breach: pr broke acme_flow: checks rate>0.99 in every run, which v2.1.7 held in every run and no registered defect explains"}},
		{name: "a budget only the candidate broke, its medians too wide to call, the cause said", verdict: NewBreach, code: 99,
			c:        func() *compare.Result { q := quiet(); q.Cause = slow.Cause; return q }(),
			breaches: [][]string{nil, {"list_certificates: p95"}, {"list_certificates: p95"}, nil},
			want:     []string{"new-breach: pr broke list_certificates: p95 in every run", "; the time went to INSERT INTO audit_events (60 % of the database's time on pr"}},
		{name: "slower, while the machine was taken", verdict: Inconclusive, code: 6, c: slow, outside: "the machine decided, not certctl: work outside the run took 41 %",
			want: []string{"inconclusive: the machine decided run g-r1 (v2.1.7): the machine decided, not certctl: work outside the run took 41 %; what moved between v2.1.7 and pr is not certctl's to answer for"}},
		{name: "a new budget, while the machine was taken", verdict: Inconclusive, code: 6, c: quiet(), outside: "k6 took 50 %",
			breaches: [][]string{nil, {"acme_flow: checks rate>0.99"}, {"acme_flow: checks rate>0.99"}, nil},
			want:     []string{"inconclusive: the machine decided run g-r1 (v2.1.7): k6 took 50 %"}},
		{name: "the same, while the machine was taken", verdict: Pass, code: 0, c: quiet(), outside: "k6 took 50 %",
			want: []string{"pass: pr is within the runs' noise of v2.1.7"}},
		{name: "a budget the reference broke too", verdict: Inconclusive, code: 6, c: quiet(),
			breaches: [][]string{{"acme_flow: p95"}, {"acme_flow: p95"}, {"acme_flow: p95"}, nil},
			want:     []string{"inconclusive: this runner decides acme_flow: p95 (unexplained breaches in 1 of 2 reference runs and 2 of 2 candidate runs)"}},
		{name: "a budget broken in one candidate run of two", verdict: Inconclusive, code: 6, c: quiet(),
			breaches: [][]string{nil, {"acme_flow: p95"}, nil, nil},
			want:     []string{"inconclusive: this runner decides acme_flow: p95"}},
		{name: "another testbed", verdict: Inconclusive, code: 6,
			c:    &compare.Result{Verdict: compare.VerdictNotComparable, NotComparable: []string{"v2.1.7 (run g-r1) and pr (run g-c2) ran on different testbeds", "cpu a core 20000/s against 31000/s (×1.55)"}},
			want: []string{"inconclusive: pr and v2.1.7 ran on different testbeds (cpu a core 20000/s against 31000/s (×1.55))"}},
		{name: "no answer", verdict: Failed, code: 3, problem: "run g-c1 (pr) exited 3: see results/g/g-c1",
			want: []string{"failed: no answer on the builds: run g-c1 (pr) exited 3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Result
			if tc.problem != "" {
				r = judged(t, nil, tc.problem)
				r.Problem = tc.problem
				Judge(&r, results.ExitEnvironment)
			} else {
				r = judged(t, tc.c, "", tc.breaches...)
				if tc.outside != "" {
					r.Runs[0].Outside = tc.outside
					Judge(&r, results.ExitOK)
				}
			}
			if r.Verdict != tc.verdict || r.Code != tc.code {
				t.Errorf("verdict %s (exit %d), want %s (exit %d): %s", r.Verdict, r.Code, tc.verdict, tc.code, r.Sentence)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Sentence, w) {
					t.Errorf("sentence %q\nhas no %q", r.Sentence, w)
				}
			}
		})
	}
}

// A regression and a new breach at once: the regression leads, and the breach is said too.
func TestJudgeRegressedAndNew(t *testing.T) {
	c := &compare.Result{Verdict: "regressed", Tolerance: 0.25, Rows: []compare.Row{
		{Scenario: "acme_flow", Metric: "error rate", Old: 0, New: 0.2, Change: 0.2, Low: f(0.1), High: f(0.3), Verdict: "worse", Fails: true},
		{Scenario: "acme_flow", Metric: "p99", Old: 5, New: 50, Change: 10, Low: f(8), High: f(12), Verdict: "worse", Fails: true},
	}}
	r := judged(t, c, "", nil, []string{"acme_flow: checks"}, []string{"acme_flow: checks"}, nil)
	if r.Verdict != Regressed || !strings.Contains(r.Sentence, "acme_flow error rate") || !strings.Contains(r.Sentence, "it also broke acme_flow: checks, which v2.1.7 held") {
		t.Errorf("%s: %s", r.Verdict, r.Sentence)
	}
	if !slices.Equal(r.NewBreaches, []string{"acme_flow: checks"}) {
		t.Errorf("new breaches %q", r.NewBreaches)
	}
}

func TestCode(t *testing.T) {
	for _, tc := range []struct {
		v           string
		failed, out int
	}{{Pass, 0, 0}, {Regressed, 0, 1}, {NewBreach, 0, 99}, {Inconclusive, 0, 6}, {Failed, 3, 3}, {Failed, 130, 130}, {Failed, 0, results.ExitNoResults}, {Failed, 99, results.ExitNoResults}} {
		if got := Code(tc.v, tc.failed); got != tc.out {
			t.Errorf("Code(%s, %d) = %d, want %d", tc.v, tc.failed, got, tc.out)
		}
	}
}

// The rendered verdicts, one of each kind worth reading: golden files.
func TestRender(t *testing.T) {
	r := judged(t, quiet(), "", nil, []string{"acme_flow: checks rate>0.99"}, []string{"acme_flow: checks rate>0.99"}, nil)
	r.Command = "make loadtest-gate"
	golden.Check(t, "new-breach.txt", Text(r))
	golden.Check(t, "new-breach.md", Markdown(r))
	dir := t.TempDir()
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := Read(dir)
	if err != nil || back.Sentence != r.Sentence || len(back.Runs) != 4 {
		t.Errorf("read back %+v, %v", back, err)
	}
	for _, name := range []string{"gate.txt", "gate.md", "compare.json", "compare.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// The gate's compare reads its judged rows at 95 % for all of them at once: each row's level is
// 1 − 0.05/k; main's audit chain still regresses its medians at that level, and nothing else fails.
func TestCompareFamily(t *testing.T) {
	td := "../compare/testdata/"
	c, err := Compare(compare.Side{Label: "v2.1.7", Dirs: []string{td + "v217-a", td + "v217-b"}}, compare.Side{Label: "main", Dirs: []string{td + "main-a"}},
		Options{Tolerance: 0.25, Judged: []string{"p50", "error rate"}, Family: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for _, r := range c.Rows {
		if r.Metric == "p50" || r.Metric == "error rate" {
			k++
		}
		if r.Fails && r.Metric != "p50" && r.Metric != "error rate" {
			t.Errorf("%s %s fails, but is not judged", r.Scenario, r.Metric)
		}
	}
	if want := 1 - 0.05/float64(k); k < 5 || math.Abs(c.Confidence-want) > 1e-9 {
		t.Errorf("confidence %g over %d judged rows, want %g", c.Confidence, k, want)
	}
	if c.Verdict != "regressed" || len(regressedRows(c)) < 3 {
		t.Errorf("verdict %q, regressed %q: want every scenario's median", c.Verdict, regressedRows(c))
	}
}

// Only what took the machine from outside the runs makes the gate's difference the machine's: the run's
// own stack saturating the machine is the candidate's cost beside a reference that held.
func TestMachineDecided(t *testing.T) {
	sum := func(rule string) results.Summary {
		return results.Summary{Diagnosis: &diagnosis.Diagnosis{Findings: []diagnosis.Finding{{Rule: "db-lock-contention", Sentence: "locks"}, {Rule: rule, Sentence: rule + " said"}}}}
	}
	for rule, want := range map[string]string{"machine-outside": "machine-outside said", "machine-steal": "machine-steal said", "machine-saturated": "", "machine-fsync": "", "headroom": ""} {
		if got := MachineDecided([]results.Summary{{}, sum(rule)}); got != want {
			t.Errorf("%s: %q, want %q", rule, got, want)
		}
	}
}
