package harness

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Load reads the run's configuration. getenv is os.Getenv in production.
func Load(root string, getenv func(string) string, now time.Time) (Config, error) {
	c := Config{Root: root, Env: map[string]string{}}
	get := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	// In this order: a later step reads what an earlier one settled (tiers before the limiter,
	// scenarios and DURATION before the bulk pool).
	for _, step := range []func(getter) error{
		c.loadTiers, c.loadDist, c.loadFaultProxy, c.loadTimes, c.loadImages, c.loadLoadShape, c.loadScheduler, c.loadAuth,
		c.loadK6Checks, c.loadK6Outputs, c.loadSegments, c.loadTarget, func(g getter) error { return c.loadRunID(g, now) }, c.loadSecrets, c.loadLimiter, c.forceTierSettings,
	} {
		if err := step(get); err != nil {
			return c, err
		}
	}
	c.Env["DURATION"] = c.Duration
	c.Env["RUN_ID"] = c.RunID
	c.Env["RUN_DIR"] = c.RunDir()
	c.Env["COMPOSE_PROJECT_NAME"] = c.Project
	return c, nil
}

// LoadSpotchecks is Load for `loadtest spotcheck`: the same stack and knobs, but the scripts are
// k6/spotcheck/*.js (SCENARIOS picks some of them), run one after another, in file-name order.
// TIER does not apply.
func LoadSpotchecks(root string, getenv func(string) string, now time.Time) (Config, error) {
	c, err := Load(root, func(k string) string {
		if k == "TIER" || k == "SCENARIOS" {
			return ""
		}
		return getenv(k)
	}, now)
	if err != nil {
		return c, err
	}
	files, err := filepath.Glob(filepath.Join(root, "k6", SpotcheckDir, "*.js"))
	if err != nil || len(files) == 0 {
		return c, fmt.Errorf("no spot checks under %s/k6/%s/*.js", root, SpotcheckDir)
	}
	// The scale profile brings the seeder: SEED_BULK_CERTS certificates (10000) give the inventory
	// walk something to walk; an empty inventory is one page and measures nothing.
	c.Tiers, c.Scenarios, c.Spotcheck = []string{SpotcheckDir, "scale"}, nil, true
	// Spot checks are single requests timed one at a time: nothing for the collectors to explain.
	c.Collector, c.Containers = false, false
	if v := strings.TrimSpace(getenv("CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL")); v == "" {
		c.Env["CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL"] = SpotcheckRenewalCheckInterval
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		c.Scenarios = append(c.Scenarios, Scenario{Tier: SpotcheckDir, Name: strings.TrimSuffix(filepath.Base(f), ".js"), Path: filepath.ToSlash(rel)})
	}
	if spec := strings.TrimSpace(getenv("SCENARIOS")); spec != "" {
		if c.Scenarios, err = selectScenarios(spec, c.Scenarios, nil, nil); err != nil {
			return c, err
		}
	}
	return c, nil
}
