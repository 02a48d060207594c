// Package workflow runs .github/workflows/loadtest.yml, unchanged, on this host with act (nektos/act,
// pinned in tools/act): the jobs' own steps, the local action they call (.github/actions/loadtest),
// expressions, conditions, outputs, inputs, repository variables and the matrix, with no job container
// (the self-hosted platform). GitHub's three actions are replaced by the stand-ins in actions/, and an
// env file switches the run to the offline images and to the real certctl build in CERTCTL_DIST (packaged
// by the harness, or beforehand by the test when a job is given the image by name), which is all that
// differs from a GitHub runner. What act cannot show: the real actions, artifact storage, the concurrency
// group, permissions and the job summary page (act prints the summary's Markdown, which the tests read;
// internal/report's golden files pin what `bin/loadtest report --format markdown` writes into it).
package workflow

import (
	"bytes"
	"certctl-loadtest/internal/results"
	"certctl-loadtest/test/ciplan"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

var (
	root     string
	act      string
	workflow = filepath.Join(".github", "workflows", "loadtest.yml")
)

func TestMain(m *testing.M) {
	var err error
	if root, err = filepath.Abs("../.."); err != nil {
		panic(err)
	}
	code := m.Run()
	if bin != "" {
		os.RemoveAll(bin)
	}
	// A planned run no test made (a test renamed, a run dropped) would be planned and never judged.
	if code == 0 && act != "" && testing.Short() && unfiltered() {
		if missing := made.Missing(ciplan.Workflow); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "workflow: the gate plans these runs (test/ciplan/workflow.go) and no test made them:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

var (
	setupOnce  sync.Once
	bin        string
	skip, fail string
)

// needAct readies what a job needs, once for the package: act built, CERTCTL_DIST set, the Docker engine
// reachable. Without CERTCTL_DIST the test is skipped (a failure when CI is set); so `go test -list` and
// the tests that only read files work anywhere.
func needAct(t *testing.T) {
	t.Helper()
	setupOnce.Do(func() {
		if os.Getenv("CERTCTL_DIST") == "" {
			if os.Getenv("CI") != "" {
				fail = "workflow: CERTCTL_DIST is not set: CI must run the workflow against a real certctl build, not skip it"
				return
			}
			skip = "workflow: CERTCTL_DIST is not set. The workflow's jobs run against a real certctl; " +
				"point CERTCTL_DIST at a certctl build (server, agent, migrations/, LICENSE) to run them."
			return
		}
		if err := exec.Command("docker", "info").Run(); err != nil {
			fail = "workflow: the Docker engine is not reachable; start dockerd (these tests do not skip)"
			return
		}
		var err error
		if bin, err = os.MkdirTemp("", "loadtest-act-"); err != nil {
			fail = err.Error()
			return
		}
		act = filepath.Join(bin, "act")
		build := exec.Command("go", "-C", filepath.Join(root, "tools", "act"), "build", "-o", act, "github.com/nektos/act")
		if out, err := build.CombinedOutput(); err != nil {
			fail = fmt.Sprintf("building act: %v\n%s", err, out)
		}
	})
	if fail != "" {
		t.Fatal(fail)
	}
	if skip != "" {
		t.Skip(skip)
	}
}

type actRun struct {
	code    int
	output  string
	sink    string // where the upload-artifact stand-in put the artifacts
	runID   string // github.run_id
	elapsed time.Duration
}

// runIDOf is the RUN_ID the workflow gives the job with this matrix label: results/<it> and loadtest-<it>.
func (r actRun) runIDOf(label string) string { return label + "-" + r.runID + "-1" }

// usesRE finds the actions a workflow or an action uses: every one must be pinned to a commit and have a
// stand-in, and Dependabot must watch the directory that uses it.
var usesRE = regexp.MustCompile(`uses:\s*([\w.-]+)/([\w.-]+)@(\S+)`)

// withoutDist, among a run's env, leaves CERTCTL_DIST unset: the job then runs the certctl image it is
// given by name (the certctl_image input, the CERTCTL_IMAGE variable or .env's pin), as on GitHub.
const withoutDist = "CERTCTL_DIST="

// runAct runs act on the weekly workflow for one event, with env on top of the switch to offline images
// and the real certctl build, and returns what it printed and uploaded.
func runAct(t *testing.T, event string, payload string, env []string, args ...string) actRun {
	t.Helper()
	return runActOn(t, workflow, event, payload, env, args...)
}

// runActOn is runAct on another workflow file (relative to the repository).
func runActOn(t *testing.T, wf, event string, payload string, env []string, args ...string) actRun {
	t.Helper()
	return runActIn(t, root, wf, event, payload, env, args...)
}

// pathPrepend, among a run's env, puts a directory first in the PATH act and its steps see.
const pathPrepend = "PATH+="

// runActIn is runActOn in another repository, dir (a fixture's): its workflow wf may call this
// repository's reusable workflows, whose actions are mapped to their stand-ins too.
func runActIn(t *testing.T, dir, wf, event string, payload string, env []string, args ...string) actRun {
	t.Helper()
	needAct(t)
	checkPlanned(t, wf, event, payload, env, args)
	tmp := t.TempDir()
	sink := filepath.Join(tmp, "artifacts")
	eventFile := filepath.Join(tmp, "event.json")
	if err := os.WriteFile(eventFile, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	// github.run_id, and through RUN_ID the run's directory and compose project: digits as on GitHub, and
	// random so that runs of this suite on one Docker engine never share a project.
	runID := strconv.FormatInt(1_000_000_000+rand.Int64N(9_000_000_000), 10)
	// act reads the repository's .env by default, and that is compose's file of image pins: they would
	// override images/offline.env. An env file of our own keeps it out.
	envFile := filepath.Join(tmp, "act.env")
	// A caller's ACT_ARTIFACT_SINK holds artifacts already, as this workflow run's earlier jobs left them.
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "ACT_ARTIFACT_SINK="); ok {
			sink = v
		}
	}
	// MACHINE_CHECK=false: this suite's jobs run stacks side by side, and a breach built into a job
	// (FAULT_LATENCY) must read as certctl's; a gate run met "outside work took 68 % of the machine".
	lines := []string{"IMAGES=offline", "ACT_ARTIFACT_SINK=" + sink, "GITHUB_RUN_ID=" + runID, "MACHINE_CHECK=false"}
	withDist := true
	for _, kv := range env {
		if kv == withoutDist {
			withDist = false
			continue
		}
		if strings.HasPrefix(kv, "ACT_ARTIFACT_SINK=") || strings.HasPrefix(kv, pathPrepend) {
			continue
		}
		lines = append(lines, kv)
	}
	if withDist {
		// Absolute: the job runs in a copy of the working tree.
		lines = append(lines, "CERTCTL_DIST="+dist())
	}
	if err := os.WriteFile(envFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{event, "--workflows", wf, "--eventpath", eventFile,
		"-P", "ubuntu-24.04=-self-hosted", "--action-cache-path", filepath.Join(tmp, "cache"),
		"--env-file", envFile, "--var-file", os.DevNull, "--secret-file", os.DevNull, "--input-file", os.DevNull}
	called, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	flags = append(flags, standIns(t, append([]string{filepath.Join(dir, wf)}, called...)...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, act, append(flags, args...)...)
	cmd.Dir = dir
	cmd.Env = hostEnv()
	// act passes its own environment to the steps: a tool of the test's (a stand-in for gh) is found first.
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, pathPrepend); ok {
			for i, e := range cmd.Env {
				if p, ok := strings.CutPrefix(e, "PATH="); ok {
					cmd.Env[i] = "PATH=" + v + string(os.PathListSeparator) + p
				}
			}
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := actRun{output: out.String(), sink: sink, runID: runID, elapsed: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("act: %v\n%s", err, r.output)
	}
	t.Logf("act %s %s %s (run id %s): exit %d in %s", wf, event, strings.Join(args, " "), runID, r.code, r.elapsed.Round(time.Millisecond))
	return r
}

// dist is the certctl build the jobs run, as an absolute path.
func dist() string {
	d, err := filepath.Abs(os.Getenv("CERTCTL_DIST"))
	if err != nil {
		panic(err)
	}
	return d
}

// packaged is CERTCTL_DIST packaged once for the jobs that are given certctl by image name.
var packaged struct {
	once  sync.Once
	image string
	err   error
}

// packagedImage packages the certctl build in CERTCTL_DIST into local images, as the harness does with
// CERTCTL_DIST (images/certctl/build.sh, cached), and returns the server image's name: a job given that
// name runs the real certctl the way a GitHub job runs a registry's image.
func packagedImage(t *testing.T) string {
	t.Helper()
	needAct(t)
	packaged.once.Do(func() {
		cmd := exec.Command(filepath.Join(root, "images", "certctl", "build.sh"), dist())
		cmd.Env = append(hostEnv(), "IMAGES=offline")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			packaged.err = fmt.Errorf("images/certctl/build.sh %s: %v\n%s", dist(), err, stderr.String())
			return
		}
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "CERTCTL_IMAGE="); ok {
				packaged.image = v
			}
		}
		if packaged.image == "" {
			packaged.err = fmt.Errorf("images/certctl/build.sh printed no CERTCTL_IMAGE=<image>:\n%s", out)
		}
	})
	if packaged.err != nil {
		t.Fatal(packaged.err)
	}
	return packaged.image
}

// actionFiles lists the local actions' metadata (.github/actions/<name>/action.yml), relative to the
// repository.
func actionFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"action.yml", "action.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, ".github", "actions", "*", pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	return files
}

