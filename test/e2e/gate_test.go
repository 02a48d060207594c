package e2e

import (
	"certctl-loadtest/test/ciplan"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// The gate's e2e part is test/ciplan's E2E: the tests it lists and only they, each with the runs it
// makes (TestCIPlan holds all of CI, these runs planned, to its budget). Every other e2e test runs in
// make test-full alone.

// gateParallel: a test whose subtests the full suite runs before the parallel tests, for the machine's
// sake, runs among them in the gate, where only its lighter subtest runs.
func gateParallel(t *testing.T) {
	if testing.Short() {
		t.Parallel()
	}
}

// e2e starts every e2e test: in short mode a test with nothing in the gate is skipped, and then what a
// run needs is readied (needStack).
func e2e(t *testing.T) {
	t.Helper()
	if testing.Short() && !ciplan.InPlan(ciplan.E2E, t.Name()) {
		t.Skip("full suite only (make test-full); the gate's tests are listed in test/ciplan/gate.go")
	}
	needStack(t)
}

// made are the gate's planned runs some test made: an entry that made none fails the gate (TestMain).
var made ciplan.Made

// checkPlanned, in short mode, skips a run of a subtest the gate leaves out, and fails a gate test's
// run that its entry does not plan: the gate's plan must be what it runs.
func checkPlanned(t *testing.T, env []string, name string, args []string) {
	t.Helper()
	if !testing.Short() {
		return
	}
	if _, ok := ciplan.Covering(ciplan.E2E, t.Name()); !ok {
		t.Skip("full suite only (make test-full); the gate's tests are listed in test/ciplan/gate.go")
	}
	cmd := command(name, args)
	if made.Match(ciplan.E2E, ciplan.E2EKnobs, t.Name(), cmd, env) {
		return
	}
	t.Fatalf("gate: %s runs `%s` with %s, which test/ciplan/gate.go does not plan for it: plan it (TestCIPlan then judges CI's time), or leave the test to the full suite",
		t.Name(), cmd, strings.Join(ciplan.Effective(env), " "))
}

// command names a run's command as the plan does: the harness as "loadtest".
func command(name string, args []string) string {
	if name == loadtest {
		name = "loadtest"
	}
	return strings.Join(append([]string{name}, args...), " ")
}

// fullRecord is the last full rehearsal's outcome as make test-full records it: go test's result line
// of each test and subtest, and of the package.
const fullRecord = "testdata/full-suite.txt"

var (
	resultRE  = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (Test\S+) \(([\d.]+)s\)(?: machine-excused (\d+))?$`)
	packageRE = regexp.MustCompile(`^(ok|FAIL)\s+\S+\s+([\d.]+)s$`)
	testRE    = regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
)

// TestFullPlan prints what make test-full will run and how long it took last time: each e2e test with
// its time in the last full rehearsal (testdata/full-suite.txt, which make test-full rewrites when it
// passes), the tests that rehearsal did not have, and its wall time. No docker; make test-full prints it
// before it starts.
func TestFullPlan(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var tests, all []string // the e2e tests; and with them the plans, which need no stack
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testRE.FindAllStringSubmatch(string(b), -1) {
			all = append(all, m[1])
			if m[1] != "TestFullPlan" {
				tests = append(tests, m[1])
			}
		}
	}
	slices.Sort(tests)
	took, excused, wall, err := readFullRecord(fullRecord)
	if err != nil {
		t.Logf("no record of a full rehearsal (%v): make test-full writes one when it passes", err)
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "test\tin the gate\tlast full rehearsal\texcused by the machine check\n")
	for _, name := range tests {
		last := "new: no figure yet"
		if d, ok := took[name]; ok {
			last = d.Round(time.Second).String()
		}
		// A test whose subtests run in parallel ends, for go test, before they start: its subtests' times.
		var n int
		var longest, sum time.Duration
		for sub, d := range took {
			if strings.HasPrefix(sub, name+"/") {
				n, longest, sum = n+1, max(longest, d), sum+d
			}
		}
		if n > 0 && took[name] < time.Second {
			last = fmt.Sprintf("%d subtests, the longest %s, %s in all", n, longest.Round(time.Second), sum.Round(time.Second))
		}
		in := "no"
		if _, ok := ciplan.Covering(ciplan.E2E, name); ok {
			in = "all of it"
		}
		for _, g := range ciplan.E2E {
			if strings.HasPrefix(ciplan.TestName(g.Name), name+"/") {
				in = "one subtest"
			}
		}
		var n2 int
		for sub, k := range excused {
			if sub == name || strings.HasPrefix(sub, name+"/") {
				n2 += k
			}
		}
		ex := "-"
		if n2 > 0 {
			ex = fmt.Sprintf("%d breach(es)", n2)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, in, last, ex)
	}
	tw.Flush()
	for name := range took {
		if top, _, _ := strings.Cut(name, "/"); !slices.Contains(all, top) {
			// Not a failure: only a passing make test-full writes the record, and this test is part of it.
			t.Logf("%s records %s, which no longer exists: the next passing make test-full rewrites the record", fullRecord, name)
		}
	}
	expected := "unknown"
	if wall > 0 {
		expected = wall.Round(time.Minute).String() + " (the last full rehearsal's, go test's own figure)"
	}
	t.Logf("the full suite's e2e tests (-parallel 3 after the serial ones):\n%s\nexpected: %s", b.String(), expected)
}

// readFullRecord reads each test's and subtest's time, the breaches the machine check excused in it,
// and the package's time from the record's result lines (scripts/full-record.sh).
func readFullRecord(path string) (map[string]time.Duration, map[string]int, time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, 0, err
	}
	took, excused := map[string]time.Duration{}, map[string]int{}
	var wall time.Duration
	for _, l := range strings.Split(string(b), "\n") {
		if m := resultRE.FindStringSubmatch(l); m != nil {
			s, _ := strconv.ParseFloat(m[3], 64)
			took[m[2]] = time.Duration(s * float64(time.Second))
			if m[4] != "" {
				excused[m[2]], _ = strconv.Atoi(m[4])
			}
		}
		if m := packageRE.FindStringSubmatch(l); m != nil {
			s, _ := strconv.ParseFloat(m[2], 64)
			wall = time.Duration(s * float64(time.Second))
		}
	}
	if wall == 0 {
		return took, excused, 0, fmt.Errorf("%s has no package result line", path)
	}
	return took, excused, wall, nil
}

// scripts/full-record.sh writes what readFullRecord reads: each result line with its time and what the
// machine check excused in it (logExcused's words), the package's line; and nothing from a failed log.
func TestFullRecordScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	passing := "=== RUN   TestA\n=== RUN   TestA/sub\n=== PAUSE TestA/sub\n=== CONT  TestA/sub\n" +
		"    a_test.go:9: machine-excused: s: p95 broke; the machine check decides it: k6 took 45 %\n" +
		"    a_test.go:9: machine-excused: s: p99 broke; the machine check decides it: k6 took 45 %\n" +
		"--- PASS: TestA (12.50s)\n    --- PASS: TestA/sub (12.00s)\n=== RUN   TestB\n--- SKIP: TestB (0.00s)\n" +
		"PASS\nok  \tcertctl-loadtest/test/e2e\t61.250s\n"
	record := func(log string) ([]byte, error) {
		p := filepath.Join(dir, "test-full.log")
		if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		return exec.Command("bash", "../../scripts/full-record.sh", p).Output()
	}
	out, err := record(passing)
	if err != nil {
		t.Fatalf("full-record.sh on a passing log: %v", err)
	}
	p := filepath.Join(dir, "full-suite.txt")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	took, excused, wall, err := readFullRecord(p)
	if err != nil {
		t.Fatalf("%v in:\n%s", err, out)
	}
	if took["TestA"] != 12500*time.Millisecond || took["TestA/sub"] != 12*time.Second || wall != 61250*time.Millisecond {
		t.Errorf("times %v, wall %v in:\n%s", took, wall, out)
	}
	if excused["TestA/sub"] != 2 || excused["TestA"] != 0 || len(excused) != 1 {
		t.Errorf("excused %v, want TestA/sub's two, in:\n%s", excused, out)
	}
	if _, err := record(strings.Replace(passing, "ok  \t", "FAIL\t", 1)); err == nil {
		t.Error("full-record.sh wrote a record from a failed log")
	}
}
