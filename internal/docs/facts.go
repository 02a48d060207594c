package docs

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"certctl-loadtest/internal/harness"
)

// Facts the prose used to restate by hand and got wrong as the code moved on (issue 29): which tiers
// there are and how TIER and the runner treat them, which executor each scenario uses, how large the
// scale seed is, and which ports the compose files publish. Each is rendered from the code here.

// executorModels says what each k6 executor the scenarios use measures. A scenario with an executor
// not listed here stops `make docs`: its model has to be explained before it is published.
var executorModels = map[string]string{
	"constant-arrival-rate": "open model: iterations start on a schedule whatever the server does; one that finds no free VU is dropped and counted (`dropped_iterations`)",
	"constant-vus":          "closed loop: each VU starts its next iteration when the last one ends, so the load slows down with the server; nothing can be dropped",
	"per-vu-iterations":     "an event: each VU runs its iterations once (a mass rotation, a scheduled scan), bounded by the scenario's duration",
}

// ExecutorTable renders which scenarios use which executor (docs/methodology.md).
func ExecutorTable(rows []Row) (string, error) {
	byExec := map[string][]string{}
	for _, r := range rows {
		if _, ok := executorModels[r.Executor]; !ok {
			return "", fmt.Errorf("%s uses k6's %s executor, which docs.executorModels does not explain", r.Script, r.Executor)
		}
		byExec[r.Executor] = append(byExec[r.Executor], "`"+r.Scenario+"`")
	}
	execs := make([]string, 0, len(byExec))
	for e := range byExec {
		execs = append(execs, e)
	}
	// The most used first: the model the harness is built on, then the exceptions.
	sort.Slice(execs, func(i, j int) bool {
		if len(byExec[execs[i]]) != len(byExec[execs[j]]) {
			return len(byExec[execs[i]]) > len(byExec[execs[j]])
		}
		return execs[i] < execs[j]
	})
	var b strings.Builder
	b.WriteString("| executor | what it measures | scenarios |\n|---|---|---|\n")
	for _, e := range execs {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", e, executorModels[e], strings.Join(byExec[e], ", "))
	}
	return b.String(), nil
}

