package diagnosis

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"certctl-loadtest/internal/samples"
)

// Input is what the analysis needs to know about the run besides server/: when the load and each
// scenario ran, which failed, and what the CPU shares are out of.
type Input struct {
	Dir       string
	LoadStart time.Time
	HostCPUs  int
	Scenarios []ScenarioWindow
	// JudgeMachine: a machine that work outside the run (or the load generator) took enough of makes
	// the diagnosis say so instead of blaming certctl (MACHINE_CHECK; the e2e tests, which run stacks
	// side by side on purpose, turn it off).
	JudgeMachine bool
	// FsyncP50Ms is the run's calibration of fdatasync (testbed), 0 when it has none: a commit that
	// queues on a slow disk is the machine's limit.
	FsyncP50Ms float64
	// Off are the samplers the run's DIAGNOSIS left out ("collector", "containers"): their sources are
	// off, not missing.
	Off []string
}

// StatusOff is a source's status when the run switched its sampler off.
const StatusOff = "off"

type ScenarioWindow struct {
	Name          string
	From, To      time.Time
	Failed        bool
	LatencyMetric string // the record's latency_metric: http_req_duration{expected_response:true}, …
	Rate          string // the load it was asked for: "50/s", "20 VUs"; "" when the record says none
}

// Analyze reads dir/server and says where the time went. It returns nil when the run has no server/
// folder (DIAGNOSIS=false, or a run recorded before the collectors existed).
func Analyze(in Input) *Diagnosis {
	server := filepath.Join(in.Dir, "server")
	if st, err := os.Stat(server); err != nil || !st.IsDir() {
		return nil
	}
	d := &Diagnosis{HostCPUs: in.HostCPUs}
	d.Window = window(in)
	f := facts{}
	f["machine.judged"] = 0.0
	if in.JudgeMachine {
		f["machine.judged"] = 1.0
	}
	f["host.cpus"] = float64(in.HostCPUs)
	if in.FsyncP50Ms > 0 {
		f["testbed.fsync_p50_ms"] = in.FsyncP50Ms
	}
	if slices.Contains(in.Off, "containers") {
		d.Sources = append(d.Sources, Source{Name: "containers", Status: StatusOff, Reason: "DIAGNOSIS left the containers' sampling out"})
	} else {
		d.containers(server, in, f)
	}
	status := d.collectorStatus(server, slices.Contains(in.Off, "collector"))
	d.activity(server, status, f)
	d.statements(server, status, f)
	d.database(server, status, f)
	d.metrics(server, status, f)
	d.Series = series(in, server)
	d.Findings = evaluate(Rules, f)
	for _, x := range d.Findings {
		if x.Kind == "machine" && d.Machine != nil {
			d.Machine.Decided, d.Machine.Sentence = true, x.Sentence
		}
	}
	if d.Machine != nil && !in.JudgeMachine {
		judged := facts{}
		for k, v := range f {
			judged[k] = v
		}
		judged["machine.judged"] = 1.0
		for _, x := range evaluate(Rules, judged) {
			if x.Kind == "machine" {
				d.Machine.Unjudged = x.Sentence
			}
		}
	}
	if d.Machine != nil && d.Machine.Decided {
		// The figures moved with the machine: what would blame certctl's database or CPU is left out.
		kept := d.Findings[:0]
		for _, x := range d.Findings {
			if x.Kind != "contention" && x.Kind != "limit" {
				kept = append(kept, x)
			}
		}
		d.Findings = kept
	}
	for _, s := range d.Sources {
		if s.Status != "ok" && s.Status != StatusOff {
			d.Findings = append(d.Findings, Finding{Rule: "source-unavailable", Kind: "unavailable", Sentence: fmt.Sprintf("%s: not available: %s", s.Name, s.Reason)})
		}
	}
	return d
}

// window is the failing scenarios' span when some failed: what went wrong happened there.
func window(in Input) Window {
	w := Window{Basis: "load"}
	var failed []string
	for _, sc := range in.Scenarios {
		if !sc.Failed {
			continue
		}
		failed = append(failed, sc.Name)
		if w.From.IsZero() || sc.From.Before(w.From) {
			w.From = sc.From
		}
		if sc.To.After(w.To) {
			w.To = sc.To
		}
	}
	if len(failed) > 0 {
		w.Basis = "failing scenarios: " + strings.Join(failed, ", ")
		return w
	}
	for _, sc := range in.Scenarios {
		if w.From.IsZero() || sc.From.Before(w.From) {
			w.From = sc.From
		}
		if sc.To.After(w.To) {
			w.To = sc.To
		}
	}
	if w.From.IsZero() {
		w.From = in.LoadStart
	}
	return w
}

