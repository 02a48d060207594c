// Package e2e runs the harness end to end: the real compose file, the offline images, the real certctl
// server packaged from the build in CERTCTL_DIST, real k6 and PostgreSQL, at short durations. Faults a
// real server cannot be asked for (latency, errors on some routes) come from the fault proxy in front of
// it (FAULT_*); a crash is a `docker kill` of the real server. Each test pins an exit code and what the
// results say, and checks that the run left no container, volume or network behind. Most tests run three
// at a time (-parallel 3; many of them spend their time waiting on a fault or on certctl's clock): each
// stack is its own compose project, the CPU-bound ones (the scale tier) stay serial, and a run whose
// verdict rests on certctl's speed has the machine to itself (alone).
//
// Two suites: in short mode (make test, the gate) only the tests test/ciplan's E2E plans run (TestCIPlan
// keeps all of CI within its budget), and a planned run no test made fails the gate; make test-full
// runs every test, and fails when some threshold was never breached (unbreached).
//
// Without CERTCTL_DIST the tests that need a stack are skipped (needStack); with CI set, that is a failure.
package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"certctl-loadtest/internal/docs"
	"certctl-loadtest/internal/results"
	"certctl-loadtest/test/ciplan"
)

var (
	root     string
	loadtest string
	// dist is the certctl build every run packages and runs (CERTCTL_DIST); certctlImage its server image.
	dist, certctlImage string
)

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	root, err = filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	code := m.Run()
	if bin != "" {
		os.RemoveAll(bin)
	}
	// The whole full suite, and only it, can show that every threshold breaks somewhere: the gate runs one
	// breach per mechanism, not per threshold.
	unfiltered := flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == ""
	// A gate entry that made no run (a subtest renamed, a run dropped) would be planned and never judged.
	if code == 0 && ready && testing.Short() && unfiltered {
		if missing := made.Missing(ciplan.E2E); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "e2e: the gate plans these runs (test/ciplan/gate.go) and no test made them:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
	}
	if ready && !testing.Short() && unfiltered {
		// Said even when a test failed (a failed suite writes no record): a full suite is two hours, and
		// the next one should not be the first to learn which thresholds nothing breaks.
		if missing := unbreached(); len(missing) > 0 && code == 0 {
			fmt.Fprintf(os.Stderr, "e2e: no run breached these thresholds, so nothing shows they can fail:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		} else if len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "e2e: the suite failed, and no run that completed breached these thresholds (a failed test's runs may have):\n  %s\n", strings.Join(missing, "\n  "))
		} else {
			fmt.Fprintf(os.Stderr, "e2e: every threshold of every scenario was breached by some run\n")
		}
	}
	os.Exit(code)
}

var (
	setupOnce sync.Once
	bin       string
	// ready: the harness is built and the certctl build packaged; skip or fail say why not.
	ready      bool
	skip, fail string
)

// needStack readies what a run needs, once for the package: the harness built, CERTCTL_DIST packaged,
// the Docker engine reachable. Without CERTCTL_DIST the test is skipped (a failure when CI is set); so
// `go test -list` and the docker-free tests (TestFullPlan) work anywhere.
func needStack(t *testing.T) {
	t.Helper()
	setupOnce.Do(setup)
	if fail != "" {
		t.Fatal(fail)
	}
	if skip != "" {
		t.Skip(skip)
	}
}

func setup() {
	dist = os.Getenv("CERTCTL_DIST")
	if dist == "" {
		if os.Getenv("CI") != "" {
			fail = "e2e: CERTCTL_DIST is not set: CI must run the harness against a real certctl build, not skip it"
			return
		}
		skip = "e2e: CERTCTL_DIST is not set. These tests judge the harness against a real certctl; " +
			"point CERTCTL_DIST at a certctl build (server, agent, migrations/, LICENSE) to run them."
		return
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		fail = "e2e: the Docker engine is not reachable; start dockerd (these tests do not skip)"
		return
	}
	var err error
	if bin, err = os.MkdirTemp("", "loadtest-e2e-"); err != nil {
		fail = err.Error()
		return
	}
	loadtest = filepath.Join(bin, "loadtest")
	build := exec.Command("go", "build", "-o", loadtest, "./cmd/loadtest")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fail = fmt.Sprintf("building loadtest: %v\n%s", err, out)
		return
	}
	// Package once up front, so that the runs (which repackage too, and find it up to date) start alike.
	pkg := exec.Command(filepath.Join(root, "images", "certctl", "build.sh"), dist)
	pkg.Env = append(os.Environ(), "IMAGES=offline")
	pkg.Stderr = os.Stderr
	out, err := pkg.Output()
	if err != nil {
		fail = fmt.Sprintf("e2e: packaging CERTCTL_DIST=%s: %v", dist, err)
		return
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "CERTCTL_IMAGE="); ok {
			certctlImage = v
		}
	}
	ready = true
}

