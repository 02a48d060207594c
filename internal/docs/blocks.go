package docs

import "strings"

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
var Documents = []string{"README.md"}

// Blocks renders every generated block by name.
func Blocks(root string, inspect Inspector) (map[string]string, error) {
	rows, err := Collect(root, inspect)
	if err != nil {
		return nil, err
	}
	return map[string]string{"scenarios": ScenarioTable(rows)}, nil
}
