package harness

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Two reads of /proc/stat a second apart: busy is everything but idle and iowait, steal apart, both as
// shares of all the machine's CPUs; the pressure file's "some" total gives the share of time stalled.
func TestHostSampler(t *testing.T) {
	dir := t.TempDir()
	stat, psi := filepath.Join(dir, "stat"), filepath.Join(dir, "pressure")
	write := func(cpu, some string) {
		os.WriteFile(stat, []byte("cpu  "+cpu+" 0 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"), 0o644)
		os.WriteFile(psi, []byte("some avg10=1.00 avg60=0.50 avg300=0.10 total="+some+"\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"), 0o644)
	}
	h := &hostSampler{stat: stat, pressure: psi, cpus: 2}
	t0 := time.Unix(1000, 0)
	//     user nice system idle iowait irq softirq steal
	write("100 0 50 800 50 0 0 0", "1000000")
	if _, ok := h.sample(t0, t0, 1); ok {
		t.Fatal("a first read has nothing to compare with")
	}
	write("160 0 80 880 60 0 0 20", "1250000") // +60 +30 busy, +80 +10 idle, +20 steal: 200 ticks
	got, ok := h.sample(t0.Add(time.Second), t0, 2)
	if !ok || got.BusyPct != 45 || got.StealPct != 10 || got.PressurePct == nil || *got.PressurePct != 25 || got.CPUs != 2 || got.Refresh != 2 {
		t.Errorf("sample %+v (pressure %v)", got, got.PressurePct)
	}
	os.Remove(psi)
	write("200 0 100 960 60 0 0 20", "0")
	os.Remove(psi)
	if got, ok := h.sample(t0.Add(2*time.Second), t0, 3); !ok || got.PressurePct != nil {
		t.Errorf("without /proc/pressure: %+v", got)
	}
}
