package diagnosis

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The run's own containers held both CPUs from the start: judged, the machine was the limit, with the
// load it carried, and nothing blames certctl; unjudged, the same samples say the run is CPU-bound.
func TestMachineSaturatedByTheRun(t *testing.T) {
	cpu := map[string]float64{"postgres": 100, "certctl-server": 70, "k6-list-certificates": 15} // 92.5 % of 2 CPUs
	in := synthetic(t, cpu, []backend{{"active", nil, "SELECT 1"}})
	in.Scenarios[0].Rate = "50/s"
	hostSamples(t, in, 95, 0)
	in.JudgeMachine = true
	d := Analyze(in)
	if d.Machine == nil || !d.Machine.Decided {
		t.Fatalf("not decided: %+v\n%s", d.Machine, sentences(d))
	}
	want := "the machine was the limit, not certctl: the run's own containers held its 2 CPUs 93 % busy from 0m00s into the load to its end (postgres their largest user), carrying list_certificates 50/s; a machine with more cores judges certctl at this load"
	if d.Machine.Sentence != want {
		t.Errorf("sentence %q\nwant     %q", d.Machine.Sentence, want)
	}
	for _, f := range d.Findings {
		if f.Kind == "contention" || f.Kind == "limit" || f.Kind == "headroom" {
			t.Errorf("blames certctl or claims headroom: [%s] %s", f.Rule, f.Sentence)
		}
	}
	in.JudgeMachine = false
	if d := Analyze(in); d.Machine.Decided || !strings.Contains(sentences(d), "[limit host-cpu-saturated]") {
		t.Errorf("unjudged:\n%s", sentences(d))
	}
	// Saturated for the last tenth only: the machine did not set the pace of the run.
	late := synthetic(t, cpu, []backend{{"active", nil, "SELECT 1"}})
	cpuOver(t, late, func(s int) float64 {
		if s >= 54 {
			return 100
		}
		return 30
	})
	hostSamples(t, late, 40, 0)
	late.JudgeMachine = true
	if d := Analyze(late); d.Machine.Decided {
		t.Errorf("decided by its last six seconds: %s", d.Machine.Sentence)
	}
}

// cpuOver rewrites the synthetic run's containers: one service, postgres, at cpu(s) % of both CPUs.
func cpuOver(t *testing.T, in Input, cpu func(s int) float64) {
	t.Helper()
	var cl []any
	for s := 0; s < 60; s++ {
		cl = append(cl, map[string]any{"at": t0.Add(time.Duration(s) * time.Second), "service": "postgres", "container": "p-postgres-1", "cpu_pct": 2 * cpu(s), "mem_bytes": 100 << 20, "refresh": s + 1})
	}
	writeLines(t, filepath.Join(in.Dir, "server", "containers.jsonl"), cl...)
}

// 75 % busy on average but above 90 % a third of the time: saturated at times, never "headroom:
// nothing saturated".
func TestNoHeadroomWhenSaturatedAtTimes(t *testing.T) {
	in := synthetic(t, nil, []backend{{"active", nil, "SELECT 1"}})
	cpuOver(t, in, func(s int) float64 {
		if s%3 == 0 {
			return 99
		}
		return 63
	})
	d := Analyze(in)
	got := sentences(d)
	if strings.Contains(got, "headroom") || !strings.Contains(got, "[limit host-cpu-saturated-at-times] the machine's 2 CPUs were saturated at times: 99 % busy at p95 (75 % on average)") {
		t.Errorf("findings:\n%s", got)
	}
	steady := synthetic(t, nil, []backend{{"active", nil, "SELECT 1"}})
	cpuOver(t, steady, func(int) float64 { return 75 })
	if got := sentences(Analyze(steady)); !strings.Contains(got, "[headroom headroom]") || strings.Contains(got, "at times") {
		t.Errorf("a steady 75 %%:\n%s", got)
	}
}

