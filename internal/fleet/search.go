package fleet

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"certctl-loadtest/internal/testbed"
)

// Schema names fleet.json's shape.
const Schema = "certctl-loadtest/fleet@1"

// Try is one run of the fleet's load at a size.
type Try struct {
	Size float64 `json:"size"`
	// Role: "bracket", "bisect", "confirm" (at the answer) or "beyond" (at Beyond × the answer).
	Role     string `json:"role"`
	RunID    string `json:"run_id"`
	RunDir   string `json:"run_dir,omitempty"`
	ExitCode int    `json:"exit_code"`
	// Holds: every threshold of every scenario passed. A known defect's breach does not hold: the fleet
	// is not carried whatever the registry says of it.
	Holds bool `json:"holds"`
	// Broke: the thresholds that failed, "scenario: threshold (measured)"; Cause: the diagnosis' first
	// sentence for the run, what gave way.
	Broke []string `json:"broke,omitempty"`
	Cause string   `json:"cause,omitempty"`
	// Problem: the run decided nothing (no results, the machine decided it, an error).
	Problem string  `json:"problem,omitempty"`
	TookS   float64 `json:"took_s"`
	// P95 is each scenario's p95 in ms at this size: the curve.
	P95 map[string]float64 `json:"p95_ms,omitempty"`
}

// Decided says whether the try says anything about the size: it held, or it broke with results.
func (t Try) Decided() bool { return t.Problem == "" }

// Plan is how the search brackets the answer before it runs: from the growth curves, when given.
type Plan struct {
	Low, High float64 `json:"-"`
	// From says where the bracket comes from: the growth record and the operation it predicts gives way
	// first, or the default range.
	From string `json:"from"`
	// Predicted: per operation, the size at which its p95 reaches its budget, extrapolated from the
	// growth record's two largest sizes (absent when it never does within the record's trend).
	Predicted []Prediction `json:"predicted,omitempty"`
}

// Prediction is one operation's extrapolated limit.
type Prediction struct {
	Scenario string  `json:"scenario"`
	BudgetMS float64 `json:"budget_p95_ms"`
	Size     float64 `json:"size"`
}

// Search's settings.
type Settings struct {
	// Precision: the search stops when the largest size that held and the smallest that broke are within
	// this ratio (1.25: the confirming run at 1.25× the answer is the next size up).
	Precision float64
	// Beyond: the confirming run that must break, at this many times the answer.
	Beyond float64
	// Min and Max bound the sizes tried.
	Min, Max float64
	// StepS is each run's length: an operation runs at least MinIterations times in it.
	StepS float64
	// Confirms: how many confirming runs the search makes at most. A confirming run that breaks refutes
	// its size, and the search goes on below it; main-151107c's search of 2026-12-07 held at 8,000 and
	// broke there on the confirming run (the summary's p95 822 ms against 800), and stopped unanswered.
	Confirms int
}

// DefaultSettings: 25 % steps, between 100 and 10 million certificates, 2 minutes a run, three
// confirming runs at most (each refutation costs a bisection and a confirmation: three runs or so).
var DefaultSettings = Settings{Precision: 1.25, Beyond: 1.25, Min: 100, Max: 10_000_000, StepS: 120, Confirms: 3}

// Result is fleet.json.
type Result struct {
	Schema string      `json:"schema"`
	Fleet  Description `json:"fleet"`
	Plan   Plan        `json:"plan"`
	Tries  []Try       `json:"tries"`
	// Answer: the largest size that held, and the smallest above it that broke: the interval. AtLeast:
	// every size held up to the largest tried (Settings.Max), and nothing above it was run (Interval[1] 0).
	Answer   float64    `json:"answer"`
	Interval [2]float64 `json:"interval"`
	AtLeast  bool       `json:"at_least,omitempty"`
	// Confirmed: the run at the answer held and the run at Beyond × the answer broke.
	Confirmed bool `json:"confirmed"`
	// Verdict is the answer in one sentence, or why there is none.
	Verdict string `json:"verdict"`
	// GivesWay: at the smallest size that broke, which budgets and what the diagnosis names.
	GivesWay *Try `json:"gives_way,omitempty"`
	// Mix is the load at the answer, as a run of StepS seconds makes it.
	Mix   []Op    `json:"mix"`
	StepS float64 `json:"step_s"`
	TookS float64 `json:"took_s"`
	// Testbed and Build: the machine's calibration and the certctl build, as the runs recorded them;
	// two answers on different testbeds are not compared.
	Testbed *testbed.Calibration `json:"testbed,omitempty"`
	Build   string               `json:"build,omitempty"`
}

