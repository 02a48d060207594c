package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/testbed"

	"certctl-loadtest/internal/testenv"
)

var (
	here  = testbed.Calibration{CPUs: 2, CPUModel: "AMD EPYC", CPUSingle: 23654, CPUAll: 49607, FsyncP50Ms: 0.13}
	other = testbed.Calibration{CPUs: 2, CPUModel: "AMD EPYC", CPUSingle: 23654, CPUAll: 49607, FsyncP50Ms: 3.3}
	start = time.Date(2026, 6, 1, 3, 0, 0, 0, time.UTC)
)

// recorded reads a run this project recorded against the real certctl (a baseline's summary, or a
// compare test's run).
func recorded(t *testing.T, path string) results.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// weeks are real runs' entries, one a week from start, all on testbed tb and PostgreSQL 15 (what
// they ran on).
func weeks(t *testing.T, tb testbed.Calibration, from int, paths ...string) []Entry {
	var out []Entry
	for i, p := range paths {
		at := start.AddDate(0, 0, 7*(from+i))
		e := FromSummary(recorded(t, p), "api-acme", fmt.Sprintf("#%d %s", from+i, at.Format("2006-01-02")), at)
		e.RunID = fmt.Sprintf("week-%d", from+i)
		tb := tb
		e.Testbed, e.Postgres = &tb, "15"
		out = append(out, e)
	}
	return out
}

const (
	release1, release2, release3 = "docs/baselines/v2.1.7/api-acme-1.json", "docs/baselines/v2.1.7/api-acme-2.json", "docs/baselines/v2.1.7/api-acme-3.json"
	next1, next2, next3          = "docs/baselines/main-151107c/api-acme-1.json", "docs/baselines/main-151107c/api-acme-2.json", "docs/baselines/main-151107c/api-acme-3.json"
	// A run of v2.1.7 on a contended afternoon: list_certificates' p95 212 ms against 18-24 ms.
	noisy = "internal/compare/testdata/v217-a/summary.json"
)

// The store is a line an entry, oldest first, appended to; no store is an empty history, and a line
// that is not an entry is refused with its number.
func TestStore(t *testing.T) {
	dir := t.TempDir()
	if h, err := Load(dir); err != nil || len(h) != 0 {
		t.Fatalf("no store: %v %v", h, err)
	}
	w := weeks(t, here, 1, release1, release2, release3)
	if err := Append(dir, w[2], w[0]); err != nil {
		t.Fatal(err)
	}
	if err := Append(dir, w[1]); err != nil {
		t.Fatal(err)
	}
	h, err := Load(dir)
	if err != nil || len(h) != 3 || h[0].RunID != "week-1" || h[2].RunID != "week-3" || h[1].Scenarios["list_certificates"].P95 != w[1].Scenarios["list_certificates"].P95 {
		t.Fatalf("loaded %+v, %v", h, err)
	}
	f, _ := os.OpenFile(filepath.Join(dir, File), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"schema\": \"something else\"}\n")
	f.Close()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "line 4: not a history entry") {
		t.Errorf("err %v", err)
	}
}

// A series is one label's weeks on the newest week's testbed and PostgreSQL major; the others are
// counted apart.
func TestSeriesKeepTestbedsApart(t *testing.T) {
	h := append(weeks(t, here, 1, release1, release2), weeks(t, other, 3, release3)...)
	pg16 := weeks(t, here, 4, release1)[0]
	pg16.Postgres = "16.15"
	h = append(h, pg16)
	newest := weeks(t, here, 5, release2)[0]
	s, apart := Series(h, newest)
	if len(s) != 3 || s[0].RunID != "week-1" || s[2].RunID != "week-5" || apart != 2 {
		t.Errorf("series %d weeks, %d apart", len(s), apart)
	}
}

// What the verdict makes of change points, whatever finds them: a step this week confirmed (Confirm
// weeks behind it), the worse way, every week since past the tolerance, regresses; one confirmed
// before, one the better way, one whose weeks since are not all past the tolerance, or one with the
// newest week alone behind it (a suspect) does not.
func TestJudgeConfirmedWorseSteps(t *testing.T) {
	h := weeks(t, here, 1, release1, release2, release3, release1, release2, release3, next1)
	newest := weeks(t, here, 8, next2)[0]
	detect := func(in map[string][]float64) (map[string][]ChangePoint, error) {
		out := map[string][]ChangePoint{}
		for k := range in {
			switch k {
			case "api-acme/list_certificates/p95":
				// v2.1.7's 18-24 ms, then main-151107c's 219 and 172: confirmed this week.
				out[k] = []ChangePoint{{Index: 6, Before: 20, After: 196, PValue: 0.001}}
			case "api-acme/list_certificates/p95#before":
				out[k] = []ChangePoint{{Index: 6, Before: 20, After: 219, PValue: 0.001}}
			case "api-acme/acme_flow/p95", "api-acme/acme_flow/p95#before":
				// Confirmed before this week: not new.
				out[k] = []ChangePoint{{Index: 3, Before: 8, After: 30, PValue: 0.01}}
			case "api-acme/issuance_acceptance/achieved":
				// The rate achieved up: better.
				out[k] = []ChangePoint{{Index: 6, Before: 40, After: 50, PValue: 0.01}}
			case "api-acme/issuance_acceptance/p50":
				// Worse, but of the weeks since, v2.1.7's 3.12 ms is not past the 2.6-3.2 ms before.
				out[k] = []ChangePoint{{Index: 5, Before: 2.9, After: 10.2, PValue: 0.01}}
			case "api-acme/list_certificates/p50":
				// The newest week alone behind it.
				out[k] = []ChangePoint{{Index: 7, Before: 10, After: 8.5, PValue: 0.01}}
			}
		}
		return out, nil
	}
	v, err := Judge(h, []Entry{newest}, detect, 0.25)
	if err != nil || len(v) != 1 {
		t.Fatal(v, err)
	}
	if len(v[0].Steps) != 5 || len(v[0].Regressed) != 1 || len(v[0].Suspect) != 1 || v[0].Suspect[0].Metric != "p50" {
		t.Fatalf("steps %+v\nregressed %+v\nsuspect %+v", v[0].Steps, v[0].Regressed, v[0].Suspect)
	}
	r := v[0].Regressed[0]
	if r.Scenario != "list_certificates" || r.Metric != "p95" || r.Week != h[6].Week || !r.New || !r.Worse || !r.Held || r.Weeks != 2 || r.Change < 8 {
		t.Errorf("regressed %+v", r)
	}
}