// standIns maps each action the workflows (absolute paths) and the local actions use, at its pinned
// commit, to the stand-in of the same name.
func standIns(t *testing.T, workflows ...string) []string {
	t.Helper()
	var flags []string
	seen := map[string]bool{}
	files := slices.Clone(workflows)
	for _, f := range actionFiles(t) {
		files = append(files, filepath.Join(root, f))
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range usesRE.FindAllStringSubmatch(string(b), -1) {
			ref := m[1] + "/" + m[2] + "@" + m[3]
			if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(m[3]) {
				t.Fatalf("%s: %s is not pinned to a commit", file, ref)
			}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			dir := filepath.Join(root, "test", "workflow", "actions", m[2])
			if _, err := os.Stat(filepath.Join(dir, "action.yml")); err != nil {
				t.Fatalf("%s uses %s, which has no stand-in in %s", file, ref, dir)
			}
			flags = append(flags, "--local-repository", ref+"="+dir)
		}
	}
	if len(flags) == 0 {
		t.Fatalf("no actions found in %s and the local actions", workflows)
	}
	// One job at a time: act's LocalRepositoryCache writes a map unguarded when two jobs fetch their
	// local actions at once (act v0.2.89, local_repository_cache.go:36), and the process dies with
	// "fatal error: concurrent map writes" (seen once in a CI rehearsal, the Monday schedule's jobs).
	return append(flags, "--concurrent-jobs", "1")
}