// Runner runs the fleet's load at a size and says how it went.
type Runner func(ctx context.Context, size float64, role string) Try

// Search runs the plan's bracket, bisects it (geometrically) to the precision, then confirms: a run at
// the answer that holds and one at Beyond × the answer that breaks. A size holds only when every run at
// it held: a confirming run that breaks makes its size the interval's top, and the search bisects again
// from the largest size below it that held every time (up to Settings.Confirms confirming runs). save is
// called after every try, so a search cut short keeps what it ran.
func Search(ctx context.Context, d Description, p Plan, s Settings, run Runner, save func(Result)) Result {
	res := Result{Schema: Schema, Fleet: d, Plan: p, StepS: s.StepS}
	try := func(size float64, role string) (Try, bool) {
		t := run(ctx, size, role)
		res.Tries = append(res.Tries, t)
		// What a search under way has run so far, read while it runs: its time, and no answer yet.
		p := res
		p.TookS = tookS(p.Tries)
		if p.Verdict == "" {
			p.Verdict = fmt.Sprintf("searching, runs so far: %d", len(p.Tries))
		}
		save(p)
		if !t.Decided() {
			res.Verdict = fmt.Sprintf("no answer: the run at %s certificates decided nothing (%s)", SizeText(size), t.Problem)
			return t, false
		}
		return t, ctx.Err() == nil
	}
	lo, hi := round2(p.Low), round2(p.High)
	var brokeAt *Try
	for confirms := 1; ; confirms++ {
		// The bracket's low end must hold, its high end break: widen it fourfold until they do. After a
		// refuted confirmation the low end is a size that held every time, and is not run again.
		for !heldEvery(res.Tries, lo) {
			t, ok := try(lo, "bracket")
			if !ok {
				return finish(res, save)
			}
			if t.Holds {
				break
			}
			brokeAt, hi = &t, lo
			if lo <= s.Min {
				res.Verdict = fmt.Sprintf("carries no fleet of this shape: %s certificates, the smallest size tried, broke: %s", SizeText(lo), brokeText(t))
				res.GivesWay = brokeAt
				return finish(res, save)
			}
			lo = round2(math.Max(s.Min, lo/4))
		}
		for brokeAt == nil || brokeAt.Size != hi {
			t, ok := try(hi, "bracket")
			if !ok {
				return finish(res, save)
			}
			if !t.Holds {
				brokeAt = &t
				break
			}
			lo = hi
			if hi >= s.Max {
				res.Answer, res.Interval, res.AtLeast = hi, [2]float64{hi, 0}, true
				res.Verdict = fmt.Sprintf("carries at least %s certificates, the largest size tried", SizeText(hi))
				return finish(res, save)
			}
			hi = round2(math.Min(s.Max, hi*4))
		}
		for hi/lo > s.Precision {
			m := round2(math.Sqrt(lo * hi))
			if m <= lo || m >= hi {
				break
			}
			t, ok := try(m, "bisect")
			if !ok {
				return finish(res, save)
			}
			if t.Holds {
				lo = m
			} else {
				hi, brokeAt = m, &t
			}
		}
		res.Answer, res.Interval = lo, [2]float64{lo, hi}
		res.GivesWay = brokeAt
		at, ok := try(lo, "confirm")
		if !ok {
			return finish(res, save)
		}
		if !at.Holds && confirms < s.Confirms {
			// Refuted: the size broke once, so it is not carried. Bisect again from the largest size below
			// it that held on every run (a quarter of it, widened down, when none did).
			hi, brokeAt = lo, &at
			lo = round2(math.Max(s.Min, hi/4))
			for _, t := range res.Tries {
				if t.Size < hi && t.Size > lo && heldEvery(res.Tries, t.Size) {
					lo = t.Size
				}
			}
			continue
		}
		beyond, ok := try(round2(lo*s.Beyond), "beyond")
		if !ok {
			return finish(res, save)
		}
		res.Confirmed = at.Holds && !beyond.Holds
		if !beyond.Holds {
			res.GivesWay = &beyond
		}
		switch {
		case res.Confirmed:
			res.Verdict = fmt.Sprintf("carries %s certificates (%s–%s)", SizeText(lo), SizeText(lo), SizeText(hi))
		case !at.Holds:
			res.Verdict = fmt.Sprintf("not confirmed: %s certificates held once and broke on the confirming run (%s), the %s confirming run of the search: the answer is within the runs' spread", SizeText(lo), brokeText(at), ordinal(confirms))
		default:
			res.Verdict = fmt.Sprintf("not confirmed: %s certificates (%g× the answer) held on the confirming run, though %s broke in the search", SizeText(beyond.Size), s.Beyond, SizeText(hi))
		}
		return finish(res, save)
	}
}

