package compare

import (
	raw "certctl-loadtest/internal/samples"

	"math"
	"math/rand/v2"
	"sort"
)

// The statistics, in one place:
//
// The figure compared is the percentile of the pooled successful requests of a side's runs (k6's own
// definition, so one run's figure is its summary's). Its uncertainty comes from a two-level bootstrap:
// a replicate draws the side's runs with replacement and, within each drawn run, its 10-second blocks
// with replacement. Blocks rather than requests, because latency on a loaded box comes in episodes (a
// checkpoint, a queue on a lock, a neighbour's burst): requests next to each other are not independent,
// and resampling them one by one would call a difference between two runs of one build significant.
// Runs, because two runs of one build differ by more than the blocks within one run do; with one run a
// side, that part is unknown, and the report says so.
//
// A replicate's percentiles are read from log-spaced histograms (1 % wide bins), which makes thousands of
// replicates cheap; both sides share the bins, so the binning cancels in the ratio.

const (
	binWidth = 0.01 // relative width of a histogram bin
)

type binCount struct{ bin, n int32 }

// block is one stretch of a run: its successful requests' latencies as bin counts, and how many requests
// it had and how many failed.
type block struct {
	bins      []binCount
	n, failed int
}

type runBlocks []block

func binOf(v float64) int32 {
	if v < 0.001 {
		v = 0.001
	}
	return int32(math.Floor(math.Log(v) / math.Log1p(binWidth)))
}

func binValue(b int32) float64 { return math.Pow(1+binWidth, float64(b)+0.5) }

// blocksOf cuts a run's samples (sorted by time) into blocks of blockS seconds; a last block shorter than
// half of one joins the one before it.
func blocksOf(ss []sample, blockS float64) runBlocks {
	if len(ss) == 0 {
		return nil
	}
	var out runBlocks
	counts := map[int32]int32{}
	cur := block{}
	flush := func() {
		keys := make([]int32, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, k := range keys {
			cur.bins = append(cur.bins, binCount{k, counts[k]})
		}
		out = append(out, cur)
		cur, counts = block{}, map[int32]int32{}
	}
	end := blockS
	last := ss[len(ss)-1].t
	for _, s := range ss {
		if s.t >= end && last-end >= blockS/2 {
			flush()
			for s.t >= end {
				end += blockS
			}
		}
		cur.n++
		if !s.ok {
			cur.failed++
			continue
		}
		counts[binOf(s.v)]++
	}
	flush()
	return out
}

// blockLength is 10 s, or a sixth of the shortest run when that is shorter: at least six blocks a run.
func blockLength(runs [][]sample) float64 {
	l := 10.0
	for _, ss := range runs {
		if len(ss) > 1 {
			// A one-minute run keeps 10 s blocks: its last request ends a little before the minute.
			if d := (ss[len(ss)-1].t - ss[0].t) / 6; d < 9 && d > 0 {
				l = min(l, math.Round(d*10)/10)
			}
		}
	}
	return l
}

// percentile is k6's rule (raw.Percentile); no samples is no figure here, not k6's 0.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return raw.Percentile(sorted, p)
}

var quantiles = []float64{0.50, 0.95, 0.99}

// estimate is a side's figures over its pooled runs.
type estimate struct {
	q         []float64 // at quantiles, ms
	n, failed int
}

func (e estimate) errorRate() float64 {
	if e.n == 0 {
		return 0
	}
	return float64(e.failed) / float64(e.n)
}

func pooled(runs [][]sample) estimate {
	var v []float64
	e := estimate{}
	for _, ss := range runs {
		for _, s := range ss {
			e.n++
			if !s.ok {
				e.failed++
				continue
			}
			v = append(v, s.v)
		}
	}
	sort.Float64s(v)
	for _, p := range quantiles {
		e.q = append(e.q, percentile(v, p))
	}
	return e
}

// replicates are the bootstrap's draws of one side: per quantile, and the error rate.
type replicates struct {
	q   [][]float64
	err []float64
}

