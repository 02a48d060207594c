package diagnosis

import (
	"certctl-loadtest/internal/golden"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// writeLines writes v as JSON lines.
func writeLines(t *testing.T, path string, vs ...any) {
	t.Helper()
	var b strings.Builder
	for _, v := range vs {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(j, '\n'))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

type backend struct {
	State string  `json:"state"`
	Wait  *string `json:"wait"`
	Query string  `json:"query"`
}

func wait(s string) *string { return &s }

// times repeats the backends n times: a queue of them.
func times(n int, bs ...backend) []backend {
	var out []backend
	for i := 0; i < n; i++ {
		out = append(out, bs...)
	}
	return out
}

// synthetic builds a run directory whose server/ holds 60 s of samples: containers at the given CPU,
// and database backends drawn from mix (each sample holds every backend of mix).
func synthetic(t *testing.T, cpu map[string]float64, mix []backend) Input {
	t.Helper()
	dir := t.TempDir()
	server := filepath.Join(dir, "server")
	os.MkdirAll(server, 0o755)
	var cl, al, dl, ml []any
	for s := 0; s < 60; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		for svc, c := range cpu {
			cl = append(cl, map[string]any{"at": at, "service": svc, "container": "p-" + svc + "-1", "cpu_pct": c, "mem_bytes": 100 << 20, "refresh": s + 1})
		}
		for q := 0; q < 4; q++ {
			al = append(al, map[string]any{"at": at.Add(time.Duration(q) * 250 * time.Millisecond), "backends": mix})
		}
		if s%5 == 0 {
			dl = append(dl, map[string]any{"at": at, "db": map[string]float64{"xact_commit": float64(s * 100), "deadlocks": 0, "temp_files": 0}, "locks_waiting": 1})
			ml = append(ml, map[string]any{"at": at, "samples": map[string]float64{
				"certctl_issuance_total":                              float64(s * 2),
				`certctl_issuance_duration_seconds_bucket{le="0.01"}`: float64(s),
				`certctl_issuance_duration_seconds_bucket{le="0.1"}`:  float64(s * 2),
				`certctl_issuance_duration_seconds_bucket{le="+Inf"}`: float64(s * 2),
			}})
		}
	}
	writeLines(t, filepath.Join(server, "containers.jsonl"), cl...)
	writeLines(t, filepath.Join(server, "pg_activity.jsonl"), al...)
	writeLines(t, filepath.Join(server, "pg_database.jsonl"), dl...)
	writeLines(t, filepath.Join(server, "certctl_metrics.jsonl"), ml...)
	writeLines(t, filepath.Join(server, "pg_statements.jsonl"),
		map[string]any{"at": t0.Add(-time.Second), "statements": []any{}},
		map[string]any{"at": t0.Add(61 * time.Second), "statements": []any{
			map[string]any{"id": "1", "query": "INSERT INTO audit_events (id, actor) VALUES ($1, $2)", "calls": 9000, "total_ms": 45000, "rows": 9000},
			map[string]any{"id": "2", "query": "SELECT id, name FROM managed_certificates ORDER BY created_at DESC LIMIT $1", "calls": 3000, "total_ms": 5000, "rows": 150000},
		}})
	st := map[string]any{"cpu_s": 0.4, "sources": []any{
		map[string]any{"name": "pg_activity", "file": "pg_activity.jsonl", "samples": len(al)},
		map[string]any{"name": "pg_database", "file": "pg_database.jsonl", "samples": len(dl)},
		map[string]any{"name": "pg_statements", "file": "pg_statements.jsonl", "samples": 2},
		map[string]any{"name": "certctl_metrics", "file": "certctl_metrics.jsonl", "samples": len(ml)},
	}}
	b, _ := json.Marshal(st)
	os.WriteFile(filepath.Join(server, "collector.json"), b, 0o644)
	return Input{Dir: dir, LoadStart: t0, HostCPUs: 2, Scenarios: []ScenarioWindow{{Name: "list_certificates", From: t0, To: t0.Add(60 * time.Second)}}}
}

const audit = "INSERT INTO audit_events (id, actor, action) VALUES ($1, $2, $3)"

func sentences(d *Diagnosis) string {
	var b strings.Builder
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "[%s %s] %s\n", f.Kind, f.Rule, f.Sentence)
	}
	return b.String()
}

func TestRulesOnSyntheticSamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpu  map[string]float64
		mix  []backend
		want []string // rule ids, in order
	}{
		{"audit chain lock", map[string]float64{"postgres": 94, "certctl-server": 40, "k6-list-certificates": 20},
			times(3, backend{"active", wait("Lock:transactionid"), audit}, backend{"active", wait("Lock:tuple"), audit}, backend{"active", wait("LWLock:LockManager"), audit}, backend{"active", nil, "SELECT 1"}),
			[]string{"db-lock-contention", "top-statement", "certctl-issuance"}},
		{"wal flushes on a busy machine", map[string]float64{"postgres": 97, "certctl-server": 50, "nginx": 40},
			times(3, backend{"active", wait("LWLock:WALWrite"), "COMMIT"}, backend{"active", wait("IO:WALSync"), "COMMIT"}, backend{"active", nil, audit}),
			[]string{"db-wal-flush", "host-cpu-saturated", "top-statement", "certctl-issuance"}},
		{"waits without a queue", map[string]float64{"postgres": 40, "certctl-server": 30},
			[]backend{{"active", wait("LWLock:WALWrite"), "COMMIT"}, {"active", nil, audit}},
			[]string{"db-waits", "top-statement", "certctl-issuance", "headroom"}},
		{"headroom", map[string]float64{"postgres": 12, "certctl-server": 20},
			[]backend{{"idle in transaction", nil, "SELECT 1"}},
			[]string{"top-statement", "certctl-issuance", "headroom"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Analyze(synthetic(t, tc.cpu, tc.mix))
			var got []string
			for _, f := range d.Findings {
				got = append(got, f.Rule)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("rules %v, want %v:\n%s", got, tc.want, sentences(d))
			}
			golden.Check(t, "synthetic-"+strings.ReplaceAll(tc.name, " ", "-")+".txt", sentences(d))
		})
	}
}

func TestTheAuditChainSentence(t *testing.T) {
	d := Analyze(synthetic(t, map[string]float64{"postgres": 94, "certctl-server": 60},
		times(3, backend{"active", wait("Lock:transactionid"), audit}, backend{"active", wait("Lock:transactionid"), audit}, backend{"active", wait("Lock:tuple"), audit}, backend{"active", nil, "SELECT 1"})))
	want := "postgres at 94 % CPU; 75 % of sampled active backends waiting on locks (Lock:transactionid 50 %, Lock:tuple 25 %), 100 % of those in `INSERT INTO audit_events`"
	if !strings.HasPrefix(d.Findings[0].Sentence, want) {
		t.Fatalf("first finding:\n %s\nwant it to start\n %s", d.Findings[0].Sentence, want)
	}
}

func TestUnavailableSourcesAreNamedNotFatal(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "server"), 0o755)
	b, _ := json.Marshal(map[string]any{"sources": []any{
		map[string]any{"name": "pg_activity", "reason": "no database access: COLLECT_DATABASE_URL is not set"},
		map[string]any{"name": "certctl_metrics", "reason": "GET https://x/api/v1/metrics/prometheus answered 404 Not Found", "errors": 3},
	}})
	os.WriteFile(filepath.Join(dir, "server", "collector.json"), b, 0o644)
	d := Analyze(Input{Dir: dir, LoadStart: t0, HostCPUs: 2, Scenarios: []ScenarioWindow{{Name: "a", From: t0, To: t0.Add(time.Minute)}}})
	got := sentences(d)
	for _, want := range []string{
		"containers: not available: server/containers.jsonl is missing",
		"pg_activity: not available: no database access: COLLECT_DATABASE_URL is not set",
		"certctl_metrics: not available: GET https://x/api/v1/metrics/prometheus answered 404 Not Found",
		"pg_statements: not available: not in collector.json",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("findings lack %q:\n%s", want, got)
		}
	}
	if Analyze(Input{Dir: t.TempDir()}) != nil {
		t.Error("a run without server/ has a diagnosis")
	}
}

func TestWindowIsTheFailingScenarios(t *testing.T) {
	in := Input{LoadStart: t0, Scenarios: []ScenarioWindow{
		{Name: "a", From: t0, To: t0.Add(300 * time.Second)},
		{Name: "b", From: t0.Add(time.Second), To: t0.Add(120 * time.Second), Failed: true},
	}}
	w := window(in)
	if w.Basis != "failing scenarios: b" || !w.From.Equal(t0.Add(time.Second)) || !w.To.Equal(t0.Add(120*time.Second)) {
		t.Fatalf("window %+v", w)
	}
}

func TestBucketQuantile(t *testing.T) {
	les := []float64{0.01, 0.1, 1}
	cum := map[float64]float64{0.01: 50, 0.1: 90, 1: 100}
	for p, want := range map[float64]float64{0.5: 0.01, 0.7: 0.055, 0.95: 0.55} {
		if got := bucketQuantile(les, cum, 100, p); got != want {
			t.Errorf("q(%v) = %v, want %v", p, got, want)
		}
	}
}