// Resume is a runner that answers from a record's runs while the search asks, in order, for the sizes and
// roles they ran, and runs from the first it does not (left says which): a search cut short, or whose
// rules changed after it ran, goes on without running again what it ran. kept is told each record run
// it answers with.
func Resume(record []Try, run Runner, kept func(i int), left func(asked, ran Try)) Runner {
	i := 0
	return func(ctx context.Context, size float64, role string) Try {
		if i < len(record) {
			if r := record[i]; r.Size == size && r.Role == role {
				kept(i)
				i++
				return r
			}
			left(Try{Size: size, Role: role}, record[i])
			i = len(record)
		}
		return run(ctx, size, role)
	}
}

// heldEvery: the size was run, and every run at it held.
func heldEvery(tries []Try, size float64) bool {
	n := 0
	for _, t := range tries {
		if t.Size == size {
			if !t.Holds {
				return false
			}
			n++
		}
	}
	return n > 0
}

func ordinal(n int) string {
	if n >= 1 && n <= 5 {
		return []string{"first", "second", "third", "fourth", "fifth"}[n-1]
	}
	return strconv.Itoa(n) + "th"
}

func finish(res Result, save func(Result)) Result {
	res.TookS = tookS(res.Tries)
	if res.Verdict == "" {
		res.Verdict = fmt.Sprintf("no answer: the search was cut short after %d runs", len(res.Tries))
	}
	if res.Answer > 0 {
		res.Mix = res.Fleet.RunMix(res.Answer, res.StepS)
	}
	save(res)
	return res
}

func tookS(tries []Try) float64 {
	var s float64
	for _, t := range tries {
		s += t.TookS
	}
	return s
}

func brokeText(t Try) string {
	if len(t.Broke) == 0 {
		return fmt.Sprintf("exit %d", t.ExitCode)
	}
	s := strings.Join(t.Broke, "; ")
	if t.Cause != "" {
		s += " — " + t.Cause
	}
	return s
}

// round2 rounds a size to two significant digits (12,345 → 12,000), so that sizes read as a person
// would choose them and a search's runs can be repeated by hand.
func round2(n float64) float64 {
	if n <= 0 {
		return n
	}
	e := math.Pow(10, math.Floor(math.Log10(n))-1)
	return math.Round(n/e) * e
}

// SizeText: 12000 → "12,000".
func SizeText(n float64) string {
	s := strconv.FormatFloat(math.Round(n), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Point is one size of a growth record: an operation's p95 there.
type Point struct{ Size, P95 float64 }

// Bracket predicts, for each operation with a p95 budget, the size at which its p95 reaches the budget,
// from its two largest points (a power law through them); the bracket is a quarter to four times the
// smallest prediction. Without any prediction it is the default range, 1,000 to 100,000.
func Bracket(curves map[string][]Point, budgets map[string]float64, source string) Plan {
	var preds []Prediction
	for sc, pts := range curves {
		b, ok := budgets[sc]
		if !ok || len(pts) < 2 {
			continue
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].Size < pts[j].Size })
		p1, p2 := pts[len(pts)-2], pts[len(pts)-1]
		var at float64
		switch {
		case p1.P95 >= b:
			// Already past the budget at the second-largest size: somewhere below it.
			at = p1.Size * b / p1.P95
		case p2.P95 >= b:
			at = p1.Size * math.Pow(p2.Size/p1.Size, math.Log(b/p1.P95)/math.Log(p2.P95/p1.P95))
		case p2.P95 > p1.P95:
			exp := math.Log(p2.P95/p1.P95) / math.Log(p2.Size/p1.Size)
			at = p2.Size * math.Pow(b/p2.P95, 1/exp)
		default:
			continue // not growing: no prediction
		}
		preds = append(preds, Prediction{Scenario: sc, BudgetMS: b, Size: round2(at)})
	}
	sort.Slice(preds, func(i, j int) bool { return preds[i].Size < preds[j].Size })
	if len(preds) == 0 {
		return Plan{Low: 1000, High: 100_000, From: "the default range (no growth record, or none of its operations nears its budget)"}
	}
	first := preds[0]
	return Plan{Low: round2(first.Size / 4), High: round2(first.Size * 4), Predicted: preds,
		From: fmt.Sprintf("%s: %s's p95 reaches its %g ms budget at about %s certificates", source, first.Scenario, first.BudgetMS, SizeText(first.Size))}
}

