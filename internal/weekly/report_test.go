package weekly

import (
	"certctl-loadtest/internal/golden"
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