func TestRulesParse(t *testing.T) {
	if _, err := ParseRules([]byte("- id: a\n  kind: info\n  when: [{fact: x, gt: 0}]\n  unless: [b]\n  say: hi\n")); err == nil || !strings.Contains(err.Error(), "unless") {
		t.Errorf("unless naming a later rule: %v", err)
	}
	if _, err := ParseRules([]byte("- id: a\n  kind: info\n  when: [{fact: x, gt: 0}]\n  say: '{{.x'\n")); err == nil {
		t.Error("a broken template parsed")
	}
}

// hostSamples writes server/host.jsonl beside synthetic's containers: the machine busy at busy % of its
// 2 CPUs each second.
func hostSamples(t *testing.T, in Input, busy, steal float64) {
	t.Helper()
	var hl []any
	for s := 0; s < 60; s++ {
		hl = append(hl, map[string]any{"at": t0.Add(time.Duration(s) * time.Second), "refresh": s + 1, "cpus": 2, "busy_pct": busy, "steal_pct": steal})
	}
	writeLines(t, filepath.Join(in.Dir, "server", "host.jsonl"), hl...)
}

// The machine split into the stack, k6 and the rest; outside work past 20 % of the machine decides the
// run when it is judged, and then nothing blames certctl. Unjudged (MACHINE_CHECK=false), or with the
// machine to itself, the diagnosis is what it was.
func TestMachineShare(t *testing.T) {
	lock := times(3, backend{"active", wait("Lock:transactionid"), audit}, backend{"active", wait("Lock:tuple"), audit}, backend{"active", wait("LWLock:LockManager"), audit}, backend{"active", nil, "SELECT 1"})
	cpu := map[string]float64{"postgres": 94, "certctl-server": 40, "k6-list-certificates": 20} // 154 % of one CPU: 77 % of 2
	in := synthetic(t, cpu, lock)
	hostSamples(t, in, 100, 0)
	in.JudgeMachine = true
	d := Analyze(in)
	m := d.Machine
	if m == nil || m.BusyPct != 100 || m.StackPct != 67 || m.LoadGenPct != 10 || m.OutsidePct != 23 || !m.Decided {
		t.Fatalf("machine %+v", m)
	}
	if want := "the machine decided, not certctl: work outside the run took 23 % of the machine's 2 CPUs on average (the stack 67 %, k6 10 %, all busy 100 %)"; m.Sentence != want {
		t.Errorf("sentence %q\nwant     %q", m.Sentence, want)
	}
	for _, f := range d.Findings {
		if f.Kind == "contention" || f.Kind == "limit" {
			t.Errorf("blames certctl: [%s] %s", f.Rule, f.Sentence)
		}
	}
	if d.Findings[0].Rule != "machine-outside" {
		t.Errorf("first finding %s", sentences(d))
	}
	// The CPU chart draws the machine and the part outside the run, in % of one CPU: 200 and 46.
	lines := map[string]*float64{}
	for _, l := range d.Series.CPU {
		lines[l.Name] = l.Values[0]
	}
	if m, o := lines["machine (all)"], lines["outside the run"]; m == nil || o == nil || *m != 200 || *o != 46 {
		t.Errorf("CPU chart lines %v", d.Series.CPU)
	}

	// Unjudged, the run still says what the check would have decided, from its own samples: the test
	// suites excuse a timing budget beside other stacks by it alone.
	in.JudgeMachine = false
	if d := Analyze(in); d.Machine == nil || d.Machine.Decided || d.Machine.Unjudged != m.Sentence || d.Findings[0].Rule != "db-lock-contention" {
		t.Errorf("unjudged: %+v\n%s", d.Machine, sentences(d))
	}
	alone := synthetic(t, cpu, lock)
	hostSamples(t, alone, 80, 0)
	alone.JudgeMachine = true
	if d := Analyze(alone); d.Machine.Decided || d.Machine.OutsidePct != 3 || d.Findings[0].Rule != "db-lock-contention" {
		t.Errorf("the machine to itself: %+v\n%s", d.Machine, sentences(d))
	}
	alone.JudgeMachine = false
	if d := Analyze(alone); d.Machine.Unjudged != "" {
		t.Errorf("the machine to itself: %+v\n%s", d.Machine, sentences(d))
	}
	stolen := synthetic(t, cpu, lock)
	hostSamples(t, stolen, 80, 15)
	stolen.JudgeMachine = true
	if d := Analyze(stolen); !d.Machine.Decided || !strings.Contains(d.Machine.Sentence, "hypervisor gave 15 %") {
		t.Errorf("steal: %+v", d.Machine)
	}
}

