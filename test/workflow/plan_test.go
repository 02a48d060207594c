package workflow

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/harness"

	"gopkg.in/yaml.v3"
)

// planEntry is one matrix entry of the weekly workflow's plan job.
type planEntry struct {
	Name, Tier, Scenarios, Goal, Label, Command, Knobs string
	Timeout                                            int `json:"timeout"`
	RunTimeout                                         int `json:"run_timeout"`
}

// workflowDoc is the weekly workflow as YAML: the plan step's script, the dispatch's tier choices and the
// schedules.
type workflowDoc struct {
	On struct {
		Dispatch struct {
			Inputs struct {
				Tier struct {
					Options []string `yaml:"options"`
				} `yaml:"tier"`
			} `yaml:"inputs"`
		} `yaml:"workflow_dispatch"`
		Schedule []struct {
			Cron string `yaml:"cron"`
		} `yaml:"schedule"`
	} `yaml:"on"`
	Jobs struct {
		Plan struct {
			Steps []struct {
				ID  string `yaml:"id"`
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"plan"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T) workflowDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, workflow))
	if err != nil {
		t.Fatal(err)
	}
	var w workflowDoc
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// plan runs the plan step's own script, as the runner would (bash -e), from the repository's root with
// the event's variables, and returns its runs, or what it printed when it failed.
func plan(t *testing.T, w workflowDoc, env ...string) ([]planEntry, string, error) {
	t.Helper()
	var script string
	for _, s := range w.Jobs.Plan.Steps {
		if s.ID == "plan" {
			script = s.Run
		}
	}
	if script == "" {
		t.Fatal("the plan job has no step with id plan")
	}
	out := filepath.Join(t.TempDir(), "output")
	cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir = root
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GITHUB_OUTPUT=" + out}, env...)
	printed, err := cmd.CombinedOutput()
	if err != nil {
		return nil, string(printed), err
	}
	b, _ := os.ReadFile(out)
	v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "runs=")
	if !ok {
		t.Fatalf("the plan wrote %q to GITHUB_OUTPUT; want runs=[...]", b)
	}
	var runs []planEntry
	if err := json.Unmarshal([]byte(v), &runs); err != nil {
		t.Fatalf("runs=%s: %v", v, err)
	}
	return runs, string(printed), nil
}

func names(runs []planEntry) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Name)
	}
	return out
}

// scenariosOf lists k6/<tier>/*.js by name.
func scenariosOf(t *testing.T, tier string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "k6", tier, "*.js"))
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(f), ".js"))
	}
	slices.Sort(out)
	if len(out) == 0 {
		t.Fatalf("no scenarios under k6/%s/", tier)
	}
	return out
}

