package weekly

import (
	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/history"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recorded are internal/compare's recorded API + ACME runs: two of v2.1.7, one of main-151107c.
func recorded(name string) string { return filepath.Join("..", "compare", "testdata", name) }

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

// weeks lays out a history (index.json and its weeks, oldest first) and this run, as the workflow has them.
func weeks(t *testing.T, history []string, current string) (cur, hist string) {
	t.Helper()
	root := t.TempDir()
	cur, hist = filepath.Join(root, "current"), filepath.Join(root, "history")
	os.MkdirAll(cur, 0o755)
	copyDir(t, recorded(current), filepath.Join(cur, "loadtest-all-500-1"))
	var runs []string
	for i, h := range history {
		n := 40 + i
		os.MkdirAll(filepath.Join(hist, itoa(n)), 0o755)
		copyDir(t, recorded(h), filepath.Join(hist, itoa(n), "loadtest-all-4"+itoa(n)+"-1"))
		runs = append([]string{`{"id":4` + itoa(n) + `,"run_number":` + itoa(n) + `,"created_at":"2026-11-` + itoa(n-30) + `T05:17:00Z","head_sha":"abc","conclusion":"success","dir":"` + itoa(n) + `","artifacts":["loadtest-all-4` + itoa(n) + `-1"]}`}, runs...)
	}
	os.WriteFile(filepath.Join(hist, "index.json"), []byte(`{"repo":"o/r","workflow":"loadtest.yml","branch":"main","runs":[`+strings.Join(runs, ",")+`]}`), 0o644)
	return cur, hist
}

func itoa(n int) string { return strconv.Itoa(n) }

// baseline is a committed weekly baseline made of a recorded run, as make baseline lays one out.
func baseline(t *testing.T, run string) string {
	dir := t.TempDir()
	b, _ := os.ReadFile(filepath.Join(recorded(run), "summary.json"))
	os.WriteFile(filepath.Join(dir, "all.json"), b, 0o644)
	copyDir(t, filepath.Join(recorded(run), "raw"), filepath.Join(dir, "all.raw"))
	return dir
}

func TestAWeekLikeTheLastIsNoRegression(t *testing.T) {
	cur, hist := weeks(t, []string{"v217-a"}, "v217-b")
	out := t.TempDir()
	res, err := Report(Options{Current: cur, History: hist, Baselines: baseline(t, "v217-a"), Out: out, Now: time.Date(2026, 11, 23, 5, 17, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "no regression" || len(res.Comparisons) != 2 {
		t.Fatalf("verdict %q, %d comparisons:\n%s", res.Verdict, len(res.Comparisons), Markdown(res))
	}
	for _, f := range []string{"trend.md", "trend.json", "trend-p95.svg", "trend-rate.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// The week main-151107c's audit chain landed: against last week and against the baseline, regressed.
func TestTheWeekCertctlGotSlowerFails(t *testing.T) {
	cur, hist := weeks(t, []string{"v217-a", "v217-b"}, "main-a")
	out := t.TempDir()
	res, err := Report(Options{Current: cur, History: hist, Baselines: baseline(t, "v217-a"), Out: out, Tolerance: 0.25, Now: time.Date(2026, 11, 23, 5, 17, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "regressed" || len(res.Comparisons) != 2 {
		t.Fatalf("verdict %q", res.Verdict)
	}
	if res.Comparisons[0].Against != "last week (#41 2026-11-11)" || !strings.HasPrefix(res.Comparisons[1].Against, "baseline ") {
		t.Errorf("against %q, %q", res.Comparisons[0].Against, res.Comparisons[1].Against)
	}
	if len(res.Trend.Weeks) != 3 || len(res.Trend.Rows) != 3 || res.Trend.Rows[2].Scenario != "list_certificates" {
		t.Errorf("trend %+v", res.Trend)
	}
	md := Markdown(res)
	md = strings.ReplaceAll(md, filepath.Dir(res.Comparisons[1].Against[len("baseline "):]), "<baselines>")
	golden.Check(t, "regressed.md", md)
	svgs := SVGs(res.Trend)
	golden.Check(t, "regressed-p95.svg", svgs["trend-p95.svg"])
}

func TestNoHistoryComparesWithTheBaselineAlone(t *testing.T) {
	cur, _ := weeks(t, nil, "v217-b")
	res, err := Report(Options{Current: cur, History: filepath.Join(t.TempDir(), "none"), Baselines: t.TempDir(), Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Comparisons) != 0 || len(res.Notes) != 3 || !strings.Contains(strings.Join(res.Notes, "\n"), "BUILD=") {
		t.Errorf("notes %q", res.Notes)
	}
}

func TestSparkline(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	if got := Sparkline([]*float64{v(1), v(8), nil, v(4.5)}); got != "▁█ ▅" {
		t.Errorf("%q", got)
	}
}

// With a history store, the verdict is the series': the week main-151107c landed, pairwise a
// regression, is a suspect to the series (one week alone), the comparisons shown, not judged; the week is
// added to the store. A confirmed worse step regresses (here found by a stand-in detector: Otava's own
// run is internal/history's test), with a section of change points in the summary.
func TestTheSeriesJudgesWithAStore(t *testing.T) {
	store := t.TempDir()
	tb := func(dir string) {
		// The recorded runs kept no calibration: one machine's, for them all.
		b, _ := os.ReadFile(filepath.Join(dir, "loadtest-all-500-1", "summary.json"))
		b = []byte(strings.Replace(string(b), `"run": {`, `"run": {"testbed": {"cpus": 2, "cpu_single_ops_s": 23654, "cpu_all_ops_s": 49607, "fsync_p50_ms": 0.13}, `, 1))
		os.WriteFile(filepath.Join(dir, "loadtest-all-500-1", "summary.json"), b, 0o644)
	}
	week := func(current string, n int, detect func(map[string][]float64) (map[string][]history.ChangePoint, error)) Output {
		cur, hist := weeks(t, nil, current)
		tb(cur)
		res, err := Report(Options{Current: cur, History: hist, Baselines: t.TempDir(), Out: t.TempDir(), Tolerance: 0.25,
			Now: time.Date(2026, 11, 2, 5, 17, 0, 0, time.UTC).AddDate(0, 0, 7*n), Store: store, Week: fmt.Sprintf("#%d", 40+n), Detect: detect})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	none := func(in map[string][]float64) (map[string][]history.ChangePoint, error) {
		return map[string][]history.ChangePoint{}, nil
	}
	for n, run := range []string{"v217-a", "v217-b", "v217-a", "v217-b"} {
		if res := week(run, n, none); res.Verdict != "no regression" {
			t.Fatalf("week %d: %q", n, res.Verdict)
		}
	}
	// Too short a series to judge: the comparisons do, as without a store (main-151107c against the
	// baseline of v2.1.7 regressed).
	{
		cur, hist := weeks(t, nil, "main-a")
		tb(cur)
		res, err := Report(Options{Current: cur, History: hist, Baselines: baseline(t, "v217-a"), Out: t.TempDir(), Tolerance: 0.25,
			Now: time.Date(2026, 11, 1, 5, 17, 0, 0, time.UTC), Store: t.TempDir(), Week: "#1", Detect: none})
		if err != nil || res.Verdict != "regressed" || res.Series[0].Note == "" {
			t.Fatalf("a one-week series: %q %+v %v", res.Verdict, res.Series, err)
		}
	}
	// The fifth week is main-151107c's: a step with this week alone behind it.
	stepAt := func(i int) func(map[string][]float64) (map[string][]history.ChangePoint, error) {
		return func(in map[string][]float64) (map[string][]history.ChangePoint, error) {
			out := map[string][]history.ChangePoint{}
			for k, v := range in {
				if strings.HasSuffix(k, "list_certificates/p95") && len(v) > i {
					out[k] = []history.ChangePoint{{Index: i, Before: 212, After: 522, PValue: 0.001}}
				}
			}
			return out, nil
		}
	}
	res := week("main-a", 4, stepAt(4))
	if res.Verdict != "no regression" || len(res.Series) != 1 || len(res.Series[0].Suspect) != 1 {
		t.Fatalf("the step's first week: %q %+v", res.Verdict, res.Series)
	}
	res = week("main-a", 5, stepAt(4))
	md := Markdown(res)
	if res.Verdict != "regressed" || len(res.Series[0].Regressed) != 1 || !strings.Contains(md, "- **all**: 6 weeks on this testbed: **regressed**: list_certificates p95 from #44 (212 → 522, +146 %)") {
		t.Fatalf("confirmed: %q %+v\n%s", res.Verdict, res.Series, md)
	}
	stored, err := history.Load(store)
	if err != nil || len(stored) != 6 {
		t.Errorf("the store holds %d weeks, %v", len(stored), err)
	}
}
