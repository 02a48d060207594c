package harness

import (
	"bytes"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/testbed"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// composeGlobalFlags take a value and come before compose's subcommand (Compose.base).
var composeGlobalFlags = map[string]bool{"--project-name": true, "--project-directory": true, "-f": true, "--env-file": true, "--profile": true}

// commandLine is a command as the fake engine matches it: docker's arguments, compose's global flags
// left out ("compose up --detach ... certctl-server", "image inspect ...").
func commandLine(c Cmd) string {
	args := c.Args
	if c.Name != "docker" {
		return strings.Join(append([]string{c.Name}, args...), " ")
	}
	if len(args) > 0 && args[0] == "compose" {
		rest := args[1:]
		for len(rest) > 1 && composeGlobalFlags[rest[0]] {
			rest = rest[2:]
		}
		args = append([]string{"compose"}, rest...)
	}
	return strings.Join(args, " ")
}

// answer is the fake engine's reply to the commands that start with prefix.
type answer struct {
	prefix string
	out    string
	code   int
	do     func(ctx context.Context, c Cmd) int // instead of out and code
}

// fakeEngine answers docker and docker compose commands from a script, first match wins, and keeps
// every command it was given. A command nothing answers fails the test.
type fakeEngine struct {
	t       *testing.T
	answers []answer
	mu      sync.Mutex
	calls   []string
}

func (f *fakeEngine) Exec(ctx context.Context, c Cmd) (int, error) {
	line := commandLine(c)
	f.mu.Lock()
	f.calls = append(f.calls, line)
	f.mu.Unlock()
	for _, a := range f.answers {
		if !strings.HasPrefix(line, a.prefix) {
			continue
		}
		if a.do != nil {
			return a.do(ctx, c), nil
		}
		if c.Stdout != nil {
			io.WriteString(c.Stdout, a.out)
		}
		return a.code, nil
	}
	f.t.Errorf("unexpected command: %s", line)
	return 127, nil
}

// ran reports whether a command starting with prefix was run.
func (f *fakeEngine) ran(prefix string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

// A resolved configuration as `docker compose config --format json` prints it: certctl and what it
// depends on, a connector sidecar, the scale seeder (required: its failure stops the run) and k6.
const connectorConfig = `{"name": "certctl-lt-t1", "services": {
  "postgres": {"image": "postgres:16-alpine"},
  "tls-init": {"image": "alpine/openssl:3.5.2"},
  "certctl-migrate": {"image": "certctl:test", "depends_on": {"postgres": {"condition": "service_healthy"}, "tls-init": {"condition": "service_completed_successfully"}}},
  "seed-base": {"image": "postgres:16-alpine", "depends_on": {"certctl-migrate": {"condition": "service_completed_successfully"}}},
  "certctl-server": {"image": "certctl:test", "depends_on": {"seed-base": {"condition": "service_completed_successfully"}}},
  "nginx": {"image": "nginx:1.27-alpine", "profiles": ["connector"], "depends_on": {"tls-init": {"condition": "service_completed_successfully"}}},
  "scale-seed": {"image": "postgres:16-alpine", "profiles": ["scale"], "labels": {"certctl-loadtest.required": "true"}, "depends_on": {"certctl-server": {"condition": "service_healthy"}}},
  "k6": {"image": "grafana/k6:2.2.0", "profiles": ["k6"]}
}}`

const healthy = `{"Service":"postgres","State":"running","Health":"healthy","ExitCode":0}
{"Service":"tls-init","State":"exited","Health":"","ExitCode":0}
{"Service":"certctl-migrate","State":"exited","Health":"","ExitCode":0}
{"Service":"seed-base","State":"exited","Health":"","ExitCode":0}
{"Service":"certctl-server","State":"running","Health":"healthy","ExitCode":0}
`

// k6Outcome is how a scenario's k6 process ends in the fake engine.
type k6Outcome struct {
	code   int
	record string // "passed", "breached" (a threshold failed), or "" for none
	// cancel, when set, is called once the record is written: the run is interrupted meanwhile.
	cancel func()
	// blocks until the run is cancelled, then ends as a signalled docker compose run does.
	blocks bool
}

// engine is a fake engine on which everything succeeds, with the scenarios' k6 processes ending as
// outcomes says; more answers go before the defaults.
func engine(t *testing.T, cfg Config, outcomes map[string]k6Outcome, more ...answer) *fakeEngine {
	k6 := func(ctx context.Context, c Cmd) int {
		script := c.Args[len(c.Args)-1]
		name := strings.TrimSuffix(filepath.Base(script), ".js")
		o, ok := outcomes[name]
		if !ok {
			t.Errorf("k6 run of an unexpected script %s", script)
			return 107
		}
		if o.blocks {
			<-ctx.Done()
			return 128 + 15
		}
		switch o.record {
		case "":
		case "empty":
			os.WriteFile(filepath.Join(cfg.RunDir(), "scenarios", name+".json"), nil, 0o644)
		default:
			writeRecord(t, cfg.RunDir(), name, o.record == "passed")
		}
		fmt.Fprintf(c.Stdout, "k6 %s ended\n", name)
		if o.cancel != nil {
			o.cancel()
		}
		return o.code
	}
	defaults := []answer{
		{prefix: "version --format", out: "24.0.7\n"},
		{prefix: "compose version --short", out: "2.29.1\n"},
		{prefix: "info --format", out: "2 8000000000 24.0.7\n"},
		{prefix: "compose config --quiet"},
		{prefix: "compose config --format json", out: connectorConfig},
		{prefix: "compose config --images", out: "certctl:test\npostgres:16-alpine\ngrafana/k6:2.2.0\n"},
		{prefix: "image inspect --format {{.Id}} ", out: "sha256:0123456789abcdef0123\n"},
		{prefix: "image inspect --format {{ index .Config.Labels", out: "<no value>\n"},
		{prefix: "image inspect --format {{range .Config.Env}}", out: "PATH=/usr/bin\nPG_VERSION=16.15\n"},
		{prefix: "compose up ", code: 0},
		{prefix: "compose ps --all --format json", out: healthy},
		{prefix: "compose run --rm --no-deps -T k6 version", out: "k6 v2.2.0 (go1.26.8, linux/amd64)\n"},
		{prefix: "compose run --rm --no-deps -T --name ", do: k6},
		{prefix: "compose logs ", out: "a log line\n"},
		{prefix: "compose down ", code: 0},
		{prefix: "events --since "},
		{prefix: "kill --signal TERM "},
		{prefix: "inspect --format {{.State.Running}} ", out: "false\n"},
	}
	return &fakeEngine{t: t, answers: append(more, defaults...)}
}

func writeRecord(t *testing.T, dir, name string, ok bool) {
	rec := results.Record{
		Schema: results.RecordSchema, Scenario: name, Tier: "api", Executor: "constant-arrival-rate",
		TargetRatePerS: 50, AchievedRatePerS: 50, Requests: 250, ThresholdsOK: ok,
		Thresholds: []results.Threshold{{Metric: "http_req_duration{scenario:" + name + "}", Expression: "p(95)<800", OK: ok}},
		Setup:      json.RawMessage(`{"certctl_version":"v2.1.7"}`),
	}
	b, err := json.Marshal(rec)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "scenarios", name+".json"), b, 0o644)
	}
	if err != nil {
		t.Error(err) // not Fatal: k6 runs on the runner's goroutines
	}
}