// breached records every threshold a test saw fail in a run built to breach it ("<scenario> <key>").
// After a whole-suite run, every threshold of k6/lib/thresholds.json and k6/lib/spotchecks.json must be
// in it: a budget no test can break would pass forever.
var breached sync.Map

func unbreached() []string {
	var missing []string
	note := func(scenario string, budget map[string][]string) {
		for metric, exprs := range budget {
			for _, e := range exprs {
				key := scenario + " " + thresholdKey(metric, e)
				if _, ok := breached.Load(key); !ok {
					missing = append(missing, key)
				}
			}
		}
	}
	// Scenarios: their thresholds as k6 resolves them (budgets extend each other and take tags), the
	// same rows the docs render.
	rows, err := docs.Collect(root, docs.K6Inspector(root))
	if err != nil {
		return []string{err.Error()}
	}
	// Scenarios that differ only in the size of their load (issuance_c1, _c4, _c16: one budget, one
	// executor, one journey) are one wiring: a breach in one of them proves the threshold in each.
	groups := map[string][]string{}
	for _, r := range rows {
		b, _ := json.Marshal(r.Thresholds)
		sig := r.Tier + " " + r.Executor + " " + string(b)
		groups[sig] = append(groups[sig], r.Scenario)
	}
	for _, r := range rows {
		b, _ := json.Marshal(r.Thresholds)
		for _, other := range groups[r.Tier+" "+r.Executor+" "+string(b)] {
			for metric, exprs := range r.Thresholds {
				for _, e := range exprs {
					if _, ok := breached.Load(other + " " + thresholdKey(metric, e)); ok {
						breached.Store(r.Scenario+" "+thresholdKey(metric, e), true)
					}
				}
			}
		}
	}
	for _, r := range rows {
		note(r.Scenario, r.Thresholds)
	}
	b, err := os.ReadFile(filepath.Join(root, "k6", "lib", "spotchecks.json"))
	if err != nil {
		return []string{err.Error()}
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return []string{"spotchecks.json: " + err.Error()}
	}
	for name, raw := range doc {
		if strings.HasPrefix(name, "_") {
			continue
		}
		var sc struct{ Thresholds map[string][]string }
		if err := json.Unmarshal(raw, &sc); err != nil {
			return []string{"spotchecks.json: " + err.Error()}
		}
		note(name, sc.Thresholds)
	}
	sort.Strings(missing)
	return missing
}

type result struct {
	code    int
	output  string
	elapsed time.Duration
	dir     string // the run directory, if one was reported
	runID   string
	summary results.Summary
}

var runDirRE = regexp.MustCompile(`loadtest: results in (\S+)`)

// stackEnv is a short API-tier run against the real certctl in CERTCTL_DIST on the offline images.
func stackEnv(t *testing.T, extra ...string) []string {
	return append(knobEnv("RESULTS_DIR="+t.TempDir()), extra...)
}

// knobEnv is stackEnv's knobs without a results directory: ciplan.E2EKnobs, which the gate's plan reads.
func knobEnv(extra ...string) []string {
	env := append([]string{"CERTCTL_DIST=" + dist}, ciplan.E2EKnobs...)
	return append(env, extra...)
}

// run runs `name args...` from the repository root with env on top of the test's environment.
func run(t *testing.T, env []string, name string, args ...string) result {
	t.Helper()
	return runDuring(t, env, nil, name, args...)
}

// machine is the host's 2 cores. Every run holds it shared, except the runs of a test marked alone: a
// run whose verdict rests on certctl's latency or rate (a green run against the budgets, a compare, a
// knee) holds it by itself. Beside two other stacks, green runs breached budgets on CPU alone: ACME p95
// 2.4 s against 300 ms, 813 dropped iterations, a compare of two builds that both missed their own
// budgets. A waiting alone run keeps new runs from starting, so it waits at most for the runs under way.
var machine sync.RWMutex

var aloneTests sync.Map // *testing.T → struct{}

// standing is a stack that stays up between a test's runs (externalCertctl's, an operator's certctl
// the harness did not start): its test holds it shared for the stack's life, and an alone run takes it
// first, so no standing stack idles or is seeded beside a run that has the machine to itself. The full
// suite's TestSegments once compared a run beside TestExternalTarget's seeding with one without.
var standing sync.RWMutex

