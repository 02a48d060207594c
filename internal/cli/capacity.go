package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"certctl-loadtest/internal/capacity"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/plan"
	"certctl-loadtest/internal/results"
)

// capacityCmd searches for one scenario's knee: each step an ordinary run at one rate, into
// results/<RUN_ID>/ beside capacity.json, capacity.txt and capacity.svg.
func capacityCmd(ctx context.Context, m measure) int {
	e := m.Env
	name := e.Getenv("SCENARIO")
	if name == "" {
		return m.fail("set SCENARIO to one arrival-rate scenario, e.g. SCENARIO=list_certificates (the files of k6/<tier>/)")
	}
	scripts, _ := filepath.Glob(filepath.Join(e.Root, "k6", "*", name+".js"))
	if len(scripts) != 1 || strings.Contains(scripts[0], "/spotcheck/") || strings.Contains(scripts[0], "/test/") {
		return m.fail("SCENARIO=%s: no such scenario (the files of k6/<tier>/, e.g. list_certificates)", name)
	}
	tier := filepath.Base(filepath.Dir(scripts[0]))
	if err := k6Ready(ctx, e); err != nil {
		return m.fail("%v", err)
	}
	rows, err := plan.Inspect(tier, filepath.Join("k6", tier, name+".js"), func(script string) ([]byte, error) {
		var out, errb strings.Builder
		code, err := e.Exec(ctx, k6Cmd(e, []string{"inspect", script}, &out, &errb))
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d: %s", code, strings.TrimSpace(errb.String()))
		}
		return []byte(out.String()), err
	})
	if err != nil {
		return m.fail("%v", err)
	}
	if len(rows) != 1 || !strings.HasSuffix(rows[0].Executor, "arrival-rate") {
		return m.fail("SCENARIO=%s runs a fixed number of VUs, not an arrival rate: it has no rate to search", name)
	}
	unit := "s"
	if strings.HasPrefix(rows[0].TimeUnit, "1m") || rows[0].TimeUnit == "60s" {
		unit = "m"
	}
	num := func(k string, def float64, ok func(float64) bool) (float64, error) {
		v := e.Getenv(k)
		if v == "" {
			return def, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !ok(f) {
			return 0, fmt.Errorf("%s=%q is out of range (docs/configuration.md)", k, v)
		}
		return f, nil
	}
	factor, _ := strconv.ParseFloat(m.knob("CAPACITY_FACTOR"), 64)
	precision, _ := strconv.ParseFloat(m.knob("CAPACITY_PRECISION"), 64)
	s := capacity.Search{Scenario: name, Unit: unit, Factor: factor, Precision: precision}
	for _, k := range []struct {
		name string
		dst  *float64
		def  float64
		ok   func(float64) bool
	}{
		{"CAPACITY_START", &s.Start, rows[0].Rate, func(f float64) bool { return f >= 1 && f == float64(int(f)) }},
		{"CAPACITY_FACTOR", &s.Factor, factor, func(f float64) bool { return f > 1 && f <= 10 }},
		{"CAPACITY_PRECISION", &s.Precision, precision, func(f float64) bool { return f > 0 && f < 1 }},
	} {
		if *k.dst, err = num(k.name, k.def, k.ok); err != nil {
			return m.fail("%v", err)
		}
	}
	if s.Max, err = num("CAPACITY_MAX", 32*s.Start, func(f float64) bool { return f >= s.Start && f == float64(int(f)) }); err != nil {
		return m.fail("%v", err)
	}
	step := m.knob("CAPACITY_STEP")
	d, err := harness.ParseDuration("CAPACITY_STEP", step)
	if err != nil {
		return m.fail("%v", err)
	}
	s.StepS = d.Seconds()
	// A step whose budget broke stops there (k6's abortOnFail), judged from a quarter of its length on:
	// the warm-up is never judged, and what a breach settles the rest of the step cannot change.
	abort := e.Getenv("ABORT_ON_FAIL")
	if abort == "" {
		abort = (d / 4).String()
	}

	base := e.Getenv("RUN_ID")
	if base == "" {
		base = "cap-" + strings.ReplaceAll(name, "_", "-")
		if len(base) > 18 {
			base = base[:18]
		}
		base += "-" + e.Now().UTC().Format("0102-1504")
	}
	dir, err := measurementDir(e, base)
	if err != nil {
		return m.fail("%v", err)
	}
	rateVar := "RATE_" + strings.ToUpper(name)
	configure := func(rate float64, attempt int) (harness.Config, Env, error) {
		id := fmt.Sprintf("%s-r%g", base, rate)
		if attempt == 2 {
			id += "-2"
		}
		over := map[string]string{"TIER": tier, "SCENARIOS": name, rateVar: strconv.Itoa(int(rate)), "DURATION": step, "RUN_ID": id, "RESULTS_DIR": dir, "ABORT_ON_FAIL": abort}
		// VUs ready from the start for a second of latency at this rate, as each scenario sizes them for its
		// own: VUs k6 adds mid-run start late, and their dropped iterations would be a knee of k6's making.
		for k, v := range vusFor(rate, unit, rows[0].PreVUs, rows[0].MaxVUs) {
			if e.Getenv(k) == "" {
				over[k] = v
			}
		}
		return overridden(e, over, "TIER", "SCENARIOS", rateVar, "DURATION", "RESULTS_DIR", "PRE_VUS", "MAX_VUS", "ABORT_ON_FAIL")
	}
	// Every step's configuration is the first's but for its rate: a bad knob fails before any load.
	if _, _, err := configure(s.Start, 1); err != nil {
		return m.fail("%v", err)
	}
	if !m.makeDir(dir) {
		return results.ExitEnvironment
	}
	var res capacity.Result
	save := func() {
		if err := capacity.Write(dir, res); err != nil {
			m.say("writing %s: %v", dir, err)
		}
	}
	s.Log = func(format string, a ...any) { fmt.Fprintf(e.Stderr, "loadtest: "+format+"\n", a...) }
	s.Measure = func(ctx context.Context, rate float64, attempt int) (capacity.Step, error) {
		c, env, err := configure(rate, attempt)
		if err != nil {
			return capacity.Step{Rate: rate, Attempt: attempt, Problem: err.Error()}, err
		}
		m.say("%s at %g/%s for %s (%s)", name, rate, unit, step, c.RunID)
		start := e.Now()
		// Each step's summary is in its directory; the search prints the curve.
		env.Stdout = io.Discard
		runOne(ctx, env, "run", c)
		st := capacity.Step{RunID: c.RunID}
		if sum, err := results.Load(c.RunDir()); err == nil {
			st = capacity.FromSummary(sum, name)
		} else {
			st.Problem = err.Error()
		}
		st.Rate, st.Attempt, st.TookS = rate, attempt, e.Now().Sub(start).Seconds()
		st.RunDir, _ = filepath.Rel(dir, c.RunDir())
		res.Steps = append(res.Steps, st)
		save()
		if st.Problem != "" {
			return st, errors.New(st.RunID + ": " + st.Problem)
		}
		return st, nil
	}
	m.say("%s from %g/%s, ×%g until a confirmed breach (at most %g), then bisection to %.0f %%; %s a step; results in %s", name, s.Start, unit, s.Factor, s.Max, s.Precision*100, step, dir)
	res, err = s.Run(ctx, e.Now)
	save()
	fmt.Fprint(e.Stdout, capacity.Text(res))
	switch {
	case ctx.Err() != nil:
		return results.ExitInterrupted
	case err != nil:
		m.say("a step gave no verdict, so the search stopped: %v", err)
		return results.ExitNoResults
	case res.Knee == 0:
		return results.ExitThresholds
	}
	return results.ExitOK
}