// testConfig is a run of the named scenarios of the connector tier, results in a temporary directory.
func testConfig(t *testing.T, scenarios ...string) Config {
	c := Config{
		Root: "/repo", RunID: "t1", Tiers: []string{"connector"}, Duration: "1s", Length: time.Second, ResultsDir: t.TempDir(),
		StartTimeout: 5 * time.Second, Project: "certctl-lt-t1", Env: map[string]string{"CERTCTL_TOKEN": "secret"},
		Secrets: []string{"secret"},
	}
	for _, n := range scenarios {
		c.Scenarios = append(c.Scenarios, Scenario{Tier: "connector", Name: n, Path: "k6/connector/" + n + ".js"})
	}
	return c
}

type runResult struct {
	code           int
	stdout, stderr string
	summary        *results.Summary // nil when the run wrote none
}

func runWith(ctx context.Context, t *testing.T, cfg Config, f *fakeEngine, env ...string) runResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	clock := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex // the scenarios' goroutines read the clock at once
	r := &Runner{Cfg: cfg, Exec: f.Exec, Env: env, Stdout: &stdout, Stderr: &stderr, Command: "loadtest run",
		Now: func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); clock = clock.Add(time.Second); return clock }}
	res := runResult{code: r.Run(ctx)}
	res.stdout, res.stderr = stdout.String(), stderr.String()
	if b, err := os.ReadFile(filepath.Join(cfg.RunDir(), "summary.json")); err == nil {
		var s results.Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		res.summary = &s
	}
	return res
}

