package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"certctl-loadtest/internal/growth"
)

// GrowthDir holds the recorded growth sweeps the docs quote: <build>.json, a sweep's growth.json as
// `loadtest growth` wrote it (docs/growth.md says which command).
const GrowthDir = "docs/growth"

// GrowthTable renders every recorded sweep of GrowthDir as one table, the builds in name order.
func GrowthTable(root string) (string, error) {
	files, err := filepath.Glob(filepath.Join(root, GrowthDir, "*.json"))
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	var rs []growth.Recorded
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		var r growth.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return "", fmt.Errorf("%s: %w", f, err)
		}
		if r.Schema != growth.Schema {
			return "", fmt.Errorf("%s: schema %q, want %q", f, r.Schema, growth.Schema)
		}
		rs = append(rs, growth.Recorded{Build: strings.TrimSuffix(filepath.Base(f), ".json"), Result: r})
	}
	if len(rs) == 0 {
		return "No sweep recorded yet.\n", nil
	}
	return growth.Markdown(rs), nil
}