// hostEnv is what a runner's shell would have: the tools, the Go caches and the Docker engine, none of
// the harness's variables the caller may have set (act passes its own environment to the steps).
func hostEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "LANG", "DOCKER_HOST", "GOPATH", "GOCACHE", "GOMODCACHE",
		"GOPROXY", "GOSUMDB", "GONOSUMDB", "GOFLAGS", "GOTOOLCHAIN", "GOPRIVATE", "GONOPROXY"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// completeRun is what the artifact of a run that ran its course holds besides summary.json.
var completeRun = []string{"index.html", "summary.txt", "run.json", "dashboard/*.html", "raw/*.json.gz", "logs/stack.log"}

// artifact reads the summary.json of the artifact of run runID: named loadtest-<runID>, uploaded from
// results/<runID>/ (the directory the workflow named before the run) for 90 days, holding files.
func artifact(t *testing.T, r actRun, runID string, files ...string) (dir string, summary results.Summary) {
	t.Helper()
	dir = filepath.Join(r.sink, "loadtest-"+runID)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		have, _ := filepath.Glob(filepath.Join(r.sink, "*"))
		t.Fatalf("no artifact %s; the sink has %v; act printed:\n%s", filepath.Base(dir), have, r.output)
	}
	inputs, err := os.ReadFile(dir + ".inputs")
	for _, want := range []string{"path=results/" + runID + "/\n", "retention-days=90\n"} {
		if err != nil || !strings.Contains(string(inputs), want) {
			t.Errorf("artifact %s: uploaded with %q (%v), want %q", dir, inputs, err, want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatalf("artifact %s: %v", dir, err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	if summary.RunID != runID {
		t.Errorf("summary.json: run id %q, want the workflow's RUN_ID %q", summary.RunID, runID)
	}
	for _, want := range files {
		if m, _ := filepath.Glob(filepath.Join(dir, want)); len(m) == 0 {
			t.Errorf("artifact %s has no %s", dir, want)
		}
	}
	return dir, summary
}

// noArtifacts fails when anything was uploaded.
func noArtifacts(t *testing.T, r actRun) {
	t.Helper()
	if have, _ := filepath.Glob(filepath.Join(r.sink, "*")); len(have) > 0 {
		t.Errorf("uploaded %v; want nothing", have)
	}
}

// wantOutput: act v0.2.89 runs a host step through a pty and, when the step exits non-zero, returns
// without waiting for the pty to drain (pkg/container/host_environment.go), so the last lines of a
// failing step are sometimes missing from its output (seen once in 16 runs of four jobs). The tests
// match act's own step lines and $GITHUB_OUTPUT (a file), and what a failing step prints only where
// several jobs print it. GitHub's runner has no such race.
func wantOutput(t *testing.T, r actRun, pattern string) {
	t.Helper()
	if !regexp.MustCompile(pattern).MatchString(r.output) {
		t.Errorf("act's output does not match %q:\n%s", pattern, r.output)
	}
}

// mainSteps lists the steps act ran for the job whose log prefix starts with job, in order, by name: the
// workflow's, and within them the local action's.
func mainSteps(r actRun, job string) []string {
	var steps []string
	re := regexp.MustCompile(`\[` + regexp.QuoteMeta(job) + `[^]]*\]\s+⭐ Run Main (.+)`)
	for _, m := range re.FindAllStringSubmatch(r.output, -1) {
		steps = append(steps, strings.TrimSpace(m[1]))
	}
	return steps
}

const apiInputs = `{"inputs": {"tier": "api", "duration": "5s"}}`

// A repository variable the dispatch input must win over. Offline it cannot be pulled: a run given it
// stops at once.
const variableImage = "example.invalid/certctl-server:from-the-variable"

// The local action when the run outlives its timeout (testdata/timeout.yml: 45 s for a 5-minute run):
// the harness is sent SIGTERM and, stopped the way a cancelled job stops it, writes its summary (exit
// 130); the step records that code and that it timed out, the results are uploaded, the job summary says
// so, and the verdict fails the job.
func TestRunStepTimesOut(t *testing.T) {
	t.Parallel()
	r := runActOn(t, filepath.Join("test", "workflow", "testdata", "timeout.yml"), "workflow_dispatch", `{}`, nil)
	if r.code == 0 {
		t.Fatalf("act exited 0 for a run that timed out:\n%s", r.output)
	}
	wantOutput(t, r, `::set-output:: code=130`)
	wantOutput(t, r, `::set-output:: timed_out=true`)
	wantOutput(t, r, `✅  Success - Main Run the load test`)
	wantOutput(t, r, `✅  Success - Main Upload the results`)
	wantOutput(t, r, `\*\*The run step timed out after 0\.75 minutes\*\*`)
	wantOutput(t, r, `❌  Failure - Main Verdict`)
	_, s := artifact(t, r, "timeout-"+r.runID+"-1", "index.html", "summary.txt", "run.json", "logs/stack.log")
	if s.ExitCode != 130 {
		t.Errorf("summary.json: exit code %d; want 130 (interrupted)", s.ExitCode)
	}
}

// The tiers' job, dispatched for the API tier. Green: the job's steps run in order, the verdict last; the
// certctl_image input wins over the CERTCTL_IMAGE variable and is the certctl that ran; the results are
// uploaded from results/<RUN_ID> as loadtest-<RUN_ID>. A run that breaches thresholds fails the job at
// its last step, after the upload: the full suite's, since the gate's failing verdict after an upload
// through the same action is TestRunStepTimesOut's.
func TestDefaultJob(t *testing.T) {
	t.Parallel()
	t.Run("green", func(t *testing.T) {
		image := packagedImage(t)
		r := runAct(t, "workflow_dispatch", fmt.Sprintf(`{"inputs": {"tier": "api", "duration": "5s", "certctl_image": %q}}`, image),
			[]string{withoutDist}, "--job", "loadtest", "--var", "CERTCTL_IMAGE="+variableImage)
		if r.code != 0 {
			t.Fatalf("act exited %d; want 0:\n%s", r.code, r.output)
		}
		wantOutput(t, r, `::set-output:: code=0`)
		order := []string{"Load test", "Build the harness", "Check the inputs", "Run the load test",
			"Upload the results", "Write the job summary", "Verdict"}
		steps := mainSteps(r, "loadtest/tiers api")
		var ran []string
		for _, s := range steps {
			if slices.Contains(order, s) {
				ran = append(ran, s)
			}
		}
		if !slices.Equal(ran, order) || len(steps) == 0 || steps[len(steps)-1] != "Verdict" {
			t.Errorf("the job ran %q; want %q in that order, Verdict last", steps, order)
		}
		wantOutput(t, r, `\[loadtest/tiers api[^]]*\]\s+✅  Success - Main Write the job summary`)
		// Every stack needs netguard's (stack-net: no route out) and the collector (DIAGNOSIS); the API
		// tier needs no other of ours.
		if own := ownImages(r.output); strings.Join(own, ", ") != "collector, stack-net" {
			t.Errorf("images of ours built for the API tier: %q; it needs the collector's and stack-net's only", own)
		}
		_, s := artifact(t, r, r.runIDOf("api"), completeRun...)
		if !s.Passed || s.ExitCode != 0 {
			t.Errorf("summary.json: passed %v, exit code %d; want a passed run", s.Passed, s.ExitCode)
		}
		if s.Run.Certctl.Image != image || s.Run.Certctl.Build != "" {
			t.Errorf("certctl ran from %q (build %q); want the certctl_image input %q, over the variable %q",
				s.Run.Certctl.Image, s.Run.Certctl.Build, image, variableImage)
		}
		if want := "CERTCTL_IMAGE=" + image; !strings.Contains(s.Run.Command, want) {
			t.Errorf("run.json command %q, want %s in it", s.Run.Command, want)
		}
	})
	t.Run("thresholds breached", func(t *testing.T) {
		if testing.Short() {
			t.Skip("full suite: the gate's live run of a failing verdict after the upload is TestRunStepTimesOut's, through the same action")
		}
		r := runAct(t, "workflow_dispatch", apiInputs,
			[]string{"FAULT_LATENCY=3s", "FAULT_ROUTE=GET /api/v1/certificates$"}, "--job", "loadtest")
		if r.code == 0 {
			t.Fatalf("act exited 0 for a run that breached thresholds:\n%s", r.output)
		}
		wantOutput(t, r, `::set-output:: code=99`)
		// act's own line: the step's ::error line can be lost (see wantOutput).
		wantOutput(t, r, `❌  Failure - Main Verdict`)
		wantOutput(t, r, `✅  Success - Main Upload the results`)
		wantOutput(t, r, `✅  Success - Main Write the job summary`)
		if _, s := artifact(t, r, r.runIDOf("api"), completeRun...); s.Passed || s.ExitCode != 99 {
			t.Errorf("summary.json: passed %v, exit code %d; want 99", s.Passed, s.ExitCode)
		}
	})
}

// ownImages are the services whose images of ours a run built or found up to date, from its console's
// line an image ("loadtest: image certctl-loadtest/f5-standin:dev (f5): built"), sorted.
func ownImages(output string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)loadtest: image \S+ \(([^)]*)\): (?:built|up to date)$`).FindAllStringSubmatch(output, -1) {
		out = append(out, strings.Split(m[1], ", ")...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The connector tier's run builds the F5 stand-in from its Dockerfile itself (no step of the workflow
// does, and no root is needed) before the load. Given certctl by the CERTCTL_IMAGE variable alone, it
// runs that image. The full suite's: a second dispatched stack of the tiers' job (TestDefaultJob's are
// the gate's), and the F5 image's build by the harness is the e2e gate's connector run's too.
func TestConnectorTierBuildsTheF5Image(t *testing.T) {
	if testing.Short() {
		t.Skip("full suite: the gate dispatches the tiers' job in TestDefaultJob, and builds the F5 image in TestConnectorThresholdsCanFail")
	}
	t.Parallel()
	image := packagedImage(t)
	r := runAct(t, "workflow_dispatch", `{"inputs": {"tier": "connector", "duration": "5s"}}`, []string{withoutDist},
		"--job", "loadtest", "--var", "CERTCTL_IMAGE="+image)
	if r.code != 0 {
		t.Fatalf("act exited %d; want 0:\n%s", r.code, r.output)
	}
	if own := ownImages(r.output); strings.Join(own, ", ") != "collector, f5, stack-net" {
		t.Errorf("images of ours built for the connector tier: %q; want the collector's, f5's and stack-net's", own)
	}
	_, s := artifact(t, r, r.runIDOf("connector"), completeRun...)
	if !s.Passed {
		t.Errorf("connector tier: exit code %d, want a passed run", s.ExitCode)
	}
	if s.Run.Certctl.Image != image {
		t.Errorf("certctl ran from %q; want the CERTCTL_IMAGE variable's %q", s.Run.Certctl.Image, image)
	}
}

// Neither the input nor the variable: CERTCTL_IMAGE stays unset and compose takes .env's pin (exported
// empty, it would hide the pin: compose refuses it, exit 2). Offline the pin cannot be pulled, so the
// run stops before its directory exists, exit 3, naming the pin; nothing is uploaded, and the job summary
// still says what happened before the verdict fails the job.
func TestCertctlImagePinWhenNoneGiven(t *testing.T) {
	t.Parallel()
	env, err := os.ReadFile(filepath.Join(root, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CERTCTL_IMAGE=(\S+)$`).FindSubmatch(env)
	if m == nil {
		t.Fatal(".env pins no CERTCTL_IMAGE")
	}
	pin := string(m[1])
	r := runAct(t, "workflow_dispatch", apiInputs, []string{withoutDist}, "--job", "loadtest")
	if r.code == 0 {
		t.Fatalf("act exited 0 with an image that is not on this host:\n%s", r.output)
	}
	// The run step itself succeeds (it records the code), so what it prints is not lost (see wantOutput).
	wantOutput(t, r, `::set-output:: code=3`)
	wantOutput(t, r, `image\(s\) not available: `+regexp.QuoteMeta(pin))
	wantOutput(t, r, `✅  Success - Main Write the job summary`)
	wantOutput(t, r, "`results/"+regexp.QuoteMeta(r.runIDOf("api"))+"` does not exist")
	wantOutput(t, r, `❌  Failure - Main Verdict`)
	noArtifacts(t, r)
}

