package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"certctl-loadtest/internal/fleet"
)

// FleetExample is the fleet docs/fleet.md's table derives: the README's question.
const FleetExample = "fleets/example.yaml"

// FleetMixTable is the example fleet's load at two sizes, each operation as derived and as run, for
// docs/fleet.md: the formulas are fleet.Mix's own.
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
	var out strings.Builder
	fmt.Fprintf(&out, "| scenario | what | from the fleet (`%s`) |", FleetExample)
	for _, n := range sizes {
		fmt.Fprintf(&out, " at %s: derived, run as |", fleet.SizeText(n))
	}
	out.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(sizes)) + "\n")
	mixes := make([]map[string]fleet.Op, len(sizes))
	for i, n := range sizes {
		mixes[i] = map[string]fleet.Op{}
		for _, o := range d.Mix(n) {
			mixes[i][o.Scenario] = o
		}
	}
	for _, o := range d.Mix(sizes[0]) {
		fmt.Fprintf(&out, "| `%s` | %s | %s |", o.Scenario, o.What, o.Formula)
		for i := range sizes {
			x := mixes[i][o.Scenario]
			fmt.Fprintf(&out, " %.3g/s, %d/%s |", x.PerSecond, x.Rate, x.Unit)
		}
		out.WriteString("\n")
	}
	return out.String(), nil
}