// overridden is one run of a measurement: e with over on top, its configuration loaded. Of over, the
// keys named in environ also go into the run's environment (what compose, k6 and run.json's settings
// and command read).
func overridden(e Env, over map[string]string, environ ...string) (harness.Config, Env, error) {
	getenv := func(k string) string {
		if v, ok := over[k]; ok {
			return v
		}
		return e.Getenv(k)
	}
	c, err := harness.Load(e.Root, getenv, e.Now())
	env := e
	env.Getenv = getenv
	env.Environ = append([]string(nil), e.Environ...)
	for _, k := range environ {
		if v, ok := over[k]; ok {
			env.Environ = append(env.Environ, k+"="+v)
		}
	}
	return c, env, err
}

// vusFor is a step's PRE_VUS and MAX_VUS: a second of arrivals ready, never fewer than the scenario's.
func vusFor(rate float64, unit string, pre, max int) map[string]string {
	perS := rate
	if unit == "m" {
		perS = rate / 60
	}
	need := int(perS + 0.999)
	if need < pre {
		need = pre
	}
	if max < need {
		max = need
	}
	return map[string]string{"PRE_VUS": strconv.Itoa(need), "MAX_VUS": strconv.Itoa(max)}
}

// measurementDir is where a measurement of several runs (capacity, growth, overhead) keeps them:
// RESULTS_DIR/<base>, refused when it exists, as a run's own directory is.
func measurementDir(e Env, base string) (string, error) {
	dir := filepath.Join(resultsDir(e), base)
	if _, err := os.Lstat(dir); err == nil {
		return "", fmt.Errorf("%s already exists: results are never overwritten; pick another RUN_ID", dir)
	}
	return dir, nil
}

// resultsDir is RESULTS_DIR, else its default under the repository.
func resultsDir(e Env) string {
	if d := e.Getenv("RESULTS_DIR"); d != "" {
		return d
	}
	return filepath.Join(e.Root, harness.KnobDefault("RESULTS_DIR"))
}