// One scale scenario's job, dispatched with tier=scale: the tiers' job stays out, the matrix entry sets
// SCENARIOS, the run records the make target that repeats it, and the artifact is named after the
// scenario (dashes for its underscores: RUN_ID allows none). No image given: none is exported. The full
// suite's.
func TestScaleJob(t *testing.T) {
	if testing.Short() {
		t.Skip("full suite: a second dispatched stack of the tiers' job (TestDefaultJob/green is the gate's); the matrix's scale entries run in the gate up to their inputs' check (TestScheduleRefusesBadInputEarly)")
	}
	t.Parallel()
	// The job's plumbing is judged here, not certctl's speed: a fifth of the storm's rate holds its
	// budget beside the other job this suite runs at once (at 167/s its p95 reached 947 ms there).
	r := runAct(t, "workflow_dispatch", `{"inputs": {"tier": "scale", "duration": "5s"}}`, []string{"RATE_AGENT_STORM=30"},
		"--job", "loadtest", "--matrix", "scenarios:agent_storm")
	if r.code != 0 {
		t.Fatalf("act exited %d; want 0:\n%s", r.code, r.output)
	}
	if regexp.MustCompile(`\[loadtest/tiers [^]]*\]\s+⭐ Run`).MatchString(r.output) {
		t.Errorf("the tiers' job ran on tier=scale:\n%s", r.output)
	}
	_, s := artifact(t, r, r.runIDOf("scale-agent-storm"), completeRun...)
	if !s.Passed {
		t.Errorf("agent_storm: exit code %d, want a passed run", s.ExitCode)
	}
	if len(s.Scenarios) != 1 || s.Scenarios[0].Record == nil || s.Scenarios[0].Record.TargetRatePerS != 30 {
		t.Errorf("agent_storm did not run at the RATE_AGENT_STORM the job's environment gave it: %+v", s.Scenarios)
	}
	if want := "make loadtest-scale TIER=scale SCENARIOS=agent_storm "; !strings.HasPrefix(s.Run.Command, want) {
		t.Errorf("run.json command %q, want it to start with %q", s.Run.Command, want)
	}
	if strings.Contains(s.Run.Command, "CERTCTL_IMAGE=") {
		t.Errorf("run.json command %q: CERTCTL_IMAGE set with no input and no variable", s.Run.Command)
	}
}