func (w Window) contains(t time.Time) bool {
	return !t.Before(w.From) && (w.To.IsZero() || !t.After(w.To))
}

func (w Window) seconds() float64 {
	if w.To.IsZero() {
		return 0
	}
	return w.To.Sub(w.From).Seconds()
}

// readLines calls fn for each JSON line of path; a cut-off last line is skipped.
func readLines(path string, fn func([]byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if json.Valid(sc.Bytes()) {
			fn(sc.Bytes())
		}
	}
	return sc.Err()
}

type containerLine struct {
	At      time.Time `json:"at"`
	Service string    `json:"service"`
	CPUPct  float64   `json:"cpu_pct"`
	Mem     int64     `json:"mem_bytes"`
	Refresh int       `json:"refresh"`
}

// containers: CPU per service over the window, and when the machine's CPUs first saturated and who
// used them most then.
func (d *Diagnosis) containers(server string, in Input, f facts) {
	src := Source{Name: "containers", Files: []string{"server/containers.jsonl"}}
	per := map[string][]float64{}
	mem := map[string]int64{}
	busy := map[int]map[string]float64{} // docker stats refresh → service → CPU
	at := map[int]float64{}              // refresh → seconds into the load
	err := readLines(filepath.Join(server, "containers.jsonl"), func(b []byte) {
		var l containerLine
		if json.Unmarshal(b, &l) != nil {
			return
		}
		src.Samples++
		if !d.Window.contains(l.At) {
			return
		}
		svc := l.Service
		if strings.HasPrefix(svc, "k6-") {
			svc = "k6" // one load generator, however many processes
		}
		if busy[l.Refresh] == nil {
			busy[l.Refresh] = map[string]float64{}
			at[l.Refresh] = l.At.Sub(in.LoadStart).Seconds()
		}
		busy[l.Refresh][svc] += l.CPUPct
		if l.Mem > mem[svc] {
			mem[svc] = l.Mem
		}
	})
	if err != nil || src.Samples == 0 {
		src.Status, src.Reason = "not available", "docker stats gave no sample of the stack's containers"
		if errors.Is(err, fs.ErrNotExist) {
			src.Reason = "server/containers.jsonl is missing"
		}
		d.Sources = append(d.Sources, src)
		return
	}
	src.Status = "ok"
	d.Sources = append(d.Sources, src)
	d.machine(server, in, busy, f)
	secs := make([]int, 0, len(busy))
	for s := range busy {
		secs = append(secs, s)
	}
	sort.Ints(secs)
	var hostBusy []float64
	run, runStart, satFrom := 0, 0.0, -1
	for _, s := range secs {
		total := 0.0
		for svc, v := range busy[s] {
			per[svc] = append(per[svc], v)
			total += v
		}
		share := total / math.Max(1, float64(in.HostCPUs))
		hostBusy = append(hostBusy, share)
		// Saturated: 90 % of every CPU for three refreshes running (about 3 s); who used the most then is named.
		if share >= 90 {
			if run == 0 {
				runStart = at[s]
			}
			run++
		} else {
			run = 0
		}
		if run == 3 && f["first_saturated.service"] == nil {
			satFrom = len(hostBusy) - 3
			top, v := "", -1.0
			for svc, c := range busy[s] {
				if c > v {
					top, v = svc, c
				}
			}
			f["first_saturated.service"] = top
			f["first_saturated.at_s"] = math.Round(runStart)
		}
	}
	for svc, vals := range per {
		u := ContainerUse{Service: svc, CPUMeanPct: round1(mean(vals)), CPUP95Pct: round1(quantile(vals, 0.95)), CPUMaxPct: round1(quantile(vals, 1)), MemMaxBytes: mem[svc], Samples: len(vals)}
		if svc == f["first_saturated.service"] {
			at := f["first_saturated.at_s"].(float64)
			u.SaturatedAtS = &at
		}
		d.Containers = append(d.Containers, u)
		f["cpu."+svc] = u.CPUMeanPct
	}
	// Busiest first; equal ones by name, so a re-rendered summary reads the same.
	sort.Slice(d.Containers, func(i, j int) bool {
		a, b := d.Containers[i], d.Containers[j]
		if a.CPUMeanPct != b.CPUMeanPct {
			return a.CPUMeanPct > b.CPUMeanPct
		}
		return a.Service < b.Service
	})
	if len(d.Containers) > 0 {
		f["top.service"] = d.Containers[0].Service
		f["top.cpu_pct"] = d.Containers[0].CPUMeanPct
	}
	// certctl's own load generator is not certctl: the busiest of the stack's other services.
	for _, c := range d.Containers {
		if c.Service != "k6" {
			f["top_server.service"] = c.Service
			f["top_server.cpu_pct"] = c.CPUMeanPct
			break
		}
	}
	f["host.busy_pct"] = round1(mean(hostBusy))
	f["host.busy_p95_pct"] = round1(quantile(hostBusy, 0.95))
	if satFrom >= 0 {
		// The run's own containers from the first saturation to the window's end: held there, the
		// machine, not certctl, set the pace from then on.
		f["saturated.busy_after_pct"] = round1(mean(hostBusy[satFrom:]))
		f["saturated.share"] = round2(float64(len(hostBusy)-satFrom) / float64(len(hostBusy)))
		f["saturated.load"] = loadBefore(in.Scenarios, in.LoadStart.Add(time.Duration(runStart*float64(time.Second))))
	}
}

