// Package history keeps the scheduled runs' figures, each week's with its testbed, in a store that
// outlives the 90 days GitHub keeps artifacts (a directory: in CI, a data branch's checkout), and judges
// the newest week against the series of its own testbed by change points: a step in a noisy series is
// told from one noisy week by a well-kept change-point detector (Apache Otava's, ChangePoints), not by
// a pairwise comparison of one week with the last.
package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/testbed"
)

// File is the store's one file in its directory: an entry a line, oldest first, appended to.
const File = "history.jsonl"

// Schema names an entry's shape.
const Schema = "certctl-loadtest/history/v1"

// Entry is one run of one week: a run label's figures with what they were measured on.
type Entry struct {
	Schema string    `json:"schema"`
	At     time.Time `json:"at"`
	// Week names the workflow run it came from ("#41 2026-11-16"); RunID is the harness's run.
	Week    string `json:"week"`
	HeadSHA string `json:"head_sha,omitempty"`
	Label   string `json:"label"` // the run label: api, connector, scale-agent-storm …
	RunID   string `json:"run_id"`
	// Build is the certctl image that ran; Postgres its database's version.
	Build    string               `json:"build"`
	Postgres string               `json:"postgres,omitempty"`
	Testbed  *testbed.Calibration `json:"testbed,omitempty"`
	// Scenarios are each scenario's figures (absent: the scenario left no record).
	Scenarios map[string]Figures `json:"scenarios"`
}

// Figures are what the series judge: latencies (ms, lower is better) and the rate achieved (higher).
type Figures struct {
	P50      float64 `json:"p50_ms"`
	P95      float64 `json:"p95_ms"`
	P99      float64 `json:"p99_ms"`
	Achieved float64 `json:"achieved_per_s"`
}

// Metrics are the figures a series is kept of, and which way is worse.
var Metrics = []Metric{{"p50", true}, {"p95", true}, {"p99", true}, {"achieved", false}}

// Metric is one figure: its name and whether higher is worse.
type Metric struct {
	Name        string
	HigherWorse bool
}

func (f Figures) value(m string) float64 {
	switch m {
	case "p50":
		return f.P50
	case "p95":
		return f.P95
	case "p99":
		return f.P99
	}
	return f.Achieved
}

// FromSummary is a run's entry: label and week say which scheduled run it belongs to.
func FromSummary(s results.Summary, label, week string, at time.Time) Entry {
	e := Entry{Schema: Schema, At: at.UTC(), Week: week, Label: label, RunID: s.RunID, Build: s.Run.Certctl.Image,
		Postgres: s.Run.Postgres, Testbed: s.Run.Testbed, Scenarios: map[string]Figures{}}
	for _, sc := range s.Scenarios {
		if r := sc.Record; r != nil && sc.Status != "no-results" {
			e.Scenarios[sc.Name] = Figures{P50: r.LatencyMS.P50, P95: r.LatencyMS.P95, P99: r.LatencyMS.P99, Achieved: r.AchievedRatePerS}
		}
	}
	return e
}

// Load reads the store in dir, oldest first; a directory without it is an empty history.
func Load(dir string) ([]Entry, error) {
	b, err := os.ReadFile(filepath.Join(dir, File))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Schema != Schema {
			return nil, fmt.Errorf("%s line %d: not a history entry (%s): %v", filepath.Join(dir, File), n, Schema, err)
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return a.At.Compare(b.At) })
	return out, sc.Err()
}

// Append adds entries to the store in dir, creating it.
func Append(dir string, entries ...Entry) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, File), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err == nil {
			_, err = f.Write(append(b, '\n'))
		}
		if err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// sameTestbed: the two entries' machines are one testbed (testbed.Differences) and their PostgreSQL
// one major version; an entry with no calibration is on a testbed of its own.
func sameTestbed(a, b Entry) []string {
	if a.Testbed == nil || b.Testbed == nil {
		return []string{"no calibration"}
	}
	d := testbed.Differences(*a.Testbed, *b.Testbed)
	pa, pb := (results.Run{Postgres: a.Postgres}).PostgresMajor(), (results.Run{Postgres: b.Postgres}).PostgresMajor()
	if pa != pb {
		d = append(d, fmt.Sprintf("PostgreSQL %s vs %s", orUnknown(pa), orUnknown(pb)))
	}
	return d
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Series are the entries of the newest's label on its testbed, oldest first, the newest last; apart
// counts the label's entries left out for another testbed. An entry of the newest's own week (a job run
// again) is not its history.
func Series(entries []Entry, newest Entry) (series []Entry, apart int) {
	for _, e := range entries {
		if e.Label != newest.Label || e.Week == newest.Week {
			continue
		}
		if len(sameTestbed(e, newest)) > 0 {
			apart++
			continue
		}
		series = append(series, e)
	}
	return append(series, newest), apart
}
