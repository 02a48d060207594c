// Package results is a run as data: run.json and the scenario records k6 writes, the summary assembled
// from them (summary.json's schema, certctl's defects the counters show, the diagnosis), the exit codes
// and the one verdict rule, and the merging of a scenario's segment records. It renders nothing:
// internal/report turns a Summary into summary.txt, index.html and Markdown.
package results

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

	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/diagnosis"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/testbed"
)

const (
	SummarySchema = "certctl-loadtest/summary@1"
	RecordSchema  = "certctl-loadtest/scenario@1"
)

// Run is run.json: what was run, where, with what, and how each k6 process ended.
type Run struct {
	RunID     string            `json:"run_id"`
	StartedAt time.Time         `json:"started_at"`
	EndedAt   time.Time         `json:"ended_at"`
	DurationS float64           `json:"duration_s"`
	Command   string            `json:"command"`
	Tiers     []string          `json:"tiers"`
	Certctl   Certctl           `json:"certctl"`
	Images    map[string]string `json:"images"`
	ImageIDs  map[string]string `json:"image_ids"`
	ImagePins map[string]string `json:"image_pins,omitempty"` // image that ran in place of a .env pin → that pin
	K6Version string            `json:"k6_version"`
	// Postgres is the version of the stack's PostgreSQL (its image's PG_VERSION, which the official images
	// and the offline stand-in set): figures of another major version are another experiment (absent
	// in runs recorded before 2026-11-29 and against an external certctl).
	Postgres string `json:"postgres,omitempty"`
	// Harness is the revision of this harness that ran (git, "-dirty" with local changes).
	Harness string `json:"harness,omitempty"`
	Host    Host   `json:"host"`
	// Testbed is the machine's calibration, measured before the stack started: runs whose testbeds
	// differ beyond testbed.Tolerances are not compared (absent in runs recorded before 2026-11-29).
	Testbed *testbed.Calibration `json:"testbed,omitempty"`
	Config  map[string]string    `json:"config"`
	// Settings are the knobs the environment set to other than their defaults, secrets redacted: what
	// makes this run another experiment than one at the defaults (absent in runs recorded before).
	Settings   map[string]string `json:"settings,omitempty"`
	Scenarios  []ScenarioRun     `json:"scenarios"`
	ExitCode   int               `json:"exit_code"`
	Error      string            `json:"error,omitempty"`
	StackState []string          `json:"stack_state,omitempty"`
	// Unavailable are the selected scenarios left out of a TARGET=external run.
	Unavailable []Unavailable `json:"unavailable,omitempty"`
	// LoadStartedAt is when the first k6 process started: the zero of every "into the load" time.
	LoadStartedAt *time.Time `json:"load_started_at,omitempty"`
	// Faults are what happened to the stack during the load, one sentence each (a service that exited,
	// restarted or was paused; a k6 process that was killed), from Events.
	Faults []string `json:"faults,omitempty"`
	// Events are the container events of the stack during the load (docker events), the evidence
	// behind Faults.
	Events []StackEvent `json:"events,omitempty"`
	// AfterLoad is the state of every service once the load ended, before the stack was removed.
	AfterLoad []ServiceState `json:"services_after_load,omitempty"`
}

// PostgresMajor is the major version of the run's PostgreSQL, "" when it cannot be told: Postgres's;
// else the offline kit's tag, which carries the major (certctl-loadtest/offline-postgres:16), or 15 for
// its first name, certctl-loadtest-offline/postgres:16-alpine, which held Debian's PostgreSQL 15 whatever
// the tag said.
func (r Run) PostgresMajor() string {
	if r.Postgres != "" {
		major, _, _ := strings.Cut(r.Postgres, ".")
		return major
	}
	img := r.Images["postgres"]
	if major, ok := strings.CutPrefix(img, "certctl-loadtest/offline-postgres:"); ok {
		return major
	}
	if strings.HasPrefix(img, "certctl-loadtest-offline/postgres:") {
		return "15"
	}
	return ""
}