// Commits queue for the log: on a disk the calibration found slow the machine decided; on a fast one
// the queue is certctl's.
func TestMachineFsync(t *testing.T) {
	wal := times(3, backend{"active", wait("LWLock:WALWrite"), "COMMIT"}, backend{"active", wait("IO:WALSync"), "COMMIT"}, backend{"active", nil, audit})
	cpu := map[string]float64{"postgres": 60, "certctl-server": 40}
	for _, tc := range []struct {
		fsync   float64
		decided bool
		first   string
	}{{3.3, true, "machine-fsync"}, {0.1, false, "db-wal-flush"}, {0, false, "db-wal-flush"}} {
		in := synthetic(t, cpu, wal)
		hostSamples(t, in, 52, 0)
		in.JudgeMachine, in.FsyncP50Ms = true, tc.fsync
		d := Analyze(in)
		if d.Machine.Decided != tc.decided || d.Findings[0].Rule != tc.first {
			t.Errorf("fsync %g ms: decided %v\n%s", tc.fsync, d.Machine.Decided, sentences(d))
		}
		if tc.decided && !strings.Contains(d.Machine.Sentence, "on a disk whose fdatasync took 3.3 ms at the median before the run") {
			t.Errorf("sentence %q", d.Machine.Sentence)
		}
	}
}

// The list's mean per call grows from 2 to 20 ms over the window while managed_certificates grows
// fourfold: the finding names the statement, both means and both row counts (from the first count inside
// the window: the one before the load saw an empty table), and the catalogue's defect.
func TestCostGrowsWithRows(t *testing.T) {
	in := synthetic(t, map[string]float64{"postgres": 40, "certctl-server": 30}, []backend{{"active", nil, "SELECT 1"}})
	list := "SELECT id, name FROM managed_certificates ORDER BY created_at DESC LIMIT $1"
	var sl []any
	calls, total := 0.0, 0.0
	for s := 0; s <= 60; s += 5 {
		sl = append(sl, map[string]any{"at": t0.Add(time.Duration(s) * time.Second), "statements": []any{
			map[string]any{"id": "2", "query": list, "calls": calls, "total_ms": total, "rows": calls * 50},
		}})
		mean := 2 + 18*float64(s)/60
		calls += 250
		total += 250 * mean
	}
	writeLines(t, filepath.Join(in.Dir, "server", "pg_statements.jsonl"), sl...)
	tables := func(at time.Duration, live float64) map[string]any {
		return map[string]any{"at": t0.Add(at), "tables": []any{
			map[string]any{"name": "managed_certificates", "live": live},
			map[string]any{"name": "audit_events", "live": 10 * live},
		}}
	}
	writeLines(t, filepath.Join(in.Dir, "server", "pg_tables.jsonl"), tables(-time.Second, 0), tables(time.Second, 1000), tables(30*time.Second, 2500), tables(61*time.Second, 4000))
	got := sentences(Analyze(in))
	if !strings.Contains(got, "[info cost-grows-with-rows] `SELECT id, name FROM managed_certificates ORDER BY created_at DESC LIMIT $1` got dearer as the run went on") ||
		!strings.Contains(got, "as managed_certificates went from 1000 to 4000 live rows") || !strings.Contains(got, "docs/certctl-findings.md#list-full-sort") {
		t.Errorf("findings:\n%s", got)
	}
	// The same rows, a flat mean: nothing grew with them.
	sl = sl[:0]
	for s := 0; s <= 60; s += 5 {
		sl = append(sl, map[string]any{"at": t0.Add(time.Duration(s) * time.Second), "statements": []any{
			map[string]any{"id": "2", "query": list, "calls": float64(s) * 50, "total_ms": float64(s) * 100, "rows": 0},
		}})
	}
	writeLines(t, filepath.Join(in.Dir, "server", "pg_statements.jsonl"), sl...)
	if got := sentences(Analyze(in)); strings.Contains(got, "cost-grows-with-rows") {
		t.Errorf("a flat mean:\n%s", got)
	}
}
