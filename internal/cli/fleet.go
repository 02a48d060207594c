package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"certctl-loadtest/internal/fleet"
	"certctl-loadtest/internal/gate"
	"certctl-loadtest/internal/growth"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/testbed"
)

// fleetCmd searches the largest fleet of FLEET's shape this certctl carries: each size an ordinary run
// of the fleet's load at that size (fleet.Mix) on a fresh stack seeded with that many certificates'
// year (SEED_INVENTORY), bracketed by FLEET_GROWTH's curves when given, bisected to 25 %, then confirmed
// at the answer and at 1.25× it. Results in results/<RUN_ID>/: fleet.json, fleet.txt and each run.
func fleetCmd(ctx context.Context, m measure) int {
	e := m.Env
	file := m.envOr("FLEET", filepath.Join("fleets", "example.yaml"))
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.Root, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return m.fail("FLEET=%s: %v", file, err)
	}
	d, err := fleet.Parse(b, file)
	if err != nil {
		return m.fail("%v", err)
	}
	step := m.envOr("FLEET_STEP", "2m")
	stepD, err := harness.ParseDuration("FLEET_STEP", step)
	if err != nil {
		return m.fail("%v", err)
	}
	base := e.Getenv("RUN_ID")
	if base == "" {
		base = "fleet-" + e.Now().UTC().Format("0102-1504")
	}
	resume := e.Getenv("FLEET_RESUME")
	var dir string
	switch resume {
	case "":
		if dir, err = measurementDir(e, base); err != nil {
			return m.fail("%v", err)
		}
	case "1":
		if e.Getenv("RUN_ID") == "" {
			return m.fail("FLEET_RESUME=1 needs RUN_ID: the search to go on with (results/<RUN_ID>/fleet.json)")
		}
		dir = filepath.Join(resultsDir(e), base)
	default:
		return m.fail("FLEET_RESUME=%q: 1 goes on with the search RUN_ID names, unset starts one", resume)
	}
	if len(tryRunID(base, 99, fleet.DefaultSettings.Max)) > 40 {
		return m.fail("RUN_ID=%q: at most %d characters here (each run adds -<n>-<size>)", base, 40-len(tryRunID("", 99, fleet.DefaultSettings.Max)))
	}
	tries := 0
	configure := func(size float64) (harness.Config, Env, error) {
		o := tryKnobs(d, size, step, stepD.Seconds())
		o["RUN_ID"], o["RESULTS_DIR"] = tryRunID(base, tries, size), dir
		keys := make([]string, 0, len(o))
		for k := range o {
			keys = append(keys, k)
		}
		return overridden(e, o, keys...)
	}
	// Every size's configuration is the same but for its rates and seed: a bad knob fails here.
	first, _, err := configure(1000)
	if err != nil {
		return m.fail("%v", err)
	}
	plan := fleet.Plan{Low: 1000, High: 100_000, From: "the default range (FLEET_GROWTH not given)"}
	switch g, br := e.Getenv("FLEET_GROWTH"), e.Getenv("FLEET_BRACKET"); {
	case g != "" && br != "":
		return m.fail("FLEET_GROWTH and FLEET_BRACKET each set the bracket: give one")
	case br != "":
		lo, hi, ok := strings.Cut(br, ",")
		l, err1 := strconv.Atoi(strings.TrimSpace(lo))
		h, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if !ok || err1 != nil || err2 != nil || l < 1 || h <= l {
			return m.fail("FLEET_BRACKET=%q: two sizes in certificates, the smaller first (e.g. 20000,50000)", br)
		}
		plan = fleet.Plan{Low: float64(l), High: float64(h), From: "FLEET_BRACKET"}
	case g != "":
		if plan, err = growthBracket(ctx, e, first, g); err != nil {
			return m.fail("FLEET_GROWTH=%s: %v", g, err)
		}
	}
	settings := fleet.DefaultSettings
	settings.StepS = stepD.Seconds()
	if v := e.Getenv("FLEET_MAX"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || float64(n) < settings.Min {
			return m.fail("FLEET_MAX=%q: the largest size to try, whole certificates, %g at least", v, settings.Min)
		}
		settings.Max = float64(n)
	}
	if plan.High > settings.Max {
		plan.High = settings.Max
	}
	if plan.Low >= plan.High {
		return m.fail("the bracket %s–%s does not fit under FLEET_MAX=%s", fleet.SizeText(plan.Low), fleet.SizeText(plan.High), fleet.SizeText(settings.Max))
	}
	var replay []replayed
	recorded := 0
	if resume != "" {
		if replay, recorded, err = resumable(ctx, e, dir, d, settings, first); err != nil {
			return m.fail("FLEET_RESUME=1: %v", err)
		}
		m.say("going on with %s: %d runs in its record", dir, len(replay))
	}
	if !m.makeDir(dir) {
		return results.ExitEnvironment
	}
	m.say("fleet %s (%s) at %g-day rotation, %s a size; bracket %s–%s certificates from %s; results in %s",
		d.Name, file, d.RotationDays, step, fleet.SizeText(plan.Low), fleet.SizeText(plan.High), plan.From, dir)
	// Every run of the search is on this machine; the answer's testbed is the runs' median calibration
	// (fleet.MedianTestbed), so that one run calibrated beside other work does not make the answer
	// another testbed's.
	var tbs []testbed.Calibration
	var build string
	run := func(ctx context.Context, size float64, role string) fleet.Try {
		// A resumed search's new runs are numbered after every run of its record, kept or not.
		tries = max(tries, recorded) + 1
		c, env, _ := configure(size)
		m.say("%s certificates (%s, %s)", fleet.SizeText(size), role, c.RunID)
		start := e.Now()
		env.Stdout = io.Discard
		rc := runOne(ctx, env, "run", c)
		t := fleet.Try{Size: size, Role: role, RunID: c.RunID, ExitCode: rc, TookS: e.Now().Sub(start).Seconds()}
		t.RunDir, _ = filepath.Rel(dir, c.RunDir())
		sum, err := results.Load(c.RunDir())
		if err != nil {
			t.Problem = err.Error()
			return t
		}
		if sum.Run.Testbed != nil {
			tbs, build = append(tbs, *sum.Run.Testbed), results.BuildName(sum.Run.Certctl)
		}
		judgeTry(&t, sum)
		for _, sc := range sum.Scenarios {
			if sc.Record != nil && sc.Record.LatencyMS.P95 > 0 {
				if t.P95 == nil {
					t.P95 = map[string]float64{}
				}
				t.P95[sc.Name] = sc.Record.LatencyMS.P95
			}
		}
		return t
	}
	runner := fleet.Runner(run)
	if resume != "" {
		record := make([]fleet.Try, len(replay))
		for i, r := range replay {
			record[i] = r.try
		}
		runner = fleet.Resume(record, run, func(i int) {
			tries++
			tbs, build = append(tbs, replay[i].testbed), replay[i].build
			m.say("%s certificates (%s, %s): from the record", fleet.SizeText(record[i].Size), record[i].Role, record[i].RunID)
		}, func(asked, ran fleet.Try) {
			m.say("the search asks for %s certificates (%s) where the record ran %s (%s): from here it runs", fleet.SizeText(asked.Size), asked.Role, fleet.SizeText(ran.Size), ran.Role)
		})
	}
	res := fleet.Search(ctx, d, plan, settings, runner, func(r fleet.Result) {
		r.Testbed, r.Build = fleet.MedianTestbed(tbs), build
		if err := fleet.Write(dir, r); err != nil {
			m.say("writing %s: %v", dir, err)
		}
	})
	res.Testbed, res.Build = fleet.MedianTestbed(tbs), build
	fmt.Fprint(e.Stdout, fleet.Text(res))
	switch {
	case ctx.Err() != nil:
		return results.ExitInterrupted
	case res.Answer == 0 && !strings.HasPrefix(res.Verdict, "carries no fleet"):
		return results.ExitNoResults
	case res.Confirmed, res.AtLeast:
		// Confirmed, or every size held up to FLEET_MAX: no budget broke that the answer does not state.
		return results.ExitOK
	}
	return results.ExitThresholds
}