// StackEvent is one container event of the stack during the load.
type StackEvent struct {
	Service   string    `json:"service"`
	Container string    `json:"container"`
	Action    string    `json:"action"` // die, kill, oom, pause, unpause, start, stop, restart
	At        time.Time `json:"at"`
	IntoLoadS float64   `json:"into_load_s"`
	ExitCode  *int      `json:"exit_code,omitempty"` // die
	Signal    string    `json:"signal,omitempty"`    // kill
}

// ServiceState is one container of the stack as `docker compose ps` saw it.
type ServiceState struct {
	Service  string `json:"service"`
	State    string `json:"state"`
	Health   string `json:"health,omitempty"`
	ExitCode int    `json:"exit_code"`
}

// Certctl says which certctl ran. Its official images stamp no version (GET /api/v1/version answers
// "dev"), so the image reference and id identify it; the version it reports is the summary's.
type Certctl struct {
	Image        string `json:"image"`
	ImageID      string `json:"image_id,omitempty"`
	Build        string `json:"build,omitempty"`         // the certctl build it was packaged from (CERTCTL_DIST)
	ServerSHA256 string `json:"server_sha256,omitempty"` // of that build's server binary
	Faults       string `json:"faults,omitempty"`        // the fault proxy's settings, when k6 went through it
	URL          string `json:"url,omitempty"`           // a certctl the harness did not start (TARGET=external)
}

// Unavailable is a selected scenario an external certctl cannot run, and why.
type Unavailable struct {
	Scenario string `json:"scenario"`
	Reason   string `json:"reason"`
}

// Host describes the machine that generated and served the load (one box: k6 and certctl share it).
type Host struct {
	CPUs          int    `json:"cpus"`
	CPUModel      string `json:"cpu_model,omitempty"`
	DockerCPUs    int    `json:"docker_cpus,omitempty"`
	MemoryBytes   int64  `json:"docker_memory_bytes,omitempty"`
	DockerVersion string `json:"docker_version,omitempty"`
	// DockerRoot is the engine's data directory: PostgreSQL's volume is under it.
	DockerRoot string `json:"docker_root,omitempty"`
	OS         string `json:"os"`
	Kernel     string `json:"kernel,omitempty"`
	Hostname   string `json:"hostname,omitempty"`
}