// loadBefore is the load the scenarios running by at carried: "list_certificates 50/s, acme_flow 100/s".
func loadBefore(scs []ScenarioWindow, at time.Time) string {
	var parts []string
	for _, sc := range scs {
		if sc.From.After(at) {
			continue
		}
		if sc.Rate == "" {
			parts = append(parts, sc.Name)
			continue
		}
		parts = append(parts, sc.Name+" "+sc.Rate)
	}
	if len(parts) == 0 {
		return "no scenario yet"
	}
	return strings.Join(parts, ", ")
}

// collectorQueries bounds the share of the machine PostgreSQL and certctl spent answering the collector:
// the time it waited for its answers over its life, as collector.json has it, of all CPUs' time then.
func collectorQueries(server string, cpus float64) (float64, bool) {
	b, err := os.ReadFile(filepath.Join(server, "collector.json"))
	if err != nil {
		return 0, false
	}
	var st struct {
		StartedAt time.Time `json:"started_at"`
		EndedAt   time.Time `json:"ended_at"`
		Sources   []struct {
			WaitMS *float64 `json:"wait_ms"`
		} `json:"sources"`
	}
	if json.Unmarshal(b, &st) != nil || !st.EndedAt.After(st.StartedAt) {
		return 0, false
	}
	var ms float64
	for _, s := range st.Sources {
		if s.WaitMS == nil {
			return 0, false // recorded before the collector timed its waits
		}
		ms += *s.WaitMS
	}
	life := st.EndedAt.Sub(st.StartedAt).Seconds()
	return round2(100 * ms / 1000 / (life * cpus)), true
}

// collectorSources are the collector's sources, as collector.json names them.
var collectorSources = []string{"pg_activity", "pg_statements", "pg_database", "certctl_metrics"}

// statusFile is the part of collector.json the analysis reads.
type statusFile struct {
	Sources []struct {
		Name    string `json:"name"`
		File    string `json:"file"`
		Samples int    `json:"samples"`
		Errors  int    `json:"errors"`
		Reason  string `json:"reason"`
	} `json:"sources"`
	CPUSeconds *float64 `json:"cpu_s"`
}

// sources is each collector source's outcome by name, from collector.json.
type sources map[string]Source

func (s sources) get(name string) Source {
	if src, ok := s[name]; ok {
		return src
	}
	return Source{Name: name, Status: "not available", Reason: "not in collector.json"}
}

func (d *Diagnosis) collectorStatus(server string, off bool) sources {
	out := sources{}
	if off {
		for _, n := range collectorSources {
			out[n] = Source{Name: n, Status: StatusOff, Reason: "DIAGNOSIS left the collector out"}
		}
		return out
	}
	b, err := os.ReadFile(filepath.Join(server, "collector.json"))
	var st statusFile
	if err != nil || json.Unmarshal(b, &st) != nil {
		reason := "the collector left no collector.json (it did not run, or was killed before the end)"
		for _, n := range collectorSources {
			out[n] = Source{Name: n, Status: "not available", Reason: reason}
		}
		return out
	}
	for _, s := range st.Sources {
		src := Source{Name: s.Name, Samples: s.Samples, CPUSeconds: st.CPUSeconds}
		if s.File != "" {
			src.Files = []string{"server/" + s.File}
		}
		switch {
		case s.Samples > 0:
			src.Status = "ok"
		case s.Reason != "":
			src.Status, src.Reason = "not available", s.Reason
		default:
			src.Status, src.Reason = "not available", "no sample taken"
		}
		out[s.Name] = src
	}
	return out
}

type activityLine struct {
	At       time.Time `json:"at"`
	Backends []struct {
		State string  `json:"state"`
		Wait  *string `json:"wait"`
		Query string  `json:"query"`
	} `json:"backends"`
}

