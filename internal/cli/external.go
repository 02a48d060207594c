package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// externalCmd is seed-external and clean-external: TARGET=external's base rows, created or removed.
func externalCmd(ctx context.Context, e Env, cmd string, args []string) int {
	if len(args) > 0 {
		return badArgs(e, cmd, "takes no arguments: TARGET=external's CERTCTL_URL and CERTCTL_API_KEY, and CONFIRM=yes, come from the environment")
	}
	if cmd == "seed-external" {
		return externalScriptCmd(ctx, e, "seed", "creates the harness's base rows (team, owner, profile, renewal policy, issuer; ids LT_*_ID) where they are missing")
	}
	return externalScriptCmd(ctx, e, "clean", "archives the certificates and deletes the agents whose id or name starts with lt-, then the base rows seed-external created")
}

// externalScriptCmd runs k6/external/<script>.js (seed or clean) against the certctl TARGET=external
// names, once the operator has confirmed it: both write to a server that is not the harness's.
func externalScriptCmd(ctx context.Context, e Env, script, does string) int {
	over := map[string]string{"TARGET": "external", "TIER": "api", "SCENARIOS": "", "SEGMENTS": "1"}
	getenv := func(k string) string {
		if v, ok := over[k]; ok {
			return v
		}
		return e.Getenv(k)
	}
	cfg, err := harness.Load(e.Root, getenv, e.Now())
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %s-external: %v\n", script, err)
		return results.ExitBadInput
	}
	ext := cfg.External
	fmt.Fprintf(e.Stderr, "loadtest: %s-external %s at %s\n", script, does, ext.URL)
	if strings.TrimSpace(e.Getenv("CONFIRM")) != "yes" {
		fmt.Fprintf(e.Stderr, "loadtest: %s-external writes to a certctl the harness did not start: say CONFIRM=yes to go on\n", script)
		return results.ExitBadInput
	}
	if ext.Network == "host" {
		if err := harness.ProbeExternal(ctx, ext, cfg.Env["CLIENT_TOKEN"]); err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: %s-external: %v\n", script, err)
			return results.ExitEnvironment
		}
	}
	tmp, err := os.MkdirTemp("", "loadtest-"+script+"-")
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
		return results.ExitEnvironment
	}
	defer os.RemoveAll(tmp)
	cfg.Env["RUN_DIR"] = tmp // k6 writes nothing there: the mount needs a directory
	compose := harness.Compose{Cfg: cfg, Exec: e.Exec, Env: append(append([]string(nil), e.Environ...), envList(cfg.Env)...)}
	code, err := compose.Run(ctx, e.Stdout, e.Stderr, "--profile", "k6", "run", "--rm", "--no-deps", "-T", "k6-external",
		"run", "--quiet", "--no-color", "/k6/"+harness.ExternalDir+"/"+script+".js")
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: %s-external: %v\n", script, err)
		return results.ExitEnvironment
	}
	if code != 0 {
		fmt.Fprintf(e.Stderr, "loadtest: %s-external: k6 exited %d (the lines above say why)\n", script, code)
	}
	return code
}

// judgeCmd turns the records k6 processes left in a directory (a k6-operator run's results volume,
// copied back) into a run: each scenario's segments merged, a run.json when there is none, and the
// summary, printed, with the verdict as the exit code.
func judgeCmd(e Env, args []string) int {
	if len(args) != 1 {
		fmt.Fprintf(e.Stderr, "loadtest: collect takes one directory: the results the k6 processes wrote (scenarios/, raw/)\n")
		return results.ExitBadInput
	}
	dir := args[0]
	names := results.SegmentedScenarios(dir)
	var runs []results.ScenarioRun
	for _, name := range names {
		segs, ok, err := results.MergeSegments(dir, name, nil)
		code := results.ExitOK
		switch {
		case err != nil:
			fmt.Fprintf(e.Stderr, "loadtest: collect: %v\n", err)
			code = results.ExitNoResults
		case !ok:
			code = results.ExitThresholds
		}
		if err == nil {
			fmt.Fprintf(e.Stderr, "loadtest: collect: %s merged from %d segments\n", name, len(segs))
		}
		runs = append(runs, scenarioRun(dir, name, code))
	}
	if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
		return reportText(e, dir, true)
	}
	// Records of whole loads (no segments) count too: a k6-operator run with parallelism 1.
	files, _ := filepath.Glob(filepath.Join(dir, "scenarios", "*.json"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if !containsRun(runs, name) {
			var rec struct {
				OK bool `json:"thresholds_ok"`
			}
			b, _ := os.ReadFile(f)
			code := results.ExitNoResults
			if json.Unmarshal(b, &rec) == nil {
				code = map[bool]int{true: results.ExitOK, false: results.ExitThresholds}[rec.OK]
			}
			runs = append(runs, scenarioRun(dir, name, code))
		}
	}
	if len(runs) == 0 {
		fmt.Fprintf(e.Stderr, "loadtest: collect: no scenario records in %s (scenarios/*.json, scenarios/segments/*@*.json)\n", dir)
		return results.ExitNoResults
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Name < runs[j].Name })
	tiers := map[string]bool{}
	var tierList []string
	for _, r := range runs {
		if !tiers[r.Tier] && r.Tier != "" {
			tiers[r.Tier] = true
			tierList = append(tierList, r.Tier)
		}
	}
	var codes []int
	for _, r := range runs {
		codes = append(codes, r.ExitCode)
	}
	now := e.Now().UTC()
	run := results.Run{
		RunID: filepath.Base(filepath.Clean(dir)), StartedAt: now, EndedAt: now, Command: "loadtest judge " + dir,
		Tiers: tierList, Scenarios: runs, ExitCode: results.Verdict(codes...),
		Config: map[string]string{"COLLECTED": "records written elsewhere (k6-operator runners or other machines), merged here"},
	}
	if err := output.JSON(filepath.Join(dir, "run.json"), run); err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: collect: %v\n", err)
		return results.ExitNoResults
	}
	return reportText(e, dir, true)
}

func containsRun(runs []results.ScenarioRun, name string) bool {
	for _, r := range runs {
		if r.Name == name {
			return true
		}
	}
	return false
}

// scenarioRun is a collected scenario's entry in run.json: its tier and script from its record.
func scenarioRun(dir, name string, code int) results.ScenarioRun {
	sr := results.ScenarioRun{Name: name, ExitCode: code}
	var rec struct {
		Tier string `json:"tier"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "scenarios", name+".json")); err == nil && json.Unmarshal(b, &rec) == nil {
		sr.Tier = rec.Tier
		sr.Script = "k6/" + rec.Tier + "/" + name + ".js"
	}
	if st, err := os.Stat(filepath.Join(dir, "raw", name+".json.gz")); err == nil {
		sr.Raw = &results.RawFile{Path: filepath.Join("raw", name+".json.gz"), Bytes: st.Size(), Complete: true}
	}
	return sr
}
