package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/capacity"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/testbed"
)

// root is the repository: the commands read k6/ and docker-compose.yml from it.
var root, _ = filepath.Abs("../..")

type outcome struct {
	code           int
	stdout, stderr string
	calls          []string
}

// mainWith runs the command with env as its environment and exec as its only way out.
func mainWith(t *testing.T, args []string, env map[string]string, exec harness.Executor) outcome {
	t.Helper()
	return mainIn(t, root, args, env, exec)
}

// mainIn is mainWith from another repository root ("": outside any clone).
func mainIn(t *testing.T, dir string, args []string, env map[string]string, exec harness.Executor) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	var o outcome
	if exec == nil {
		exec = func(_ context.Context, c harness.Cmd) (int, error) {
			o.calls = append(o.calls, c.Name+" "+strings.Join(c.Args, " "))
			return 1, nil
		}
	}
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	o.code = Main(context.Background(), Env{
		Args: args, Getenv: func(k string) string { return env[k] }, Environ: environ, Stdout: &stdout, Stderr: &stderr,
		Root: dir, Exec: exec, Now: func() time.Time { return time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC) },
	})
	o.stdout, o.stderr = stdout.String(), stderr.String()
	return o
}

// Bad input exits 2 with a sentence, before anything runs.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no command", nil, nil, "usage:"},
		{"an argument to run", []string{"run", "--tier", "api"}, nil, `run: takes no arguments (got "--tier api"): set its configuration in the environment`},
		{"an argument to check", []string{"check", "now"}, nil, `check: takes no arguments`},
		{"a mistyped rate", []string{"check"}, map[string]string{"RATE_LIST_CERTIFICATE": "20"}, `RATE_LIST_CERTIFICATE: no scenario is called list_certificate; did you mean RATE_LIST_CERTIFICATES?`},
		{"a mistyped scenario", []string{"check"}, map[string]string{"SCENARIOS": "list_certs"}, `no scenario "list_certs" in the selected tiers (did you mean list_certificates?)`},
		{"unknown command", []string{"attack"}, nil, `unknown command "attack"`},
		{"unknown tier", []string{"run"}, map[string]string{"TIER": "nope"}, `unknown tier "nope"`},
		{"malformed duration", []string{"run"}, map[string]string{"DURATION": "5x"}, `DURATION="5x" is not a duration`},
		{"malformed duration, spot checks", []string{"spotcheck"}, map[string]string{"DURATION": "1m30"}, `DURATION="1m30" is not a duration`},
		{"malformed rate", []string{"check"}, map[string]string{"RATE_LIST_CERTIFICATES": "fast"}, `RATE_LIST_CERTIFICATES="fast" must be a positive whole number`},
		{"malformed growth sizes", []string{"growth"}, map[string]string{"GROWTH_SIZES": "1k,10k"}, `growth: GROWTH_SIZES="1k,10k": certificates per size, whole numbers ≥ 1, comma-separated`},
		{"a fleet file that is not there", []string{"fleet"}, map[string]string{"FLEET": "fleets/nope.yaml"}, `fleet: FLEET=fleets/nope.yaml: open`},
		{"a fleet file without its peak", []string{"fleet"}, map[string]string{"FLEET": "internal/cli/testdata/fleet-no-peak.yaml"}, `fleet: internal/cli/testdata/fleet-no-peak.yaml: missing peak_factor`},
		{"a fleet's malformed step", []string{"fleet"}, map[string]string{"FLEET_STEP": "2"}, `fleet: FLEET_STEP="2" is not a duration`},
		{"a fleet bracketed twice", []string{"fleet"}, map[string]string{"FLEET_BRACKET": "1000,2000", "FLEET_GROWTH": "docs/growth/v2.1.7.json"}, `FLEET_GROWTH and FLEET_BRACKET each set the bracket: give one`},
		{"a fleet bracket upside down", []string{"fleet"}, map[string]string{"FLEET_BRACKET": "5000,2000"}, `FLEET_BRACKET="5000,2000": two sizes in certificates, the smaller first`},
		{"a fleet bracket above its most", []string{"fleet"}, map[string]string{"FLEET_BRACKET": "5000,20000", "FLEET_MAX": "5000"}, `the bracket 5,000–5,000 does not fit under FLEET_MAX=5,000`},
		{"a fleet's run ID too long for its runs", []string{"fleet"}, map[string]string{"RUN_ID": "a-fleet-run-id-of-thirty-letters"}, `RUN_ID="a-fleet-run-id-of-thirty-letters": at most 28 characters here`},
		{"a fleet resumed without its run", []string{"fleet"}, map[string]string{"FLEET_RESUME": "1"}, `FLEET_RESUME=1 needs RUN_ID: the search to go on with`},
		{"a fleet resumed by another word", []string{"fleet"}, map[string]string{"FLEET_RESUME": "yes", "RUN_ID": "fleet20-main"}, `FLEET_RESUME="yes": 1 goes on with the search RUN_ID names, unset starts one`},
		{"a fleet resumed from no record", []string{"fleet"}, map[string]string{"FLEET_RESUME": "1", "RUN_ID": "no-such-search", "RESULTS_DIR": "/nonexistent"}, `FLEET_RESUME=1: open /nonexistent/no-such-search/fleet.json: no such file`},
		{"a fleet bracketed by no growth record", []string{"fleet"}, map[string]string{"FLEET_GROWTH": "fleets/example.yaml"}, `fleet: FLEET_GROWTH=fleets/example.yaml: not a growth record`},
		{"soak window too short", []string{"soak"}, map[string]string{"SOAK_WINDOW": "5s"}, `soak: SOAK_WINDOW="5s": a duration of at least 10s`},
		{"soak drift budget of 1", []string{"soak"}, map[string]string{"SOAK_P95_DRIFT": "1"}, `soak: SOAK_P95_DRIFT="1": the most the p95 may grow over the run, a ratio above 1`},
		{"soak memory budget", []string{"soak"}, map[string]string{"SOAK_MEMORY_GROWTH": "-3"}, `soak: SOAK_MEMORY_GROWTH="-3"`},
		{"soak too short for its windows", []string{"soak"}, map[string]string{"DURATION": "12m"}, `soak: DURATION=12m in windows of SOAK_WINDOW=5m0s is 2 window(s): a drift needs four at least`},
		{"unknown inventory audit", []string{"check"}, map[string]string{"SEED_INVENTORY_AUDIT": "some"}, `SEED_INVENTORY_AUDIT="some": all (every audit row a year leaves), service (without the API middleware's) or none`},
		{"malformed inventory", []string{"check"}, map[string]string{"SEED_INVENTORY": "lots"}, `SEED_INVENTORY="lots" must be a whole number of rows`},
		{"report of two directories", []string{"report", "a", "b"}, nil, "report: takes one run directory (got 2 arguments: a b)\nusage: loadtest report [--write] [run-dir]"},
		{"report in an unknown format", []string{"report", "--format", "html", "results/latest"}, nil, `report: --format "html": use text, markdown or junit`},
		{"report of no run", []string{"report", t.TempDir()}, nil, "is not a run directory"},
		{"scale with another tier", []string{"run"}, map[string]string{"TIER": "scale,api"}, "TIER=scale,api: the scale tier's scenarios run one after another, each on a stack of its own: run the other tiers separately"},
		{"scale, a run ID too long for its scenarios", []string{"run"}, map[string]string{"TIER": "scale", "RUN_ID": "a-run-id-of-thirty-one-letters"}, `acme_burst: RUN_ID="a-run-id-of-thirty-one-letters-acme-burst": use lower-case letters, digits and dashes, at most 40`},
		{"overhead of an unknown instrument", []string{"overhead"}, map[string]string{"OVERHEAD": "collector,dashboard"}, `OVERHEAD="collector,dashboard": a list of collector, containers, statements, progress, all, each once`},
		{"overhead of one run a side", []string{"overhead"}, map[string]string{"OVERHEAD_RUNS": "1"}, `OVERHEAD_RUNS="1": runs a side, 2 to 20`},
		{"overhead without its baseline", []string{"overhead"}, map[string]string{"PG_STAT_STATEMENTS": "false"}, `DIAGNOSIS=true PG_STAT_STATEMENTS=false PROGRESS_INTERVAL=20s switch an instrument off in every run`},
		{"overhead of a sequence", []string{"overhead"}, map[string]string{"TIER": "scale"}, `TIER=scale runs its scenarios one after another, each a run of its own`},
		{"overhead with an argument", []string{"overhead", "now"}, nil, `overhead: takes no arguments (got "now")`},
		{"overhead of a bad run", []string{"overhead"}, map[string]string{"DURATION": "5x"}, `DURATION="5x" is not a duration`},
		{"findings of an unknown one", []string{"findings", "--only", "ocsp-50"}, nil, `findings --only: no finding "ocsp-50" (did you mean ocsp-500?)`},
		{"an issue of an unknown finding", []string{"findings", "--issue", "create-5OO"}, nil, `findings --issue: no finding "create-5OO" (did you mean create-500?)`},
		{"findings with an argument", []string{"findings", "all"}, nil, "findings: takes no arguments but its flags (got \"all\")\nusage: loadtest findings [--only id,...]"},
		{"a measurement of nothing known", []string{"findings", "--measure", "serial-no-idx"}, nil, `findings --measure: no measurement "serial-no-idx" in docs/findings/cost (did you mean serial-no-index?)`},
		{"a gate without a candidate", []string{"gate"}, nil, `gate: --candidate is required: the certctl build to judge`},
		{"a gate of a missing build", []string{"gate", "--candidate", "/nonexistent/build"}, nil, `gate: --candidate: /nonexistent/build is neither a build directory nor an image reference`},
		{"a gate of a directory that is no build", []string{"gate", "--candidate", "."}, nil, `gate: --candidate: . is a directory without certctl's server`},
		{"a gate's knob that is none", []string{"gate", "--candidate", "x/y:1", "--candidate-knob", "FAULT_LATNCY=1s"}, nil, `FAULT_LATNCY is not a knob of the harness`},
		{"a gate of no runs", []string{"gate", "--candidate", "x/y:1", "--runs", "0"}, nil, `gate: --runs 0: runs a side, 1 to 20`},
		{"a gate with an argument", []string{"gate", "x/y:1"}, nil, `gate: takes no arguments (got "x/y:1")`},
		{"a gate's bad load", []string{"gate", "--candidate", "x/y:1"}, map[string]string{"DURATION": "5x"}, `gate: reference: DURATION="5x" is not a duration`},
		{"a gate's run ID too long for its runs", []string{"compare-builds", "--candidate", "x/y:1"}, map[string]string{"RUN_ID": "a-run-id-of-thirty-eight-letters-long-x"}, `at most 37 characters here (each run adds -r1, -c1, …)`},
		{"two asks of findings", []string{"findings", "--measure", "serial-no-index", "--issue", "ocsp-500"}, nil, `--only, --issue and --measure each ask for something else: give one`},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := mainWith(t, c.args, c.env, nil)
			if o.code != results.ExitBadInput {
				t.Errorf("exit %d, want %d", o.code, results.ExitBadInput)
			}
			if !strings.Contains(o.stderr, c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, o.stderr)
			}
			if len(o.calls) > 0 {
				t.Errorf("ran %q on bad input", o.calls)
			}
		})
	}
}

