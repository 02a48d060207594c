package docs

import (
	"fmt"
	"strings"

	"certctl-loadtest/internal/harness"
)

// CleanEnv drops the harness knobs from an environment, so the docs show the defaults whatever the
// caller has set.
func CleanEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if k == "DURATION" || k == "MAX_VUS" || k == "PRE_VUS" || strings.HasPrefix(k, "RATE_") || strings.HasPrefix(k, "CONNECTOR_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Documents carrying generated blocks.
var Documents = []string{"README.md", "docs/configuration.md"}

// Blocks renders every generated block by name.
func Blocks(root string, inspect Inspector) (map[string]string, error) {
	rows, err := Collect(root, inspect)
	if err != nil {
		return nil, err
	}
	return map[string]string{"scenarios": ScenarioTable(rows), "configuration": ConfigTable(harness.Knobs)}, nil
}

// ConfigTable renders the knobs as a Markdown table.
func ConfigTable(knobs []harness.Knob) string {
	var b strings.Builder
	b.WriteString("| variable | type | default | read by | meaning |\n|---|---|---|---|---|\n")
	for _, k := range knobs {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s |\n", strings.ReplaceAll(k.Name, ", ", "`, `"), k.Type, k.Default, k.Read, k.Doc)
	}
	return b.String()
}