// k6 is part of the run, but a load generator that takes 40 % of the machine competes with what it
// measures: the machine decides then, and says so; at 35 % it does not.
func TestMachineShareLoadGenerator(t *testing.T) {
	lock := times(3, backend{"active", wait("Lock:transactionid"), audit}, backend{"active", nil, "SELECT 1"})
	for _, c := range []struct {
		k6      float64
		decided bool
	}{{90, true}, {70, false}} {
		cpu := map[string]float64{"postgres": 50, "certctl-server": 30, "k6-list-certificates": c.k6}
		in := synthetic(t, cpu, lock)
		hostSamples(t, in, (80+c.k6)/2, 0)
		in.JudgeMachine = true
		d := Analyze(in)
		if d.Machine == nil || d.Machine.Decided != c.decided || d.Machine.OutsidePct != 0 {
			t.Fatalf("k6 at %v %% of a CPU: %+v", c.k6, d.Machine)
		}
		if c.decided && !strings.HasPrefix(d.Machine.Sentence, "the machine decided, not certctl: the load generator itself took 45 %") {
			t.Errorf("sentence %q", d.Machine.Sentence)
		}
		if got := d.Findings[0].Rule; c.decided != (got == "machine-loadgen") {
			t.Errorf("k6 at %v %% of a CPU: first finding %s", c.k6, sentences(d))
		}
	}
}

// The run's own share: the collector's container apart from the stack, the harness and the engine apart
// from what is outside the run, and what answering the collector cost at most.
func TestInstrumentsShare(t *testing.T) {
	cpu := map[string]float64{"postgres": 60, "certctl-server": 40, "collector": 2, "k6-list-certificates": 20}
	in := synthetic(t, cpu, nil)
	var hl []any
	for s := 0; s < 60; s++ {
		hl = append(hl, map[string]any{"at": t0.Add(time.Duration(s) * time.Second), "refresh": s + 1, "cpus": 2, "busy_pct": 70, "steal_pct": 0, "harness_pct": 0.5, "engine_pct": 1.5})
	}
	writeLines(t, filepath.Join(in.Dir, "server", "host.jsonl"), hl...)
	b, _ := json.Marshal(map[string]any{"started_at": t0, "ended_at": t0.Add(100 * time.Second), "sources": []any{
		map[string]any{"name": "pg_activity", "file": "pg_activity.jsonl", "samples": 240, "wait_ms": 300.0},
		map[string]any{"name": "certctl_metrics", "file": "certctl_metrics.jsonl", "samples": 4, "wait_ms": 100.0},
	}})
	os.WriteFile(filepath.Join(in.Dir, "server", "collector.json"), b, 0o644)
	m := Analyze(in).Machine
	if m == nil || m.StackPct != 50 || m.CollectorPct != 1 || m.LoadGenPct != 10 || m.HarnessPct == nil || *m.HarnessPct != 0.5 || *m.EnginePct != 1.5 || m.OutsidePct != 7 {
		t.Fatalf("machine %+v", m)
	}
	// 0.4 s of waiting over 100 s of 2 CPUs.
	if m.CollectorQueriesPct == nil || *m.CollectorQueriesPct != 0.2 {
		t.Errorf("collector's queries %v", m.CollectorQueriesPct)
	}
}

// Where the collector sampled every second and every 250 ms while backends waited on locks, a coarse
// sample counts for four fine ones.
func TestActivityWeights(t *testing.T) {
	var lines []activityLine
	at := t0
	for _, gap := range []time.Duration{time.Second, time.Second, 250 * time.Millisecond, 260 * time.Millisecond, 240 * time.Millisecond, time.Second, 5 * time.Second} {
		lines = append(lines, activityLine{At: at})
		at = at.Add(gap)
	}
	lines = append(lines, activityLine{At: at})
	if got, want := fmt.Sprint(activityWeights(lines, time.Second, 250*time.Millisecond)), "[4 4 1 1 1 4 4 4]"; got != want {
		t.Errorf("weights %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(activityWeights(lines, 0, 0)), "[1 1 1 1 1 1 1 1]"; got != want {
		t.Errorf("one interval: %s, want %s", got, want)
	}
}

// Samplers the run switched off are off, not missing: no finding says they are unavailable.
func TestSwitchedOffSources(t *testing.T) {
	in := synthetic(t, map[string]float64{"postgres": 50}, nil)
	os.Remove(filepath.Join(in.Dir, "server", "collector.json"))
	in.Off = []string{"collector"}
	d := Analyze(in)
	for _, f := range d.Findings {
		if f.Rule == "source-unavailable" {
			t.Errorf("an unavailable finding for a switched-off sampler: %s", f.Sentence)
		}
	}
	off := 0
	for _, s := range d.Sources {
		if s.Status == StatusOff {
			off++
		}
	}
	if off != 4 || len(d.Containers) == 0 {
		t.Errorf("sources %+v, containers %+v", d.Sources, d.Containers)
	}
}
