package harness

import (
	"certctl-loadtest/internal/diagnosis"
	"os"
	"strconv"
	"strings"
	"time"
)

// procStat is the machine's CPU time so far, in clock ticks: /proc/stat's first line.
type procStat struct{ busy, idle, steal, total uint64 }

func readProcStat(path string) (procStat, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return procStat{}, false
	}
	var v [8]uint64 // user nice system idle iowait irq softirq steal
	for i := range v {
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return procStat{}, false
		}
		v[i] = n
	}
	s := procStat{idle: v[3] + v[4], steal: v[7]}
	for _, n := range v {
		s.total += n
	}
	s.busy = s.total - s.idle - s.steal
	return s, true
}

// readPressure is /proc/pressure/cpu's "some" total, microseconds some task waited for a CPU.
func readPressure(path string) (time.Duration, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "some ") {
			continue
		}
		for _, kv := range strings.Fields(l) {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				return time.Duration(n) * time.Microsecond, err == nil
			}
		}
	}
	return 0, false
}

// hostSampler turns successive reads of the machine's counters into HostSamples.
type hostSampler struct {
	stat, pressure string
	cpus           int
	last           procStat
	lastPressure   time.Duration
	lastAt         time.Time
	havePressure   bool
	// procs, when set, follows the harness's and the engine's own CPU, read in the same tick.
	procs *procCPU
}

// sample reads the counters; ok is false on the first read (nothing to compare with) or when
// /proc/stat cannot be read.
func (h *hostSampler) sample(now time.Time, at time.Time, refresh int) (diagnosis.HostSample, bool) {
	s, ok := readProcStat(h.stat)
	if !ok {
		return diagnosis.HostSample{}, false
	}
	p, pok := readPressure(h.pressure)
	var harness, engine uint64
	if h.procs != nil {
		harness, engine = h.procs.read()
	}
	defer func() { h.last, h.lastPressure, h.lastAt, h.havePressure = s, p, now, pok }()
	if h.lastAt.IsZero() || s.total <= h.last.total {
		return diagnosis.HostSample{}, false
	}
	// /proc/stat's ticks are every CPU's: a process's ticks over them are its share of the machine.
	d := float64(s.total - h.last.total)
	out := diagnosis.HostSample{At: at, Refresh: refresh, CPUs: h.cpus,
		BusyPct:  round2(100 * float64(s.busy-h.last.busy) / d),
		StealPct: round2(100 * float64(s.steal-h.last.steal) / d)}
	if h.procs != nil {
		hp, ep := round2(100*float64(harness)/d), round2(100*float64(engine)/d)
		out.HarnessPct, out.EnginePct = &hp, &ep
	}
	if pok && h.havePressure {
		v := round2(100 * float64(p-h.lastPressure) / float64(now.Sub(h.lastAt)))
		out.PressurePct = &v
	}
	return out, true
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
