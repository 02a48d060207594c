// Package testbed measures what a machine can do before a run (its calibration) and says when two
// runs' machines differ enough that their figures are not comparable.
//
// A load test on one box measures certctl and the box together: the same build at the same load gave
// list p50 6 ms on one 2-CPU machine and 950 ms on another of the same class (issue 49). What decides
// certctl's figures there is how fast a core computes, how many cores really run at once, and how long
// PostgreSQL's commit waits for fdatasync; so those are what a calibration measures, in seconds, with
// nothing of the run started yet. Tolerances and how they were chosen: docs/methodology.md#testbeds.
package testbed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"certctl-loadtest/internal/samples"
)

// Calibration is the machine as measured just before a run.
type Calibration struct {
	At        time.Time `json:"at"`
	DurationS float64   `json:"duration_s"`
	CPUs      int       `json:"cpus"`
	// CPUModel is /proc/cpuinfo's model name: two models are two testbeds, whatever the rates say.
	CPUModel string `json:"cpu_model,omitempty"`
	// CPUSingle is the fixed work unit's rate on one core, units/s: a unit is a SHA-256 of 16 KiB and a
	// sort of 2,048 integers, the two kinds of work certctl (signatures, PBKDF2) and PostgreSQL (sorts,
	// scans) spend their CPU on. The median of several short slices.
	CPUSingle float64 `json:"cpu_single_ops_s"`
	// CPUAll is the same work on every core at once, units/s in all: CPUAll/CPUSingle is how many cores
	// really run side by side (below CPUs when a neighbour or the hypervisor takes some).
	CPUAll float64 `json:"cpu_all_ops_s"`
	// Fsync: 8 KiB written and fdatasync'd at one offset again and again, as a WAL commit does
	// (pg_test_fsync's "one 8kB write" with fdatasync), on the filesystem PostgreSQL's volume is on.
	FsyncP50Ms float64 `json:"fsync_p50_ms"`
	FsyncP99Ms float64 `json:"fsync_p99_ms"`
	FsyncOps   int     `json:"fsync_ops"`
	FsyncDir   string  `json:"fsync_dir"`
	// FsyncError says why fdatasync was not measured (the figures are then 0).
	FsyncError string `json:"fsync_error,omitempty"`
	// Memory from /proc/meminfo at the calibration.
	MemTotalBytes     int64 `json:"mem_total_bytes"`
	MemAvailableBytes int64 `json:"mem_available_bytes"`
	// StealPct is the share of the CPUs' time the hypervisor gave to others during the calibration;
	// BusyBeforePct how busy the machine was, all CPUs, in the moment before it (work not ours).
	StealPct      float64 `json:"steal_pct"`
	BusyBeforePct float64 `json:"busy_before_pct"`
}

// Parallelism is how many cores ran the work side by side: CPUAll over CPUSingle.
func (c Calibration) Parallelism() float64 {
	if c.CPUSingle <= 0 {
		return 0
	}
	return c.CPUAll / c.CPUSingle
}

// String is the calibration in one line, for the summary's header and `loadtest calibrate`.
func (c Calibration) String() string {
	s := fmt.Sprintf("cpu %s/s a core, %s/s on %d (×%.2f) · fsync p50 %s ms, p99 %s ms", num(c.CPUSingle), num(c.CPUAll), c.CPUs, c.Parallelism(), ms(c.FsyncP50Ms), ms(c.FsyncP99Ms))
	if c.FsyncError != "" {
		s = fmt.Sprintf("cpu %s/s a core, %s/s on %d (×%.2f) · fsync not measured (%s)", num(c.CPUSingle), num(c.CPUAll), c.CPUs, c.Parallelism(), c.FsyncError)
	}
	s += fmt.Sprintf(" · memory %.1f of %.1f GiB free · steal %.1f %% · busy before %.0f %%", gib(c.MemAvailableBytes), gib(c.MemTotalBytes), c.StealPct, c.BusyBeforePct)
	return s
}

