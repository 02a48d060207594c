package results

import (
	"path/filepath"
	"sort"
	"strings"

	"certctl-loadtest/internal/samples"
)

// FailedMetric is the counter a journey adds once per iteration that failed, tagged with the step it
// failed at (failed_at) and that step's HTTP status (status): k6/lib/metrics.js's acmeOrderFailed. Its
// record counts each step (counters failed_<step>); which answers those were is only in the samples.
const FailedMetric = "acme_order_failed"

// Failure is how many iterations failed at one step with one answer.
type Failure struct {
	Step   string  `json:"step"`
	Status string  `json:"status"` // the HTTP status; "0": no answer
	Count  float64 `json:"count"`
}

// failures reads a scenario's raw samples for FailedMetric, when its record counted a failed step:
// each step and status with its count, most first. nil when none failed or the samples are gone.
func failures(dir, scenario string, rec *Record) []Failure {
	failed := false
	for k, v := range rec.Counters {
		failed = failed || strings.HasPrefix(k, "failed_") && v > 0
	}
	if !failed {
		return nil
	}
	by := map[[2]string]float64{}
	_, err := samples.Read(filepath.Join(dir, "raw", scenario+".json.gz"), []string{FailedMetric}, func(p samples.Point) {
		if p.Load() {
			by[[2]string{p.Tags["failed_at"], p.Tags["status"]}] += p.Value
		}
	})
	if err != nil {
		return nil
	}
	out := make([]Failure, 0, len(by))
	for k, n := range by {
		out = append(out, Failure{Step: k[0], Status: k[1], Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Step+" "+out[i].Status < out[j].Step+" "+out[j].Status
	})
	return out
}