func scenarioStatus(s *results.Summary) map[string]string {
	m := map[string]string{}
	for _, sc := range s.Scenarios {
		m[sc.Name] = fmt.Sprintf("%s %d", sc.Status, sc.ExitCode)
	}
	return m
}

// Every exit code of a run that gets as far as k6, as the harness combines its processes' codes.
func TestRunExitCodes(t *testing.T) {
	cases := []struct {
		name     string
		outcomes map[string]k6Outcome
		code     int
		status   map[string]string // scenario -> "status exit"
	}{
		{"green", map[string]k6Outcome{"nginx": {0, "passed", nil, false}, "f5": {0, "passed", nil, false}}, 0,
			map[string]string{"nginx": "passed 0", "f5": "passed 0"}},
		{"a threshold breached", map[string]k6Outcome{"nginx": {99, "breached", nil, false}, "f5": {0, "passed", nil, false}}, 99,
			map[string]string{"nginx": "failed 99", "f5": "passed 0"}},
		// k6 exits 0 although it wrote nothing: no results is not a pass.
		{"no results", map[string]k6Outcome{"nginx": {0, "", nil, false}, "f5": {0, "passed", nil, false}}, 4,
			map[string]string{"nginx": "no-results 4", "f5": "passed 0"}},
		{"a script error", map[string]k6Outcome{"nginx": {107, "", nil, false}, "f5": {0, "passed", nil, false}}, 107,
			map[string]string{"nginx": "no-results 107", "f5": "passed 0"}},
		{"setup aborted", map[string]k6Outcome{"nginx": {108, "passed", nil, false}, "f5": {108, "passed", nil, false}}, 108,
			map[string]string{"nginx": "failed 108", "f5": "failed 108"}},
		// An error says more than a breach: the breach may be its consequence.
		{"an error beats a breach", map[string]k6Outcome{"nginx": {99, "breached", nil, false}, "f5": {107, "", nil, false}}, 107,
			map[string]string{"nginx": "failed 99", "f5": "no-results 107"}},
		// A k6 killed from outside (docker kill, the OOM killer) is the stack failing, not certctl.
		{"k6 killed", map[string]k6Outcome{"nginx": {137, "", nil, false}, "f5": {0, "passed", nil, false}}, 5,
			map[string]string{"nginx": "no-results 5", "f5": "passed 0"}},
		// A full disk: k6 exits 255 and leaves an empty record.
		{"k6 failed, record empty", map[string]k6Outcome{"nginx": {255, "empty", nil, false}, "f5": {0, "passed", nil, false}}, 4,
			map[string]string{"nginx": "no-results 4", "f5": "passed 0"}},
		{"k6 failed, record written", map[string]k6Outcome{"nginx": {255, "passed", nil, false}, "f5": {0, "passed", nil, false}}, 255,
			map[string]string{"nginx": "failed 255", "f5": "passed 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t, "f5", "nginx")
			f := engine(t, cfg, c.outcomes)
			res := runWith(context.Background(), t, cfg, f)
			if res.code != c.code {
				t.Fatalf("exit %d, want %d\n%s", res.code, c.code, res.stderr)
			}
			if res.summary == nil {
				t.Fatal("no summary.json")
			}
			if res.summary.ExitCode != c.code || res.summary.Passed != (c.code == 0) {
				t.Errorf("summary.json: exit %d passed %v", res.summary.ExitCode, res.summary.Passed)
			}
			if got := scenarioStatus(res.summary); !reflect.DeepEqual(got, c.status) {
				t.Errorf("scenarios %v, want %v", got, c.status)
			}
			if !strings.Contains(res.stdout, fmt.Sprintf("(exit %d)", c.code)) {
				t.Errorf("stdout lacks the verdict:\n%s", res.stdout)
			}
			if !f.ran("compose down ") {
				t.Error("the stack was not torn down")
			}
			if target, _ := os.Readlink(filepath.Join(cfg.ResultsDir, "latest")); target != cfg.RunID {
				t.Errorf("results/latest -> %q", target)
			}
		})
	}
}