// judgeTry reads a run's summary: it held when every threshold of every scenario did (a registered
// defect's breach included: the fleet is not carried whatever is known about why); it decided nothing
// when a scenario left no results or the machine decided its breaches.
func judgeTry(t *fleet.Try, sum results.Summary) {
	switch {
	case sum.ExitCode == results.ExitInconclusive:
		t.Problem = "inconclusive: " + sum.Inconclusive
		return
	case sum.ExitCode != results.ExitOK && sum.ExitCode != results.ExitThresholds:
		meaning, _ := results.ExitMeaning(sum.ExitCode)
		t.Problem = fmt.Sprintf("exit %d (%s): %s", sum.ExitCode, meaning, strings.Join(sum.FailedChecks, "; "))
		return
	}
	t.Holds = true
	for _, sc := range sum.Scenarios {
		if sc.Record == nil {
			t.Holds, t.Problem = false, fmt.Sprintf("%s: %s", sc.Name, sc.Problem)
			return
		}
		for _, th := range sc.Record.Thresholds {
			if th.OK {
				continue
			}
			t.Holds = false
			got := "no sample"
			if th.Value != nil {
				got = fmt.Sprintf("%s=%g", th.Aggregate, *th.Value)
			}
			t.Broke = append(t.Broke, fmt.Sprintf("%s: %s %s (%s)", sc.Name, unscoped(th.Metric), th.Expression, got))
		}
	}
	if !t.Holds && sum.Diagnosis != nil {
		for _, f := range sum.Diagnosis.Findings {
			if f.Kind == "limit" || t.Cause == "" {
				t.Cause = f.Sentence
				if f.Kind == "limit" {
					break
				}
			}
		}
	}
}