// waitClass groups wait events by what they mean for a load test.
func waitClass(w string) string {
	switch {
	case w == "CPU":
		return "CPU"
	case strings.HasPrefix(w, "Lock:"), w == "LWLock:LockManager", w == "LWLock:lock_manager":
		return "Lock"
	case strings.Contains(w, "WAL"):
		return "WAL"
	case strings.HasPrefix(w, "IO:"):
		return "IO"
	case strings.HasPrefix(w, "LWLock:"):
		return "LWLock"
	case strings.HasPrefix(w, "Client:"):
		return "Client"
	default:
		typ, _, _ := strings.Cut(w, ":")
		return typ
	}
}

var spaceRE = regexp.MustCompile(`\s+`)

// ShortQuery shows a statement by its first words: `INSERT INTO audit_events (…)` is enough to know it.
func ShortQuery(q string) string {
	q = strings.TrimSpace(spaceRE.ReplaceAllString(q, " "))
	if i := strings.IndexAny(q, "("); i > 0 && strings.HasPrefix(strings.ToUpper(q), "INSERT") {
		return strings.TrimSpace(q[:i])
	}
	if len(q) > 90 {
		q = q[:90] + "…"
	}
	return q
}

func (d *Diagnosis) activity(server string, status sources, f facts) {
	src := status.get("pg_activity")
	defer func() { d.Sources = append(d.Sources, src) }()
	if src.Status != "ok" {
		return
	}
	var lines []activityLine
	readLines(filepath.Join(server, "pg_activity.jsonl"), func(b []byte) {
		var l activityLine
		if json.Unmarshal(b, &l) == nil && d.Window.contains(l.At) {
			lines = append(lines, l)
		}
	})
	every, fine := collectorIntervals(server)
	weights := activityWeights(lines, every, fine)
	// Counts are in units of the finest interval sampled: a backend seen in a sample that stands for
	// four of them counts four.
	waits := map[string]int{}
	queries := map[string]int{}
	qwaits := map[string]map[string]int{}
	samples, units, active, none := len(lines), 0, 0, 0
	for i, l := range lines {
		wt := weights[i]
		units += wt
		n := 0
		for _, be := range l.Backends {
			if be.State != "active" {
				continue
			}
			n++
			w := "CPU"
			if be.Wait != nil {
				w = *be.Wait
			}
			q := ShortQuery(be.Query)
			waits[w] += wt
			queries[q] += wt
			if qwaits[q] == nil {
				qwaits[q] = map[string]int{}
			}
			qwaits[q][w] += wt
		}
		active += n * wt
		if n == 0 {
			none += wt
		}
	}
	d.ActivitySample = samples
	if samples == 0 {
		return
	}
	d.ActiveBackends = round2(float64(active) / float64(units))
	f["db.samples"] = float64(samples)
	f["db.active_mean"] = d.ActiveBackends
	f["db.idle_share"] = float64(none) / float64(units)
	if active == 0 {
		return
	}
	d.Waits = shares(waits, active, 10)
	for _, q := range shares(queries, active, 8) {
		d.Queries = append(d.Queries, QueryShare{Query: q.Name, Share: q.Share, Samples: q.Samples, Waits: shares(qwaits[q.Name], active, 5)})
	}
	classes := map[string]int{}
	for w, n := range waits {
		classes[waitClass(w)] += n
	}
	for _, c := range []string{"Lock", "WAL", "IO", "CPU", "LWLock", "Client"} {
		f["db."+strings.ToLower(c)+"_share"] = float64(classes[c]) / float64(active)
		// The statement that spent most samples in this class, and the class's events in detail.
		best, bestN := "", 0
		for q, ws := range qwaits {
			n := 0
			for w, k := range ws {
				if waitClass(w) == c {
					n += k
				}
			}
			if n > bestN {
				best, bestN = q, n
			}
		}
		if bestN > 0 {
			f["db."+strings.ToLower(c)+"_query"] = best
			f["db."+strings.ToLower(c)+"_query_share"] = float64(bestN) / float64(classes[c])
			var parts []string
			for _, s := range d.Waits {
				if waitClass(s.Name) == c && c != "CPU" && s.Share >= 0.005 {
					parts = append(parts, fmt.Sprintf("%s %s", s.Name, pct(s.Share)))
				}
			}
			f["db."+strings.ToLower(c)+"_detail"] = strings.Join(parts, ", ")
		}
	}
	if cpus := f.num("host.cpus"); cpus > 0 {
		f["db.active_per_cpu"] = round2(d.ActiveBackends / cpus)
	}
	// The class the backends spent most samples in, for the sentence that describes a database
	// without a queue.
	top := ""
	for _, c := range []string{"Lock", "WAL", "IO", "CPU", "LWLock", "Client"} {
		if top == "" || classes[c] > classes[top] {
			top = c
		}
	}
	f["db.top_class"] = map[string]string{"Lock": "locks", "WAL": "WAL writes and flushes", "IO": "data file I/O", "CPU": "nothing (running on CPU)", "LWLock": "internal locks", "Client": "their clients"}[top]
	f["db.top_class_share"] = float64(classes[top]) / float64(active)
	f["db.top_class_query"] = f["db."+strings.ToLower(top)+"_query"]
	f["db.top_wait"] = d.Waits[0].Name
	f["db.top_wait_share"] = d.Waits[0].Share
	f["db.top_query"] = d.Queries[0].Query
	f["db.top_query_share"] = d.Queries[0].Share
}