// A run interrupted while one scenario is still running keeps what the finished one recorded.
func TestRunInterruptedKeepsPartialResults(t *testing.T) {
	cfg := testConfig(t, "f5", "nginx")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := engine(t, cfg, map[string]k6Outcome{"f5": {0, "passed", cancel, false}, "nginx": {blocks: true}})
	res := runWith(ctx, t, cfg, f)
	if res.code != 130 {
		t.Fatalf("exit %d, want 130\n%s", res.code, res.stderr)
	}
	if res.summary == nil || res.summary.ExitCode != 130 || !strings.HasPrefix(res.summary.Run.Error, "the run was interrupted by a signal at 00:0") {
		t.Fatalf("summary.json: %+v", res.summary)
	}
	want := map[string]string{"f5": "passed 0", "nginx": "no-results 143"}
	if got := scenarioStatus(res.summary); !reflect.DeepEqual(got, want) {
		t.Errorf("scenarios %v, want %v", got, want)
	}
	for _, sc := range res.summary.Scenarios {
		if sc.Name == "f5" && (sc.Record == nil || sc.Record.Requests != 250) {
			t.Errorf("f5's record was not kept: %+v", sc.Record)
		}
	}
	if !f.ran("kill --signal TERM certctl-lt-t1-k6-nginx") {
		t.Error("the k6 still running was not stopped and waited for")
	}
	if !f.ran("compose down ") {
		t.Error("the stack was not torn down")
	}
}

// Failures before k6: the environment (3) and bad input (2). Those found before the run directory
// exists leave none; the others write a summary that says why.
func TestRunFailsBeforeLoad(t *testing.T) {
	cases := []struct {
		name    string
		answers []answer
		env     []string
		code    int
		why     string // in the log, and in summary.json when there is one
		summary bool
	}{
		{"no Docker engine", []answer{{prefix: "version --format", code: 1}}, nil, 3,
			"cannot reach the Docker engine", false},
		{"no compose plugin", []answer{{prefix: "compose version", code: 125}}, nil, 3,
			"the Docker Compose v2 plugin is missing", false},
		{"an invalid compose configuration", []answer{{prefix: "compose config --quiet", code: 15}}, nil, 2,
			"the compose configuration is invalid", false},
		{"a missing image, pulling not allowed", []answer{{prefix: "image inspect --format {{.Id}} grafana/k6", code: 1}}, []string{"PULL_POLICY=never"}, 3,
			"image(s) not available: grafana/k6:2.2.0", false},
		{"a missing image that cannot be pulled", []answer{{prefix: "image inspect --format {{.Id}} grafana/k6", code: 1}, {prefix: "compose pull --ignore-pull-failures k6", code: 1}}, nil, 3,
			"image(s) not available: grafana/k6:2.2.0", false},
		// Ours are built, never pulled: the fake engine fails the test on a pull it was not told of.
		{"a missing image of ours", []answer{{prefix: "compose config --images", out: "certctl-loadtest/f5-standin:dev\ngrafana/k6:2.2.0\n"},
			{prefix: "image inspect --format {{.Id}} certctl-loadtest/", code: 1}}, nil, 3,
			"image(s) not available: certctl-loadtest/f5-standin:dev: certctl-loadtest/* images are built on this machine, never pulled", false},
		// The first failure in start order is named, not what failed in its wake.
		{"the stack did not start", []answer{{prefix: "compose up --detach --wait --wait-timeout 5 certctl-server", code: 1}, {prefix: "compose ps", out: `{"Service":"postgres","State":"running","Health":"healthy","ExitCode":0}
{"Service":"certctl-migrate","State":"exited","Health":"","ExitCode":1}
{"Service":"tls-init","State":"exited","Health":"","ExitCode":1}
`}}, nil, 3, "the stack did not start: tls-init exited (exit 1)", true},
		{"certctl never healthy", []answer{{prefix: "compose up --detach --wait --wait-timeout 5 certctl-server", code: 1}, {prefix: "compose ps", out: strings.Replace(healthy, `"certctl-server","State":"running","Health":"healthy"`, `"certctl-server","State":"running","Health":"starting"`, 1)}}, nil, 3,
			"certctl-server did not become healthy within 5s", true},
		{"a required tier service failed", []answer{{prefix: "compose up --detach --no-recreate --wait --wait-timeout 5 nginx scale-seed", code: 1}, {prefix: "compose ps", out: healthy + `{"Service":"nginx","State":"running","Health":"healthy","ExitCode":0}
{"Service":"scale-seed","State":"exited","Health":"","ExitCode":3}
`}}, nil, 3, "scale-seed failed (exited, exit 3) before any load", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t, "nginx")
			f := engine(t, cfg, map[string]k6Outcome{}, c.answers...)
			res := runWith(context.Background(), t, cfg, f, c.env...)
			if res.code != c.code {
				t.Fatalf("exit %d, want %d\n%s", res.code, c.code, res.stderr)
			}
			if !strings.Contains(res.stderr, c.why) {
				t.Errorf("log lacks %q:\n%s", c.why, res.stderr)
			}
			if f.ran("compose run --rm --no-deps -T --name ") {
				t.Error("k6 ran")
			}
			_, err := os.Stat(cfg.RunDir())
			if !c.summary {
				if err == nil {
					t.Error("a run directory was created")
				}
				return
			}
			if res.summary == nil || res.summary.ExitCode != c.code || !strings.Contains(res.summary.Run.Error, c.why) {
				t.Fatalf("summary.json: %+v", res.summary)
			}
			if !f.ran("compose down ") {
				t.Error("the stack was not torn down")
			}
		})
	}
}