// check prints the plan from k6 inspect of each selected script, run with the caller's environment.
func TestCheck(t *testing.T) {
	inspect := func(_ context.Context, c harness.Cmd) (int, error) {
		script := c.Args[len(c.Args)-1]
		if c.Name != "go" || !slices.Contains(c.Args, "DURATION=30s") {
			t.Errorf("%s %v: want go tool k6 inspect with the run's environment", c.Name, c.Args)
		}
		name := strings.TrimSuffix(filepath.Base(script), ".js")
		start := map[string]string{"list_certificates": `,"startTime":"5s"`}[name]
		fmt.Fprintf(c.Stdout, `{"scenarios":{"%s":{"executor":"constant-arrival-rate","rate":50,"timeUnit":"1s","duration":"30s","preAllocatedVUs":50,"maxVUs":300%s}},"thresholds":{}}`, name, start)
		return 0, nil
	}
	o := mainWith(t, []string{"check"}, map[string]string{"TIER": "api", "DURATION": "30s"}, inspect)
	pins, err := harness.ReadEnvFile(filepath.Join(root, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	want := `ok: tiers api, 2 scenarios, certctl ` + pins["CERTCTL_IMAGE"] + `, duration 30s
images: k6 ` + pins["IMAGE_K6"] + `, postgres ` + pins["IMAGE_POSTGRES"] + ` (IMAGES=upstream)

scenario             tier  executor               load  starts at  duration  VUs pre/max
issuance_acceptance  api   constant-arrival-rate  50/s  0s         30s       50/300
list_certificates    api   constant-arrival-rate  50/s  5s         30s       50/300

load: 35s from the first k6 start, all scenarios at once; add the stack's start (tens of seconds), setup and up to 15 s of graceful stop
`
	if o.code != 0 || o.stdout != want {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", o.code, o.stderr, o.stdout, want)
	}
	// A script k6 cannot load is bad input, found here rather than minutes into a run.
	o = mainWith(t, []string{"check"}, map[string]string{"TIER": "api"}, func(_ context.Context, c harness.Cmd) (int, error) {
		fmt.Fprint(c.Stderr, "SyntaxError: Unexpected token")
		return 107, nil
	})
	if o.code != results.ExitBadInput || !strings.Contains(o.stderr, "k6 inspect k6/api/issuance_acceptance.js: exit 107: SyntaxError: Unexpected token") {
		t.Errorf("a broken script: exit %d, stderr %q", o.code, o.stderr)
	}
}

// K6_BIN is used for the plan's k6 inspect when it is go.mod's k6, and refused with a sentence when it is
// another (CI's jobs install k6 rather than compile it).
func TestCheckWithK6Bin(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	pin := regexp.MustCompile(`go\.k6\.io/k6/v\d+ v(\S+)`).FindSubmatch(mod)[1]
	for _, c := range []struct{ version, want string }{
		{"k6 v" + string(pin) + " (commit/0123456789, go1.26.8, linux/amd64)", ""},
		{"k6 v1.4.0 (commit/0123456789, go1.25.1, linux/amd64)", "K6_BIN=/opt/k6/k6 is \"k6 v1.4.0 (commit/0123456789, go1.25.1, linux/amd64)\", but go.mod pins k6 v" + string(pin) + ": install that version (or unset K6_BIN to use go tool k6)"},
	} {
		var calls []string
		o := mainWith(t, []string{"check"}, map[string]string{"TIER": "api", "K6_BIN": "/opt/k6/k6"}, func(_ context.Context, cmd harness.Cmd) (int, error) {
			calls = append(calls, cmd.Name+" "+strings.Join(cmd.Args, " "))
			if cmd.Name != "/opt/k6/k6" {
				t.Errorf("ran %s %v; want K6_BIN", cmd.Name, cmd.Args)
			}
			if cmd.Args[0] == "version" {
				fmt.Fprintln(cmd.Stdout, c.version)
				return 0, nil
			}
			name := strings.TrimSuffix(filepath.Base(cmd.Args[len(cmd.Args)-1]), ".js")
			fmt.Fprintf(cmd.Stdout, `{"scenarios":{"%s":{"executor":"constant-arrival-rate","rate":50,"timeUnit":"1s","duration":"30s","preAllocatedVUs":50,"maxVUs":300}},"thresholds":{}}`, name)
			return 0, nil
		})
		if c.want == "" {
			if o.code != 0 || len(calls) != 3 || calls[0] != "/opt/k6/k6 version" || !strings.HasPrefix(calls[1], "/opt/k6/k6 inspect") {
				t.Errorf("K6_BIN of go.mod's version: exit %d, stderr %q, calls %q; want version once, then inspect per scenario", o.code, o.stderr, calls)
			}
			continue
		}
		if o.code != results.ExitBadInput || !strings.Contains(o.stderr, c.want) || len(calls) != 1 {
			t.Errorf("K6_BIN of another version: exit %d, calls %q, stderr %q; want exit 2 saying %q", o.code, calls, o.stderr, c.want)
		}
	}
}

// `run` hands the configuration to the harness with the injected runner: an engine that does not
// answer is the environment's fault (3), and no results directory is left.
func TestRunThroughTheInjectedRunner(t *testing.T) {
	dir := t.TempDir()
	o := mainWith(t, []string{"run"}, map[string]string{"TIER": "api", "RESULTS_DIR": dir, "RUN_ID": "cli-1"}, nil)
	if o.code != results.ExitEnvironment || !strings.Contains(o.stderr, "cannot reach the Docker engine") {
		t.Errorf("exit %d, stderr:\n%s", o.code, o.stderr)
	}
	if !slices.ContainsFunc(o.calls, func(c string) bool { return strings.HasPrefix(c, "docker ") }) {
		t.Errorf("commands %q: want docker's, through Env.Exec", o.calls)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("results directory holds %v", entries)
	}
}

// saveRun lays out a finished run as `loadtest run` leaves it: run.json, the records, summary.json.
func saveRun(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "20261122-150000-ab12")
	src := filepath.Join(root, "internal", "report", "testdata")
	for _, f := range []string{"run.json", "scenarios/issuance_acceptance.json", "scenarios/list_certificates.json"} {
		copyFile(t, filepath.Join(src, name, f), filepath.Join(dir, f))
	}
	copyFile(t, filepath.Join(src, name+".summary.json"), filepath.Join(dir, "summary.json"))
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// report prints and exits with the run's verdict; it writes nothing unless asked (--write).
func TestReportText(t *testing.T) {
	dir := saveRun(t, "run-failed")
	os.Remove(filepath.Join(dir, "summary.json"))
	// A downloaded artifact may be read-only: reading it must still work.
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	o := mainWith(t, []string{"report", dir}, nil, nil)
	if o.code != 99 || !strings.HasPrefix(o.stdout, "certctl-loadtest run 20261122-150000-ab12: FAILED (exit 99)\n") {
		t.Fatalf("exit %d, want 99; stdout:\n%s\nstderr:\n%s", o.code, o.stdout, o.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
		t.Error("report wrote summary.json without --write")
	}
	os.Chmod(dir, 0o755)
	o = mainWith(t, []string{"report", "--write", dir}, nil, nil)
	if o.code != 99 {
		t.Errorf("--write: exit %d", o.code)
	}
	for _, f := range []string{"summary.json", "summary.txt", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("--write: %s not rewritten: %v", f, err)
		}
	}
	// As JUnit XML, with the run's code: what junit.xml holds.
	o = mainWith(t, []string{"report", "--format", "junit", dir}, nil, nil)
	written, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if o.code != 99 || o.stdout != string(written) || !strings.Contains(o.stdout, `<testsuites name="certctl-loadtest run 20261122-150000-ab12: FAILED (exit 99)"`) {
		t.Errorf("--format junit: exit %d, stdout:\n%s", o.code, o.stdout)
	}
}

// The job summary exits 0 whatever it finds: the workflow's last step carries the verdict.
func TestReportMarkdown(t *testing.T) {
	run := saveRun(t, "run-failed")
	latest := filepath.Join(filepath.Dir(run), "latest")
	if err := os.Symlink(filepath.Base(run), latest); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"a finished run", []string{latest, "0"}, []string{
			"## certctl load test: FAILED (exit 99)\n\n**Exit 99**: thresholds were breached. (`bin/loadtest run` itself exited 0.)\n",
			"| list_certificates | api | 50/s |", "**Thresholds that broke**", "```text\ncertctl-loadtest run 20261122-150000-ab12: FAILED (exit 99)\n",
			"<details><summary>Files of run 20261122-150000-ab12 (in the artifact)</summary>", "- `scenarios/list_certificates.json`\n"}},
		{"no directory", []string{filepath.Join(run, "missing"), "2"}, []string{
			"## certctl load test: FAILED (exit 2)\n", "`" + filepath.Join(run, "missing") + "` does not exist"}},
		{"never ran", []string{"", ""}, []string{"## certctl load test: FAILED (exit unknown)\n", "no code was recorded"}},
		{"no exit code given", []string{run}, []string{"## certctl load test: FAILED (exit 99)\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := mainWith(t, append([]string{"report", "--format", "markdown"}, c.args...), nil, nil)
			if o.code != 0 || o.stderr != "" {
				t.Errorf("exit %d, stderr %q", o.code, o.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(o.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, o.stdout)
				}
			}
		})
	}
	// The job summary reads the run; it rewrites nothing.
	if _, err := os.Stat(filepath.Join(run, "summary.txt")); err == nil {
		t.Error("report --format markdown wrote summary.txt")
	}
}