var scenarioTag = regexp.MustCompile(`,?scenario:[a-z0-9_]+`)

// unscoped drops the scenario tag k6's threshold carries: the scenario is named beside it.
func unscoped(metric string) string {
	m := scenarioTag.ReplaceAllString(metric, "")
	m = strings.Replace(m, "{,", "{", 1)
	return strings.TrimSuffix(m, "{}")
}

var p95Budget = regexp.MustCompile(`^p\(95\)<(\d+(?:\.\d+)?)$`)

// growthBracket reads a growth record (growth.json) and each of the fleet's scenarios' p95 budget (its
// smallest untagged p(95)<N, as k6 resolves it), and brackets the search by where each operation's p95
// reaches its budget.
func growthBracket(ctx context.Context, e Env, c harness.Config, file string) (fleet.Plan, error) {
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.Root, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fleet.Plan{}, err
	}
	var g growth.Result
	if err := json.Unmarshal(b, &g); err != nil || g.Schema != growth.Schema {
		return fleet.Plan{}, fmt.Errorf("not a growth record (%s): %v", growth.Schema, err)
	}
	rows, err := planRows(ctx, e, c)
	if err != nil {
		return fleet.Plan{}, err
	}
	budgets := map[string]float64{}
	for _, r := range rows {
		for sel, exprs := range r.Thresholds {
			if sel != "http_req_duration{expected_response:true}" && strings.Contains(sel, "{") {
				continue
			}
			for _, x := range exprs {
				if m := p95Budget.FindStringSubmatch(x); m != nil {
					v, _ := strconv.ParseFloat(m[1], 64)
					if old, ok := budgets[r.Scenario]; !ok || v < old {
						budgets[r.Scenario] = v
					}
				}
			}
		}
	}
	curves := map[string][]fleet.Point{}
	for _, op := range g.Ops {
		for _, p := range op.Points {
			curves[op.Name] = append(curves[op.Name], fleet.Point{Size: p.Size, P95: p.P95})
		}
	}
	return fleet.Bracket(curves, budgets, file), nil
}

// fleetBuilds is compare-builds with FLEET set: the fleet answer of each build, searched one after the
// other on this machine (the reference's first), each in its own directory under results/<RUN_ID>/, then
// the two answers side by side (fleet.Compare): a smaller fleet exit 1, and what gave way on each.
func fleetBuilds(ctx context.Context, m measure, sides [2]gate.Side, base string, planOnly bool) int {
	e := m.Env
	dir, err := measurementDir(e, base)
	if err != nil {
		return m.fail("%v", err)
	}
	var envs [2]Env
	for i, side := range sides {
		over := map[string]string{"RUN_ID": []string{"reference", "candidate"}[i], "RESULTS_DIR": dir}
		sideKnobs(side, over)
		if _, envs[i], err = overridden(e, over, "CERTCTL_DIST", "CERTCTL_IMAGE"); err != nil {
			return m.fail("%s: %v", side.Label, err)
		}
	}
	m.say("the fleet answer of %s, then of %s, each a search of its own (about half an hour each on 2 CPUs, docs/fleet.md); results in %s", sides[0].Label, sides[1].Label, dir)
	if planOnly {
		fmt.Fprintf(e.Stdout, "compare-builds FLEET=%s: a fleet search of %s, then of %s, then the two answers side by side\n", e.Getenv("FLEET"), sides[0].Label, sides[1].Label)
		return results.ExitOK
	}
	var res [2]fleet.Result
	for i := range sides {
		code := fleetCmd(ctx, measure{envs[i], "fleet"})
		b, err := os.ReadFile(filepath.Join(dir, []string{"reference", "candidate"}[i], "fleet.json"))
		if err == nil {
			err = json.Unmarshal(b, &res[i])
		}
		if err != nil {
			m.say("%s: the fleet search left no answer (exit %d): %v", sides[i].Label, code, err)
			return code
		}
		if ctx.Err() != nil {
			return results.ExitInterrupted
		}
	}
	c := fleet.Compare(sides[0].Label, res[0], sides[1].Label, res[1])
	if err := output.Files(dir, output.File{Name: "fleet-compare.json", JSON: c}, output.File{Name: "fleet-compare.txt", Text: c.Text}); err != nil {
		m.say("writing %s: %v", dir, err)
	}
	fmt.Fprint(e.Stdout, c.Text)
	switch c.Verdict {
	case "not comparable":
		return ExitNotComparable
	case "smaller":
		return ExitRegressed
	}
	return results.ExitOK
}