// The services come from the compose file: `up` starts certctl (compose starts what it depends on),
// then the tier's own services, never k6; run.json records each service's image.
func TestRunStartsTheComposeFileServices(t *testing.T) {
	cfg := testConfig(t, "nginx")
	f := engine(t, cfg, map[string]k6Outcome{"nginx": {0, "passed", nil, false}})
	res := runWith(context.Background(), t, cfg, f)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var ups []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, "compose up ") {
			ups = append(ups, c)
		}
	}
	want := []string{"compose up --detach --wait --wait-timeout 5 certctl-server", "compose up --detach --no-recreate --wait --wait-timeout 5 nginx scale-seed"}
	if !reflect.DeepEqual(ups, want) {
		t.Errorf("up commands %q, want %q", ups, want)
	}
	s := res.summary
	if s.Run.Images["nginx"] != "nginx:1.27-alpine" || s.Run.Certctl.Image != "certctl:test" || s.Run.Certctl.ImageID != "sha256:0123456789abcdef0123" {
		t.Errorf("images %v, certctl %+v", s.Run.Images, s.Run.Certctl)
	}
	if s.Run.Config["CERTCTL_TOKEN"] != "[redacted]" || s.Run.K6Version != "k6 v2.2.0 (go1.26.8, linux/amd64)" {
		t.Errorf("config %v, k6 %q", s.Run.Config, s.Run.K6Version)
	}
	if s.Run.Postgres != "16.15" {
		t.Errorf("postgres %q, want the image's PG_VERSION", s.Run.Postgres)
	}
}