func TestCommandLine(t *testing.T) {
	environ := []string{"LOADTEST_GOAL=loadtest-scale", "TIER=scale", "SCENARIOS=agent_storm", "FAULT_BODY_RATE=0.5", "PATH=/bin", "RUN_ID=x"}
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	got := commandLine("run", func(k string) string { return env[k] }, environ)
	if want := "make loadtest-scale TIER=scale SCENARIOS=agent_storm FAULT_BODY_RATE=0.5"; got != want {
		t.Errorf("commandLine = %q, want %q", got, want)
	}
	environ = []string{"TIER=pki", "ACME_FINALIZE_WORKAROUND=1", "OCSP_RESPONDER_WORKAROUND=1", "DURATION=5m"}
	if got, want := commandLine("run", func(string) string { return "" }, environ), "loadtest run TIER=pki ACME_FINALIZE_WORKAROUND=1 OCSP_RESPONDER_WORKAROUND=1"; got != want {
		t.Errorf("commandLine = %q, want %q: the workarounds change what is measured, a default does not", got, want)
	}
	if got := commandLine("spotcheck", func(string) string { return "" }, nil); got != "loadtest spotcheck" {
		t.Errorf("commandLine = %q", got)
	}
}

// Help and version answer like the tools users know, exit 0, and start nothing: the overview for help
// alone, a command's own page (usage, flags, knobs, example) for `help <cmd>` and `<cmd> --help`.
func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		o := mainWith(t, args, nil, nil)
		if o.code != 0 || !strings.HasPrefix(o.stdout, "usage: loadtest <command> [arguments]") || !strings.Contains(o.stdout, "\n  compare        set two sets of runs side by side") || len(o.calls) > 0 {
			t.Errorf("%v: exit %d, ran %v, stdout %.80q", args, o.code, o.calls, o.stdout)
		}
	}
	for _, c := range commands() {
		for _, args := range [][]string{{"help", c.name}, {c.name, "--help"}, {c.name, "-h"}} {
			o := mainWith(t, args, nil, nil)
			if o.code != 0 || o.stdout != c.page() || len(o.calls) > 0 {
				t.Errorf("%v: exit %d, ran %v, stdout %.80q", args, o.code, o.calls, o.stdout)
			}
		}
		page := c.page()
		if !strings.HasPrefix(page, "usage: loadtest "+c.name) || !strings.Contains(page, "\nexample:\n  ") {
			t.Errorf("%s's page lacks its usage line or an example:\n%s", c.name, page)
		}
		for _, k := range c.knobs {
			if _, ok := harness.LookupKnob(k); !ok {
				t.Errorf("%s's page names %s, which is no knob", c.name, k)
			}
		}
	}
	// Flags after positionals are flags: a page's help asked for last still prints the page.
	if o := mainWith(t, []string{"compare", "a", "b", "--help"}, nil, nil); o.code != 0 || !strings.HasPrefix(o.stdout, "usage: loadtest compare [--format") {
		t.Errorf("compare a b --help: exit %d, %.60q", o.code, o.stdout)
	}
	o := mainWith(t, []string{"version"}, nil, nil)
	if o.code != 0 || !strings.HasPrefix(o.stdout, "loadtest ") || !strings.Contains(o.stdout, "IMAGE_K6=grafana/k6:") || !strings.Contains(o.stdout, "CERTCTL_IMAGE=") {
		t.Errorf("version: exit %d:\n%s%s", o.code, o.stdout, o.stderr)
	}
}