// collectorIntervals are the activity's two intervals from collector.json: every, and while backends
// wait on locks; zero when the collector sampled at one interval (a run recorded before it had two).
func collectorIntervals(server string) (every, fine time.Duration) {
	b, err := os.ReadFile(filepath.Join(server, "collector.json"))
	if err != nil {
		return 0, 0
	}
	var st struct {
		Intervals map[string]string `json:"intervals"`
	}
	if json.Unmarshal(b, &st) != nil {
		return 0, 0
	}
	every, _ = time.ParseDuration(st.Intervals["activity"])
	fine, _ = time.ParseDuration(st.Intervals["activity_fine"])
	if every <= 0 || fine <= 0 || fine >= every {
		return 0, 0
	}
	return every, fine
}

// activityWeights is each sample's weight: the time to the next sample in fine intervals, from 1 to
// every/fine (a sample at the coarse interval stands for that many fine ones; a longer gap is a pause,
// not more of the same). 1 each when the collector sampled at one interval.
func activityWeights(lines []activityLine, every, fine time.Duration) []int {
	w := make([]int, len(lines))
	most := 1
	if fine > 0 {
		most = int(every / fine)
	}
	for i := range lines {
		w[i] = 1
		if most == 1 {
			continue
		}
		gap := time.Duration(0)
		switch {
		case i+1 < len(lines):
			gap = lines[i+1].At.Sub(lines[i].At)
		case i > 0:
			gap = lines[i].At.Sub(lines[i-1].At)
		}
		w[i] = min(most, max(1, int(math.Round(float64(gap)/float64(fine)))))
	}
	return w
}