// The plan job's script, run as the runner runs it, for every event: both schedules (Monday: TIER=all
// and each scale scenario; Thursday: each deploy and PKI scenario, the limiter tier and the spot checks),
// a dispatch of every tier the input offers (the tiers with a stack per scenario as a job per scenario),
// scenarios and a rate. Every entry is one the harness accepts as it would run it (its configuration
// loaded from the entry's knobs), every label fits RUN_ID's 40 characters and is unique. A rate without
// scenarios, a malformed rate or scenario list, and a schedule the plan does not know are refused with a
// sentence before any job.
func TestPlan(t *testing.T) {
	t.Parallel()
	w := readWorkflow(t)
	var crons []string
	for _, s := range w.On.Schedule {
		crons = append(crons, s.Cron)
	}
	if want := []string{"17 5 * * 1", "17 5 * * 4"}; !slices.Equal(crons, want) {
		t.Fatalf("schedules %q; want %q (the plan's cases)", crons, want)
	}
	each := func(tier string) []string {
		var out []string
		for _, s := range scenariosOf(t, tier) {
			out = append(out, tier+" "+s)
		}
		return out
	}
	tiers, err := harness.DiscoverTiers(root)
	if err != nil {
		t.Fatal(err)
	}
	var tierNames []string
	for tier := range tiers {
		tierNames = append(tierNames, tier)
	}
	slices.Sort(tierNames)
	if want := append(append([]string{"default", "all"}, tierNames...), "spotcheck"); !slices.Equal(w.On.Dispatch.Inputs.Tier.Options, want) {
		t.Errorf("the dispatch offers %q; want every tier, the aliases and spotcheck: %q (make docs)", w.On.Dispatch.Inputs.Tier.Options, want)
	}

	type event struct {
		name  string
		env   []string
		want  []string
		check func(t *testing.T, runs []planEntry)
	}
	events := []event{
		{name: "monday", env: []string{"EVENT=schedule", "CRON=17 5 * * 1"}, want: append([]string{"tiers all"}, each("scale")...)},
		{name: "thursday", env: []string{"EVENT=schedule", "CRON=17 5 * * 4"},
			want: append(append(append(each("deploy"), each("pki")...), each("auth")...), "tiers limiter", "spotcheck"), check: func(t *testing.T, runs []planEntry) {
				// The auth tier's jobs measure behind certctl's login defects; no other job sets a knob.
				for _, r := range runs {
					want := ""
					if r.Tier == "auth" {
						want = "AUTH_WORKAROUNDS=1 "
					}
					if r.Knobs != want {
						t.Errorf("%s: knobs %q; want %q", r.Name, r.Knobs, want)
					}
				}
			}},
		{name: "rate", env: []string{"EVENT=workflow_dispatch", "REQUESTED_TIER=api", "REQUESTED_SCENARIOS=list_certificates,issuance_acceptance", "RATE=7"},
			want: []string{"tiers api"}, check: func(t *testing.T, runs []planEntry) {
				if want := "RATE_LIST_CERTIFICATES=7 RATE_ISSUANCE_ACCEPTANCE=7 "; runs[0].Knobs != want {
					t.Errorf("knobs %q; want %q", runs[0].Knobs, want)
				}
			}},
		{name: "one pki scenario", env: []string{"EVENT=workflow_dispatch", "REQUESTED_TIER=pki", "REQUESTED_SCENARIOS=ocsp_crl"}, want: []string{"pki ocsp_crl"}},
	}
	for _, tier := range w.On.Dispatch.Inputs.Tier.Options {
		want := []string{"tiers " + tier}
		switch {
		case tier == "spotcheck":
			want = []string{"spotcheck"}
		case harness.OwnStackEach(tier):
			want = each(tier)
		}
		events = append(events, event{name: "dispatch " + tier, env: []string{"EVENT=workflow_dispatch", "REQUESTED_TIER=" + tier}, want: want})
	}
	labels := map[string]string{}
	for _, ev := range events {
		t.Run(ev.name, func(t *testing.T) {
			runs, printed, err := plan(t, w, ev.env...)
			if err != nil {
				t.Fatalf("the plan failed: %v\n%s", err, printed)
			}
			if !slices.Equal(names(runs), ev.want) {
				t.Errorf("runs %q; want %q", names(runs), ev.want)
			}
			for _, r := range runs {
				if !regexp.MustCompile(`^[a-z0-9-]{1,26}$`).MatchString(r.Label) {
					t.Errorf("%s: label %q; want at most 26 lower-case letters, digits and dashes (RUN_ID <label>-<run id>-<attempt> within 40)", r.Name, r.Label)
				}
				if other, ok := labels[r.Label]; ok && other != r.Name {
					t.Errorf("label %q names both %s and %s: their artifacts and trends would mix", r.Label, other, r.Name)
				}
				labels[r.Label] = r.Name
				if r.RunTimeout >= r.Timeout {
					t.Errorf("%s: the run step's %d minutes are not under the job's %d", r.Name, r.RunTimeout, r.Timeout)
				}
				harnessAccepts(t, r)
			}
			if ev.check != nil {
				ev.check(t, runs)
			}
		})
	}

	for _, bad := range []struct{ name, want string }{
		{"RATE=20", "rate=20 needs scenarios"},
		{"RATE=fast", `rate="fast" is not a whole number`},
		{"RATE=7.5", `rate="7.5" is not a whole number`},
		{"REQUESTED_SCENARIOS=List Certificates", `scenarios="List Certificates": scenario names are`},
	} {
		t.Run(bad.name, func(t *testing.T) {
			_, printed, err := plan(t, w, "EVENT=workflow_dispatch", "REQUESTED_TIER=api", bad.name)
			if err == nil || !strings.Contains(printed, bad.want) {
				t.Errorf("the plan with %s: %v, printed %q; want a failure saying %q", bad.name, err, printed, bad.want)
			}
		})
	}
	t.Run("unknown schedule", func(t *testing.T) {
		_, printed, err := plan(t, w, "EVENT=schedule", "CRON=0 0 * * *")
		if err == nil || !strings.Contains(printed, `no runs are planned for the schedule "0 0 * * *"`) {
			t.Errorf("an unknown schedule: %v, printed %q; want it refused", err, printed)
		}
	})
}