func TestStartOrder(t *testing.T) {
	var doc struct{ Services Services }
	if err := json.Unmarshal([]byte(connectorConfig), &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Services.StartOrder(serverService)
	want := []string{"postgres", "tls-init", "certctl-migrate", "seed-base", "certctl-server"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("start order %q, want %q", got, want)
	}
}

// SIGTERM (a cancelled CI job) is named in the verdict, with when it came and what was running.
func TestRunInterruptedBySignalSaysSo(t *testing.T) {
	cfg := testConfig(t, "nginx")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	at := time.Date(2026, 11, 22, 15, 0, 4, 0, time.UTC) // the fake clock: the load started at 15:00:02, k6 at 15:00:03
	f := engine(t, cfg, map[string]k6Outcome{"nginx": {0, "passed", func() { cancel(Interrupted{Signal: "SIGTERM", At: at}) }, false}})
	res := runWith(ctx, t, cfg, f)
	want := "the run was interrupted by SIGTERM at 00:02 into the load (during nginx): k6 stopped early, and the figures up to then are kept"
	if res.code != results.ExitInterrupted || res.summary == nil || res.summary.Run.Error != want {
		t.Fatalf("exit %d, summary %+v; want 130 and %q", res.code, res.summary, want)
	}
	if !strings.Contains(res.stdout, "! "+want) {
		t.Errorf("stdout does not lead with what happened:\n%s", res.stdout)
	}
}

// SIGTERM while the stack starts (a short CI job's timeout on a busy runner) is an interruption, exit
// 130, not a stack that failed to come up: nothing was wrong with the environment.
func TestRunInterruptedWhileStartingSaysSo(t *testing.T) {
	cfg := testConfig(t, "nginx")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	f := engine(t, cfg, map[string]k6Outcome{}, answer{prefix: "compose up ", do: func(context.Context, Cmd) int {
		cancel(Interrupted{Signal: "SIGTERM"})
		return 130
	}})
	res := runWith(ctx, t, cfg, f)
	want := "the run was interrupted by SIGTERM while the stack was starting, before any load: there are no figures"
	if res.code != results.ExitInterrupted || res.summary == nil || res.summary.ExitCode != results.ExitInterrupted || res.summary.Run.Error != want {
		t.Fatalf("exit %d, summary %+v; want 130 and %q\n%s", res.code, res.summary, want, res.stderr)
	}
}

// certctl-server dies during the load: the run says so, with when and during what, exits 5, and keeps
// the scenario's figures.
func TestRunNamesAServerThatDied(t *testing.T) {
	cfg := testConfig(t, "nginx")
	events := `{"Type":"container","Action":"kill","Actor":{"ID":"a","Attributes":{"com.docker.compose.service":"certctl-server","name":"certctl-lt-t1-certctl-server-1","signal":"9"}},"timeNano":1795359603400000000}
{"Type":"container","Action":"die","Actor":{"ID":"a","Attributes":{"com.docker.compose.service":"certctl-server","name":"certctl-lt-t1-certctl-server-1","exitCode":"137"}},"timeNano":1795359603500000000}
`
	f := engine(t, cfg, map[string]k6Outcome{"nginx": {99, "breached", nil, false}},
		answer{prefix: "events --since ", out: events})
	res := runWith(context.Background(), t, cfg, f)
	if res.code != results.ExitStackFault || res.summary == nil || res.summary.ExitCode != results.ExitStackFault {
		t.Fatalf("exit %d, want 5\n%s", res.code, res.stderr)
	}
	want := "certctl-server exited with 137 at 00:01 into the load (during nginx) (sent signal 9) and did not come back"
	if got := res.summary.Run.Faults; len(got) != 1 || got[0] != want {
		t.Errorf("faults %q, want %q", got, want)
	}
	if !strings.Contains(res.stdout, "! "+want) {
		t.Errorf("stdout does not lead with the fault:\n%s", res.stdout)
	}
	if sc := res.summary.Scenarios[0]; sc.Record == nil || sc.Record.Requests != 250 {
		t.Errorf("the figures were not kept: %+v", sc)
	}
	if len(res.summary.Run.AfterLoad) == 0 || len(res.summary.Run.Events) != 2 {
		t.Errorf("state after the load %v, events %v", res.summary.Run.AfterLoad, res.summary.Run.Events)
	}
}

// The summary cannot be written (a full disk): the verdict still reaches stdout, and says so.
func TestRunPrintsTheVerdictWhenTheSummaryCannotBeWritten(t *testing.T) {
	cfg := testConfig(t, "nginx")
	block := func() { os.Mkdir(filepath.Join(cfg.RunDir(), "summary.json"), 0o755) }
	f := engine(t, cfg, map[string]k6Outcome{"nginx": {0, "passed", block, false}})
	res := runWith(context.Background(), t, cfg, f)
	if res.code != results.ExitNoResults {
		t.Errorf("exit %d, want 4", res.code)
	}
	for _, want := range []string{"FAILED (exit 4)", "the results could not be written to " + cfg.RunDir(), "the summary below is the only copy"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}
}

// A RUN_ID whose directory exists is bad input, refused before anything runs.
func TestRunRefusesAReusedRunID(t *testing.T) {
	cfg := testConfig(t, "nginx")
	if err := os.MkdirAll(cfg.RunDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fakeEngine{t: t}
	var stderr bytes.Buffer
	r := &Runner{Cfg: cfg, Exec: f.Exec, Stdout: io.Discard, Stderr: &stderr, Now: time.Now}
	if code := r.Run(context.Background()); code != results.ExitBadInput || r.Created {
		t.Errorf("exit %d created %v, want 2 and nothing created", code, r.Created)
	}
	if !strings.Contains(stderr.String(), "already exists: results of a run are never overwritten; pick another RUN_ID") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if len(f.calls) > 0 {
		t.Errorf("ran %v before refusing", f.calls)
	}
}

// The run directory is the owner's and nobody else's to write.
func TestRunDirIsNotWorldWritable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results", "r1")
	if err := makeRunDir(dir, Owner{os.Geteuid(), os.Getegid()}, "spotchecks"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"", "scenarios", "raw", "dashboard", "logs", "spotchecks"} {
		st, err := os.Stat(filepath.Join(dir, d))
		if err != nil || st.Mode().Perm() != 0o755 {
			t.Errorf("%s: %v %v, want 0755", d, st.Mode(), err)
		}
	}
	// A link planted where a file of the run goes is not followed.
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.Symlink(target, filepath.Join(dir, "run.json"))
	if err := output.JSON(filepath.Join(dir, "run.json"), map[string]int{"a": 1}); err == nil {
		t.Error("output.JSON followed a symbolic link")
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the link's target was written")
	}
}

func TestInvokingUser(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		name       string
		getenv     func(string) string
		euid, egid int
		want       Owner
	}{
		{"a user", env(), 1000, 1000, Owner{1000, 1000}},
		{"root", env(), 0, 0, Owner{0, 0}},
		{"root through sudo", env("SUDO_UID", "1001", "SUDO_GID", "1002"), 0, 0, Owner{1001, 1002}},
		{"a user with a stale SUDO_UID", env("SUDO_UID", "1001", "SUDO_GID", "1002"), 1000, 1000, Owner{1000, 1000}},
		{"sudo to root from root", env("SUDO_UID", "0", "SUDO_GID", "0"), 0, 0, Owner{0, 0}},
	}
	for _, c := range cases {
		if got := InvokingUser(c.getenv, c.euid, c.egid); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A missing upstream image is pulled by compose, for the services that use it, with its progress on the
// console; the run then goes on.
func TestRunPullsMissingUpstreamImagesWithCompose(t *testing.T) {
	cfg := testConfig(t, "nginx")
	var pulled atomic.Bool
	f := engine(t, cfg, map[string]k6Outcome{"nginx": {record: "passed"}},
		answer{prefix: "image inspect --format {{.Id}} grafana/k6", do: func(ctx context.Context, c Cmd) int {
			if !pulled.Load() {
				return 1
			}
			io.WriteString(c.Stdout, "sha256:0123456789abcdef0123\n")
			return 0
		}},
		answer{prefix: "compose pull --ignore-pull-failures k6", do: func(ctx context.Context, c Cmd) int {
			io.WriteString(c.Stderr, " k6 Pulling \n k6 Pulled \n")
			pulled.Store(true)
			return 0
		}})
	res := runWith(context.Background(), t, cfg, f)
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"pulling grafana/k6:2.2.0 (for k6)", "[pull]  k6 Pulled"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("console lacks %q:\n%s", want, res.stderr)
		}
	}
}

