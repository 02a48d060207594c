// Package diagnosis reads what the collectors recorded beside the load (server/ in a run directory) and
// says where the time went: which resource saturated, what the database's backends waited on, which
// statements took its time, what certctl's own metrics counted. Its rules are data (rules.yaml); the
// facts they read are computed here from the samples.
package diagnosis

import "time"

// Diagnosis is the diagnosis section of summary.json.
type Diagnosis struct {
	// Window is the stretch of the run the figures describe: the failing scenarios' time when some
	// failed, else the whole load.
	Window Window `json:"window"`
	// Sources is each collector and whether it had data; one that could not collect says why.
	Sources []Source `json:"sources"`
	// Findings are one sentence each, most telling first. A run with headroom says so too.
	Findings []Finding `json:"findings"`
	// Containers is CPU and memory per service over the window, busiest first.
	Containers []ContainerUse `json:"containers,omitempty"`
	// HostCPUs is what the CPU shares are out of (a container can use up to HostCPUs × 100 %).
	HostCPUs int `json:"host_cpus,omitempty"`
	// Database: sampled backend activity, the statements that took the database's time, and the
	// database's own counters over the window.
	ActiveBackends float64            `json:"active_backends_mean,omitempty"` // mean active client backends per sample
	ActivitySample int                `json:"activity_samples,omitempty"`
	Waits          []Share            `json:"waits,omitempty"`   // share of active backend samples per wait event ("CPU" when none)
	Queries        []QueryShare       `json:"queries,omitempty"` // share of active backend samples per statement
	Statements     []Statement        `json:"statements,omitempty"`
	DatabaseDelta  map[string]float64 `json:"database_delta,omitempty"` // pg_stat_database (and pg_stat_wal) counters, end minus start
	// Metrics are certctl's own Prometheus counters that moved, and its histograms' quantiles, over the window.
	Metrics    []MetricDelta `json:"certctl_metrics,omitempty"`
	Histograms []Histogram   `json:"certctl_histograms,omitempty"`
	// Series are the time series the report plots on one time axis.
	Series *Series `json:"series,omitempty"`
	// Machine is the machine's busy CPU over the window, split into the run and what was outside it
	// (absent when the host's own counters were not read: docker stats, runs recorded before).
	Machine *MachineShare `json:"machine,omitempty"`
}

// HostSample is one line of server/host.jsonl (the harness writes it): the whole machine over the last
// second, beside the containers' samples of the same refresh. The run's containers are one part of Busy;
// what else the machine did (a build, a browser, another stack) is the rest.
type HostSample struct {
	At      time.Time `json:"at"`
	Refresh int       `json:"refresh"`
	CPUs    int       `json:"cpus"`
	// BusyPct is the machine's CPUs busy, % of all of them (0–100): every state but idle, iowait and steal.
	BusyPct float64 `json:"busy_pct"`
	// StealPct is time a virtual machine's hypervisor gave to others, % of all CPUs.
	StealPct float64 `json:"steal_pct"`
	// PressurePct is the share of the time some runnable task waited for a CPU (/proc/pressure/cpu),
	// when the kernel keeps it.
	PressurePct *float64 `json:"pressure_pct,omitempty"`
	// HarnessPct is the harness's own CPU with the docker commands it runs (progress, cgroup reads, the
	// event stream, k6's console), EnginePct the container engine's (dockerd, containerd and its shims:
	// healthchecks, execs, logs), both % of all CPUs; nil in a run recorded before they were read.
	HarnessPct *float64 `json:"harness_pct,omitempty"`
	EnginePct  *float64 `json:"engine_pct,omitempty"`
}

