package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"certctl-loadtest/internal/coldstart"
	"certctl-loadtest/internal/growth"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/results"
)

// coldRate is the listings a second during the restart under load: growth's listing rate.
const coldRate = 10

// coldstartCmd measures a restart of certctl at each inventory size of GROWTH_SIZES, each on a fresh
// stack seeded with SEED_INVENTORY certificates: stopped and started (to healthy, then the first hundred
// listings against a hundred warm), then restarted under a steady listing load. Results in
// results/<RUN_ID>/: coldstart.json, coldstart.txt and each size's stack logs.
func coldstartCmd(ctx context.Context, m measure) int {
	e := m.Env
	sizes, spec, base, dir, err := sweepOf(e, "coldstart")
	if err != nil {
		return m.fail("%v", err)
	}
	configure := func(size float64) (harness.Config, Env, error) {
		o := map[string]string{"TIER": "api", "SCENARIOS": "", "SEGMENTS": "1", "RESULTS_DIR": dir,
			"SEED_INVENTORY": strconv.Itoa(int(size)), "RUN_ID": base + "-" + strings.ToLower(growth.SizeText(size))}
		return overridden(e, o, "TIER", "SCENARIOS", "SEGMENTS", "RESULTS_DIR", "SEED_INVENTORY", "RUN_ID")
	}
	for _, s := range sizes {
		c, _, err := configure(s)
		if err != nil {
			return m.fail("%v", err)
		}
		if c.External != nil {
			return m.fail("TARGET=external: a cold start stops and starts certctl, which only the harness's own stack allows")
		}
	}
	if !m.makeDir(dir) {
		return results.ExitEnvironment
	}
	res := coldstart.Result{Schema: coldstart.Schema}
	m.say("certctl restarted at each of %s certificates, a fresh stack and seed each; results in %s", spec, dir)
	code := results.ExitOK
	for _, size := range sizes {
		cfg, env, _ := configure(size)
		cfg.Profiles = append(cfg.Profiles, "findings") // the relay the host reaches certctl through
		if cfg.Dist != "" {
			res.Build = filepath.Base(cfg.Dist)
		}
		m.say("%s certificates (%s)", growth.SizeText(size), cfg.RunID)
		r := env.runner("coldstart", cfg)
		st := coldstart.Size{Size: size, RunDir: cfg.RunID}
		rc := r.WithStack(ctx, func(ctx context.Context, _ string, a harness.StackAccess) int {
			t := coldstart.Target{URL: a.URL, Key: a.Key, CAFile: a.CAFile, ConnectTo: a.ConnectTo}
			st = coldstart.Measure(ctx, t, a.Compose, coldstart.Config{Server: "certctl-server", StartTimeout: cfg.StartTimeout, LoadRate: coldRate},
				func(f string, a ...any) { m.say(f, a...) })
			st.Size, st.RunDir = size, cfg.RunID
			if st.Problem != "" {
				return results.ExitStackFault
			}
			return results.ExitOK
		})
		if rc != results.ExitOK && st.Problem == "" {
			st.Problem = fmt.Sprintf("the stack did not start (exit %d): see %s", rc, cfg.RunDir())
		}
		if rc != results.ExitOK && code == results.ExitOK {
			code = rc
		}
		res.Sizes = append(res.Sizes, st)
		if err := coldstart.Write(dir, res); err != nil {
			m.say("writing %s: %v", dir, err)
			return results.ExitEnvironment
		}
		if ctx.Err() != nil {
			return results.ExitInterrupted
		}
	}
	fmt.Fprint(e.Stdout, coldstart.Text(res))
	return code
}
