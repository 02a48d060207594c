// Package workflow runs .github/workflows/loadtest.yml, unchanged, on this host with act (nektos/act,
// pinned in tools/act): the jobs' own steps, expressions, conditions, outputs and matrix, with no job
// container (the self-hosted platform). GitHub's three actions are replaced by the stand-ins in
// actions/, and an env file switches the run to the offline images and to the real certctl build in
// CERTCTL_DIST (packaged by the harness), which is all that differs from a GitHub runner. What act cannot show: the real actions, artifact storage, the
// concurrency group, permissions and the job summary page (act writes $GITHUB_STEP_SUMMARY to a file
// it deletes; internal/report's golden files pin what `bin/loadtest report --format markdown` writes
// into it).
package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/report"
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
	bin, err := os.MkdirTemp("", "loadtest-act-")
	if err != nil {
		panic(err)
	}
	act = filepath.Join(bin, "act")
	build := exec.Command("go", "-C", filepath.Join(root, "tools", "act"), "build", "-o", act, "github.com/nektos/act")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building act: %v\n%s", err, out)
		os.Exit(1)
	}
	if os.Getenv("CERTCTL_DIST") == "" {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "workflow: CERTCTL_DIST is not set: CI must run the workflow against a real certctl build, not skip it")
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "workflow: skipped: CERTCTL_DIST is not set. The workflow's jobs run against a real certctl; "+
			"point CERTCTL_DIST at a certctl build (server, agent, migrations/, LICENSE) to run them.")
		os.Exit(0)
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		fmt.Fprintln(os.Stderr, "workflow: the Docker engine is not reachable; start dockerd (these tests do not skip)")
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(bin)
	os.Exit(code)
}

type actRun struct {
	code    int
	output  string
	sink    string // where the upload-artifact stand-in put the artifacts
	elapsed time.Duration
}

// usesRE finds the workflow's actions: every one must be pinned to a commit and have a stand-in.
var usesRE = regexp.MustCompile(`uses:\s*([\w.-]+)/([\w.-]+)@(\S+)`)

// runAct runs act on the workflow for one event, with env on top of the switch to offline images and the
// real certctl build, and returns what it printed and uploaded.
func runAct(t *testing.T, event string, payload string, env []string, args ...string) actRun {
	t.Helper()
	return runActWith(t, hostEnv(), event, payload, env, args...)
}