// harnessAccepts loads the harness's configuration as the entry's job would run it: its tier, scenarios
// and knobs, offline, so that a plan the harness would refuse fails here rather than on a runner.
func harnessAccepts(t *testing.T, r planEntry) {
	t.Helper()
	env := map[string]string{"TIER": r.Tier, "SCENARIOS": r.Scenarios, "RUN_ID": r.Label + "-12345678901-1", "IMAGES": "offline", "LOADTEST_GOAL": r.Goal}
	for _, kv := range strings.Fields(r.Knobs) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	load := harness.Load
	if r.Command == "spotcheck" {
		load = harness.LoadSpotchecks
	} else if r.Command != "run" {
		t.Errorf("%s: command %q; want run or spotcheck", r.Name, r.Command)
		return
	}
	if _, err := load(root, func(k string) string { return env[k] }, time.Now()); err != nil {
		t.Errorf("%s: the harness refuses the entry (%v): %v", r.Name, env, err)
	}
}

// Every choice of the dispatch's tier input, dispatched under act with a short duration (the full suite
// only: a stack each): the plan's job for it runs the harness on that tier, and the artifact has the
// run's summary naming the tier and the scenario. A tier with a job per scenario is dispatched for one of
// them; the spot checks for one check. Whether each run holds its budgets in 15 seconds is not the
// question here: the tiers' own e2e tests judge that.
func TestDispatchEveryTier(t *testing.T) {
	if testing.Short() {
		t.Skip("a stack per tier: the full suite's (make test-full)")
	}
	t.Parallel()
	// auth: one Keycloak, not four starting together beside the other tiers' stacks (each job has a runner
	// of its own on GitHub; here they share 2 CPUs, and four were still starting at START_TIMEOUT).
	one := map[string]string{"deploy": "renewal_scan", "pki": "ocsp_crl", "scale": "agent_storm", "auth": "oidc_login", "spotcheck": "stats_summary"}
	for _, tier := range readWorkflow(t).On.Dispatch.Inputs.Tier.Options {
		t.Run(tier, func(t *testing.T) {
			t.Parallel()
			payload := fmt.Sprintf(`{"inputs": {"tier": %q, "duration": "15s", "scenarios": %q}}`, tier, one[tier])
			r := runAct(t, "workflow_dispatch", payload, []string{"MACHINE_CHECK=false"})
			label := tier
			if sc := one[tier]; sc != "" && tier != "spotcheck" {
				label = strings.ReplaceAll(tier+"-"+sc, "_", "-")
			}
			wantOutput(t, r, `✅  Success - Main Run the load test`)
			_, s := artifact(t, r, r.runIDOf(label), "summary.txt", "run.json")
			t.Logf("%s: act exited %d, the run %d (%d scenarios)", tier, r.code, s.ExitCode, len(s.Scenarios))
			if s.Breaches != nil {
				for _, b := range s.Breaches.New {
					t.Logf("%s: new breach: %s %s (%s)", tier, b.Scenario, b.Threshold, b.Measured)
				}
			}
			if len(s.Scenarios) == 0 {
				t.Fatalf("the run of %s has no scenario", tier)
			}
			if sc := one[tier]; sc != "" && s.Scenarios[0].Name != sc {
				t.Errorf("the run's scenario is %s; want %s", s.Scenarios[0].Name, sc)
			}
			if tier != "spotcheck" && tier != "default" && tier != "all" && !slices.Contains(s.Run.Tiers, tier) {
				t.Errorf("the run's tiers are %q; want %s among them", s.Run.Tiers, tier)
			}
		})
	}
}
