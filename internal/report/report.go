// Package report turns a run directory into summary.json and summary.txt. It is the only writer of
// those two files: k6 writes one record per scenario (scenarios/<name>.json) and `loadtest run` writes
// run.json; a saved run can be re-rendered at any time with `loadtest report <dir>`.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	SummarySchema = "certctl-loadtest/summary@1"
	RecordSchema  = "certctl-loadtest/scenario@1"
)

// Run is run.json: what was run, where, with what, and how each k6 process ended.
type Run struct {
	RunID      string            `json:"run_id"`
	StartedAt  time.Time         `json:"started_at"`
	EndedAt    time.Time         `json:"ended_at"`
	DurationS  float64           `json:"duration_s"`
	Command    string            `json:"command"`
	Tiers      []string          `json:"tiers"`
	Certctl    Certctl           `json:"certctl"`
	Images     map[string]string `json:"images"`
	ImageIDs   map[string]string `json:"image_ids"`
	ImagePins  map[string]string `json:"image_pins,omitempty"` // image that ran in place of a .env pin → that pin
	K6Version  string            `json:"k6_version"`
	Host       Host              `json:"host"`
	Config     map[string]string `json:"config"`
	Scenarios  []ScenarioRun     `json:"scenarios"`
	ExitCode   int               `json:"exit_code"`
	Error      string            `json:"error,omitempty"`
	StackState []string          `json:"stack_state,omitempty"`
}

// Certctl says which certctl ran. Its official images stamp no version (GET /api/v1/version answers
// "dev"), so the image reference and id identify it; the version it reports is the summary's.
type Certctl struct {
	Image        string `json:"image"`
	ImageID      string `json:"image_id,omitempty"`
	Build        string `json:"build,omitempty"`         // the certctl build it was packaged from (CERTCTL_DIST)
	ServerSHA256 string `json:"server_sha256,omitempty"` // of that build's server binary
	Faults       string `json:"faults,omitempty"`        // the fault proxy's settings, when k6 went through it
}

// Host describes the machine that generated and served the load (one box: k6 and certctl share it).
type Host struct {
	CPUs          int    `json:"cpus"`
	DockerCPUs    int    `json:"docker_cpus,omitempty"`
	MemoryBytes   int64  `json:"docker_memory_bytes,omitempty"`
	DockerVersion string `json:"docker_version,omitempty"`
	OS            string `json:"os"`
	Kernel        string `json:"kernel,omitempty"`
	Hostname      string `json:"hostname,omitempty"`
}

// ScenarioRun is how one k6 process ended.
type ScenarioRun struct {
	Tier     string `json:"tier"`
	Name     string `json:"name"`
	Script   string `json:"script"`
	ExitCode int    `json:"exit_code"`
	Log      string `json:"log"`
}

// Record is what k6's handleSummary writes for one scenario (k6/lib/summary.js).
type Record struct {
	Schema            string      `json:"schema"`
	Scenario          string      `json:"scenario"`
	Tier              string      `json:"tier"`
	Executor          string      `json:"executor"`
	DurationS         float64     `json:"duration_s"`
	TargetRatePerS    float64     `json:"target_rate_per_s"`
	AchievedRatePerS  float64     `json:"achieved_rate_per_s"`
	Iterations        float64     `json:"iterations"`
	DroppedIterations float64     `json:"dropped_iterations"`
	Requests          float64     `json:"requests"`
	ErrorRate         float64     `json:"error_rate"`
	LatencyMetric     string      `json:"latency_metric"`
	LatencyMS         Latency     `json:"latency_ms"`
	IterationMS       *Latency    `json:"iteration_ms,omitempty"` // absent in records written before it was kept
	Thresholds        []Threshold `json:"thresholds"`
	ThresholdsOK      bool        `json:"thresholds_ok"`
	VUs               struct {
		PreAllocated int `json:"pre_allocated"`
		Max          int `json:"max"`
	} `json:"vus"`
	TestRunDurationS float64         `json:"test_run_duration_s"`
	Setup            json.RawMessage `json:"setup"`
	// Connector tier: the target type and the TLS handshake / TCP connect parts of each request.
	TargetType string             `json:"target_type,omitempty"`
	TrendsMS   map[string]Latency `json:"trends_ms,omitempty"`
	// Counters: totals a scenario reports from the responses (bulk-renew enqueued/skipped, ACME 5xx
	// and 429 shapes, certctl's known renewal-info 404s).
	Counters map[string]float64 `json:"counters,omitempty"`
}