// K6_OUT's outputs are k6 arguments beside the harness's own, and their settings reach k6 by name only.
func TestRunPassesK6Outputs(t *testing.T) {
	cfg := testConfig(t, "nginx")
	cfg.K6Outputs = []string{"--out", "experimental-prometheus-rw", "--out", "csv=/results/{scenario}.csv"}
	var line string
	f := engine(t, cfg, map[string]k6Outcome{"nginx": {record: "passed"}})
	f.answers = append([]answer{{prefix: "compose run --rm --no-deps -T --name ", do: func(ctx context.Context, c Cmd) int {
		line = strings.Join(c.Args, " ")
		writeRecord(t, cfg.RunDir(), "nginx", true)
		return 0
	}}}, f.answers...)
	res := runWith(context.Background(), t, cfg, f, "K6_PROMETHEUS_RW_PASSWORD=hunter2", "K6_DURATION=1h")
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"-e K6_PROMETHEUS_RW_PASSWORD ", "--out json=/results/raw/nginx.json.gz --tag testid=t1 --tag lt_scenario=nginx --out experimental-prometheus-rw --out csv=/results/nginx.csv /k6/connector/nginx.js"} {
		if !strings.Contains(line, want) {
			t.Errorf("k6's command line lacks %q: %s", want, line)
		}
	}
	for _, not := range []string{"hunter2", "K6_DURATION"} {
		if strings.Contains(line, not) {
			t.Errorf("k6's command line has %q: %s", not, line)
		}
	}
}