// The rendered help, pinned: testdata/help/<command>.txt (UPDATE_GOLDEN=1 go test ./internal/cli rewrites them).
func TestHelpGolden(t *testing.T) {
	pages := map[string]string{"overview": commands().overview()}
	for _, c := range commands() {
		pages[c.name] = c.page()
	}
	for name, got := range pages {
		path := filepath.Join("testdata", "help", name+".txt")
		if os.Getenv("UPDATE_GOLDEN") == "1" {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil || string(want) != got {
			t.Errorf("%s: the help differs from %s (UPDATE_GOLDEN=1 rewrites it):\n%s", name, path, got)
		}
	}
}

// The first minutes of a new user, as issue 33 found them: every case gets a sentence that says what to
// do, exit 2, and starts nothing.
func TestFirstMinutes(t *testing.T) {
	elsewhere := t.TempDir() // a directory that is no clone, and has no results/latest
	for _, c := range []struct {
		name string
		root string
		args []string
		env  map[string]string
		want string
	}{
		{"a mistyped command", root, []string{"rnu"}, nil, "loadtest: unknown command \"rnu\" (did you mean run?)\nusage: loadtest <command> [arguments]; loadtest help lists the commands\n"},
		{"a command cut short", root, []string{"comp", "a", "b"}, nil, `unknown command "comp" (did you mean compare?)`},
		{"no suggestion when nothing is near", root, []string{"attack"}, nil, "loadtest: unknown command \"attack\"\nusage:"},
		{"help for no command", root, []string{"help", "reprot"}, nil, `loadtest: help "reprot": no such command (did you mean report?)`},
		{"a mistyped knob", root, []string{"check"}, map[string]string{"DURATON": "1m"}, "DURATON is set but no knob has that name: did you mean DURATION? (the knobs: docs/configuration.md; if DURATON is meant for something else, unset it for the run: env -u DURATON …)"},
		{"two letters swapped", root, []string{"run"}, map[string]string{"TEIR": "api"}, "TEIR is set but no knob has that name: did you mean TIER?"},
		{"a family's prefix mistyped", root, []string{"check"}, map[string]string{"RAET_LIST_CERTIFICATES": "5"}, "RAET_LIST_CERTIFICATES is set but no knob has that name: did you mean RATE_LIST_CERTIFICATES?"},
		{"a scenario of another tier", root, []string{"check"}, map[string]string{"SCENARIOS": "acme_flow"}, `SCENARIOS="acme_flow": acme_flow is in tier acme, and TIER=api,connector does not select it: add TIER=acme`},
		{"check refuses what run refuses", root, []string{"check"}, map[string]string{"TIER": "scale,api"}, "TIER=scale,api: the scale tier's scenarios run one after another, each on a stack of its own: run the other tiers separately"},
		{"compare with flags after the sides", root, []string{"compare", "a", "b", "--format", "markdown", "--noise", "2"}, nil, "compare: --noise is a fraction in [0, 1)"},
		{"compare with one side", root, []string{"compare", "a", "--format", "markdown"}, nil, "compare: takes two sides, OLD and NEW, each [label=]run-dir[,run-dir...]; got 1 (a)\nusage: loadtest compare"},
		{"trend with nothing", root, []string{"trend"}, nil, "loadtest: trend: fetch or report, got nothing\nusage: loadtest trend fetch --out DIR"},
		{"trend report without its flags", root, []string{"trend", "report"}, nil, "loadtest: trend: report: --current DIR is needed\n"},
		{"trend fetch without --out", root, []string{"trend", "fetch"}, nil, "loadtest: trend: fetch: --out DIR is needed\n"},
		{"report with no run yet", elsewhere, []string{"report"}, nil, "loadtest: report: no run directory given, and no results/latest: no run has finished in this clone yet\n"},
		{"a run outside the repository", "", []string{"run"}, nil, "loadtest: run: not inside the certctl-loadtest repository"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := mainIn(t, c.root, c.args, c.env, nil)
			if o.code != results.ExitBadInput {
				t.Errorf("exit %d, want %d", o.code, results.ExitBadInput)
			}
			if !strings.Contains(o.stderr, c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, o.stderr)
			}
			if strings.Contains(o.stderr, "<nil>") {
				t.Errorf("stderr says <nil>:\n%s", o.stderr)
			}
			if len(o.calls) > 0 {
				t.Errorf("ran %q on bad input", o.calls)
			}
		})
	}
	// Variables of the system and of other tools are no typos, however close.
	// JUNIT_XSD: the schema install-deps fetches for internal/report's tests, in CI's environment.
	if err := harness.CheckKnobNames([]string{"TERM=xterm", "HOME=/root", "GOFLAGS=-mod=mod", "K6_DURATION=1m", "LOADTEST_GOAL=loadtest", "RUNNER_TEMP=/tmp", "CI=true", "TERMINAL=dumb", "JUNIT_XSD=/var/cache/junit-4.xsd"}); err != nil {
		t.Errorf("an ordinary environment refused: %v", err)
	}
	// version answers outside a clone, where the pins cannot be read.
	o := mainIn(t, "", []string{"version"}, nil, nil)
	if o.code != 0 || !strings.HasPrefix(o.stdout, "loadtest ") || !strings.Contains(o.stdout, "pins: not inside the certctl-loadtest repository") {
		t.Errorf("version outside the repository: exit %d:\n%s%s", o.code, o.stdout, o.stderr)
	}
	// report without a directory reads results/latest.
	latest := t.TempDir()
	if err := os.MkdirAll(filepath.Join(latest, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(latest, "results", "latest")); err != nil {
		t.Fatal(err)
	}
	if o := mainIn(t, latest, []string{"report"}, nil, nil); !strings.Contains(o.stderr, "is not a run directory") {
		t.Errorf("report without a directory did not read results/latest: exit %d, %s", o.code, o.stderr)
	}
}

