package testbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// One machine's calibrations differ by less than the tolerances; each resource past its tolerance is
// named with both figures, and nothing else is.
func TestDifferences(t *testing.T) {
	base := Calibration{CPUs: 2, CPUModel: "AMD EPYC", CPUSingle: 28000, CPUAll: 56000, FsyncP50Ms: 0.1, FsyncP99Ms: 0.2}
	for _, tc := range []struct {
		name string
		edit func(*Calibration)
		want []string
	}{
		{"same machine, a day's noise", func(c *Calibration) { c.CPUSingle, c.CPUAll, c.FsyncP50Ms, c.StealPct = 24000, 47000, 0.25, 4 }, nil},
		// One machine's calibrations through a session: 22,400 to 29,300 a core (docs/methodology.md#testbeds).
		{"the spread of one machine", func(c *Calibration) { c.CPUSingle, c.CPUAll = 19000, 38000 }, nil},
		{"slower cores", func(c *Calibration) { c.CPUSingle, c.CPUAll = 17000, 34000 },
			[]string{"a core 28000/s vs 17000/s (×1.65, tolerance ×1.50)", "every core 56000/s vs 34000/s (×1.65, tolerance ×1.50)"}},
		{"a neighbour on one core", func(c *Calibration) { c.CPUAll = 30000 }, []string{"every core 56000/s vs 30000/s (×1.87, tolerance ×1.50)"}},
		{"slow disk", func(c *Calibration) { c.FsyncP50Ms = 3.3 }, []string{"fsync p50 0.100 ms vs 3.300 ms (×33.0, tolerance ×3)"}},
		{"fast disks, far apart", func(c *Calibration) { c.FsyncP50Ms = 0.45 }, nil},
		{"fsync not measured", func(c *Calibration) { c.FsyncP50Ms, c.FsyncError = 0, "cannot write" }, []string{"fsync measured on one side only"}},
		{"steal", func(c *Calibration) { c.StealPct = 12 }, []string{"steal 12.0 % on the second (the hypervisor gave its CPUs to others)"}},
		{"cores", func(c *Calibration) { c.CPUs = 4 }, []string{"2 CPUs vs 4"}},
		{"another CPU", func(c *Calibration) { c.CPUModel = "Intel(R) Xeon(R) Processor" }, []string{"CPU AMD EPYC vs Intel(R) Xeon(R) Processor"}},
		// A run recorded before calibrations: its host's model and CPUs only (the 2026-11-24 baselines).
		{"uncalibrated, same model", func(c *Calibration) { *c = FromHost(2, "AMD EPYC") }, nil},
		{"uncalibrated, another model", func(c *Calibration) { *c = FromHost(2, "Intel(R) Xeon(R) Processor") }, []string{"CPU AMD EPYC vs Intel(R) Xeon(R) Processor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := base
			tc.edit(&other)
			if got := Differences(base, other); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	a, err := parseStat("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := parseStat("cpu  200 0 100 1500 20 0 0 80 0 0\n")
	d := b.sub(a)
	// 900 ticks: 700 idle and 10 waiting on I/O are not busy; steal is.
	if round(d.busyPct(), 2) != 21.11 || round(d.stealPct(), 2) != 4.44 {
		t.Errorf("busy %v steal %v", d.busyPct(), d.stealPct())
	}
	if _, err := parseStat("intr 1 2 3\n"); err == nil {
		t.Error("no cpu line accepted")
	}
}

// A real calibration, short: every figure measured, the file it synced removed, memory and steal read
// from the /proc it is given.
func TestMeasure(t *testing.T) {
	proc := t.TempDir()
	os.WriteFile(filepath.Join(proc, "stat"), []byte("cpu  100 0 50 800 10 0 0 40 0 0\n"), 0o644)
	os.WriteFile(filepath.Join(proc, "meminfo"), []byte("MemTotal:       24684096 kB\nMemFree:  1 kB\nMemAvailable:   23000000 kB\n"), 0o644)
	dir := t.TempDir()
	c := Measure(context.Background(), Options{FsyncDir: dir, Slice: 5 * time.Millisecond, Slices: 2, FsyncFor: 20 * time.Millisecond, FsyncMax: 20, Proc: proc})
	if c.CPUSingle <= 0 || c.CPUAll <= 0 || c.FsyncOps == 0 || c.FsyncP50Ms <= 0 || c.FsyncError != "" || c.FsyncDir != dir {
		t.Errorf("calibration %+v", c)
	}
	if c.CPUModel != "" {
		t.Errorf("a model from a /proc without cpuinfo: %q", c.CPUModel)
	}
	if c.MemTotalBytes != 24684096<<10 || c.MemAvailableBytes != 23000000<<10 {
		t.Errorf("memory %d %d", c.MemTotalBytes, c.MemAvailableBytes)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if !strings.Contains(c.String(), "fsync p50 ") || !strings.Contains(c.String(), "memory 21.9 of 23.5 GiB free") {
		t.Errorf("line %q", c.String())
	}
	bad := Measure(context.Background(), Options{FsyncDir: filepath.Join(dir, "missing"), Slice: time.Millisecond, Slices: 1, Proc: proc})
	if bad.FsyncError == "" || !strings.Contains(bad.String(), "fsync not measured (cannot write in ") {
		t.Errorf("a directory it cannot write: %+v", bad)
	}
}
