package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/findings"
	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/overhead"
	"certctl-loadtest/internal/results"
)

// Documents carrying generated blocks. k6/lib/knobs.js, the Makefile and the workflow carry theirs inside
// comments.
var Documents = []string{"README.md", "docs/configuration.md", "docs/scale.md", "docs/performance-baselines.md",
	"docs/methodology.md", "docs/certctl-findings.md", "docs/findings/repro/README.md", "docs/diagnosis.md", "docs/growth.md", "docs/fleet.md", "docs/auth.md", "seed/README.md", "k6/lib/knobs.js", "Makefile",
	".github/workflows/loadtest.yml", "internal/defects/registry.yaml"}

// Blocks renders every generated block by name.
func Blocks(root string, inspect Inspector) (map[string]string, error) {
	rows, err := Collect(root, inspect)
	if err != nil {
		return nil, err
	}
	baselines, err := BaselineTable(root)
	if err != nil {
		return nil, err
	}
	spotchecks, err := SpotcheckTable(root)
	if err != nil {
		return nil, err
	}
	pins, err := harness.ReadEnvFile(filepath.Join(root, ".env"))
	if err != nil {
		return nil, err
	}
	seedVars, err := SeedVariableTable(root)
	if err != nil {
		return nil, err
	}
	executors, err := ExecutorTable(rows)
	if err != nil {
		return nil, err
	}
	tiers, err := TierTable(root)
	if err != nil {
		return nil, err
	}
	scaleSeed, err := ScaleSeedTable(rows)
	if err != nil {
		return nil, err
	}
	tierInput, err := WorkflowTierInput(root)
	if err != nil {
		return nil, err
	}
	ownStack, err := WorkflowOwnStack(root)
	if err != nil {
		return nil, err
	}
	ports, err := PortTable(root)
	if err != nil {
		return nil, err
	}
	registry, err := defects.Registry()
	if err != nil {
		return nil, err
	}
	catalog, err := findings.Load()
	if err != nil {
		return nil, err
	}
	growthTable, err := GrowthTable(root)
	if err != nil {
		return nil, err
	}
	authTable, err := AuthTable(root)
	if err != nil {
		return nil, err
	}
	fleetMix, err := FleetMixTable(root)
	if err != nil {
		return nil, err
	}
	fleetAnswer, err := FleetAnswer(root)
	if err != nil {
		return nil, err
	}
	blocks := map[string]string{
		"executors": executors, "tiers": tiers, "scale-seed": scaleSeed, "ports": ports,
		"scenarios": ScenarioTable(rows), "baselines": baselines, "spotchecks": spotchecks,
		"configuration": ConfigTable(harness.Knobs, pins), "common-knobs": CommonKnobTable(harness.Knobs, pins),
		"make-knobs": MakeKnobs(harness.Knobs, pins), "make-tiers": MakeTiers(), "k6-knobs": K6Defaults(harness.Knobs),
		"exit-codes": ExitCodeTable(results.ExitCodes), "seed-variables": seedVars,
		"defects-registry": RegistryTable(registry), "instruments": InstrumentTable(overhead.Instruments),
		"findings": FindingsTable(catalog), "workflow-tier": tierInput, "workflow-own-stack": ownStack,
		"growth-measured": growthTable, "auth-measured": authTable, "fleet-mix": fleetMix, "fleet-answer": fleetAnswer,
	}
	for _, kind := range []string{findings.KindDefect, findings.KindDesign, findings.KindDocumentation} {
		if blocks["findings-"+kind], err = FindingSections(root, catalog, kind); err != nil {
			return nil, err
		}
	}
	if blocks["registry-file"], err = RegistryFile(catalog); err != nil {
		return nil, err
	}
	if blocks["repro-scripts"], err = ReproTable(root, catalog); err != nil {
		return nil, err
	}
	return blocks, nil
}

// InstrumentTable is the run's own instruments as `loadtest overhead` switches them off, for
// docs/diagnosis.md.
func InstrumentTable(ins []overhead.Off) string {
	var b strings.Builder
	b.WriteString("| instrument | what it does beside the load | switched off by |\n|---|---|---|\n")
	for _, in := range append(slices.Clone(ins), overhead.AllOff()) {
		var kv []string
		for k, v := range in.Settings {
			kv = append(kv, "`"+k+"="+v+"`")
		}
		sort.Strings(kv)
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", in.Name, in.What, strings.Join(kv, " "))
	}
	return b.String()
}