// replayed is a run of the record a resumed search goes on from, with what its summary recorded.
type replayed struct {
	try     fleet.Try
	testbed testbed.Calibration
	build   string
}

// resumable reads the record of the search in dir, refusing one of another fleet, step or build, one run
// on another testbed than this machine's now, and one whose runs' results are gone. Its runs are kept up
// to the first that decided nothing (that one runs again); recorded counts them all, so that new runs'
// directories are numbered past every one of the record's.
func resumable(ctx context.Context, e Env, dir string, d fleet.Description, s fleet.Settings, first harness.Config) (kept []replayed, recorded int, err error) {
	b, err := os.ReadFile(filepath.Join(dir, "fleet.json"))
	if err != nil {
		return nil, 0, err
	}
	var rec fleet.Result
	if err := json.Unmarshal(b, &rec); err != nil || rec.Schema != fleet.Schema {
		return nil, 0, fmt.Errorf("%s: not a fleet answer (%s): %v", filepath.Join(dir, "fleet.json"), fleet.Schema, err)
	}
	switch {
	case rec.Fleet != d:
		return nil, 0, fmt.Errorf("%s searched another fleet (%s) than FLEET's (%s)", dir, rec.Fleet.Name, d.Name)
	case rec.StepS != s.StepS:
		return nil, 0, fmt.Errorf("%s ran %gs a size, FLEET_STEP %gs", dir, rec.StepS, s.StepS)
	case first.Dist != "" && rec.Build != "" && filepath.Base(filepath.Clean(first.Dist)) != rec.Build:
		return nil, 0, fmt.Errorf("%s searched certctl %s, CERTCTL_DIST is %s", dir, rec.Build, filepath.Base(filepath.Clean(first.Dist)))
	}
	if rec.Testbed != nil && e.Calibrate != nil {
		if diff := testbed.Differences(*rec.Testbed, e.Calibrate(ctx, harness.FsyncDir(dockerRoot(ctx, e), "."))); len(diff) > 0 {
			return nil, 0, fmt.Errorf("%s ran on another testbed than this machine's now (%s): start a new search", dir, strings.Join(diff, "; "))
		}
	}
	for _, t := range rec.Tries {
		if !t.Decided() {
			break
		}
		sum, err := results.Load(filepath.Join(dir, t.RunDir))
		if err != nil {
			return nil, 0, fmt.Errorf("run %s of the record: %v", t.RunID, err)
		}
		r := replayed{try: t}
		if sum.Run.Testbed != nil {
			r.testbed, r.build = *sum.Run.Testbed, results.BuildName(sum.Run.Certctl)
		}
		kept = append(kept, r)
	}
	return kept, len(rec.Tries), nil
}

// tryKnobs are one size's run: the fleet's load at that size for the step, on an inventory of that many
// certificates, with the workarounds of the defects that would otherwise stop two of its operations.
// The search's own knobs are blanked and the goal is make loadtest, so that the run's record repeats
// that run alone, not the search or the compare-builds that started it.
func tryKnobs(d fleet.Description, size float64, step string, stepS float64) map[string]string {
	o := fleet.Knobs(d.RunMix(size, stepS))
	for k, v := range map[string]string{
		"SEED_INVENTORY": strconv.Itoa(int(size)), "DURATION": step, "ACME_FINALIZE_WORKAROUND": "1", "OCSP_RESPONDER_WORKAROUND": "1",
		"LOADTEST_GOAL": "loadtest", "FLEET": "", "FLEET_GROWTH": "", "FLEET_BRACKET": "", "FLEET_MAX": "", "FLEET_STEP": "", "FLEET_RESUME": "",
	} {
		o[k] = v
	}
	return o
}

// tryRunID names the search's n-th run, at size: the confirming run repeats a size, so the number keeps
// every run's directory its own.
func tryRunID(base string, n int, size float64) string {
	return fmt.Sprintf("%s-%d-%d", base, n, int(size))
}