// The run's last lines name its directory on a line of its own (scripts and the e2e tests read it) and
// then the page to open.
func TestRunNamesItsDirectoryAndPage(t *testing.T) {
	cfg := testConfig(t, "nginx")
	f := engine(t, cfg, map[string]k6Outcome{"nginx": {record: "passed"}})
	res := runWith(context.Background(), t, cfg, f)
	dir := cfg.RunDir()
	for _, want := range []string{"loadtest: results in " + dir + "\n", "loadtest: open " + filepath.Join(dir, "index.html") + ": "} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("console lacks %q:\n%s", want, res.stderr)
		}
	}
}

// The machine is calibrated before the stack starts, where the engine keeps its volumes when that can
// be written (else the run directory); run.json and summary.json keep it, and the summary's header says it.
func TestRunRecordsItsTestbed(t *testing.T) {
	cfg := testConfig(t, "nginx")
	f := engine(t, cfg, map[string]k6Outcome{"nginx": {0, "passed", nil, false}})
	var stdout, stderr bytes.Buffer
	var dir string
	started := false
	r := &Runner{Cfg: cfg, Exec: func(ctx context.Context, c Cmd) (int, error) {
		if c.Name == "docker" && len(c.Args) > 1 && c.Args[0] == "compose" && slices.Contains(c.Args, "up") {
			started = true
		}
		return f.Exec(ctx, c)
	}, Stdout: &stdout, Stderr: &stderr, Command: "loadtest run", Now: time.Now,
		Calibrate: func(_ context.Context, fsyncDir string) testbed.Calibration {
			if started {
				t.Error("calibrated after the stack started")
			}
			dir = fsyncDir
			return testbed.Calibration{CPUs: 2, CPUModel: "AMD EPYC", CPUSingle: 28000, CPUAll: 56000, FsyncP50Ms: 0.1, FsyncP99Ms: 0.2, FsyncOps: 1000, FsyncDir: fsyncDir}
		}}
	if code := r.Run(context.Background()); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if dir != cfg.RunDir() {
		t.Errorf("fdatasync timed in %q; want the run directory (the fake engine names no data root)", dir)
	}
	var run results.Run
	b, _ := os.ReadFile(filepath.Join(cfg.RunDir(), "run.json"))
	if err := json.Unmarshal(b, &run); err != nil || run.Testbed == nil || run.Testbed.CPUSingle != 28000 {
		t.Errorf("run.json's testbed %+v (%v)", run.Testbed, err)
	}
	s, err := results.Load(cfg.RunDir())
	if err != nil || s.Run.Testbed == nil {
		t.Errorf("summary's testbed: %v", err)
	}
	if !strings.Contains(stdout.String(), "\ntestbed: cpu 28000/s a core, 56000/s on 2 (×2.00) · fsync p50 0.100 ms, p99 0.200 ms") {
		t.Errorf("the header has no testbed:\n%s", stdout.String())
	}
}