// RegistryTable is the registry of known defects as docs/certctl-findings.md shows it: each entry, the
// builds it was seen on, the scenarios and budgets it explains (a rate or count up to so many failures
// per signature event), the signature that tells it apart, and the builds its latencies were recorded on.
func RegistryTable(reg []defects.Entry) string {
	var b strings.Builder
	b.WriteString("| defect | seen on | its script reproduces it on | scenarios | explains | evidence (its signature) | latencies recorded on | worked around by |\n|---|---|---|---|---|---|---|---|\n")
	for _, e := range reg {
		ev := "counter `" + e.Evidence.Counter + "` above 0"
		if e.Evidence.Setup != "" {
			ev = fmt.Sprintf("setup `%s` ≥ %v", e.Evidence.Setup, e.Evidence.AtLeast)
		}
		around := "—"
		if e.Remedy != "" {
			around = "`" + e.Remedy + "`"
		}
		var explains []string
		for _, x := range e.Explains {
			s := "`" + x.String() + "`"
			if x.Each != 1 && !x.NoSample {
				s += fmt.Sprintf(" (%v a signature)", x.Each)
			}
			explains = append(explains, s)
		}
		repro := "—"
		if len(e.Reproduced) > 0 {
			repro = fmt.Sprintf("%s ([`%s.sh`](findings/repro/%s.sh))", strings.Join(e.Reproduced, ", "), e.ID, e.ID)
		}
		recorded := "—"
		var on []string
		for _, r := range e.Recorded {
			on = append(on, fmt.Sprintf("%s (%s, %d CPUs)", r.Build, r.Date, r.Testbed.CPUs))
		}
		if len(on) > 0 {
			recorded = strings.Join(on, ", ")
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s | %s | %s | %s | %s |\n", e.Title, e.ID, strings.Join(e.Seen, ", "), repro,
			"`"+strings.Join(e.Scenarios, "`, `")+"`", strings.Join(explains, ", "), ev, recorded, around)
	}
	return b.String()
}