// Comparison is two fleet answers side by side.
type Comparison struct {
	Labels [2]string `json:"labels"`
	// NotComparable: the answers ran on different testbeds (or one recorded none), so the sizes are the
	// machines' difference as much as certctl's; or one is not confirmed, so its size is not an answer.
	NotComparable []string `json:"not_comparable,omitempty"`
	// Verdict: "smaller" when the second's largest size that broke is at or below the first's answer,
	// "larger" the other way round, "same" when their intervals overlap.
	Verdict string `json:"verdict"`
	Text    string `json:"text"`
}

// Compare sets two answers side by side, refusing to judge two testbeds or two fleets.
func Compare(la string, a Result, lb string, b Result) Comparison {
	c := Comparison{Labels: [2]string{la, lb}}
	switch {
	case a.Testbed == nil || b.Testbed == nil:
		c.NotComparable = []string{"an answer recorded no testbed"}
	default:
		c.NotComparable = testbed.Differences(*a.Testbed, *b.Testbed)
	}
	for i, r := range []Result{a, b} {
		if !r.Confirmed && !r.AtLeast {
			c.NotComparable = append(c.NotComparable, fmt.Sprintf("%s's answer is not confirmed", c.Labels[i]))
		}
	}
	if a.StepS != b.StepS {
		c.NotComparable = append(c.NotComparable, fmt.Sprintf("two steps (%gs, %gs): each size was judged on runs of another length", a.StepS, b.StepS))
	}
	if a.Fleet != b.Fleet {
		c.NotComparable = append(c.NotComparable, fmt.Sprintf("two fleets (%s, %s): the answers are of different questions", a.Fleet.Name, b.Fleet.Name))
	}
	switch {
	case len(c.NotComparable) > 0:
		c.Verdict = "not comparable"
	case !b.AtLeast && b.Interval[1] <= a.Answer:
		c.Verdict = "smaller"
	case !a.AtLeast && a.Interval[1] <= b.Answer:
		c.Verdict = "larger"
	default:
		c.Verdict = "same"
	}
	var t strings.Builder
	for i, r := range []Result{a, b} {
		fmt.Fprintf(&t, "%s: %s", c.Labels[i], r.Verdict)
		if r.GivesWay != nil && r.Answer > 0 {
			fmt.Fprintf(&t, "; gives way with %s", brokeText(*r.GivesWay))
		}
		t.WriteString("\n")
	}
	switch c.Verdict {
	case "not comparable":
		fmt.Fprintf(&t, "NOT COMPARABLE: %s (docs/methodology.md#testbeds)\n", strings.Join(c.NotComparable, "; "))
	case "same":
		fmt.Fprintf(&t, "%s carries the same fleet as %s within the search's 25 %%\n", lb, la)
	default:
		fmt.Fprintf(&t, "%s carries a %s fleet than %s: %s against %s certificates\n", lb, c.Verdict, la, SizeText(b.Answer), SizeText(a.Answer))
	}
	c.Text = t.String()
	return c
}

// MedianTestbed is the calibration of the run whose one-core rate is the median of the search's runs
// (the lower of the two middle ones); nil without any. v2.1.7's search of 2026-12-07 calibrated its
// first run at 9,361/s a core beside a unit test and the seven others at 13,209–13,757/s.
func MedianTestbed(tbs []testbed.Calibration) *testbed.Calibration {
	if len(tbs) == 0 {
		return nil
	}
	s := slices.Clone(tbs)
	sort.SliceStable(s, func(i, j int) bool { return s[i].CPUSingle < s[j].CPUSingle })
	m := s[(len(s)-1)/2]
	return &m
}
