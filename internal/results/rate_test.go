package results

import "testing"

// Every view reads a scenario's rate in the unit it is set in, and a closed model by its VUs.
func TestRateCells(t *testing.T) {
	closed := Record{Executor: "constant-vus", AchievedRatePerS: 37.8}
	closed.VUs.Max = 16
	one := Record{Executor: "per-vu-iterations"}
	one.VUs.Max = 1
	for _, c := range []struct {
		name             string
		rec              Record
		target, achieved string
	}{
		{"per second", Record{Executor: "constant-arrival-rate", TargetRatePerS: 50, AchievedRatePerS: 49.667, RateUnit: "1s"}, "50/s", "49.7/s"},
		{"per minute", Record{Executor: "constant-arrival-rate", TargetRatePerS: 100.0 / 60, AchievedRatePerS: 98.4 / 60, RateUnit: "1m"}, "100/min", "98.4/min"},
		{"an old connector record", Record{Tier: "connector", Executor: "constant-arrival-rate", TargetRatePerS: 100.0 / 60, AchievedRatePerS: 100.0 / 60}, "100/min", "100/min"},
		{"constant VUs", closed, "16 VUs", "37.8/s"},
		{"one VU, once", one, "1 VU", "0/s"},
		{"a slow rate", Record{Executor: "constant-arrival-rate", TargetRatePerS: 0.05, AchievedRatePerS: 0.05, RateUnit: "1s"}, "0.05/s", "0.05/s"},
	} {
		target, achieved := c.rec.RateCells()
		if target != c.target || achieved != c.achieved {
			t.Errorf("%s: %s, %s; want %s, %s", c.name, target, achieved, c.target, c.achieved)
		}
	}
	for in, want := range map[[2]string]string{{"50", "1s"}: "50/s", {"100", "1m"}: "100/min", {"2", "1h"}: "2/h", {"3", "30s"}: "3 per 30s"} {
		var rate float64
		switch in[0] {
		case "50":
			rate = 50
		case "100":
			rate = 100
		case "2":
			rate = 2
		case "3":
			rate = 3
		}
		if got := UnitRate(rate, in[1]); got != want {
			t.Errorf("UnitRate(%s, %s) = %s, want %s", in[0], in[1], got, want)
		}
	}
}