// TIER=scale runs each scale scenario as a run of its own, on its own stack, one after another, and
// exits with the worst verdict; an existing run directory of any of them stops it before the first.
func TestScaleTierOneAfterAnother(t *testing.T) {
	dir := t.TempDir()
	var composeUps []string
	o := mainWith(t, []string{"run"}, map[string]string{"TIER": "scale", "RESULTS_DIR": dir, "RUN_ID": "seq"}, func(_ context.Context, c harness.Cmd) (int, error) {
		composeUps = append(composeUps, strings.Join(c.Args, " "))
		return 1, nil // no engine: each run fails fast
	})
	want := []string{
		"loadtest: the scale tier: 3 scenarios, one after another, each on a fresh stack",
		"loadtest: scale scenario 1 of 3: acme_burst",
		"loadtest: scale scenario 3 of 3: bulk_renewal",
		"run seq-agent-storm",
		"loadtest: the scale tier, exit 3 (",
		"  agent_storm    exit 3 (",
	}
	for _, w := range want {
		if !strings.Contains(o.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, o.stderr)
		}
	}
	if o.code != results.ExitEnvironment {
		t.Errorf("exit %d, want %d", o.code, results.ExitEnvironment)
	}
	if n := strings.Count(o.stderr, "cannot reach the Docker engine"); n != 3 {
		t.Errorf("%d runs tried, want 3:\n%s", n, o.stderr)
	}

	if err := os.Mkdir(filepath.Join(dir, "seq2-agent-storm"), 0o755); err != nil {
		t.Fatal(err)
	}
	o = mainWith(t, []string{"run"}, map[string]string{"TIER": "scale", "RESULTS_DIR": dir, "RUN_ID": "seq2"}, nil)
	if o.code != results.ExitBadInput || !strings.Contains(o.stderr, "seq2-agent-storm already exists") || len(o.calls) > 0 {
		t.Errorf("exit %d, %d commands, stderr:\n%s", o.code, len(o.calls), o.stderr)
	}
}