// FindingsTable is docs/certctl-findings.md's contents: every finding of the catalogue, defects first,
// then design choices and documentation points, with how each build showed it, whether its
// reproduction reproduces there, and its script.
func FindingsTable(c findings.Catalog) string {
	var b strings.Builder
	b.WriteString("| finding | kind |")
	for _, bu := range c.Builds {
		fmt.Fprintf(&b, " %s |", bu.Name)
	}
	b.WriteString(" reproduction |\n|---|---|")
	for range c.Builds {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, kind := range []string{findings.KindDefect, findings.KindDesign, findings.KindDocumentation} {
		for _, e := range c.Findings {
			if e.Kind != kind {
				continue
			}
			fmt.Fprintf(&b, "| [%s](#%s) | %s |", e.Title, e.ID, e.Kind)
			for _, bu := range c.Builds {
				how := e.Builds[bu.Name]
				if slices.Contains(e.Reproduces, bu.Name) {
					how += ", reproduces"
				}
				fmt.Fprintf(&b, " %s |", how)
			}
			fmt.Fprintf(&b, " [`%s.sh`](findings/repro/%s.sh) |\n", e.ID, e.ID)
		}
	}
	return b.String()
}

// ReproTable is docs/findings/repro/README.md's table of scripts: each finding's script, whether it needs
// PGURL (read from the script), what it checks and what it creates (its record's repro part).
func ReproTable(root string, c findings.Catalog) (string, error) {
	var b strings.Builder
	b.WriteString("| anchor | PGURL | what it checks | what it creates |\n|---|---|---|---|\n")
	for _, e := range c.Findings {
		script, err := os.ReadFile(filepath.Join(root, findings.ReproDir, e.ID+".sh"))
		if err != nil {
			return "", fmt.Errorf("finding %s: %w", e.ID, err)
		}
		if e.Repro.Checks == "" || e.Repro.Creates == "" {
			return "", fmt.Errorf("finding %s: its record says not what its script checks and creates (repro: checks:, creates:)", e.ID)
		}
		db := "no"
		if findings.NeedsDatabase(string(script)) {
			db = "yes"
		}
		fmt.Fprintf(&b, "| [%s](../../certctl-findings.md#%s) | %s | %s | %s |\n", e.ID, e.ID, db, e.Repro.Checks, e.Repro.Creates)
	}
	return b.String(), nil
}

// FindingBlock opens a finding's section of docs/certctl-findings.md with what its record's data says: its
// kind, the builds its script reproduces on, what it costs a fleet, the code at each build and how to
// run the script. database: the script needs PGURL.
func FindingBlock(c findings.Catalog, e findings.Entry, database bool) string {
	var b strings.Builder
	var on []string
	for _, bu := range c.Builds {
		if slices.Contains(e.Reproduces, bu.Name) {
			on = append(on, bu.Name)
		}
	}
	repro := "**Its script** reproduces it on no build yet."
	if len(on) > 0 {
		repro = "**Its script reproduces it** on " + strings.Join(on, " and ") + "."
	}
	fmt.Fprintf(&b, "**Kind:** %s. **Builds:** %s. %s\n\n", e.Kind, c.BuildsText(e), repro)
	fmt.Fprintf(&b, "**Impact.** %s\n\n", strings.TrimSpace(e.Impact))
	b.WriteString(findings.Where(c, e, "**Code** at", true))
	pg := ""
	if database {
		pg = "`PGURL=postgres://…` "
	}
	fmt.Fprintf(&b, "**Script:** %s[`docs/findings/repro/%s.sh`](findings/repro/%s.sh) `<certctl-url> <admin-key> <ca-file>` (exit 0: reproduces; [how to run it](findings/repro/README.md)).\n", pg, e.ID, e.ID)
	return b.String()
}

// ---- spot checks (k6/spotcheck, make spotcheck) ----

// Spotcheck is one entry of k6/lib/spotchecks.json.
type Spotcheck struct {
	Title      string              `json:"title"`
	Source     string              `json:"source"`
	Thresholds map[string][]string `json:"thresholds"`
	Measured   struct {
		Date, Machine, Certctl, Inventory, Command string
		Figures                                    map[string]float64
		Note                                       string
	} `json:"measured"`
	IfWorse []string `json:"if_worse"`
}

// SpotcheckTable renders k6/lib/spotchecks.json: one row per check, in the order `loadtest spotcheck`
// runs them (file names), then each check's published baseline, measurement and guidance.
func SpotcheckTable(root string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(root, "k6", "lib", "spotchecks.json"))
	if err != nil {
		return "", err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return "", fmt.Errorf("k6/lib/spotchecks.json: %w", err)
	}
	checks := map[string]Spotcheck{}
	var names []string
	for name, r := range all {
		if strings.HasPrefix(name, "_") {
			continue
		}
		var c Spotcheck
		if err := json.Unmarshal(r, &c); err != nil {
			return "", fmt.Errorf("k6/lib/spotchecks.json: %s: %w", name, err)
		}
		checks[name] = c
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| check | what it measures | baseline: thresholds (fail the run) | measured here |\n|---|---|---|---|\n")
	for _, n := range names {
		c := checks[n]
		fmt.Fprintf(&b, "| [`%s`](../k6/spotcheck/%s.js) | %s | %s | %s |\n", n, n, c.Title, thresholdList(c.Thresholds), figureList(c))
	}
	for _, n := range names {
		c := checks[n]
		fmt.Fprintf(&b, "\n**`%s`**. Published by certctl: %s.\n", n, c.Source)
		if m := c.Measured; m.Command != "" {
			fmt.Fprintf(&b, "Measured %s on %s, certctl %s, inventory %s:\n\n```sh\n%s\n```\n", m.Date, m.Machine, m.Certctl, m.Inventory, m.Command)
			if m.Note != "" {
				fmt.Fprintf(&b, "\n%s\n", m.Note)
			}
		}
		b.WriteString("\nIf you see worse, look here:\n\n")
		for _, w := range c.IfWorse {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	return b.String(), nil
}

func thresholdList(t map[string][]string) string {
	sels := make([]string, 0, len(t))
	for s := range t {
		sels = append(sels, s)
	}
	sort.Strings(sels)
	parts := make([]string, len(sels))
	for i, s := range sels {
		parts[i] = fmt.Sprintf("`%s` %s", s, strings.Join(quoteAll(t[s]), ", "))
	}
	return strings.Join(parts, "; ")
}

func figureList(c Spotcheck) string {
	if len(c.Measured.Figures) == 0 {
		return "not measured yet"
	}
	keys := make([]string, 0, len(c.Measured.Figures))
	for k := range c.Measured.Figures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %g", k, c.Measured.Figures[k])
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%s, certctl %s; how: below)", c.Measured.Date, c.Measured.Certctl)
}
