package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"certctl-loadtest/internal/report"
)

// BaselineTable renders the measured baselines: every scenario of every summary.json kept under
// docs/baselines/, with the run's provenance. The figures come from those recorded runs only.
func BaselineTable(root string) (string, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "baselines", "*.json"))
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	var b strings.Builder
	b.WriteString("| scenario | tier | target/s | achieved/s | requests | errors | p50 ms | p95 ms | p99 ms | max ms | result | run (certctl image · date · host · command) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		var s report.Summary
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("%s: %w", f, err)
		}
		img := s.Run.Images["certctl-server"]
		prov := fmt.Sprintf("`%s` · %s · %d CPUs · `%s` ([summary](baselines/%s))", img,
			s.Run.StartedAt.UTC().Format("2006-01-02"), s.Run.Host.CPUs, s.Run.Command, filepath.Base(f))
		for _, sc := range s.Scenarios {
			r := sc.Record
			if r == nil {
				fmt.Fprintf(&b, "| %s | %s | | | | | | | | | %s | %s |\n", sc.Name, sc.Tier, sc.Status, prov)
				continue
			}
			l := r.LatencyMS
			fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f | %.0f | %.2f %% | %.2f | %.2f | %.2f | %.1f | %s | %s |\n",
				sc.Name, sc.Tier, r.TargetRatePerS, r.AchievedRatePerS, r.Requests, r.ErrorRate*100,
				l.P50, l.P95, l.P99, l.Max, sc.Status, prov)
		}
	}
	return b.String(), nil
}