func shares(m map[string]int, total, top int) []Share {
	var out []Share
	for k, n := range m {
		out = append(out, Share{Name: k, Samples: n, Share: round3(float64(n) / float64(total))})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Samples != out[j].Samples {
			return out[i].Samples > out[j].Samples
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > top {
		out = out[:top]
	}
	return out
}

// snapshots keeps the two samples of a counter source that bound the window: the last one at or before
// its start (else the first), and the first one after its end (else the last). Their difference is the
// window's.
type snapshots[T any] struct {
	first, last *T
	lastAt      time.Time
}

func (s *snapshots[T]) see(w Window, at time.Time, v T) {
	if !at.After(w.From) || s.first == nil {
		s.first = &v
	}
	if s.last == nil || !s.lastAt.After(w.To) || w.To.IsZero() {
		s.last, s.lastAt = &v, at
	}
}

type statementsLine struct {
	At         time.Time `json:"at"`
	Statements []struct {
		ID      string  `json:"id"`
		Query   string  `json:"query"`
		Calls   float64 `json:"calls"`
		TotalMS float64 `json:"total_ms"`
		Rows    float64 `json:"rows"`
	} `json:"statements"`
}

// statements: what pg_stat_statements counted between the snapshots around the window (it was reset as
// the collector started, just before the load).
func (d *Diagnosis) statements(server string, status sources, f facts) {
	src := status.get("pg_statements")
	defer func() { d.Sources = append(d.Sources, src) }()
	if src.Status != "ok" {
		return
	}
	var around snapshots[statementsLine]
	var all []statementsLine
	readLines(filepath.Join(server, "pg_statements.jsonl"), func(b []byte) {
		var l statementsLine
		if json.Unmarshal(b, &l) != nil {
			return
		}
		around.see(d.Window, l.At, l)
		all = append(all, l)
	})
	first, last := around.first, around.last
	if last == nil {
		return
	}
	before := map[string]struct{ calls, ms, rows float64 }{}
	if first != nil && first != last && !first.At.After(d.Window.From) {
		for _, s := range first.Statements {
			before[s.ID] = struct{ calls, ms, rows float64 }{s.Calls, s.TotalMS, s.Rows}
		}
	}
	var total, topMS float64
	var out []Statement
	topID := ""
	for _, s := range last.Statements {
		b := before[s.ID]
		st := Statement{Query: ShortQuery(s.Query), Calls: s.Calls - b.calls, TotalMS: s.TotalMS - b.ms, Rows: s.Rows - b.rows}
		if st.Calls <= 0 {
			continue
		}
		if st.TotalMS > topMS {
			topID, topMS = s.ID, st.TotalMS
		}
		st.MeanMS = round3(st.TotalMS / st.Calls)
		total += st.TotalMS
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TotalMS > out[j].TotalMS })
	for i := range out {
		out[i].TimeShare = round3(out[i].TotalMS / total)
		out[i].TotalMS = round1(out[i].TotalMS)
	}
	if len(out) > 8 {
		out = out[:8]
	}
	d.Statements = out
	if len(out) > 0 {
		f["stmt.query"] = out[0].Query
		f["stmt.time_share"] = out[0].TimeShare
		f["stmt.calls"] = out[0].Calls
		f["stmt.mean_ms"] = out[0].MeanMS
		d.growth(server, all, topID, f)
	}
}

// growth asks whether the statement that took most of the database's time got dearer as a table it
// reads grew: its mean per call over the window's first third against its last third (pg_statements'
// cumulative counts), beside the live rows of the largest table its text names (pg_tables) at the
// window's two ends. A cost that grows with the inventory (the certificates' list sorts the whole
// table: docs/certctl-findings.md#list-full-sort) shows this way in any run that writes rows as it reads.
func (d *Diagnosis) growth(server string, all []statementsLine, id string, f facts) {
	type point struct {
		at         time.Time
		calls, sum float64
		query      string
	}
	var pts []point
	for _, l := range all {
		if !d.Window.contains(l.At) {
			continue
		}
		for _, s := range l.Statements {
			if s.ID == id {
				pts = append(pts, point{l.At, s.Calls, s.TotalMS, s.Query})
			}
		}
	}
	if len(pts) < 4 || d.Window.seconds() <= 0 {
		return
	}
	third := d.Window.seconds() / 3
	mean := func(from, to float64) (float64, bool) {
		var a, b *point
		for i := range pts {
			x := pts[i].at.Sub(d.Window.From).Seconds()
			if a == nil && x >= from {
				a = &pts[i]
			}
			if x <= to {
				b = &pts[i]
			}
		}
		if a == nil || b == nil || b.calls-a.calls < 10 {
			return 0, false
		}
		return (b.sum - a.sum) / (b.calls - a.calls), true
	}
	early, ok1 := mean(0, third)
	late, ok2 := mean(2*third, d.Window.seconds())
	if !ok1 || !ok2 || early <= 0 {
		return
	}
	query := strings.ToLower(pts[len(pts)-1].query)
	type tableLine struct {
		At     time.Time `json:"at"`
		Tables []struct {
			Name string  `json:"name"`
			Live float64 `json:"live"`
		} `json:"tables"`
	}
	var first, last map[string]float64
	firstIn := false
	readLines(filepath.Join(server, "pg_tables.jsonl"), func(b []byte) {
		var l tableLine
		if json.Unmarshal(b, &l) != nil {
			return
		}
		rows := map[string]float64{}
		for _, t := range l.Tables {
			rows[t.Name] = t.Live
		}
		// The first count inside the window: the one before it may predate the rows the load writes.
		if first == nil || (!l.At.After(d.Window.From) && !firstIn) {
			first = rows
		} else if !firstIn {
			first, firstIn = rows, true
		}
		if last == nil || !l.At.After(d.Window.To.Add(time.Minute)) {
			last = rows
		}
	})
	table := ""
	for name, n := range last {
		if regexp.MustCompile(`\b(from|join)\s+`+regexp.QuoteMeta(name)+`\b`).MatchString(query) && (table == "" || n > last[table]) {
			table = name
		}
	}
	f["growth.query"] = ShortQuery(pts[len(pts)-1].query)
	f["growth.mean_early_ms"] = round3(early)
	f["growth.mean_late_ms"] = round3(late)
	f["growth.factor"] = round2(late / early)
	if table != "" && first[table] > 0 {
		f["growth.table"] = table
		f["growth.rows_early"] = first[table]
		f["growth.rows_late"] = last[table]
		f["growth.rows_factor"] = round2(last[table] / first[table])
	}
}

type databaseLine struct {
	At           time.Time          `json:"at"`
	DB           map[string]float64 `json:"db"`
	WAL          map[string]float64 `json:"wal"`
	LocksWaiting float64            `json:"locks_waiting"`
}

func (d *Diagnosis) database(server string, status sources, f facts) {
	src := status.get("pg_database")
	defer func() { d.Sources = append(d.Sources, src) }()
	if src.Status != "ok" {
		return
	}
	var around snapshots[databaseLine]
	maxWaiting := 0.0
	readLines(filepath.Join(server, "pg_database.jsonl"), func(b []byte) {
		var l databaseLine
		if json.Unmarshal(b, &l) != nil {
			return
		}
		around.see(d.Window, l.At, l)
		if d.Window.contains(l.At) && l.LocksWaiting > maxWaiting {
			maxWaiting = l.LocksWaiting
		}
	})
	first, last := around.first, around.last
	if first == nil || last == nil || first == last {
		return
	}
	d.DatabaseDelta = map[string]float64{}
	for k, v := range last.DB {
		if k != "numbackends" {
			d.DatabaseDelta[k] = v - first.DB[k]
		}
	}
	for k, v := range last.WAL {
		d.DatabaseDelta["wal_"+strings.TrimPrefix(k, "wal_")] = v - first.WAL[k]
	}
	d.DatabaseDelta["locks_waiting_max"] = maxWaiting
	secs := last.At.Sub(first.At).Seconds()
	if secs > 0 {
		f["db.commits_per_s"] = round1(d.DatabaseDelta["xact_commit"] / secs)
		if w, ok := d.DatabaseDelta["wal_sync"]; ok {
			f["db.wal_syncs_per_s"] = round1(w / secs)
		}
		// pg_stat_database.sessions (PostgreSQL 14+) counts every session opened: each a backend forked and
		// a client authenticated, which a pool that keeps its connections never pays twice.
		if n, ok := d.DatabaseDelta["sessions"]; ok {
			f["db.sessions"] = n
			f["db.sessions_per_s"] = round1(n / secs)
		}
	}
	f["db.deadlocks"] = d.DatabaseDelta["deadlocks"]
	f["db.temp_files"] = d.DatabaseDelta["temp_files"]
	f["db.rollbacks"] = d.DatabaseDelta["xact_rollback"]
	f["db.locks_waiting_max"] = maxWaiting
}

type metricsLine struct {
	At      time.Time          `json:"at"`
	Samples map[string]float64 `json:"samples"`
}

var leRE = regexp.MustCompile(`,?le="([^"]+)"`)

// metrics: certctl's counters that moved over the window, and its histograms' quantiles from their
// bucket deltas.
func (d *Diagnosis) metrics(server string, status sources, f facts) {
	src := status.get("certctl_metrics")
	defer func() { d.Sources = append(d.Sources, src) }()
	if src.Status != "ok" {
		return
	}
	var around snapshots[metricsLine]
	readLines(filepath.Join(server, "certctl_metrics.jsonl"), func(b []byte) {
		var l metricsLine
		if json.Unmarshal(b, &l) != nil {
			return
		}
		around.see(d.Window, l.At, l)
	})
	first, last := around.first, around.last
	if first == nil || last == nil || first == last {
		return
	}
	secs := last.At.Sub(first.At).Seconds()
	buckets := map[string]map[float64]float64{} // histogram (name{other labels}) → le → delta
	for k, v := range last.Samples {
		delta := v - first.Samples[k]
		name, _, _ := strings.Cut(k, "{")
		switch {
		case strings.HasSuffix(name, "_bucket"):
			m := leRE.FindStringSubmatch(k)
			if m == nil {
				continue
			}
			h := strings.TrimSuffix(name, "_bucket") + leRE.ReplaceAllString(strings.TrimPrefix(k, name), "")
			h = strings.ReplaceAll(strings.ReplaceAll(h, "{,", "{"), "{}", "")
			var le float64
			if m[1] == "+Inf" {
				le = math.Inf(1)
			} else if _, err := fmt.Sscanf(m[1], "%g", &le); err != nil {
				continue
			}
			if buckets[h] == nil {
				buckets[h] = map[float64]float64{}
			}
			buckets[h][le] = delta
		case strings.HasSuffix(name, "_total") && delta != 0:
			d.Metrics = append(d.Metrics, MetricDelta{Name: k, Delta: delta, PerS: round2(delta / secs)})
		}
	}
	sort.Slice(d.Metrics, func(i, j int) bool { return d.Metrics[i].Name < d.Metrics[j].Name })
	for h, bs := range buckets {
		les := make([]float64, 0, len(bs))
		for le := range bs {
			les = append(les, le)
		}
		sort.Float64s(les)
		count := bs[math.Inf(1)]
		if count <= 0 {
			continue
		}
		q := func(p float64) float64 { return bucketQuantile(les, bs, count, p) }
		d.Histograms = append(d.Histograms, Histogram{Name: h, Count: count, P50: q(0.5), P95: q(0.95), P99: q(0.99), Unit: "s"})
	}
	sort.Slice(d.Histograms, func(i, j int) bool { return d.Histograms[i].Name < d.Histograms[j].Name })
	for _, m := range d.Metrics {
		if m.Name == "certctl_issuance_total" || strings.HasPrefix(m.Name, "certctl_issuance_total{") {
			f["certctl.issued"] = m.Delta + f.num("certctl.issued")
		}
	}
	for _, h := range d.Histograms {
		if strings.HasPrefix(h.Name, "certctl_issuance_duration_seconds") {
			f["certctl.issuance_p95_ms"] = round1(h.P95 * 1000)
		}
	}
}

// bucketQuantile interpolates linearly inside the bucket that holds the quantile, as Prometheus's
// histogram_quantile does.
func bucketQuantile(les []float64, cum map[float64]float64, count, p float64) float64 {
	rank := p * count
	prevLE, prevN := 0.0, 0.0
	for _, le := range les {
		n := cum[le]
		if n >= rank {
			if math.IsInf(le, 1) {
				return prevLE
			}
			if n == prevN {
				return le
			}
			return round6(prevLE + (le-prevLE)*(rank-prevN)/(n-prevN))
		}
		prevLE, prevN = le, n
	}
	return prevLE
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// quantile by nearest rank, on a copy.
// quantile is k6's percentile rule, the one every figure of a run uses.
func quantile(v []float64, p float64) float64 { return samples.Quantile(v, p) }

func round1(v float64) float64 { return math.Round(v*10) / 10 }
func round2(v float64) float64 { return math.Round(v*100) / 100 }
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// machine splits the machine's busy CPU over the window (server/host.jsonl, read in the same ticks as
// the containers) into the stack, the load generator and everything outside the run, as shares of the
// whole machine. Outside is what the machine did beyond the run's containers: a build, a browser,
// another stack.
func (d *Diagnosis) machine(server string, in Input, busy map[int]map[string]float64, f facts) {
	var m MachineShare
	var pressure []float64
	var harness, engine float64
	withProcs := 0
	cpus := float64(max(1, in.HostCPUs))
	err := readLines(filepath.Join(server, "host.jsonl"), func(b []byte) {
		var l HostSample
		if json.Unmarshal(b, &l) != nil || !d.Window.contains(l.At) {
			return
		}
		run, ok := busy[l.Refresh]
		if !ok {
			return
		}
		if l.CPUs > 0 {
			cpus = float64(l.CPUs)
		}
		stack, gen, coll := 0.0, 0.0, 0.0
		for svc, v := range run {
			switch svc {
			case "k6":
				gen += v
			case "collector":
				coll += v
			default:
				stack += v
			}
		}
		stack, gen, coll = stack/cpus, gen/cpus, coll/cpus
		ours := 0.0
		if l.HarnessPct != nil && l.EnginePct != nil {
			harness += *l.HarnessPct
			engine += *l.EnginePct
			ours, withProcs = *l.HarnessPct+*l.EnginePct, withProcs+1
		}
		m.BusyPct += l.BusyPct
		m.StackPct += stack
		m.LoadGenPct += gen
		m.CollectorPct += coll
		m.OutsidePct += math.Max(0, l.BusyPct-stack-gen-coll-ours)
		m.StealPct += l.StealPct
		if l.PressurePct != nil {
			pressure = append(pressure, *l.PressurePct)
		}
		m.Samples++
	})
	if err != nil || m.Samples == 0 {
		return
	}
	n := float64(m.Samples)
	m.BusyPct, m.StackPct, m.LoadGenPct = round1(m.BusyPct/n), round1(m.StackPct/n), round1(m.LoadGenPct/n)
	m.OutsidePct, m.StealPct, m.CollectorPct = round1(m.OutsidePct/n), round1(m.StealPct/n), round2(m.CollectorPct/n)
	if withProcs > 0 {
		h, e := round2(harness/float64(withProcs)), round2(engine/float64(withProcs))
		m.HarnessPct, m.EnginePct = &h, &e
	}
	if q, ok := collectorQueries(server, cpus); ok {
		m.CollectorQueriesPct = &q
	}
	if len(pressure) > 0 {
		p := round1(mean(pressure))
		m.PressurePct = &p
	}
	f["machine.busy_pct"] = m.BusyPct
	f["machine.stack_pct"] = m.StackPct
	f["machine.loadgen_pct"] = m.LoadGenPct
	f["machine.outside_pct"] = m.OutsidePct
	f["machine.steal_pct"] = m.StealPct
	d.Machine = &m
	d.Sources = append(d.Sources, Source{Name: "host", Status: "ok", Samples: m.Samples, Files: []string{"server/host.jsonl"}})
}