// alone marks t: each of its runs has the machine to itself.
func alone(t *testing.T) { aloneTests.Store(t, struct{}{}) }

// runDuring is run with `during` called in parallel, for tests that act on the stack (or on the
// harness's process) while it runs.
func runDuring(t *testing.T, env []string, during func(p *os.Process), name string, args ...string) result {
	t.Helper()
	needStack(t)
	checkPlanned(t, env, name, args)
	if _, ok := aloneTests.Load(t); ok {
		standing.Lock()
		defer standing.Unlock()
		machine.Lock()
		defer machine.Unlock()
	} else {
		machine.RLock()
		defer machine.RUnlock()
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	runID := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "RUN_ID="); ok {
			runID = v
		}
	}
	if runID == "" {
		runID = newRunID()
		env = append(env, "RUN_ID="+runID)
	}
	cmd.Env = append(cleanEnv(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan struct{})
	if during != nil {
		go func() { defer close(done); during(cmd.Process) }()
	} else {
		close(done)
	}
	err := cmd.Wait()
	<-done
	r := result{elapsed: time.Since(start), output: out.String(), runID: runID}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if m := runDirRE.FindStringSubmatch(r.output); m != nil {
		r.dir = m[1]
		if b, err := os.ReadFile(filepath.Join(r.dir, "summary.json")); err == nil {
			if err := json.Unmarshal(b, &r.summary); err != nil {
				t.Errorf("summary.json is not JSON (a cut-off file must not be left as a summary): %v", err)
			}
		}
	}
	t.Logf("%s %s: exit %d in %s", name, strings.Join(args, " "), r.code, r.elapsed.Round(time.Millisecond))
	t.Cleanup(func() { assertNothingLeft(t, r) })
	return r
}

