package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"certctl-loadtest/internal/growth"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/results"
)

// growthMix is the fixed mix each size runs (and a soak) unless TIER and SCENARIOS say otherwise, at
// rates low enough that the inventory, not the load, decides the figures: listing, issuance, ACME
// renewal-info, OCSP, the dashboard's counts (2 a minute) and agents' work polls (k6/growth). At 10 a
// second each, the versions' scans, and the summary at 2 a second, held both CPUs from 10k certificates
// on, and every operation's latency was the queue's (docs/growth.md). OCSP's unknown serials
// and renewal-info's lookups scan the versions (docs/certctl-findings.md#serial-no-index). OCSP answers
// only with the responder row certctl lacks (docs/certctl-findings.md#ocsp-500): the mix applies the
// workaround. The renewal scan's tick is not in it: at the steady state the seed writes nothing is due,
// and neither build can be asked to scan or says how long a scan took
// (docs/certctl-findings.md#renewal-scan-trigger), so from outside a tick leaves no trace to time.
var growthMix = struct {
	tier, scenarios string
	knobs           map[string]string
}{"api,acme,pki,growth", "list_certificates,issuance_acceptance,acme_flow,ocsp_crl,stats_summary,agent_work",
	map[string]string{"RATE_LIST_CERTIFICATES": "5", "RATE_ISSUANCE_ACCEPTANCE": "2", "RATE_ACME_FLOW": "2", "RATE_OCSP_CRL": "2",
		"RATE_AGENT_WORK": "5", "RATE_STATS_SUMMARY": "2", "OCSP_RESPONDER_WORKAROUND": "1"}}

// growthCmd runs the same mix at each inventory size of GROWTH_SIZES, each an ordinary run on a fresh
// stack seeded with SEED_INVENTORY certificates' year, into results/<RUN_ID>/<RUN_ID>-<size>/, then fits
// each operation's growth: growth.json, growth.txt, growth.svg.
func growthCmd(ctx context.Context, m measure) int {
	e := m.Env
	sizes, spec, base, dir, err := sweepOf(e, "growth")
	if err != nil {
		return m.fail("%v", err)
	}
	if len(sizes) < 3 {
		m.say("GROWTH_SIZES=%s: fewer than three sizes give figures but no fitted growth", spec)
	}
	over := map[string]string{"RESULTS_DIR": dir}
	environ := append([]string{"RESULTS_DIR", "SEED_INVENTORY"}, withMix(e, over, "1m")...)
	configure := func(size float64) (harness.Config, Env, error) {
		o := map[string]string{"SEED_INVENTORY": strconv.Itoa(int(size)), "RUN_ID": base + "-" + strings.ToLower(growth.SizeText(size))}
		for k, v := range over {
			o[k] = v
		}
		return overridden(e, o, append(environ, "RUN_ID")...)
	}
	// Every size's configuration, before any load: a bad knob fails here.
	var first harness.Config
	for i, s := range sizes {
		c, _, err := configure(s)
		if err != nil {
			return m.fail("%v", err)
		}
		if i == 0 {
			first = c
		}
	}
	if !m.makeDir(dir) {
		return results.ExitEnvironment
	}
	var names []string
	for _, sc := range first.Scenarios {
		names = append(names, sc.Name)
	}
	res := growth.Result{Schema: growth.Schema, Sizes: sizes, Scenarios: names}
	save := func() {
		res.Fit()
		if err := growth.Write(dir, res); err != nil {
			m.say("writing %s: %v", dir, err)
		}
	}
	m.say("%s for %s at each of %s certificates, a fresh stack and seed each; results in %s",
		strings.Join(names, ", "), first.Duration, spec, dir)
	code := results.ExitOK
	for _, size := range sizes {
		c, env, _ := configure(size)
		m.say("%s certificates (%s)", growth.SizeText(size), c.RunID)
		start := e.Now()
		env.Stdout = io.Discard
		rc := runOne(ctx, env, "run", c)
		st := growth.Step{Size: size, RunID: c.RunID, ExitCode: rc, TookS: e.Now().Sub(start).Seconds()}
		st.RunDir, _ = filepath.Rel(dir, c.RunDir())
		sum, err := results.Load(c.RunDir())
		if err != nil {
			st.Problem = err.Error()
			res.Add(st, nil)
			code = results.ExitNoResults
		} else {
			res.Add(st, &sum)
		}
		save()
		if ctx.Err() != nil {
			return results.ExitInterrupted
		}
	}
	fmt.Fprint(e.Stdout, growth.Text(res))
	return code
}

// parseSizes reads GROWTH_SIZES, smallest first.
func parseSizes(spec string) ([]float64, error) {
	var sizes []float64
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("GROWTH_SIZES=%q: certificates per size, whole numbers ≥ 1, comma-separated (e.g. 1000,10000,100000)", spec)
		}
		sizes = append(sizes, float64(n))
	}
	sort.Float64s(sizes)
	return sizes, nil
}

// sweepOf reads GROWTH_SIZES and names the sweep's directory: RUN_ID, else <prefix>-<date>.
func sweepOf(e Env, prefix string) (sizes []float64, spec, base, dir string, err error) {
	spec = e.Getenv("GROWTH_SIZES")
	if spec == "" {
		spec = harness.KnobDefault("GROWTH_SIZES")
	}
	if sizes, err = parseSizes(spec); err != nil {
		return nil, spec, "", "", err
	}
	base = e.Getenv("RUN_ID")
	if base == "" {
		base = prefix + "-" + e.Now().UTC().Format("0102-1504")
	}
	dir, err = measurementDir(e, base)
	return sizes, spec, base, dir, err
}

// withMix puts growth's mix into over unless TIER or SCENARIOS choose another, and duration unless
// DURATION is set; it returns the knobs it set, for the runs' recorded environment.
func withMix(e Env, over map[string]string, duration string) []string {
	var set []string
	if e.Getenv("TIER") == "" && e.Getenv("SCENARIOS") == "" {
		over["TIER"], over["SCENARIOS"] = growthMix.tier, growthMix.scenarios
		set = append(set, "TIER", "SCENARIOS")
		for k, v := range growthMix.knobs {
			if e.Getenv(k) == "" {
				over[k] = v
				set = append(set, k)
			}
		}
	}
	if e.Getenv("DURATION") == "" {
		over["DURATION"] = duration
		set = append(set, "DURATION")
	}
	return set
}
