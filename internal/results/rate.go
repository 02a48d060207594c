package results

import (
	"fmt"
	"strings"
)

// PerMinute reports whether the scenario's rate reads per minute: its arrival rate is set per minute (the
// connector tier's renewals), or, in a record older than RateUnit, it is the connector tier's.
func (r Record) PerMinute() bool {
	if r.RateUnit != "" {
		return r.RateUnit == "1m"
	}
	return r.Tier == "connector" && r.TargetRatePerS > 0
}

// Closed reports whether the scenario is a closed model: a number of VUs looping, with no target rate.
func (r Record) Closed() bool {
	return r.TargetRatePerS == 0 && (r.Executor == "constant-vus" || r.Executor == "ramping-vus" || r.Executor == "per-vu-iterations" || r.Executor == "shared-iterations")
}

// RateCells are the target and the achieved rate as every view prints them, in the scenario's own unit:
// "100/min" and "98.4/min" for a per-minute scenario, "50/s" and "49.7/s" otherwise; a closed model's
// target is its VUs ("16 VUs"), since it has no rate to reach.
func (r Record) RateCells() (target, achieved string) {
	switch {
	case r.PerMinute():
		return rateText(r.TargetRatePerS*60) + "/min", rateText(r.AchievedRatePerS*60) + "/min"
	case r.Closed():
		vus := r.VUs.Max
		if vus == 0 {
			vus = r.VUs.PreAllocated
		}
		if vus == 0 {
			return "-", rateText(r.AchievedRatePerS) + "/s"
		}
		if vus == 1 {
			return "1 VU", rateText(r.AchievedRatePerS) + "/s"
		}
		return fmt.Sprintf("%d VUs", vus), rateText(r.AchievedRatePerS) + "/s"
	}
	return rateText(r.TargetRatePerS) + "/s", rateText(r.AchievedRatePerS) + "/s"
}

// UnitRate is a configured rate as every view prints it: 100 per 1m is "100/min", 50 per 1s "50/s".
func UnitRate(rate float64, timeUnit string) string {
	switch strings.TrimPrefix(timeUnit, "1") {
	case "", "s":
		return rateText(rate) + "/s"
	case "m":
		return rateText(rate) + "/min"
	case "h":
		return rateText(rate) + "/h"
	}
	return fmt.Sprintf("%s per %s", rateText(rate), timeUnit)
}

// rateText: whole rates without decimals, others to one decimal (0.05 stays visible).
func rateText(v float64) string {
	switch {
	case v == float64(int64(v)):
		return fmt.Sprintf("%d", int64(v))
	case v < 0.1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