type Latency struct {
	Avg float64 `json:"avg"`
	Min float64 `json:"min,omitempty"` // absent in records written before it was kept
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

type Threshold struct {
	Metric     string `json:"metric"`
	Expression string `json:"expression"`
	OK         bool   `json:"ok"`
}

// Scenario is one row of summary.json: the record (if k6 wrote one) plus how its process ended.
type Scenario struct {
	Name     string  `json:"name"`
	Tier     string  `json:"tier"`
	ExitCode int     `json:"exit_code"`
	Status   string  `json:"status"` // passed | failed | no-results
	Problem  string  `json:"problem,omitempty"`
	Record   *Record `json:"result,omitempty"`
}

// Summary is summary.json.
type Summary struct {
	Schema         string     `json:"schema"`
	RunID          string     `json:"run_id"`
	Passed         bool       `json:"passed"`
	ExitCode       int        `json:"exit_code"`
	FailedChecks   []string   `json:"failed"`
	CertctlVersion string     `json:"certctl_version"`
	Run            Run        `json:"run"`
	Scenarios      []Scenario `json:"scenarios"`
	// ConnectorTier: one row per target type, from the connector scenarios' records.
	ConnectorTier map[string]ConnectorRow `json:"connector_tier,omitempty"`
}

// ConnectorRow is a target type's figures: p50…max are the whole exchange of a fresh connection
// (connect + TLS handshake + request); the parts follow separately.
type ConnectorRow struct {
	Scenario       string  `json:"scenario"`
	Status         string  `json:"status"`
	Iterations     float64 `json:"iterations"`
	ErrorRate      float64 `json:"error_rate"`
	P50MS          float64 `json:"p50_ms"`
	P95MS          float64 `json:"p95_ms"`
	P99MS          float64 `json:"p99_ms"`
	MaxMS          float64 `json:"max_ms"`
	TLSHandshakeMS Latency `json:"tls_handshake_ms"`
	ConnectMS      Latency `json:"connect_ms"`
	RequestMS      Latency `json:"request_ms"`
}

func connectorTier(rows []Scenario) map[string]ConnectorRow {
	out := map[string]ConnectorRow{}
	for _, sc := range rows {
		r := sc.Record
		if r == nil || r.TargetType == "" {
			continue
		}
		out[r.TargetType] = ConnectorRow{
			Scenario: sc.Name, Status: sc.Status, Iterations: r.Iterations, ErrorRate: r.ErrorRate,
			P50MS: r.LatencyMS.P50, P95MS: r.LatencyMS.P95, P99MS: r.LatencyMS.P99, MaxMS: r.LatencyMS.Max,
			TLSHandshakeMS: r.TrendsMS["tls_handshake"], ConnectMS: r.TrendsMS["connect"], RequestMS: r.TrendsMS["request"],
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Load reads a run directory: run.json and every scenarios/*.json.
func Load(dir string) (Summary, error) {
	var run Run
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return Summary{}, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	if err := json.Unmarshal(b, &run); err != nil {
		return Summary{}, fmt.Errorf("run.json: %w", err)
	}
	s := Summary{Schema: SummarySchema, RunID: run.RunID, ExitCode: run.ExitCode, Run: run, FailedChecks: []string{}}
	if run.Error != "" {
		s.FailedChecks = append(s.FailedChecks, run.Error)
	}
	for _, sr := range run.Scenarios {
		row := Scenario{Name: sr.Name, Tier: sr.Tier, ExitCode: sr.ExitCode}
		rec, err := readRecord(filepath.Join(dir, "scenarios", sr.Name+".json"))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			row.Status = "no-results"
			row.Problem = fmt.Sprintf("k6 wrote no results (exit %d); see %s", sr.ExitCode, sr.Log)
		case err != nil:
			row.Status = "no-results"
			row.Problem = err.Error()
		default:
			row.Record = &rec
			row.Status = "passed"
			if !rec.ThresholdsOK || sr.ExitCode != 0 {
				row.Status = "failed"
			}
			if sr.ExitCode != 0 && rec.ThresholdsOK {
				row.Problem = fmt.Sprintf("k6 exited %d: %s", sr.ExitCode, k6Error(filepath.Join(dir, sr.Log), sr.Log))
			}
			if s.CertctlVersion == "" {
				var setup struct {
					Version string `json:"certctl_version"`
				}
				if json.Unmarshal(rec.Setup, &setup) == nil {
					s.CertctlVersion = setup.Version
				}
			}
		}
		if row.Problem != "" {
			s.FailedChecks = append(s.FailedChecks, sr.Name+": "+row.Problem)
		}
		if row.Record != nil {
			for _, t := range row.Record.Thresholds {
				if !t.OK {
					s.FailedChecks = append(s.FailedChecks, fmt.Sprintf("%s: threshold %s %s", sr.Name, t.Metric, t.Expression))
				}
			}
		}
		s.Scenarios = append(s.Scenarios, row)
	}
	sort.SliceStable(s.Scenarios, func(i, j int) bool {
		if s.Scenarios[i].Tier != s.Scenarios[j].Tier {
			return s.Scenarios[i].Tier < s.Scenarios[j].Tier
		}
		return s.Scenarios[i].Name < s.Scenarios[j].Name
	})
	if s.CertctlVersion == "" {
		s.CertctlVersion = "unknown"
	}
	s.ConnectorTier = connectorTier(s.Scenarios)
	s.Passed = s.ExitCode == 0 && len(s.FailedChecks) == 0
	return s, nil
}

var k6ErrorRE = regexp.MustCompile(`level=error msg="((?:[^"\\]|\\.)*)"`)

// k6Error finds why k6 stopped (a failed setup probe says so in one sentence) in a scenario's log.
func k6Error(path, name string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "see " + name
	}
	m := k6ErrorRE.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		return "see " + name
	}
	msg, err := strconv.Unquote(`"` + string(m[0][1]) + `"`)
	if err != nil {
		msg = string(m[0][1])
	}
	return strings.TrimPrefix(strings.SplitN(msg, "\n", 2)[0], "test aborted: ")
}

func readRecord(path string) (Record, error) {
	var r Record
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema != RecordSchema {
		return r, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, RecordSchema)
	}
	return r, nil
}

// Write renders summary.json and summary.txt into dir.
func Write(dir string, s Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(Text(s)), 0o644)
}