// Both schedules with a malformed duration: Monday's plan has a job for TIER=all and one for each scale
// scenario (k6/scale/*.js), Thursday's one for each deploy and PKI scenario, the limiter tier and the spot
// checks (TestPlan holds the plan itself). Every job stops with the harness's sentence before any image
// or stack: the tiers' at "Check the inputs", the spot checks' (no plan to check) at their run, which
// refuses it before it starts; with no run, nothing is uploaded.
func TestScheduleRefusesBadInputEarly(t *testing.T) {
	t.Parallel()
	for _, sched := range []struct {
		cron string
		jobs []string
	}{
		{"17 5 * * 1", append([]string{"tiers all"}, prefixed("scale ", scenariosOf(t, "scale"))...)},
		{"17 5 * * 4", append(append(append(prefixed("deploy ", scenariosOf(t, "deploy")), prefixed("pki ", scenariosOf(t, "pki"))...),
			prefixed("auth ", scenariosOf(t, "auth"))...), "tiers limiter", "spotcheck")},
	} {
		t.Run(sched.cron, func(t *testing.T) {
			if testing.Short() && sched.cron != "17 5 * * 1" {
				// Sixteen jobs, two minutes of act: the gate's live test of the schedule's early refusal
				// is Monday's; Thursday's (the spot checks' refusal at their run among them) is the full suite's.
				t.Skip("full suite: Thursday's sixteen jobs")
			}
			t.Parallel()
			r := runAct(t, "schedule", fmt.Sprintf(`{"schedule": %q}`, sched.cron), []string{"DURATION=5x"})
			if r.code == 0 {
				t.Fatalf("act exited 0 with DURATION=5x:\n%s", r.output)
			}
			for _, job := range sched.jobs {
				if job != "spotcheck" {
					wantOutput(t, r, `\[loadtest/`+job+`[^]]*\]\s+❌  Failure - Main Check the inputs`)
				}
				wantOutput(t, r, `\[loadtest/`+job+`[^]]*\]\s+✅  Success - Main Write the job summary`)
				wantOutput(t, r, `\[loadtest/`+job+`[^]]*\]\s+❌  Failure - Main Verdict`)
			}
			if n := strings.Count(r.output, "⭐ Run Main Check the inputs"); n != len(sched.jobs) {
				t.Errorf("%d jobs checked their inputs; want one for each of %q", n, sched.jobs)
			}
			// What the steps print is required once, not once per job: see wantOutput.
			wantOutput(t, r, `loadtest: DURATION="5x" is not a duration`)
			wantOutput(t, r, `::error title=loadtest [a-z_]+::bin/loadtest run exited nothing`)
			if slices.Contains(sched.jobs, "spotcheck") {
				wantOutput(t, r, `::error title=loadtest [a-z_]+::bin/loadtest spotcheck exited 2`)
			}
			if strings.Contains(r.output, "loadtest: results in") {
				t.Errorf("a run started despite the malformed duration:\n%s", r.output)
			}
			noArtifacts(t, r)
		})
	}
}