func gib(b int64) float64 { return float64(b) / (1 << 30) }

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func ms(v float64) string {
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// Options say where and how long to measure; zero values take the defaults.
type Options struct {
	// FsyncDir is a directory on the filesystem PostgreSQL writes to; a temporary file is made and
	// removed there.
	FsyncDir string
	// Slice is one CPU measurement's length (100 ms); Slices how many of each (8); FsyncFor the most
	// fdatasync is measured for (1 s), FsyncMax the most calls (1,000).
	Slice    time.Duration
	Slices   int
	FsyncFor time.Duration
	FsyncMax int
	// Proc is where /proc is (tests give a folder of their own).
	Proc string
	Now  func() time.Time
}

func (o *Options) defaults() {
	if o.Slice == 0 {
		o.Slice = 100 * time.Millisecond
	}
	if o.Slices == 0 {
		o.Slices = 8
	}
	if o.FsyncFor == 0 {
		o.FsyncFor = time.Second
	}
	if o.FsyncMax == 0 {
		o.FsyncMax = 1000
	}
	if o.Proc == "" {
		o.Proc = "/proc"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Measure calibrates the machine: about 2.2 s at the defaults, every CPU busy for 1.1 s of it.
func Measure(ctx context.Context, o Options) Calibration {
	o.defaults()
	start := o.Now()
	c := Calibration{At: start.UTC(), CPUs: runtime.NumCPU(), CPUModel: cpuModel(o.Proc)}
	c.MemTotalBytes, c.MemAvailableBytes = meminfo(o.Proc)
	// The moment before: what the machine did with nothing of ours running.
	if a, err := readStat(o.Proc); err == nil {
		sleep(ctx, 200*time.Millisecond)
		if b, err := readStat(o.Proc); err == nil {
			c.BusyBeforePct = round(b.sub(a).busyPct(), 1)
		}
	}
	// Cores woken from idle run a fifth slower for a few hundred milliseconds here (a VM's vCPUs):
	// they are woken first, untimed, so that every calibration times them awake.
	cpuRate(ctx, c.CPUs, 3*o.Slice, 1)
	before, statErr := readStat(o.Proc)
	c.CPUAll, c.CPUSingle = bestRates(ctx, c.CPUs, o.Slice, o.Slices)
	if after, err := readStat(o.Proc); err == nil && statErr == nil {
		c.StealPct = round(after.sub(before).stealPct(), 1)
	}
	c.FsyncDir = o.FsyncDir
	lat, err := fsyncLatencies(ctx, o.FsyncDir, o.FsyncFor, o.FsyncMax)
	if err != nil {
		c.FsyncError = err.Error()
	} else {
		c.FsyncOps = len(lat)
		c.FsyncP50Ms, c.FsyncP99Ms = round(quantile(lat, 0.50), 3), round(quantile(lat, 0.99), 3)
	}
	c.DurationS = round(o.Now().Sub(start).Seconds(), 2)
	return c
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// unit is the fixed work: a SHA-256 over 16 KiB and a sort of 2,048 integers from a fixed sequence.
type unit struct {
	buf  []byte
	ints []uint64
	work []uint64
}

func newUnit() *unit {
	u := &unit{buf: make([]byte, 16<<10), ints: make([]uint64, 2048), work: make([]uint64, 2048)}
	x := uint64(0x9e3779b97f4a7c15)
	for i := range u.ints {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		u.ints[i] = x
	}
	for i := 0; i+8 <= len(u.buf); i += 8 {
		binary.LittleEndian.PutUint64(u.buf[i:], u.ints[(i/8)%len(u.ints)])
	}
	return u
}

func (u *unit) do() byte {
	sum := sha256.Sum256(u.buf)
	copy(u.work, u.ints)
	slices.Sort(u.work)
	return sum[0] ^ byte(u.work[len(u.work)/2])
}

// bestRates times the unit on every core at once and on one core, a slice of d each in turn, slices
// times, and gives each one's best slice, units/s. What the machine can do is its best: its cores' speed
// here moves by a fifth for seconds at a time, and whatever else runs only takes slices away, so the
// best of slices taken in turn over the whole calibration is the steadiest reading of one machine
// (docs/methodology.md#testbeds: ×1.25 over 20 calibrations where the median of five slices in a row
// spread ×1.39).
func bestRates(ctx context.Context, n int, d time.Duration, slices int) (all, single float64) {
	for range slices {
		all = max(all, cpuRate(ctx, n, d, 1))
		single = max(single, cpuRate(ctx, 1, d, 1))
	}
	return all, single
}

// cpuRate runs the unit on n cores at once for slices slices of d each and gives the median slice's
// rate in all, units/s.
func cpuRate(ctx context.Context, n int, d time.Duration, slicesN int) float64 {
	rates := make([]float64, 0, slicesN)
	for range slicesN {
		if ctx.Err() != nil {
			break
		}
		var wg sync.WaitGroup
		counts := make([]int, n)
		start := time.Now()
		deadline := start.Add(d)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				u := newUnit()
				var sink byte
				for time.Now().Before(deadline) {
					for range 4 {
						sink ^= u.do()
					}
					counts[i] += 4
				}
				_ = sink
			}()
		}
		wg.Wait()
		total := 0
		for _, c := range counts {
			total += c
		}
		rates = append(rates, float64(total)/time.Since(start).Seconds())
	}
	if len(rates) == 0 {
		return 0
	}
	return round(quantile(rates, 0.5), 1)
}

// fsyncLatencies writes 8 KiB at offset 0 of a new file in dir and fdatasyncs it, again and again, for
// up to d or max calls; the latencies are in ms.
func fsyncLatencies(ctx context.Context, dir string, d time.Duration, max int) ([]float64, error) {
	if dir == "" {
		return nil, fmt.Errorf("no directory given")
	}
	f, err := os.CreateTemp(dir, ".loadtest-calibrate-*")
	if err != nil {
		return nil, fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 8<<10)
	for i := range buf {
		buf[i] = byte(i)
	}
	// The first write allocates the block; a WAL segment is preallocated, so it is not timed.
	if _, err := f.WriteAt(buf, 0); err != nil {
		return nil, err
	}
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		return nil, fmt.Errorf("fdatasync in %s: %w", dir, err)
	}
	var lat []float64
	start := time.Now()
	for len(lat) < max && time.Since(start) < d && ctx.Err() == nil {
		t := time.Now()
		if _, err := f.WriteAt(buf, 0); err != nil {
			return nil, err
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return nil, fmt.Errorf("fdatasync in %s: %w", dir, err)
		}
		lat = append(lat, float64(time.Since(t).Microseconds())/1000)
	}
	return lat, nil
}

// cpuTimes is /proc/stat's first line, in ticks.
type cpuTimes struct{ user, nice, system, idle, iowait, irq, softirq, steal float64 }

func readStat(proc string) (cpuTimes, error) {
	b, err := os.ReadFile(filepath.Join(proc, "stat"))
	if err != nil {
		return cpuTimes{}, err
	}
	return parseStat(string(b))
}

func parseStat(s string) (cpuTimes, error) {
	line, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, fmt.Errorf("/proc/stat: no cpu line")
	}
	v := make([]float64, 8)
	for i := range v {
		x, err := strconv.ParseFloat(f[i+1], 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("/proc/stat: %w", err)
		}
		v[i] = x
	}
	return cpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}, nil
}

func (a cpuTimes) sub(b cpuTimes) cpuTimes {
	return cpuTimes{a.user - b.user, a.nice - b.nice, a.system - b.system, a.idle - b.idle, a.iowait - b.iowait, a.irq - b.irq, a.softirq - b.softirq, a.steal - b.steal}
}

func (a cpuTimes) total() float64 {
	return a.user + a.nice + a.system + a.idle + a.iowait + a.irq + a.softirq + a.steal
}

func (a cpuTimes) busyPct() float64 {
	if t := a.total(); t > 0 {
		return 100 * (t - a.idle - a.iowait) / t
	}
	return 0
}

func (a cpuTimes) stealPct() float64 {
	if t := a.total(); t > 0 {
		return 100 * a.steal / t
	}
	return 0
}

func cpuModel(proc string) string {
	b, err := os.ReadFile(filepath.Join(proc, "cpuinfo"))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func meminfo(proc string) (total, available int64) {
	b, err := os.ReadFile(filepath.Join(proc, "meminfo"))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "MemTotal":
			total = n << 10
		case "MemAvailable":
			available = n << 10
		}
	}
	return total, available
}

// quantile is k6's percentile rule, the one every figure of a run uses.
func quantile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return samples.Quantile(v, p)
}

func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}