func bootstrap(runs []runBlocks, draws int, rng *rand.Rand, lo, hi int32) replicates {
	out := replicates{q: make([][]float64, len(quantiles)), err: make([]float64, draws)}
	for i := range out.q {
		out.q[i] = make([]float64, draws)
	}
	hist := make([]int64, hi-lo+1)
	for d := 0; d < draws; d++ {
		clear(hist)
		var n, failed, ok int64
		for range runs {
			r := runs[rng.IntN(len(runs))]
			for range r {
				b := r[rng.IntN(len(r))]
				n += int64(b.n)
				failed += int64(b.failed)
				for _, c := range b.bins {
					hist[c.bin-lo] += int64(c.n)
					ok += int64(c.n)
				}
			}
		}
		if n > 0 {
			out.err[d] = float64(failed) / float64(n)
		}
		for qi, p := range quantiles {
			out.q[qi][d] = histQuantile(hist, lo, ok, p)
		}
	}
	return out
}

// histQuantile is the value of the bin holding rank p·(ok−1), as percentile ranks it.
func histQuantile(hist []int64, lo int32, ok int64, p float64) float64 {
	if ok == 0 {
		return math.NaN()
	}
	rank := int64(math.Round(p * float64(ok-1)))
	var cum int64
	for i, c := range hist {
		cum += c
		if cum > rank {
			return binValue(lo + int32(i))
		}
	}
	return binValue(lo + int32(len(hist)-1))
}

// interval is the central confidence interval of values at that level, NaNs left out.
func interval(values []float64, confidence float64) (float64, float64) {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	sort.Float64s(v)
	a := (1 - confidence) / 2
	return percentile(v, a), percentile(v, 1-a)
}

func binRange(sides ...[]runBlocks) (lo, hi int32) {
	lo, hi = math.MaxInt32, math.MinInt32
	for _, side := range sides {
		for _, r := range side {
			for _, b := range r {
				for _, c := range b.bins {
					lo, hi = min(lo, c.bin), max(hi, c.bin)
				}
			}
		}
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}

// throughputs resamples the runs' blocks as bootstrap does and returns each draw's successful samples per
// second.
func throughputs(runs []runBlocks, blockS float64, draws int, rng *rand.Rand) []float64 {
	out := make([]float64, draws)
	for d := range out {
		var ok, blocks float64
		for range runs {
			r := runs[rng.IntN(len(runs))]
			for range r {
				b := r[rng.IntN(len(r))]
				ok += float64(b.n - b.failed)
				blocks++
			}
		}
		out[d] = ok / (blocks * blockS)
	}
	return out
}

// meanThroughput is the runs' successful samples per second over their blocks.
func meanThroughput(runs []runBlocks, blockS float64) float64 {
	var blocks float64
	for _, r := range runs {
		blocks += float64(len(r))
	}
	return float64(okSamples(runs)) / (blocks * blockS)
}

func okSamples(runs []runBlocks) int {
	n := 0
	for _, r := range runs {
		for _, b := range r {
			n += b.n - b.failed
		}
	}
	return n
}

// widen scales a side's replicates away from its estimate by √(n/(n−1)), n its runs: a bootstrap that
// draws n runs with replacement spreads their pool by (n−1)/n of what the runs' own spread says, half of it
// at two runs a side, the gate's plan. Without it, two A/A sittings in five of v2.1.7 against itself came
// out "worse" (docs/comparing.md#the-pull-request-gate). A percentile or a rate is scaled in logs (its
// change is a ratio), an error rate plainly (a difference). One run a side has no spread between runs to
// scale, and the comparison warns of it.
func widen(reps []float64, center float64, runs int, logScale bool) {
	if runs < 2 || math.IsNaN(center) {
		return
	}
	k := math.Sqrt(float64(runs) / float64(runs-1))
	for i, r := range reps {
		switch {
		case math.IsNaN(r):
		case logScale && r > 0 && center > 0:
			reps[i] = center * math.Pow(r/center, k)
		case !logScale:
			reps[i] = center + (r-center)*k
		}
	}
}
