package testbed

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

func TestZZProbeSpread(t *testing.T) {
	if os.Getenv("PROBE_SPREAD") == "" {
		t.Skip()
	}
	ctx := context.Background()
	est := map[string][]float64{}
	names := []string{"med5x100", "max5x100", "med5x300", "max10x100spread", "all:med5x100", "all:max5x100", "all:max10x100spread"}
	spreadMax := func(n int) float64 {
		best := 0.0
		for range 10 {
			best = max(best, cpuRate(ctx, n, 100*time.Millisecond, 1))
			time.Sleep(100 * time.Millisecond)
		}
		return best
	}
	maxOf := func(n int) float64 {
		best := 0.0
		for range 5 {
			best = max(best, cpuRate(ctx, n, 100*time.Millisecond, 1))
		}
		return best
	}
	for r := 0; r < 20; r++ {
		cpuRate(ctx, 2, 300*time.Millisecond, 1)
		est["med5x100"] = append(est["med5x100"], cpuRate(ctx, 1, 100*time.Millisecond, 5))
		est["max5x100"] = append(est["max5x100"], maxOf(1))
		est["med5x300"] = append(est["med5x300"], cpuRate(ctx, 1, 300*time.Millisecond, 5))
		est["max10x100spread"] = append(est["max10x100spread"], spreadMax(1))
		est["all:med5x100"] = append(est["all:med5x100"], cpuRate(ctx, 2, 100*time.Millisecond, 5))
		est["all:max5x100"] = append(est["all:max5x100"], maxOf(2))
		est["all:max10x100spread"] = append(est["all:max10x100spread"], spreadMax(2))
		time.Sleep(3 * time.Second)
	}
	for _, n := range names {
		v := est[n]
		s := slices.Clone(v)
		slices.Sort(s)
		fmt.Printf("%-22s min %8.0f med %8.0f max %8.0f max/min %.2f\n", n, s[0], s[len(s)/2], s[len(s)-1], s[len(s)-1]/s[0])
	}
}