// TierTable renders every tier (harness.Tiers) with its scenarios, whether TIER=default and TIER=all
// take it, how its scenarios share stacks, and the make target that runs it (README.md, docs/scale.md).
func TierTable(root string) (string, error) {
	found, err := harness.DiscoverTiers(root)
	if err != nil {
		return "", err
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tiers, one folder of `k6/` each:\n\n", len(harness.Tiers))
	b.WriteString("| tier | scenarios | in `TIER=default` | in `TIER=all` | stacks | make target |\n|---|---|---|---|---|---|\n")
	for _, t := range harness.Tiers {
		var scs []string
		for _, s := range found[t.Name] {
			scs = append(scs, "`"+s.Name+"`")
		}
		stacks := "one, all scenarios at once"
		if t.OwnStack {
			stacks = "one per scenario, one after another"
		}
		if t.Alone != "" {
			stacks += "; runs alone: " + t.Alone
		}
		target := "`make loadtest TIER=" + t.Name + "`"
		if t.Make != "" {
			target = "`make " + t.Make + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", t.Name, strings.Join(scs, ", "), yes(t.Default), yes(t.InAll), stacks, target)
	}
	return b.String(), nil
}

// MakeTiers is the Makefile's targets that run a tier whole, each with its help line, rendered from
// harness.Tiers (the default tiers' target, loadtest, is written by hand: it is the main one). The block
// ends inside the comment that carries the end marker, hence the trailing "# ".
func MakeTiers() string {
	var b strings.Builder
	for _, t := range harness.Tiers {
		if t.Make == "" || t.Make == "loadtest" {
			continue
		}
		help, says := t.Help, "exited $$code"
		if t.InAll && !t.Default {
			help += "; TIER=all runs " + harness.AllMeaning()
		}
		if t.OwnStack {
			says += " (the loadtest lines above say which scenario, and where its results are)"
		}
		fmt.Fprintf(&b, "%s: $(LOADTEST) ## %s\n\t@LOADTEST_GOAL=$@ TIER=%s $(LOADTEST) run || { code=$$?; echo \"make: $@ %s\" >&2; exit $$code; }\n\n", t.Make, help, t.Name, says)
	}
	b.WriteString("# ")
	return b.String()
}

// BulkSeedAtDefaults is the bulk-renewal seed of a run with bulk_renewal at the defaults, worked out
// from the script as k6 resolves it (rate, time unit) and the registry (DURATION, BATCH_SIZE,
// SEED_BULK_CERTS), and checked against the harness's own sizing (harness.BulkPool), whose rate and
// batch are constants: a drift between them and the script stops `make docs`.
func BulkSeedAtDefaults(rows []Row) (n int, formula string, err error) {
	var row *Row
	for i := range rows {
		if rows[i].Scenario == "bulk_renewal" {
			row = &rows[i]
		}
	}
	if row == nil {
		return 0, "", fmt.Errorf("no bulk_renewal scenario: the scale seed's size has nothing to be worked out from")
	}
	dur, err := harness.ParseDuration("DURATION", harness.KnobDefault("DURATION"))
	if err != nil {
		return 0, "", err
	}
	unit, err := time.ParseDuration(row.TimeUnit)
	if err != nil || unit <= 0 {
		return 0, "", fmt.Errorf("%s: time unit %q: %v", row.Script, row.TimeUnit, err)
	}
	batch, _ := strconv.Atoi(harness.KnobDefault("BATCH_SIZE"))
	floor, _ := strconv.Atoi(harness.KnobDefault("SEED_BULK_CERTS"))
	// k6 starts an arrival-rate scenario's first iteration at 0 s: rate × duration + 1 in all.
	n = (int(math.Ceil(row.Rate*dur.Seconds()/unit.Seconds())) + 1) * batch
	n = max(n, floor)
	if h := harness.BulkPool(nil, dur); h != strconv.Itoa(n) {
		return 0, "", fmt.Errorf("harness.BulkPool sizes the bulk-renewal seed %s at the defaults, %s (%g per %s) and BATCH_SIZE %d give %d: the rate or batch in internal/harness's bulkPool has drifted from the script",
			h, row.Script, row.Rate, row.TimeUnit, batch, n)
	}
	formula = fmt.Sprintf("(%g per %s × `DURATION` %s + 1) × `BATCH_SIZE` %d", row.Rate, row.TimeUnit, shortDuration(dur.String()), batch)
	return n, formula, nil
}

// ScaleSeedTable renders the scale seeder's fixtures and how many rows each writes (README.md,
// docs/scale.md, seed/README.md).
func ScaleSeedTable(rows []Row) (string, error) {
	bulk, formula, err := BulkSeedAtDefaults(rows)
	if err != nil {
		return "", err
	}
	certs, _ := strconv.Atoi(harness.KnobDefault("SEED_BULK_CERTS"))
	agents, _ := strconv.Atoi(harness.KnobDefault("SEED_AGENTS"))
	var b strings.Builder
	b.WriteString("| scale seed | rows | how many by default |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| [`01_bulk_renewal_certs.sql`](/seed/01_bulk_renewal_certs.sql) | `SEED_BULK_CERTS` certificates, `Active`, expiring over the next 30 days | %s; **%s** in a run with `bulk_renewal` (`SEED_BULK_CERTS` unset): one pass without revisiting a certificate, %s |\n",
		thousands(certs), thousands(bulk), formula)
	fmt.Fprintf(&b, "| [`02_agent_fleet.sql`](/seed/02_agent_fleet.sql) | `SEED_AGENTS` agents, `Online` | %s |\n", thousands(agents))
	return b.String(), nil
}

// thousands writes n with a comma every three digits, as the prose does: 75,050.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Overlays are the compose files besides docker-compose.yml, and when the harness uses each
// (internal/harness/compose.go).
var Overlays = map[string]string{
	"compose.observability.yml": "with `OBSERVABILITY=true`, beside `docker-compose.yml`",
	"compose.external.yml":      "with `TARGET=external`, instead of `docker-compose.yml`",
}

type composeFile struct {
	Services map[string]struct {
		Profiles []string `yaml:"profiles"`
		Ports    []any    `yaml:"ports"`
	} `yaml:"services"`
}

// portRE is the short port syntax the compose files use: [address:]host:container, the host port
// either a number or ${VARIABLE:-default}.
var portRE = regexp.MustCompile(`^(?:([0-9.]+):)?(?:\$\{([A-Z][A-Z0-9_]*):-(\d+)\}|(\d+)):(\d+)$`)

// PublishedPort is one port a compose service publishes on the host.
type PublishedPort struct {
	File, Service, Profiles string
	Address, Variable       string
	Host, Container         string
}

// PublishedPorts reads every compose file of the repository (docker-compose.yml, compose.*.yml).
func PublishedPorts(root string) (files []string, ports []PublishedPort, err error) {
	overlays, _ := filepath.Glob(filepath.Join(root, "compose.*.yml"))
	sort.Strings(overlays)
	for _, f := range append([]string{filepath.Join(root, "docker-compose.yml")}, overlays...) {
		name := filepath.Base(f)
		if _, ok := Overlays[name]; !ok && name != "docker-compose.yml" {
			return nil, nil, fmt.Errorf("%s: docs.Overlays does not say when the harness uses it", name)
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		var c composeFile
		if err := yaml.Unmarshal(raw, &c); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		files = append(files, name)
		services := make([]string, 0, len(c.Services))
		for s := range c.Services {
			services = append(services, s)
		}
		sort.Strings(services)
		for _, s := range services {
			for _, p := range c.Services[s].Ports {
				str, ok := p.(string)
				m := portRE.FindStringSubmatch(str)
				if !ok || m == nil {
					return nil, nil, fmt.Errorf("%s: service %s publishes %v, a form docs.PublishedPorts does not read", name, s, p)
				}
				host := m[3] + m[4]
				addr := m[1]
				if addr == "" {
					addr = "0.0.0.0" // compose's default: every interface
				}
				ports = append(ports, PublishedPort{File: name, Service: s, Profiles: strings.Join(c.Services[s].Profiles, ", "),
					Address: addr, Variable: m[2], Host: host, Container: m[5]})
			}
		}
	}
	return files, ports, nil
}

// PortTable renders which compose file publishes which port, and the setting that brings the file in.
func PortTable(root string) (string, error) {
	files, ports, err := PublishedPorts(root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| compose file | used | service (profile) | published on the host | container port |\n|---|---|---|---|---|\n")
	for _, f := range files {
		by := Overlays[f]
		if f == "docker-compose.yml" {
			by = "every run on the harness's stack"
		}
		n := 0
		for _, p := range ports {
			if p.File != f {
				continue
			}
			n++
			host := "`" + p.Address + ":" + p.Host + "`"
			if p.Variable != "" {
				host += " (`" + p.Variable + "`)"
			}
			fmt.Fprintf(&b, "| [`%s`](/%s) | %s | `%s` (`%s`) | %s | %s |\n", f, f, by, p.Service, p.Profiles, host, p.Container)
		}
		if n == 0 {
			fmt.Fprintf(&b, "| [`%s`](/%s) | %s | none | none | |\n", f, f, by)
		}
	}
	return b.String(), nil
}

// WorkflowTierInput is the tier input of .github/workflows/loadtest.yml's dispatch: a choice of every tier
// (the folders of k6/), the two aliases and the spot checks, described by what each runs. The block ends
// inside the YAML comment that carries the end marker, hence the trailing "# ".
func WorkflowTierInput(root string) (string, error) {
	tiers, err := harness.DiscoverTiers(root)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(tiers))
	var each []string
	for t := range tiers {
		names = append(names, t)
		if harness.OwnStackEach(t) {
			each = append(each, t)
		}
	}
	sort.Strings(names)
	sort.Strings(each)
	options := append(append([]string{"default", "all"}, names...), "spotcheck")
	desc := fmt.Sprintf("Tiers to run. default = %s (make loadtest); all = %s, on one stack; %s: one job per scenario, each on its own runner; spotcheck: the operator spot checks (make spotcheck)",
		strings.Join(harness.DefaultTiers(), " + "), harness.AllMeaning(), harness.AndList(each))
	const in = "        "
	return fmt.Sprintf("%sdescription: %q\n%stype: choice\n%soptions: [%s]\n%s# ", in, desc, in, in, strings.Join(options, ", "), in), nil
}

// WorkflowOwnStack is the plan script's list of the tiers that get a job per scenario
// (harness.OwnStackEach), inside the workflow's run block; it ends inside the comment of the end marker.
func WorkflowOwnStack(root string) (string, error) {
	tiers, err := harness.DiscoverTiers(root)
	if err != nil {
		return "", err
	}
	var each []string
	for t := range tiers {
		if harness.OwnStackEach(t) {
			each = append(each, t)
		}
	}
	sort.Strings(each)
	const in = "          "
	return fmt.Sprintf("%sown_stack_tiers=%q\n%s# ", in, strings.Join(each, " "), in), nil
}
