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
	var rs []growth.Recorded
	err := eachRecorded(root, GrowthDir, func(build, file string, b []byte) error {
		var r growth.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if r.Schema != growth.Schema {
			return fmt.Errorf("%s: schema %q, want %q", file, r.Schema, growth.Schema)
		}
		rs = append(rs, growth.Recorded{Build: build, Result: r})
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(rs) == 0 {
		return "No sweep recorded yet.\n", nil
	}
	return growth.Markdown(rs), nil
}

// eachRecorded calls fn with each recorded <build>.json of dir, the builds in name order.
func eachRecorded(root, dir string, fn func(build, file string, b []byte) error) error {
	files, err := filepath.Glob(filepath.Join(root, dir, "*.json"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := fn(strings.TrimSuffix(filepath.Base(f), ".json"), f, b); err != nil {
			return err
		}
	}
	return nil
}