func prefixed(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}

// .github/dependabot.yml parses, updates both ecosystems weekly (gomod at the root, where go.mod is) and
// watches every place that uses an action: "/" (.github/workflows) when a workflow does, and each
// directory whose action.yml does. A listed directory that holds no action is refused too: Dependabot
// fails on it.
func TestDependabot(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(root, ".github", "dependabot.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int `yaml:"version"`
		Updates []struct {
			Ecosystem   string   `yaml:"package-ecosystem"`
			Directory   string   `yaml:"directory"`
			Directories []string `yaml:"directories"`
			Schedule    struct {
				Interval string `yaml:"interval"`
			} `yaml:"schedule"`
		} `yaml:"updates"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf(".github/dependabot.yml: %v", err)
	}
	if cfg.Version != 2 {
		t.Errorf("version %d, want 2", cfg.Version)
	}
	listed := map[string][]string{}
	for _, u := range cfg.Updates {
		if u.Schedule.Interval != "weekly" {
			t.Errorf("%s: schedule %q, want weekly", u.Ecosystem, u.Schedule.Interval)
		}
		if (u.Directory == "") == (len(u.Directories) == 0) {
			t.Errorf("%s: give one of directory and directories", u.Ecosystem)
		}
		listed[u.Ecosystem] = append(listed[u.Ecosystem], append(u.Directories, u.Directory)...)
	}
	if !slices.Contains(listed["gomod"], "/") {
		t.Errorf("gomod updates cover %q; want the root go.mod (/)", listed["gomod"])
	}

	var want []string
	usesActions := func(path string) bool {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return usesRE.Match(b)
	}
	workflows, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.y*ml"))
	if slices.ContainsFunc(workflows, usesActions) {
		want = append(want, "/")
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || path == filepath.Join(root, "results") || path == filepath.Join(root, "bin")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && (d.Name() == "action.yml" || d.Name() == "action.yaml") && usesActions(path) {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			want = append(want, "/"+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(want, "/.github/actions/loadtest") {
		t.Errorf("found actions used in %q; want .github/actions/loadtest among them (is the walk broken?)", want)
	}
	for _, dir := range want {
		if !slices.Contains(listed["github-actions"], dir) {
			t.Errorf("github-actions updates cover %q; %s uses actions and is not among them", listed["github-actions"], dir)
		}
	}
	for _, dir := range listed["github-actions"] {
		if dir != "" && !slices.Contains(want, dir) {
			t.Errorf("github-actions updates list %s, which holds no workflow or action that uses an action", dir)
		}
	}
}