// MachineShare is the machine's CPU over the window, each a mean share of all its CPUs (0–100).
type MachineShare struct {
	BusyPct    float64 `json:"busy_pct"`
	StackPct   float64 `json:"stack_pct"`   // the stack's containers: certctl, PostgreSQL, sidecars (not the collector)
	LoadGenPct float64 `json:"loadgen_pct"` // the k6 processes
	// The run's own instruments and machinery: the collector container, the harness with its docker
	// commands, and the container engine (nil in a run recorded before the harness read them).
	CollectorPct float64  `json:"collector_pct"`
	HarnessPct   *float64 `json:"harness_pct,omitempty"`
	EnginePct    *float64 `json:"engine_pct,omitempty"`
	// CollectorQueriesPct bounds what PostgreSQL spent on the collector's queries: their round trips,
	// as the collector timed them, over the window.
	CollectorQueriesPct *float64 `json:"collector_queries_pct,omitempty"`
	OutsidePct          float64  `json:"outside_pct"` // everything else the machine did
	StealPct            float64  `json:"steal_pct"`
	PressurePct         *float64 `json:"pressure_pct,omitempty"` // time some runnable task waited for a CPU
	Samples             int      `json:"samples"`
	// Decided: work outside the run or the load generator took enough of the machine to move the
	// figures (rules.yaml's machine rules): a breach of a timing budget is then inconclusive.
	Decided bool `json:"decided"`
	// Sentence says what took the machine, when Decided.
	Sentence string `json:"sentence,omitempty"`
	// Unjudged is what the machine rules say of a run that did not ask them (MACHINE_CHECK=false: the test
	// suites, whose stacks run side by side on purpose): the sentence they would have decided with, from
	// the run's own samples. The suites excuse a timing budget they did not aim at only when it is set.
	Unjudged string `json:"unjudged,omitempty"`
}

type Window struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Basis string    `json:"basis"` // "load" or "failing scenarios: a, b"
}

// Source is one collector's outcome.
type Source struct {
	Name    string   `json:"name"`   // containers, postgres, certctl_metrics
	Status  string   `json:"status"` // ok | not available
	Reason  string   `json:"reason,omitempty"`
	Samples int      `json:"samples,omitempty"`
	Files   []string `json:"files,omitempty"`
	// CPUSeconds is the collector's own CPU time over the run, where it could be measured: its cost.
	CPUSeconds *float64 `json:"cpu_s,omitempty"`
}

// Finding is one rule that held, as a sentence.
type Finding struct {
	Rule     string `json:"rule"`
	Kind     string `json:"kind"` // limit | contention | headroom | info | unavailable
	Sentence string `json:"sentence"`
}

type ContainerUse struct {
	Service     string  `json:"service"`
	CPUMeanPct  float64 `json:"cpu_mean_pct"` // of one CPU
	CPUP95Pct   float64 `json:"cpu_p95_pct"`
	CPUMaxPct   float64 `json:"cpu_max_pct"`
	MemMaxBytes int64   `json:"mem_max_bytes"`
	Samples     int     `json:"samples"`
	// SaturatedAtS is the first time into the load at which the host's CPUs were busy and this container
	// the largest user of them, when that happened.
	SaturatedAtS *float64 `json:"saturated_at_s,omitempty"`
}

// Share is a part of the sampled active backends.
type Share struct {
	Name    string  `json:"name"`
	Share   float64 `json:"share"` // 0..1 of the active backend samples
	Samples int     `json:"samples"`
}

// QueryShare is one statement's part of the sampled active backends and what it waited on.
type QueryShare struct {
	Query   string  `json:"query"`
	Share   float64 `json:"share"`
	Samples int     `json:"samples"`
	Waits   []Share `json:"waits"` // shares of all active samples, like Share
}

// Statement is one pg_stat_statements entry over the window.
type Statement struct {
	Query     string  `json:"query"`
	Calls     float64 `json:"calls"`
	TotalMS   float64 `json:"total_ms"`
	MeanMS    float64 `json:"mean_ms"`
	Rows      float64 `json:"rows"`
	TimeShare float64 `json:"time_share"` // of all statements' total time
}

type MetricDelta struct {
	Name  string  `json:"name"` // with labels, as exposed
	Delta float64 `json:"delta"`
	PerS  float64 `json:"per_s"`
}

type Histogram struct {
	Name  string  `json:"name"`
	Count float64 `json:"count"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Unit  string  `json:"unit"` // of the quantiles: "s" as exposed
}

// Series are aligned time series: T[i] is seconds into the load of bucket i (its start), each line has
// one value per bucket, null where there was no sample.
type Series struct {
	StepS float64   `json:"step_s"`
	T     []float64 `json:"t"`
	// Rate is each scenario's iterations per second.
	Rate []Line `json:"rate"`
	// P95MS is each scenario's p95 latency (its judged latency metric) per bucket, in ms.
	P95MS []Line `json:"p95_ms"`
	// CPU is each service's CPU, % of one CPU.
	CPU []Line `json:"cpu_pct"`
	// Waits is the mean number of active database backends per wait class (Lock, LWLock, IO, CPU, …).
	Waits []Line `json:"db_waits"`
}

type Line struct {
	Name   string     `json:"name"`
	Values []*float64 `json:"values"`
}
