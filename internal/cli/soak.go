package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/report"
	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/soak"
)

// soakCmd runs one long run of the steady mix (growth's, unless TIER and SCENARIOS say otherwise) for
// DURATION (30m unless set), then reads it for drift: soak.json, soak.txt and two plots in the run's
// directory. A drift or a memory growth beyond its budget makes a passing run exit 99.
func soakCmd(ctx context.Context, m measure) int {
	e := m.Env
	var b soak.Budgets
	var err error
	if b.Window, err = time.ParseDuration(m.knob("SOAK_WINDOW")); err != nil || b.Window < 10*time.Second {
		return m.fail("SOAK_WINDOW=%q: a duration of at least 10s, like 5m", m.knob("SOAK_WINDOW"))
	}
	if b.P95Drift, err = strconv.ParseFloat(m.knob("SOAK_P95_DRIFT"), 64); err != nil || b.P95Drift <= 1 {
		return m.fail("SOAK_P95_DRIFT=%q: the most the p95 may grow over the run, a ratio above 1 (1.5 is +50 %%)", m.knob("SOAK_P95_DRIFT"))
	}
	if b.MemoryPctPerHour, err = strconv.ParseFloat(m.knob("SOAK_MEMORY_GROWTH"), 64); err != nil || b.MemoryPctPerHour <= 0 {
		return m.fail("SOAK_MEMORY_GROWTH=%q: the most certctl's memory may grow, in percent an hour, above 0", m.knob("SOAK_MEMORY_GROWTH"))
	}
	over := map[string]string{}
	environ := withMix(e, over, "30m")
	if e.Getenv("RUN_ID") == "" {
		over["RUN_ID"] = "soak-" + e.Now().UTC().Format("0102-1504")
		environ = append(environ, "RUN_ID")
	}
	cfg, env, err := overridden(e, over, environ...)
	if err != nil {
		return m.fail("%v", err)
	}
	// The first window is the warm-up; three more give a slope with an interval.
	if windows := int(cfg.Length / b.Window); windows < 4 {
		return m.fail("DURATION=%s in windows of SOAK_WINDOW=%s is %d window(s): a drift needs four at least (the first is the warm-up)", cfg.Duration, b.Window, windows)
	}
	if !cfg.Containers || !cfg.Collector {
		m.say("DIAGNOSIS=%s: without both samplers the memory or the tables are not recorded, and the soak cannot pass", e.Getenv("DIAGNOSIS"))
	}
	m.say("%s for %s, judged in windows of %s (p95 drift ×%g at most, certctl's memory +%g %%/h at most)",
		scenarioNames(cfg), cfg.Duration, b.Window, b.P95Drift, b.MemoryPctPerHour)
	code := runOne(ctx, env, "soak", cfg)
	sum, err := results.Load(cfg.RunDir())
	if err != nil {
		m.say("no run to read: %v", err)
		if code == results.ExitOK {
			code = results.ExitNoResults
		}
		return code
	}
	r := soak.Analyze(cfg.RunDir(), sum, b)
	if err := soak.Write(cfg.RunDir(), r); err != nil {
		m.say("cannot write soak.json in %s: %v", cfg.RunDir(), err)
		return results.ExitEnvironment
	}
	// index.html again, now that it has the soak's files to link.
	if page, err := report.Index(sum, results.RegularFiles(cfg.RunDir())); err == nil {
		output.Text(filepath.Join(cfg.RunDir(), "index.html"), page)
	}
	fmt.Fprint(e.Stdout, soak.Text(r))
	switch {
	case code != results.ExitOK:
		return code
	case r.Verdict == "breach":
		return results.ExitThresholds
	case r.Verdict == "inconclusive":
		return results.ExitInconclusive
	}
	return code
}

func scenarioNames(c harness.Config) string {
	s := ""
	for i, sc := range c.Scenarios {
		if i > 0 {
			s += ", "
		}
		s += sc.Name
	}
	return s
}
