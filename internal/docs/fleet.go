package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"certctl-loadtest/internal/fleet"
)

// FleetExample is the fleet docs/fleet.md's table derives: the README's question.
const FleetExample = "fleets/example.yaml"

// FleetMixTable is the example fleet's load at two sizes, each operation as derived and as a run of the
// default step makes it, for docs/fleet.md: the formulas are fleet.Mix's own.
func FleetMixTable(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, FleetExample))
	if err != nil {
		return "", err
	}
	d, err := fleet.Parse(b, FleetExample)
	if err != nil {
		return "", err
	}
	sizes := []float64{10_000, 100_000}
	stepS := fleet.DefaultSettings.StepS
	var out strings.Builder
	fmt.Fprintf(&out, "| scenario | what | from the fleet (`%s`) |", FleetExample)
	for _, n := range sizes {
		fmt.Fprintf(&out, " at %s: derived, run as |", fleet.SizeText(n))
	}
	out.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(sizes)) + "\n")
	mixes := make([]map[string]fleet.Op, len(sizes))
	for i, n := range sizes {
		mixes[i] = map[string]fleet.Op{}
		for _, o := range d.RunMix(n, stepS) {
			mixes[i][o.Scenario] = o
		}
	}
	for _, o := range d.RunMix(sizes[0], stepS) {
		fmt.Fprintf(&out, "| `%s` | %s | %s |", o.Scenario, o.What, o.Formula)
		for i := range sizes {
			x := mixes[i][o.Scenario]
			fmt.Fprintf(&out, " %.3g/s, %s |", x.PerSecond, x.RunAs())
		}
		out.WriteString("\n")
	}
	return out.String(), nil
}

// FleetDir holds the recorded fleet answers the docs quote: <build>.json, a search's fleet.json as
// `loadtest fleet` wrote it.
const FleetDir = "docs/fleet"

// FleetAnswer is the README's first-screen sentence: each recorded answer of the example fleet, by
// build, the pinned release's first (the answer an operator of the release reads), on the testbed it
// was measured on; or that none is recorded yet.
func FleetAnswer(root string) (string, error) {
	pinned, err := pinnedRelease(root)
	if err != nil {
		return "", err
	}
	var lines []string
	err = eachRecorded(root, FleetDir, func(build, file string, b []byte) error {
		var r fleet.Result
		if err := json.Unmarshal(b, &r); err != nil || r.Schema != fleet.Schema {
			return fmt.Errorf("%s: not a fleet answer (%s): %v", file, fleet.Schema, err)
		}
		where := "an unrecorded testbed"
		if r.Testbed != nil {
			where = fmt.Sprintf("%d CPUs (%s), calibrated %s", r.Testbed.CPUs, r.Testbed.CPUModel, r.Testbed.At.UTC().Format("2006-01-02"))
		}
		name := build
		if build == pinned {
			name += " (the pinned release)"
		}
		line := fmt.Sprintf("- **certctl %s** %s of the example fleet (`%s`) at %g-day rotation, on %s", name, r.Verdict, FleetExample, r.Fleet.RotationDays, where)
		if r.GivesWay != nil && r.Answer > 0 {
			line += fmt.Sprintf("; the first thing to give way beyond it: %s", r.GivesWay.Breach())
		}
		line += fmt.Sprintf(" ([%s](%s/%s.json), %d runs, %.0f min).", FleetDir, FleetDir, build, len(r.Tries), r.TookS/60)
		if build == pinned {
			lines = append([]string{line}, lines...)
		} else {
			lines = append(lines, line)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(lines) == 0 {
		return "No fleet answer is recorded yet: `make fleet` searches one on your machine ([docs/fleet.md](docs/fleet.md)).\n", nil
	}
	return "What the harness measured certctl to carry ([docs/fleet.md](docs/fleet.md)):\n\n" + strings.Join(lines, "\n") + "\n", nil
}