// cleanEnv drops harness variables the caller may have set, so each test states its own.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k := kv[:strings.IndexByte(kv, '=')]
		switch {
		case strings.HasPrefix(k, "FAULT_"), strings.HasPrefix(k, "RATE_"), k == "TIER", k == "CERTCTL_DIST",
			k == "DURATION", k == "IMAGES", k == "MAX_VUS", k == "CLIENT_TOKEN", k == "CERTCTL_IMAGE",
			k == "RUN_ID", k == "RESULTS_DIR", k == "MAKEFLAGS", k == "MAKELEVEL":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func loadtestRun(t *testing.T, env []string) result {
	return run(t, env, loadtest, "run")
}

var runSeq atomic.Int64

// newRunID gives a test a run id it knows in advance, so it can find its stack's containers; every run
// gets one, so that a check for leftovers looks at its own project only while other tests run.
func newRunID() string {
	return fmt.Sprintf("e2e-%d-%d", time.Now().Unix()%100000, runSeq.Add(1))
}

// waitForContainers polls until n containers whose name contains substr run in the run's project,
// and gives up after timeout.
func waitForContainers(t *testing.T, runID, substr string, n int, timeout time.Duration) []string {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out, _ := exec.Command("docker", "ps", "--format", "{{.Names}}", "--filter", "label=com.docker.compose.project=certctl-lt-"+runID).Output()
		var names []string
		for _, n := range strings.Fields(string(out)) {
			if strings.Contains(n, substr) {
				names = append(names, n)
			}
		}
		if len(names) >= n {
			return names
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("run %s: %d containers matching %q did not appear within %s", runID, n, substr, timeout)
	return nil
}

func docker(t *testing.T, args ...string) {
	if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
		t.Errorf("docker %v: %v\n%s", args, err, out)
	}
}

// assertNothingLeft: a run, whatever its outcome (one refused before it started too), leaves no
// container, volume or network of its project.
func assertNothingLeft(t *testing.T, r result) {
	project := "certctl-lt-" + r.runID
	for _, what := range [][]string{
		{"ps", "-aq"}, {"volume", "ls", "-q"}, {"network", "ls", "-q"},
	} {
		args := append(what, "--filter", "label=com.docker.compose.project="+project)
		out, err := exec.Command("docker", args...).Output()
		if err != nil {
			t.Errorf("docker %v: %v", args, err)
			continue
		}
		if s := strings.TrimSpace(string(out)); s != "" {
			t.Errorf("run %s left %s behind: %s", project, what[0], s)
		}
	}
}

func scenarioByName(t *testing.T, s results.Summary, name string) (status string, thresholds map[string]bool) {
	t.Helper()
	for _, sc := range s.Scenarios {
		if sc.Name == name {
			thresholds = map[string]bool{}
			if sc.Record != nil {
				for _, th := range sc.Record.Thresholds {
					thresholds[thresholdKey(th.Metric, th.Expression)] = th.OK
				}
			}
			return sc.Status, thresholds
		}
	}
	t.Fatalf("scenario %s not in summary.json", name)
	return "", nil
}

// thresholdOf is a scenario's threshold named key, with the scenario's record; nil when the run has none.
func thresholdOf(s results.Summary, scenario, key string) (*results.Threshold, *results.Record) {
	for _, sc := range s.Scenarios {
		if sc.Name != scenario || sc.Record == nil {
			continue
		}
		for i, th := range sc.Record.Thresholds {
			if thresholdKey(th.Metric, th.Expression) == key {
				return &sc.Record.Thresholds[i], sc.Record
			}
		}
	}
	return nil, nil
}

// noSample: the scenario's threshold judged no sample.
func noSample(s results.Summary, scenario, key string) bool {
	th, _ := thresholdOf(s, scenario, key)
	return th != nil && th.NoSample
}

// measured is what a threshold judged, as summary.json keeps it, beside the record's counters: enough
// in a CI log to tell certctl's failure from the machine's without the run directory.
func measured(s results.Summary, scenario, key string) string {
	th, rec := thresholdOf(s, scenario, key)
	if th == nil {
		return "not in summary.json"
	}
	return fmt.Sprintf("%s; %.0f iterations, %.0f dropped, %.0f requests, error rate %.4f, counters %v",
		th.Measured(), rec.Iterations, rec.DroppedIterations, rec.Requests, rec.ErrorRate, rec.Counters)
}

// logRunText puts the run's summary.txt in the test's log once: a failed gate run is read from CI's
// log, and its temporary directory is gone by then.
func logRunText(t *testing.T, r result) {
	t.Helper()
	if _, done := loggedRuns.LoadOrStore(r.dir, true); done || r.dir == "" {
		return
	}
	if b, err := os.ReadFile(filepath.Join(r.dir, "summary.txt")); err == nil {
		t.Logf("%s/summary.txt:\n%s", r.dir, b)
	}
}

var loggedRuns sync.Map

// unansweredOnly: an ACME order budget broken only by requests that got no answer within REQUEST_TIMEOUT
// (k6's status 0), as many or more than the orders that failed. Beside two other stacks the host
// stalls: CI's gate on bf01ae6 broke acme_order_ok while http_req_failed and checks held and the same
// stall dropped ocsp_crl's iterations, the signature of a request or two timed out. certctl's own
// failures answer (500, 429, a bad chain) and stay errors.
func unansweredOnly(s results.Summary, scenario, key string) bool {
	if key != "acme_order_ok rate>0.99" {
		return false
	}
	for _, sc := range s.Scenarios {
		if sc.Name != scenario || sc.Record == nil {
			continue
		}
		rec := sc.Record
		failed := rec.Iterations - rec.Counters["issued"]
		return failed > 0 && rec.Counters["unanswered"] >= failed
	}
	return false
}

// machineDecides is what the machine check says of a run from its own samples (MACHINE_CHECK's rules,
// judged or not): the sentence naming what took the machine, or "" when nothing outside the run, k6 or
// the stack's saturation decided it.
func machineDecides(s results.Summary) string {
	if s.Diagnosis == nil || s.Diagnosis.Machine == nil {
		return ""
	}
	if m := s.Diagnosis.Machine; m.Decided {
		return m.Sentence
	}
	return s.Diagnosis.Machine.Unjudged
}

// machineExcuse is why a broken threshold of a run is the machine's, or "" when it is not: a latency or
// rate budget (or ACME orders that got no answer in time) broken while the run's own samples say the
// machine decided (machineDecides, by the rules MACHINE_CHECK=true judges with). A budget that judged
// no sample measured nothing the machine could have moved; any other budget is certctl's or the
// harness's.
func machineExcuse(s results.Summary, scenario, key string) string {
	why := machineDecides(s)
	if why == "" || noSample(s, scenario, key) || !timingThreshold(key) && !unansweredOnly(s, scenario, key) {
		return ""
	}
	return why
}

// runExcuse is a run's exit 99 the machine check excuses whole: every broken threshold a timing budget
// with samples (timingBreaches), and the machine's sentence; nil and "" otherwise.
func runExcuse(s results.Summary) (broke []string, why string) {
	broke, why = timingBreaches(s), machineDecides(s)
	if s.ExitCode != 99 || len(broke) == 0 || why == "" {
		return nil, ""
	}
	return broke, why
}

// logExcused logs what the machine check excused, in the words scripts/full-record.sh counts into the
// full suite's record: a test that leans on the machine is seen there.
func logExcused(t *testing.T, what, why string) {
	t.Helper()
	t.Logf("machine-excused: %s; the machine check decides it: %s", what, why)
}

// wantBuiltOnce: an invocation builds each image of ours once, whatever the stacks it starts, and the
// console gets a line an image, nothing of what the builds printed (that is logs/build.log).
func wantBuiltOnce(t *testing.T, r result) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^loadtest: image (\S+) \([^)]*\): (?:built|up to date)$`).FindAllStringSubmatch(r.output, -1) {
		if seen[m[1]] {
			t.Errorf("image %s built twice in one invocation", m[1])
		}
		seen[m[1]] = true
	}
	if len(seen) == 0 || strings.Contains(r.output, "[build]") || strings.Contains(r.output, "Bake") {
		t.Errorf("images %v; the console should have a line an image and no build output:\n%s", seen, r.output)
	}
}

// timingBreaches are a run's broken thresholds when every one of them is a timing budget (latency,
// dropped iterations), nil when the run broke none or any other.
func timingBreaches(s results.Summary) []string {
	var out []string
	for _, sc := range s.Scenarios {
		if sc.Record == nil {
			return nil
		}
		for _, th := range sc.Record.Thresholds {
			if th.OK {
				continue
			}
			if th.NoSample || !timingThreshold(thresholdKey(th.Metric, th.Expression)) {
				return nil
			}
			out = append(out, fmt.Sprintf("%s %s %s (%s)", sc.Name, th.Metric, th.Expression, th.Measured()))
		}
	}
	return out
}

// timingThreshold: a budget on latency or on the rate delivered, which CPU contention alone can break.
func timingThreshold(key string) bool {
	metric, _, _ := strings.Cut(key, " ")
	metric, _, _ = strings.Cut(metric, "{")
	return metric == "http_req_duration" || metric == "dropped_iterations" || strings.Contains(metric, "_ms")
}

// thresholdKey names a threshold as thresholds.json writes it: the metric with its own tags, without
// the tags thresholds.js adds (the scenario's, a latency's expected_response:true), then the
// expression ("checks{walk:page} rate==1"). Keeping the other tags matters: a scenario may hold the
// same expression on two tag sets.
func thresholdKey(metric, expression string) string {
	return results.Threshold{Metric: metric, Expression: expression}.Key()
}

func wantCode(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d; output:\n%s", r.code, code, r.output)
	}
}

func regexpFind(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

func wantOutput(t *testing.T, r result, pattern string) {
	t.Helper()
	if !regexp.MustCompile(pattern).MatchString(r.output) {
		t.Fatalf("output does not match %q:\n%s", pattern, r.output)
	}
}

// wantThresholds checks that exactly the named thresholds failed in a scenario and all others passed.
func wantThresholds(t *testing.T, r result, scenario string, failing ...string) {
	t.Helper()
	_, th := scenarioByName(t, r.summary, scenario)
	if len(th) == 0 {
		t.Fatalf("%s: no thresholds in summary.json", scenario)
	}
	fail := map[string]bool{}
	for _, f := range failing {
		fail[f] = true
		if _, ok := th[f]; !ok {
			t.Errorf("%s: threshold %q not in summary.json (have %v)", scenario, f, th)
		}
	}
	for name, ok := range th {
		if fail[name] && ok {
			t.Errorf("%s: threshold %q passed; this run was built to breach it", scenario, name)
		}
		if !fail[name] && !ok {
			// A run beside other stacks: a budget it does not aim at broke, excused only as machineExcuse says.
			if why := machineExcuse(r.summary, scenario, name); why != "" {
				logExcused(t, fmt.Sprintf("%s: threshold %q failed (%s)", scenario, name, measured(r.summary, scenario, name)), why)
			} else {
				t.Errorf("%s: threshold %q failed unexpectedly (%s)", scenario, name, measured(r.summary, scenario, name))
				logRunText(t, r)
			}
		}
		if fail[name] && !ok {
			breached.Store(scenario+" "+name, true)
		}
	}
}

// releaseAndNext are the certctl builds a test judges on both of: the release (CERTCTL_DIST) and, when
// CERTCTL_NEXT_DIST names it, the next.
func releaseAndNext() map[string]string {
	builds := map[string]string{"release": dist}
	if next := os.Getenv("CERTCTL_NEXT_DIST"); next != "" {
		builds["next"] = next
	}
	return builds
}