// compare given two capacity searches (make capacity's directories) compares their knees: a knee wholly
// lower fails (1), written beside with --out; overlapping ones pass.
func TestCompareKnees(t *testing.T) {
	search := func(knee, ceiling float64) string {
		dir := t.TempDir()
		b, _ := json.Marshal(capacity.Result{Schema: capacity.Schema, Scenario: "list_certificates", Unit: "s", Knee: knee, Ceiling: ceiling})
		if err := os.WriteFile(filepath.Join(dir, "capacity.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	out := t.TempDir()
	o := mainIn(t, root, []string{"compare", "v2.1.7=" + search(80, 90), "main=" + search(40, 45), "--out", out}, nil, nil)
	if want := "list_certificates knee: v2.1.7 [80, 90)/s, main [40, 45)/s: the knee moved down: main breaches at a load v2.1.7 carried\n"; o.code != ExitRegressed || o.stdout != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and %q", o.code, o.stdout, o.stderr, want)
	}
	for _, f := range []string{"knees.json", "knees.txt", "knees.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("--out: %v", err)
		}
	}
	o = mainIn(t, root, []string{"compare", "--format", "markdown", search(40, 50), search(45, 55)}, nil, nil)
	if o.code != 0 || !strings.Contains(o.stdout, "### Knee of list_certificates") || !strings.Contains(o.stdout, "overlap") {
		t.Errorf("overlapping knees: exit %d, stdout %q", o.code, o.stdout)
	}
}

// compare's own code for runs on different testbeds: 7, the reason said first; the same testbed judges
// as ever (exit 0).
func TestCompareNotComparable(t *testing.T) {
	run := func(fsync float64) string {
		dir := t.TempDir()
		s := results.Summary{Schema: results.SummarySchema, RunID: fmt.Sprint("fsync-", fsync), Passed: true}
		s.Run.Testbed = &testbed.Calibration{CPUs: 2, CPUSingle: 28000, CPUAll: 56000, FsyncP50Ms: fsync}
		b, _ := json.Marshal(s)
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	o := mainWith(t, []string{"compare", "here=" + run(0.1), "there=" + run(3.3)}, nil, nil)
	if o.code != ExitNotComparable || !strings.Contains(o.stdout, "\n  NOT COMPARABLE: here (run fsync-0.1) and there (run fsync-3.3) ran on different testbeds: fsync p50 0.100 ms vs 3.300 ms") {
		t.Errorf("exit %d:\n%s%s", o.code, o.stdout, o.stderr)
	}
	if o := mainWith(t, []string{"compare", "a=" + run(0.1), "b=" + run(0.12)}, nil, nil); o.code != 0 || strings.Contains(o.stdout, "COMPARABLE") {
		t.Errorf("one testbed: exit %d:\n%s%s", o.code, o.stdout, o.stderr)
	}
}

// calibrate prints the machine's line, or the JSON, timing fdatasync where the engine keeps its volumes
// when that is writable and in the working directory otherwise; a stray argument is bad input.
func TestCalibrateCmd(t *testing.T) {
	var dirs []string
	call := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), Env{Args: args, Getenv: func(string) string { return "" }, Stdout: &stdout, Stderr: &stderr, Root: root,
			Exec: func(_ context.Context, c harness.Cmd) (int, error) { return 1, nil }, // no engine
			Calibrate: func(_ context.Context, dir string) testbed.Calibration {
				dirs = append(dirs, dir)
				return testbed.Calibration{CPUs: 2, CPUSingle: 28000, CPUAll: 56000, FsyncP50Ms: 0.1, FsyncP99Ms: 0.2, FsyncDir: dir, DurationS: 1.6}
			}})
		return code, stdout.String(), stderr.String()
	}
	if code, out, _ := call("calibrate"); code != 0 || !strings.HasPrefix(out, "testbed: cpu 28000/s a core, 56000/s on 2 (×2.00) · fsync p50 0.100 ms") || !strings.Contains(out, "fsync measured in .; calibrated in 1.6 s") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if code, out, _ := call("calibrate", "--json"); code != 0 || !strings.Contains(out, `"cpu_single_ops_s": 28000`) {
		t.Errorf("--json: exit %d:\n%s", code, out)
	}
	if code, _, errOut := call("calibrate", "now"); code != results.ExitBadInput || !strings.Contains(errOut, `calibrate: unknown argument "now"`) {
		t.Errorf("an argument: exit %d %s", code, errOut)
	}
	if len(dirs) != 2 || dirs[0] != "." {
		t.Errorf("fdatasync timed in %q; want the working directory without an engine", dirs)
	}
}