func runActWith(t *testing.T, host []string, event string, payload string, env []string, args ...string) actRun {
	t.Helper()
	tmp := t.TempDir()
	sink := filepath.Join(tmp, "artifacts")
	eventFile := filepath.Join(tmp, "event.json")
	if err := os.WriteFile(eventFile, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	// act reads the repository's .env by default, and that is compose's file of image pins: they would
	// override images/offline.env. An env file of our own keeps it out.
	envFile := filepath.Join(tmp, "act.env")
	lines := append([]string{
		"IMAGES=offline", "ACT_ARTIFACT_SINK=" + sink,
		// Absolute: the job runs in a copy of the working tree.
		"CERTCTL_DIST=" + dist(),
	}, env...)
	if err := os.WriteFile(envFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{event, "--workflows", workflow, "--eventpath", eventFile,
		"-P", "ubuntu-24.04=-self-hosted", "--action-cache-path", filepath.Join(tmp, "cache"),
		"--env-file", envFile, "--var-file", os.DevNull, "--secret-file", os.DevNull, "--input-file", os.DevNull}
	flags = append(flags, standIns(t)...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, act, append(flags, args...)...)
	cmd.Dir = root
	cmd.Env = host
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := actRun{output: out.String(), sink: sink, elapsed: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("act: %v\n%s", err, r.output)
	}
	t.Logf("act %s %s: exit %d in %s", event, strings.Join(args, " "), r.code, r.elapsed.Round(time.Millisecond))
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

// standIns maps each action the workflow uses, at its pinned commit, to the stand-in of the same name.
func standIns(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, workflow))
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	seen := map[string]bool{}
	for _, m := range usesRE.FindAllStringSubmatch(string(b), -1) {
		ref := m[1] + "/" + m[2] + "@" + m[3]
		if seen[ref] {
			continue
		}
		seen[ref] = true
		if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(m[3]) {
			t.Fatalf("%s: %s is not pinned to a commit", workflow, ref)
		}
		dir := filepath.Join(root, "test", "workflow", "actions", m[2])
		if _, err := os.Stat(filepath.Join(dir, "action.yml")); err != nil {
			t.Fatalf("%s uses %s, which has no stand-in in %s", workflow, ref, dir)
		}
		flags = append(flags, "--local-repository", ref+"="+dir)
	}
	if len(flags) == 0 {
		t.Fatalf("no actions found in %s", workflow)
	}
	return flags
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

// artifact reads the summary.json of the one artifact whose name starts with prefix.
func artifact(t *testing.T, r actRun, prefix string) (dir string, summary report.Summary) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(r.sink, prefix+"*"))
	var dirs []string
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && fi.IsDir() {
			dirs = append(dirs, m)
		}
	}
	if len(dirs) != 1 {
		t.Fatalf("want one artifact named %s*, have %v; act printed:\n%s", prefix, dirs, r.output)
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "summary.json"))
	if err != nil {
		t.Fatalf("artifact %s: %v", dirs[0], err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	inputs, err := os.ReadFile(dirs[0] + ".inputs")
	if err != nil || !strings.Contains(string(inputs), "retention-days=90\n") {
		t.Errorf("artifact %s: uploaded with %q (%v), want a 90-day retention", dirs[0], inputs, err)
	}
	for _, want := range []string{"summary.txt", "run.json", "dashboard/*.html", "raw/*.json.gz", "logs/stack.log"} {
		if m, _ := filepath.Glob(filepath.Join(dirs[0], want)); len(m) == 0 {
			t.Errorf("artifact %s has no %s", dirs[0], want)
		}
	}
	return dirs[0], summary
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

const apiInputs = `{"inputs": {"tier": "api", "duration": "5s"}}`

// The tiers' job, dispatched for the API tier: a green run passes the job and uploads its results; a
// run that breaches thresholds fails the job at its last step, after the upload.
func TestDefaultJob(t *testing.T) {
	t.Parallel()
	t.Run("green", func(t *testing.T) {
		r := runAct(t, "workflow_dispatch", apiInputs, nil, "--job", "loadtest")
		if r.code != 0 {
			t.Fatalf("act exited %d; want 0:\n%s", r.code, r.output)
		}
		wantOutput(t, r, `::set-output:: code=0`)
		for _, step := range []string{"Build the harness", "Check the inputs", "Run the load test", "Locate the results",
			"Upload the results", "Write the job summary", "Verdict"} {
			wantOutput(t, r, `⭐ Run Main `+regexp.QuoteMeta(step)+`\n`)
		}
		wantOutput(t, r, `\[loadtest/tiers api[^]]*\]\s+✅  Success - Main Write the job summary`)
		// Every stack needs netguard's (stack-net: no route out); the API tier needs no other of ours.
		if m := regexp.MustCompile(`building our own images: (.*)`).FindStringSubmatch(r.output); m != nil && strings.TrimSpace(m[1]) != "stack-net" {
			t.Errorf("images of ours built for the API tier: %s; it needs stack-net's only", m[1])
		}
		if _, s := artifact(t, r, "loadtest-api-"); !s.Passed || s.ExitCode != 0 {
			t.Errorf("summary.json: passed %v, exit code %d; want a passed run", s.Passed, s.ExitCode)
		}
	})
	t.Run("thresholds breached", func(t *testing.T) {
		r := runAct(t, "workflow_dispatch", apiInputs,
			[]string{"FAULT_LATENCY=3s", "FAULT_ROUTE=GET /api/v1/certificates$"}, "--job", "loadtest")
		if r.code == 0 {
			t.Fatalf("act exited 0 for a run that breached thresholds:\n%s", r.output)
		}
		wantOutput(t, r, `::set-output:: code=99`)
		// act's own line: the step's ::error line can be lost (see wantOutput).
		wantOutput(t, r, `❌  Failure - Main Verdict`)
		wantOutput(t, r, `✅  Success - Main Write the job summary`)
		if _, s := artifact(t, r, "loadtest-api-"); s.Passed || s.ExitCode != 99 {
			t.Errorf("summary.json: passed %v, exit code %d; want 99", s.Passed, s.ExitCode)
		}
	})
}

// The connector tier's run builds the F5 stand-in from its Dockerfile itself (no step of the workflow
// does, and no root is needed) before the load.
func TestConnectorTierBuildsTheF5Image(t *testing.T) {
	t.Parallel()
	r := runAct(t, "workflow_dispatch", `{"inputs": {"tier": "connector", "duration": "5s"}}`, nil, "--job", "loadtest")
	if r.code != 0 {
		t.Fatalf("act exited %d; want 0:\n%s", r.code, r.output)
	}
	wantOutput(t, r, `loadtest: building our own images: f5\b`)
	if _, s := artifact(t, r, "loadtest-connector-"); !s.Passed {
		t.Errorf("connector tier: exit code %d, want a passed run", s.ExitCode)
	}
}

// One scale scenario's job, dispatched with tier=scale: the tiers' job stays out, the matrix entry sets
// SCENARIOS, the run records the make target that repeats it, and the artifact is named after the
// scenario.
func TestScaleJob(t *testing.T) {
	t.Parallel()
	r := runAct(t, "workflow_dispatch", `{"inputs": {"tier": "scale", "duration": "5s"}}`, nil,
		"--job", "loadtest", "--matrix", "scenarios:agent_storm")
	if r.code != 0 {
		t.Fatalf("act exited %d; want 0:\n%s", r.code, r.output)
	}
	if regexp.MustCompile(`\[loadtest/tiers [^]]*\]\s+⭐ Run`).MatchString(r.output) {
		t.Errorf("the tiers' job ran on tier=scale:\n%s", r.output)
	}
	_, s := artifact(t, r, "loadtest-scale-agent_storm-")
	if !s.Passed {
		t.Errorf("agent_storm: exit code %d, want a passed run", s.ExitCode)
	}
	if want := "make loadtest-scale TIER=scale SCENARIOS=agent_storm "; !strings.HasPrefix(s.Run.Command, want) {
		t.Errorf("run.json command %q, want it to start with %q", s.Run.Command, want)
	}
}

// The weekly schedule with a malformed duration: the plan has a job for every tier but scale and one
// for each scale scenario (k6/scale/*.js), and every one stops at "Check the inputs" with the
// harness's sentence, before any image or stack.
func TestScheduleRefusesBadInputEarly(t *testing.T) {
	t.Parallel()
	r := runAct(t, "schedule", `{}`, []string{"DURATION=5x"})
	if r.code == 0 {
		t.Fatalf("act exited 0 with DURATION=5x:\n%s", r.output)
	}
	jobs := []string{"tiers all"}
	scale, _ := filepath.Glob(filepath.Join(root, "k6", "scale", "*.js"))
	for _, f := range scale {
		jobs = append(jobs, "scale "+strings.TrimSuffix(filepath.Base(f), ".js"))
	}
	if len(scale) == 0 {
		t.Fatal("no scale scenarios under k6/scale/")
	}
	for _, job := range jobs {
		wantOutput(t, r, `\[loadtest/`+job+`[^]]*\]\s+❌  Failure - Main Check the inputs`)
		wantOutput(t, r, `\[loadtest/`+job+`[^]]*\]\s+❌  Failure - Main Verdict`)
	}
	// What the steps print is required once, not once per job: see wantOutput.
	wantOutput(t, r, `loadtest: DURATION="5x" is not a duration`)
	wantOutput(t, r, `::error title=loadtest (all|[a-z_]+)::bin/loadtest run exited nothing`)
	if strings.Contains(r.output, "loadtest: results in") {
		t.Errorf("a run started despite the malformed duration:\n%s", r.output)
	}
}