// ScenarioRun is how one k6 process ended.
type ScenarioRun struct {
	Tier      string     `json:"tier"`
	Name      string     `json:"name"`
	Script    string     `json:"script"`
	ExitCode  int        `json:"exit_code"`
	Log       string     `json:"log"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// Raw is the k6 samples file (raw/<name>.json.gz) and whether it ends cleanly: a killed k6 leaves
	// it cut off, and what it holds up to there is all that is left of the scenario.
	Raw *RawFile `json:"raw,omitempty"`
}

// RawFile describes a scenario's raw samples file after the run.
type RawFile struct {
	Path     string `json:"path"`
	Bytes    int64  `json:"bytes"`
	Complete bool   `json:"complete"`
}

// Record is what k6's handleSummary writes for one scenario (k6/lib/summary.js).
type Record struct {
	Schema           string  `json:"schema"`
	Scenario         string  `json:"scenario"`
	Tier             string  `json:"tier"`
	Executor         string  `json:"executor"`
	DurationS        float64 `json:"duration_s"`
	TargetRatePerS   float64 `json:"target_rate_per_s"`
	AchievedRatePerS float64 `json:"achieved_rate_per_s"`
	// RateUnit is the time unit the scenario sets its arrival rate in (1s, 1m); "" for a closed model
	// (constant VUs) and in records written before it was kept. Every view shows the rate in it.
	RateUnit          string  `json:"rate_unit,omitempty"`
	Iterations        float64 `json:"iterations"`
	DroppedIterations float64 `json:"dropped_iterations"`
	Requests          float64 `json:"requests"`
	ErrorRate         float64 `json:"error_rate"`
	LatencyMetric     string  `json:"latency_metric"`
	LatencyMS         Latency `json:"latency_ms"`
	// LatencySamples is how many requests LatencyMS describes: the successful ones (absent in records
	// written before failed requests were left out).
	LatencySamples *float64    `json:"latency_samples,omitempty"`
	IterationMS    *Latency    `json:"iteration_ms,omitempty"` // absent in records written before it was kept
	Thresholds     []Threshold `json:"thresholds"`
	ThresholdsOK   bool        `json:"thresholds_ok"`
	VUs            struct {
		PreAllocated int `json:"pre_allocated"`
		Max          int `json:"max"`
	} `json:"vus"`
	TestRunDurationS float64 `json:"test_run_duration_s"`
	// CutShort: the run ended before DURATION (interrupted, a stack fault), and AchievedRatePerS is over
	// TestRunDurationS instead (absent in records written before it was kept).
	CutShort bool            `json:"cut_short,omitempty"`
	Setup    json.RawMessage `json:"setup"`
	// Connector tier: the target type and the TLS handshake / TCP connect parts of each request.
	TargetType string             `json:"target_type,omitempty"`
	TrendsMS   map[string]Latency `json:"trends_ms,omitempty"`
	// Counters: totals a scenario reports from the responses (bulk-renew enqueued/skipped, ACME 5xx
	// and 429 shapes, certctl's known renewal-info 404s).
	Counters map[string]float64 `json:"counters,omitempty"`
	// Segments: the k6 processes that each ran a part of this load (execution segments), when it was
	// split; the figures above are from their pooled samples (MergeSegments).
	Segments []Segment `json:"segments,omitempty"`
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

// SegmentsDir holds each k6 process's files of a split load, under scenarios/, raw/ and dashboard/,
// named <scenario>@<segment id>.
const SegmentsDir = "segments"

// Segment is one k6 process's part of a split load (MergeSegments), as its record states it.
type Segment struct {
	ID           string  `json:"id"`
	Segment      string  `json:"segment"`
	Iterations   float64 `json:"iterations"`
	Requests     float64 `json:"requests"`
	Dropped      float64 `json:"dropped_iterations"`
	ThresholdsOK bool    `json:"thresholds_ok"`
	ExitCode     *int    `json:"exit_code,omitempty"`
}

type Threshold struct {
	Metric     string `json:"metric"`
	Expression string `json:"expression"`
	OK         bool   `json:"ok"`
	// Aggregate and Value are what the expression judged (p(95), rate, count …) and its value, as
	// summary.js read them; absent when the metric had no sample, and in records written before they were
	// kept.
	Aggregate string   `json:"aggregate,omitempty"`
	Value     *float64 `json:"value,omitempty"`
	// NoSample: a trend or rate threshold whose metric had no sample. k6 holds it; the record does not
	// (OK is false): a p(95) over nothing is no evidence of speed.
	NoSample bool `json:"no_sample,omitempty"`
	// Passes and Fails: a rate's true and false samples (absent for other metrics and in records
	// written before they were kept): what a known defect's signature accounts for is counted in them.
	Passes *float64 `json:"passes,omitempty"`
	Fails  *float64 `json:"fails,omitempty"`
}

// Key names a threshold as a scenario states it: its metric without the tags thresholds.js adds (the
// scenario's, a latency's expected_response:true), then the expression ("checks{walk:page} rate==1").
// The other tags stay: a scenario may hold the same expression on two tag sets.
func (t Threshold) Key() string {
	name, tags, ok := strings.Cut(strings.TrimSuffix(t.Metric, "}"), "{")
	if !ok {
		return name + " " + t.Expression
	}
	var kept []string
	for _, tag := range strings.Split(tags, ",") {
		if !strings.HasPrefix(tag, "scenario:") && tag != "expected_response:true" {
			kept = append(kept, tag)
		}
	}
	if len(kept) == 0 {
		return name + " " + t.Expression
	}
	return name + "{" + strings.Join(kept, ",") + "} " + t.Expression
}

// Timing reports whether the threshold is a timing budget, one the machine alone can break: a latency
// (k6's durations, our *_ms trends) or iterations dropped for want of time. A threshold over no sample
// is not: nothing was timed.
func (t Threshold) Timing() bool {
	if t.NoSample {
		return false
	}
	name, _, _ := strings.Cut(t.Metric, "{")
	return t.InMilliseconds() || name == "dropped_iterations"
}

// Measured is the value beside its aggregate, "p(95)=910.2", or "" when the record has none.
func (t Threshold) Measured() string {
	if t.NoSample {
		return "no sample"
	}
	if t.Value == nil {
		return ""
	}
	agg := t.Aggregate
	if agg == "" {
		agg = "value"
	}
	v := agg + "=" + strconv.FormatFloat(*t.Value, 'f', -1, 64)
	if t.InMilliseconds() && agg != "count" && agg != "rate" {
		v += " ms"
	}
	return v
}

// InMilliseconds reports whether the metric is a time: k6's durations and our *_ms trends, which k6
// reports in milliseconds.
func (t Threshold) InMilliseconds() bool {
	name, _, _ := strings.Cut(t.Metric, "{")
	return strings.Contains(name, "duration") || strings.HasSuffix(name, "_ms") || strings.Contains(name, "_ms_")
}

// Scenario is one row of summary.json: the record (if k6 wrote one) plus how its process ended.
type Scenario struct {
	Name     string  `json:"name"`
	Tier     string  `json:"tier"`
	ExitCode int     `json:"exit_code"`
	Status   string  `json:"status"` // passed | failed | no-results
	Problem  string  `json:"problem,omitempty"`
	Record   *Record `json:"result,omitempty"`
	// Failures: the iterations that failed, by the step and the HTTP status they failed at (an ACME
	// order's), from the raw samples; absent when none failed.
	Failures []Failure `json:"failures,omitempty"`
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
	// DeployTier: one row per deploy scenario and target type, the rotation loop's stages and outcomes.
	DeployTier []DeployRow `json:"deploy_tier,omitempty"`
	// PKITier: one row per PKI operation measured (an ACME order and its steps, an issuance at a number of
	// clients, an OCSP or CRL request), in the columns a CA benchmark reports.
	PKITier []PKIRow `json:"pki_tier,omitempty"`
	// Findings: certctl's known defects this run met, each a sentence with its count and what to do.
	Findings []string `json:"findings,omitempty"`
	// Diagnosis is where the time went, from what the collectors recorded beside the load (server/).
	Diagnosis *diagnosis.Diagnosis `json:"diagnosis,omitempty"`
	// Inconclusive says what took the machine when it decided the run's breaches (exit 6): every one a
	// timing budget, while work outside the run or k6 itself held enough of the machine to move it.
	Inconclusive string `json:"inconclusive,omitempty"`
	// Breaches are the broken thresholds sorted against certctl's known defects (internal/defects):
	// new, known with the defects that explain them, and the defects seen on this build that the run
	// did not meet.
	Breaches *defects.Verdict `json:"breaches,omitempty"`
}

// Verdict is the run's verdict in one word: PASSED, INCONCLUSIVE (the machine decided its breaches)
// or FAILED.
func (s Summary) Verdict() string {
	switch {
	case s.Passed:
		return "PASSED"
	case s.ExitCode == ExitInconclusive:
		return "INCONCLUSIVE"
	}
	return "FAILED"
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

// DeployRow is one target type's rotation loops in a deploy scenario (k6/lib/deploy.js): how each loop
// ended, and the stages of those that were served. Signed: renew → certctl signed the agent's CSR;
// job: signed → the deployment job done; served: job done → the target serves the new serial;
// loop: renew → served.
type DeployRow struct {
	Scenario   string  `json:"scenario"`
	TargetType string  `json:"target_type"`
	Status     string  `json:"status"`
	Completed  float64 `json:"completed"`
	Stolen     float64 `json:"stolen"`
	// Stuck: a job still open when the loop gave up that its agent took, or nothing took.
	Stuck  float64 `json:"stuck"`
	Failed float64 `json:"failed"`
	// F5TokenLimit: failed because the F5 refused certctl's login (certctl's token leak), apart from Failed.
	F5TokenLimit float64 `json:"f5_token_limit"`
	NotServed    float64 `json:"not_served"`
	NotSigned    float64 `json:"not_signed"`
	SignedMS     Latency `json:"signed_ms"`
	JobMS        Latency `json:"job_ms"`
	ServedMS     Latency `json:"served_ms"`
	LoopMS       Latency `json:"loop_ms"`
}

// deployTier reads the rows from the records of deploy scenarios, whose trends are per target type
// (loop_<type>, signed_<type>, ...) as are their counters (completed_<type>, ...).
func deployTier(rows []Scenario) []DeployRow {
	var out []DeployRow
	for _, sc := range rows {
		r := sc.Record
		if r == nil || r.Tier != "deploy" {
			continue
		}
		var types []string
		for k := range r.TrendsMS {
			if t, ok := strings.CutPrefix(k, "loop_"); ok {
				types = append(types, t)
			}
		}
		sort.Strings(types)
		for _, t := range types {
			c := func(f string) float64 { return r.Counters[f+"_"+t] }
			out = append(out, DeployRow{
				Scenario: sc.Name, TargetType: t, Status: sc.Status,
				Completed: c("completed"), Stolen: c("stolen"), Stuck: c("stuck"), Failed: c("failed"), F5TokenLimit: c("f5_token_limit"),
				NotServed: c("not_served"), NotSigned: c("not_signed"),
				SignedMS: r.TrendsMS["signed_"+t], JobMS: r.TrendsMS["job_"+t],
				ServedMS: r.TrendsMS["served_"+t], LoopMS: r.TrendsMS["loop_"+t],
			})
		}
	}
	return out
}

// PKIRow is one operation of the PKI tier as a CA benchmark reports it (Vault's, for one): how many
// succeeded, per second over the run, and the latency of those that did. OK and PerSecond are 0 for an
// ACME order's steps, whose successes the order's row counts; Clients is the closed-loop issuance
// scenarios' concurrency, 0 for an arrival rate.
type PKIRow struct {
	Scenario  string  `json:"scenario"`
	Operation string  `json:"operation"`
	Status    string  `json:"status"`
	Clients   int     `json:"clients"`
	OK        float64 `json:"ok"`
	PerSecond float64 `json:"per_second"`
	Latency   Latency `json:"latency_ms"`
}

// The rows each PKI scenario gives: its record's latency (the whole operation) and its trends (parts).
var (
	acmeSteps = []string{"new_account", "new_order", "authz", "finalize", "order", "certificate", "revoke"}
	// Challenge mode's: the challenge's POST, the authorization's polls, and validation (respond → valid).
	acmeChallengeSteps = []string{"new_account", "new_order", "authz", "challenge", "authz_poll", "validation", "finalize", "order", "certificate", "revoke"}
	revChecks          = []string{"ocsp_get", "ocsp_post", "crl", "crl_304"}
)

func pkiTier(rows []Scenario) []PKIRow {
	var out []PKIRow
	for _, sc := range rows {
		r := sc.Record
		if r == nil || r.Tier != "pki" {
			continue
		}
		perS := func(n float64) float64 {
			if r.DurationS <= 0 {
				return 0
			}
			return n / r.DurationS
		}
		clients := 0 // an arrival rate's VUs are k6's, not a number of clients
		if r.Executor == "constant-vus" {
			clients = r.VUs.Max
		}
		row := func(op string, ok float64, l Latency) PKIRow {
			return PKIRow{Scenario: sc.Name, Operation: op, Status: sc.Status, Clients: clients, OK: ok, PerSecond: perS(ok), Latency: l}
		}
		switch {
		case sc.Name == "acme_http01_saturated":
			// One row a part: the slow clients' orders, whose validations hold the pool's slots, and the fast
			// clients', whose validation is what the queue for a slot costs them.
			for _, p := range []struct{ part, op string }{
				{"slow", "order, slow responder (holds a validation slot)"},
				{"fast", "order, fast responder (while the pool is full)"},
			} {
				out = append(out, row(p.op, r.Counters["issued_"+p.part], r.TrendsMS["order_"+p.part]))
				if l, ok := r.TrendsMS["validation_"+p.part]; ok && l.Max > 0 {
					out = append(out, row("  validation", 0, l))
				}
			}
		case sc.Name == "acme_order_flow", strings.HasPrefix(sc.Name, "acme_http01_"):
			op, steps := "order (new-order → chain verified)", acmeSteps
			if sc.Name != "acme_order_flow" {
				op, steps = "order (new-order → http-01 validated → chain verified)", acmeChallengeSteps
			}
			out = append(out, row(op, r.Counters["issued"], r.LatencyMS))
			for _, st := range steps {
				if l, ok := r.TrendsMS[st]; ok && l.Max > 0 {
					out = append(out, row("  "+strings.ReplaceAll(st, "_", "-"), 0, l))
				}
			}
		case strings.HasPrefix(sc.Name, "issuance_"):
			op := "issue (create + agent CSR signed)"
			if r.SetupValue("issuance_path") == "acme" {
				op = "issue (a signed ACME order)"
			}
			out = append(out, row(op, r.Counters["issued"], r.LatencyMS))
		default:
			for _, c := range revChecks {
				if l, ok := r.TrendsMS[c]; ok {
					out = append(out, row(strings.ReplaceAll(c, "_", " "), r.Counters[c+"_ok"], l))
				}
			}
		}
	}
	return out
}

// SetupRan reports whether the scenario's setup() returned: its record keeps the setup data's scalars,
// null when setup() threw or aborted (and k6 then reports its thresholds held over nothing).
func (r *Record) SetupRan() bool {
	return len(r.Setup) > 0 && string(r.Setup) != "null"
}

// SetupValue is one scalar of what the scenario's setup() returned; nil when absent.
func (r *Record) SetupValue(key string) any {
	var m map[string]any
	if json.Unmarshal(r.Setup, &m) != nil {
		return nil
	}
	return m[key]
}

// findings are certctl's known defects the run's counters show, one sentence each: what certctl did,
// how often, where it is explained, and what the harness offers around it (each finding's record,
// docs/findings/<id>.md, holds its sentence).
func findings(rows []Scenario) []string {
	says, err := defects.Sentences()
	if err != nil {
		return nil // refused by the records' tests
	}
	var out []string
	for _, sc := range DefectScenarios(rows) {
		for _, s := range says {
			if line, ok := s.In(sc); ok {
				out = append(out, line)
			}
		}
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
	return Assemble(dir, run), nil
}

// Write writes summary.json into dir, refusing to follow a symbolic link planted in its place.
func Write(dir string, s Summary) error {
	return output.JSON(filepath.Join(dir, "summary.json"), s)
}

// Assemble is the summary of run from the scenario records in dir: the run itself need not have been
// written (the harness assembles it in memory, so a full disk still gets a verdict).
func Assemble(dir string, run Run) Summary {
	s := Summary{Schema: SummarySchema, RunID: run.RunID, ExitCode: run.ExitCode, Run: run, FailedChecks: []string{}}
	if run.Error != "" {
		s.FailedChecks = append(s.FailedChecks, run.Error)
	}
	s.FailedChecks = append(s.FailedChecks, run.Faults...)
	for _, sr := range run.Scenarios {
		row := Scenario{Name: sr.Name, Tier: sr.Tier, ExitCode: sr.ExitCode}
		rec, err := readRecord(filepath.Join(dir, "scenarios", sr.Name+".json"))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			row.Status = "no-results"
			row.Problem = fmt.Sprintf("k6 wrote no results (exit %d); see %s", sr.ExitCode, sr.Log)
			if sr.Raw != nil && sr.Raw.Bytes > 0 {
				cut := ""
				if !sr.Raw.Complete {
					cut = ", cut off where k6 stopped"
				}
				row.Problem += fmt.Sprintf("; its raw samples are in %s (%d bytes%s)", sr.Raw.Path, sr.Raw.Bytes, cut)
			}
		case err != nil:
			row.Status = "no-results"
			row.Problem = err.Error()
		default:
			row.Record = &rec
			row.Failures = failures(dir, sr.Name, &rec)
			row.Status = "passed"
			if !rec.ThresholdsOK || sr.ExitCode != 0 {
				row.Status = "failed"
			}
			// k6's own failure (an aborted setup, a script error): its thresholds held, or judged nothing.
			if sr.ExitCode != 0 && sr.ExitCode != ExitThresholds && (rec.ThresholdsOK || !rec.SetupRan()) {
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
	s.DeployTier = deployTier(s.Scenarios)
	s.PKITier = pkiTier(s.Scenarios)
	s.Findings = findings(s.Scenarios)
	s.Diagnosis = analyze(dir, run, s.Scenarios)
	s.Breaches = classify(dir, run, s.Scenarios)
	judge(&s, run, run.Config["KNOWN_DEFECTS"] == "pass")
	s.Passed = s.ExitCode == 0 && len(s.FailedChecks) == 0
	return s
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
	if len(b) == 0 {
		return r, fmt.Errorf("%s is empty: k6 could not write it (a full disk?)", path)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema != RecordSchema {
		return r, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, RecordSchema)
	}
	return r, nil
}

// analyze runs the diagnosis over the run directory's server/ samples, judging the window by the
// scenarios that failed.
func analyze(dir string, run Run, rows []Scenario) *diagnosis.Diagnosis {
	in := diagnosis.Input{Dir: dir, HostCPUs: run.Host.DockerCPUs, JudgeMachine: run.Config["MACHINE_CHECK"] == "true"}
	// A run recorded before DIAGNOSIS named its samplers ran both, or none (then there is no server/).
	switch v := run.Config["DIAGNOSIS"]; v {
	case "collector":
		in.Off = []string{"containers"}
	case "containers":
		in.Off = []string{"collector"}
	}
	if in.HostCPUs == 0 {
		in.HostCPUs = run.Host.CPUs
	}
	if run.Testbed != nil && run.Testbed.FsyncError == "" {
		in.FsyncP50Ms = run.Testbed.FsyncP50Ms
	}
	if run.LoadStartedAt != nil {
		in.LoadStart = *run.LoadStartedAt
	}
	status := map[string]Scenario{}
	for _, r := range rows {
		status[r.Name] = r
	}
	for _, sr := range run.Scenarios {
		if sr.StartedAt == nil || sr.EndedAt == nil {
			continue
		}
		w := diagnosis.ScenarioWindow{Name: sr.Name, From: *sr.StartedAt, To: *sr.EndedAt, Failed: status[sr.Name].Status != "passed"}
		if rec := status[sr.Name].Record; rec != nil {
			w.LatencyMetric = rec.LatencyMetric
			if t, _ := rec.RateCells(); t != "-" {
				w.Rate = t
			}
		}
		in.Scenarios = append(in.Scenarios, w)
	}
	return diagnosis.Analyze(in)
}

// judge settles the run's verdict from its broken thresholds, as classified. With knownPass
// (KNOWN_DEFECTS=pass, the default for a run) a breach a registered defect of certctl explains does not
// fail the run: a breached run (99) whose every breach is known exits 0, listing them as known. Of the
// breaches that count, a run whose every one is a timing budget while the machine was taken from it is
// inconclusive (6). FailedChecks gains, scenario by scenario in the run's order, its problem and a line
// per breach that counts.
func judge(s *Summary, run Run, knownPass bool) {
	counted := func(sc, key string) bool {
		return !knownPass || s.Breaches == nil || !(s.Breaches.IsKnown(sc, key) || s.Breaches.IsUnjudged(sc, key))
	}
	byName := map[string]Scenario{}
	for _, sc := range s.Scenarios {
		byName[sc.Name] = sc
	}
	var lines []string
	timingOnly, breached, problems := true, false, false
	for _, sr := range run.Scenarios {
		sc := byName[sr.Name]
		if sc.Problem != "" {
			lines = append(lines, sc.Name+": "+sc.Problem)
			problems = true
		}
		if sc.Record == nil {
			problems = true
			continue
		}
		for _, t := range sc.Record.Thresholds {
			// A setup that aborted judged nothing: its problem says why (above).
			if t.OK || !sc.Record.SetupRan() || !counted(sc.Name, t.Key()) {
				continue
			}
			line := fmt.Sprintf("%s: threshold %s %s", sc.Name, t.Metric, t.Expression)
			if m := t.Measured(); m != "" {
				line += " (measured " + m + ")"
			}
			lines = append(lines, line)
			breached = true
			timingOnly = timingOnly && t.Timing()
		}
	}
	s.FailedChecks = append(s.FailedChecks, lines...)
	if s.ExitCode != ExitThresholds && s.ExitCode != ExitInconclusive {
		return
	}
	switch d := s.Diagnosis; {
	case !breached && !problems && knownPass && len(s.FailedChecks) == 0 && s.Breaches != nil && len(s.Breaches.Unjudged) > 0:
		// Every breach a known defect's, but a latency's size was recorded on another testbed or load:
		// whether it is the defect's or worse, this run cannot say.
		u := s.Breaches.Unjudged[0]
		s.ExitCode = ExitInconclusive
		s.Inconclusive = fmt.Sprintf("%s: %s is %s's, but its size cannot be judged: %s", u.Scenario, u.Threshold, strings.Join(u.Defects, ", "), u.Why)
		s.FailedChecks = append(s.FailedChecks, "inconclusive: "+s.Inconclusive)
	case !breached && !problems && knownPass && len(s.FailedChecks) == 0:
		s.ExitCode = ExitOK
	case breached && timingOnly && !problems && d != nil && d.Machine != nil && d.Machine.Decided:
		s.ExitCode = ExitInconclusive
		s.Inconclusive = d.Machine.Sentence
		s.FailedChecks = append([]string{"inconclusive: " + d.Machine.Sentence + "; every breach was a timing budget"}, s.FailedChecks...)
	}
}

// DefectsFile is the registry a run was judged with when it was not the built-in one
// (DEFECTS_REGISTRY): kept in the run directory, so the run renders again as it was judged.
const DefectsFile = "defects.yaml"

// classify sorts the run's broken thresholds against the registry of certctl's known defects: the run
// directory's own copy, else the built-in one.
func classify(dir string, run Run, rows []Scenario) *defects.Verdict {
	reg, err := defects.Registry()
	if b, rerr := os.ReadFile(filepath.Join(dir, DefectsFile)); rerr == nil {
		reg, err = defects.Parse(b)
	}
	if err != nil {
		return nil // refused before the run (harness) or by the registry's tests
	}
	v := defects.Classify(reg, defects.Run{Build: BuildName(run.Certctl), Testbed: run.Testbed}, DefectScenarios(rows))
	return &v
}

// DefectScenarios is what the registry reads of a run's scenarios: each record's thresholds, counters,
// setup values and arrival rate.
func DefectScenarios(rows []Scenario) []defects.Scenario {
	var in []defects.Scenario
	for _, sc := range rows {
		r := sc.Record
		if r == nil {
			continue
		}
		d := defects.Scenario{Name: sc.Name, Judged: r.SetupRan(), Counters: r.Counters, RatePerS: r.TargetRatePerS}
		json.Unmarshal(r.Setup, &d.Setup)
		for _, t := range r.Thresholds {
			d.Thresholds = append(d.Thresholds, defects.Threshold{Key: t.Key(), OK: t.OK, NoSample: t.NoSample, Value: t.Value,
				Measured: t.Measured(), Passes: t.Passes, Fails: t.Fails})
		}
		in = append(in, d)
	}
	return in
}

// BuildName names the certctl that ran as the registry's builds do: the folder it was packaged from
// (CERTCTL_DIST's last element, "v2.1.7"), else its image's tag; "" when neither says.
func BuildName(c Certctl) string {
	if c.Build != "" {
		return filepath.Base(filepath.Clean(c.Build))
	}
	if i := strings.LastIndex(c.Image, ":"); i > 0 && !strings.Contains(c.Image[i:], "/") {
		return c.Image[i+1:]
	}
	return ""
}
