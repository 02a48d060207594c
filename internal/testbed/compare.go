package testbed

import (
	"fmt"
	"math"
)

// Tolerances are how far two calibrations may differ and still be one testbed. Each is wider than the
// spread of one machine's calibrations through a day's noise, and narrower than what moved certctl's
// figures between machines (docs/methodology.md#testbeds, with the measurements they come from).
var Tolerances = struct {
	// CPURatio: the larger single-core or all-core rate over the smaller.
	CPURatio float64
	// FsyncRatio and FsyncFloorMs: the larger fdatasync p50 over the smaller, once the larger is at
	// least the floor (below it a commit's wait is a small part of any request here).
	FsyncRatio, FsyncFloorMs float64
	// StealPct: the hypervisor's share of the CPUs during either calibration.
	StealPct float64
}{CPURatio: 1.5, FsyncRatio: 3, FsyncFloorMs: 0.5, StealPct: 10}

// Differences says how two calibrations' machines differ beyond Tolerances, one phrase each ("fsync
// p50 3.3 ms vs 0.19 ms"); none: one testbed. A calibration with no rates (FromHost) is compared by its
// CPUs and model only.
func Differences(a, b Calibration) []string {
	var out []string
	if a.CPUs != b.CPUs && a.CPUs > 0 && b.CPUs > 0 {
		out = append(out, fmt.Sprintf("%d CPUs vs %d", a.CPUs, b.CPUs))
	}
	if a.CPUModel != b.CPUModel && a.CPUModel != "" && b.CPUModel != "" {
		out = append(out, fmt.Sprintf("CPU %s vs %s", a.CPUModel, b.CPUModel))
	}
	if a.CPUSingle == 0 || b.CPUSingle == 0 {
		// A run recorded before calibrations: its host's CPUs and model are all there is to compare.
		return out
	}
	if ratio(a.CPUSingle, b.CPUSingle) > Tolerances.CPURatio {
		out = append(out, fmt.Sprintf("a core %s/s vs %s/s (×%.2f, tolerance ×%.2f)", num(a.CPUSingle), num(b.CPUSingle), ratio(a.CPUSingle, b.CPUSingle), Tolerances.CPURatio))
	}
	if ratio(a.CPUAll, b.CPUAll) > Tolerances.CPURatio {
		out = append(out, fmt.Sprintf("every core %s/s vs %s/s (×%.2f, tolerance ×%.2f)", num(a.CPUAll), num(b.CPUAll), ratio(a.CPUAll, b.CPUAll), Tolerances.CPURatio))
	}
	fa, fb := a.FsyncP50Ms, b.FsyncP50Ms
	switch {
	case (a.FsyncError == "") != (b.FsyncError == ""):
		out = append(out, "fsync measured on one side only")
	case a.FsyncError == "" && math.Max(fa, fb) >= Tolerances.FsyncFloorMs && ratio(fa, fb) > Tolerances.FsyncRatio:
		out = append(out, fmt.Sprintf("fsync p50 %s ms vs %s ms (×%.1f, tolerance ×%g)", ms(fa), ms(fb), ratio(fa, fb), Tolerances.FsyncRatio))
	}
	for _, s := range []struct {
		c    Calibration
		side string
	}{{a, "the first"}, {b, "the second"}} {
		if s.c.StealPct >= Tolerances.StealPct {
			out = append(out, fmt.Sprintf("steal %.1f %% on %s (the hypervisor gave its CPUs to others)", s.c.StealPct, s.side))
		}
	}
	return out
}

// ratio is the larger over the smaller; +Inf when only one is zero, 1 when both are.
func ratio(a, b float64) float64 {
	lo, hi := math.Min(a, b), math.Max(a, b)
	switch {
	case hi == 0:
		return 1
	case lo <= 0:
		return math.Inf(1)
	}
	return hi / lo
}

// FromHost is what a run recorded before calibrations says of its machine: its CPUs and their model.
func FromHost(cpus int, model string) Calibration { return Calibration{CPUs: cpus, CPUModel: model} }