// The gate's plan, printed before anything runs: the runs in A B B A order, the load, the wall time; and
// the same for compare-builds with the release's plan.
func TestGatePlan(t *testing.T) {
	build := t.TempDir()
	if err := os.WriteFile(filepath.Join(build, "server"), []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := mainWith(t, []string{"gate", "--plan", "--candidate", "pr=" + build}, nil, nil)
	pins, _ := harness.ReadEnvFile(filepath.Join(root, ".env"))
	tag := pins["CERTCTL_IMAGE"][strings.LastIndex(pins["CERTCTL_IMAGE"], ":")+1:]
	want := "pr against " + tag + ": 2 runs a side alternating (ABBA), TIER=api,acme RATE_ACME_FLOW=100 RATE_ISSUANCE_ACCEPTANCE=50 RATE_LIST_CERTIFICATES=50 DURATION=1m, each run on a fresh stack, about 85 s a run: about 5.7 min in all; judged on p50, error rate, throughput (95 % for them all), regressed beyond 25 %\n"
	if o.code != 0 || o.stdout != want || len(o.calls) > 0 {
		t.Errorf("exit %d, calls %q, stderr %q, stdout:\n%s\nwant:\n%s", o.code, o.calls, o.stderr, o.stdout, want)
	}
	o = mainWith(t, []string{"compare-builds", "--plan", "--reference", build, "--candidate", build}, map[string]string{"TIER": "pki"}, nil)
	if o.code != 0 || !strings.Contains(o.stdout, "(candidate) against ") || !strings.Contains(o.stdout, "3 runs a side alternating (ABBAAB), TIER=pki DURATION=2m, each run 9 fresh stacks, one a scenario") || !strings.Contains(o.stdout, "judged on every row (99 % each), regressed beyond 0 %") {
		t.Errorf("compare-builds of the PKI tier: exit %d, stderr %q, stdout %q", o.code, o.stderr, o.stdout)
	}
}

// On fewer CPUs than its plan's four the gate runs their share of the rates, so that the runner is not
// the limit; a rate the environment sets is its own.
func TestGateRatesByCPUs(t *testing.T) {
	build := t.TempDir()
	if err := os.WriteFile(filepath.Join(build, "server"), []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cpus int
		env  map[string]string
		want string
	}{
		{2, nil, "RATE_ACME_FLOW=50 RATE_ISSUANCE_ACCEPTANCE=25 RATE_LIST_CERTIFICATES=25 DURATION=1m"},
		{8, nil, "RATE_ACME_FLOW=100 RATE_ISSUANCE_ACCEPTANCE=50 RATE_LIST_CERTIFICATES=50 DURATION=1m"},
		{1, map[string]string{"RATE_ACME_FLOW": "7"}, "RATE_ACME_FLOW=7 RATE_ISSUANCE_ACCEPTANCE=13 RATE_LIST_CERTIFICATES=13 DURATION=1m"},
	} {
		var stdout, stderr bytes.Buffer
		var environ []string
		for k, v := range c.env {
			environ = append(environ, k+"="+v)
		}
		code := Main(context.Background(), Env{Args: []string{"gate", "--plan", "--candidate", build}, Getenv: func(k string) string { return c.env[k] },
			Environ: environ, Stdout: &stdout, Stderr: &stderr, Root: root, CPUs: c.cpus, Now: time.Now,
			Exec: func(context.Context, harness.Cmd) (int, error) { return 1, nil }})
		if code != 0 || !strings.Contains(stdout.String(), c.want) {
			t.Errorf("%d CPUs: exit %d, stderr %q, stdout %q; want %q", c.cpus, code, stderr.String(), stdout.String(), c.want)
		}
	}
}