// Too short a series, or a testbed's first week, is not judged, and says why.
func TestJudgeSaysWhyNot(t *testing.T) {
	never := func(map[string][]float64) (map[string][]ChangePoint, error) {
		t.Fatal("the detector ran")
		return nil, nil
	}
	h := weeks(t, here, 1, release1, release2)
	v, err := Judge(h, weeks(t, here, 3, release3), never, 0.25)
	if err != nil || !strings.HasPrefix(v[0].Note, "3 weeks on this testbed: change points are judged from 5 on") {
		t.Errorf("%+v %v", v, err)
	}
	v, err = Judge(h, weeks(t, other, 3, release3), never, 0.25)
	if err != nil || !strings.HasPrefix(v[0].Note, "a new testbed: its series starts this week (2 earlier weeks ran on other testbeds: against #2 2026-06-15; fsync p50") {
		t.Errorf("%+v %v", v, err)
	}
}

// otava runs tools/otava/changepoints.py with the interpreter in OTAVA_PYTHON (install-deps
// makes one with tools/otava/requirements.txt); without it the test skips, and fails under CI.
func otava(t *testing.T) Detector {
	t.Helper()
	python := os.Getenv("OTAVA_PYTHON")
	if _, err := exec.LookPath(python); python == "" || err != nil {
		testenv.SkipOrFailInCI(t, fmt.Sprintf("OTAVA_PYTHON=%q: no Otava to judge with (scripts/install-deps.sh makes it)", python))
	}
	return OtavaDetector(func(stdin []byte) ([]byte, error) {
		cmd := exec.Command(python, filepath.Join("..", "..", "tools", "otava", "changepoints.py"))
		cmd.Stdin = bytes.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%v: %s", err, stderr.String())
		}
		return out, nil
	})
}

// The weekly series of real runs, judged by Otava: seven weeks of v2.1.7 with one contended week among
// them, then main-151107c. Week by week, the contended week never regresses; the step is reported the
// week after it began, at the week it began, for the scenarios that moved; a series that crosses to
// another testbed starts again; and a store of 20 weeks (past the 12 the artifacts held) is judged whole.
func TestOtavaFindsTheStepNotTheNoisyWeek(t *testing.T) {
	detect := otava(t)
	h := weeks(t, here, 1, release1, release2, release3, release1, noisy, release2, release3)
	h = append(h, weeks(t, here, 8, next1, next2, next3, next1, next2, next3, next1, next2, next3, next1, next2, next3, next1)...)
	if len(h) != 20 {
		t.Fatalf("%d weeks", len(h))
	}
	dir := t.TempDir()
	var reported []string
	for i, e := range h {
		if i >= MinWeeks-1 {
			stored, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Judge(stored, []Entry{e}, detect, 0.25)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range v[0].Regressed {
				reported = append(reported, fmt.Sprintf("%s: %s %s from %s", e.Week[:3], r.Scenario, r.Metric, r.Week[:3]))
			}
		}
		if err := Append(dir, e); err != nil {
			t.Fatal(err)
		}
	}
	joined := strings.Join(reported, "\n")
	if strings.Contains(joined, "from #5") || strings.HasPrefix(joined, "#5") || strings.HasPrefix(joined, "#6") {
		t.Errorf("the contended week 5 was reported:\n%s", joined)
	}
	if !strings.Contains(joined, "list_certificates p95 from #8") {
		t.Errorf("the step at week 8 (v2.1.7 → main-151107c) was not reported:\n%s", joined)
	}
	for _, r := range reported {
		if !strings.Contains(r, "from #8") {
			t.Errorf("a step reported elsewhere than week 8: %s", r)
		}
	}
	// Week 21 on another machine: a series of its own, not judged yet.
	last := weeks(t, other, 21, next2)
	stored, _ := Load(dir)
	if v, err := Judge(stored, last, detect, 0.25); err != nil || v[0].Weeks != 1 || v[0].Apart != 20 || len(v[0].Regressed) != 0 {
		t.Errorf("another testbed: %+v %v", v, err)
	}
	t.Logf("reported:\n%s", joined)
}
