// Segment merging: the records of one scenario's k6 processes, each of which ran an execution
// segment of its load (k6 --execution-segment; locally `loadtest run --segments N`, on Kubernetes the
// k6-operator's runners), into the one record the scenario would have had from a single process.
//
// Counts add up, but percentiles do not: the p95 of two halves is not the mean of their p95s. So every
// figure that is a distribution (latency, iteration time, the record's trends) and every threshold is
// recomputed from the segments' raw samples (k6's JSON output), pooled, with k6's own percentile rule.

package results

import (
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/samples"

	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Present lists the scenarios of a run directory that have segment records, sorted.
func SegmentedScenarios(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "scenarios", SegmentsDir, "*@*.json"))
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		name, _, _ := strings.Cut(filepath.Base(f), "@")
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// record is a segment's record: kept whole (the merge keeps every field it does not recompute), with
// the fields the merge reads.
type record struct {
	id     string
	raw    map[string]any
	from   *big.Rat
	to     *big.Rat
	fields struct {
		Segment     string  `json:"segment"`
		Sequence    string  `json:"segment_sequence"`
		Iterations  float64 `json:"iterations"`
		Dropped     float64 `json:"dropped_iterations"`
		Requests    float64 `json:"requests"`
		DurationS   float64 `json:"duration_s"`
		RunS        float64 `json:"test_run_duration_s"`
		OK          bool    `json:"thresholds_ok"`
		Counters    map[string]float64
		Thresholds  []Threshold `json:"thresholds"`
		Sources     sources     `json:"sources"`
		Setup       any         `json:"setup"`
		LatencyName string      `json:"latency_metric"`
	}
}

type sources struct {
	Latency   string            `json:"latency"`
	Iteration string            `json:"iteration"`
	ErrorRate string            `json:"error_rate"`
	Trends    map[string]string `json:"trends"`
}

// Merge merges the segment records of scenario in dir (scenarios/segments/<scenario>@<id>.json, their
// samples in raw/segments/<scenario>@<id>.json.gz) into scenarios/<scenario>.json and
// raw/<scenario>.json.gz. exitCodes, when known, are the segments' k6 exit codes by id. It returns the
// segments and the merged thresholds' verdict. A set of segments that does not cover the whole load
// (a runner that wrote no record) is an error: a part of the load is no verdict on the whole.
func MergeSegments(dir, scenario string, exitCodes map[string]int) ([]Segment, bool, error) {
	recs, err := readRecords(dir, scenario)
	if err != nil {
		return nil, false, err
	}
	if err := covers(recs); err != nil {
		return nil, false, fmt.Errorf("%s: %w", scenario, err)
	}
	rawOut := filepath.Join(dir, "raw", scenario+".json.gz")
	var raws []string
	for _, r := range recs {
		raws = append(raws, filepath.Join(dir, "raw", SegmentsDir, scenario+"@"+r.id+".json.gz"))
	}
	if err := concatGzip(rawOut, raws); err != nil {
		return nil, false, fmt.Errorf("%s: the raw samples: %w", scenario, err)
	}
	want := wanted(recs[0])
	pl, err := readPool(rawOut, want)
	if err != nil {
		return nil, false, fmt.Errorf("%s: the raw samples: %w", scenario, err)
	}
	out, segs, ok := merged(recs, pl, exitCodes)
	if err := output.JSON(filepath.Join(dir, "scenarios", scenario+".json"), out); err != nil {
		return nil, false, err
	}
	return segs, ok, nil
}

func readRecords(dir, scenario string) ([]record, error) {
	files, err := filepath.Glob(filepath.Join(dir, "scenarios", SegmentsDir, scenario+"@*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no segment records in %s", scenario, filepath.Join(dir, "scenarios", SegmentsDir))
	}
	var recs []record
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r record
		r.id = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), scenario+"@"), ".json")
		if err := json.Unmarshal(b, &r.raw); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if err := json.Unmarshal(b, &r.fields); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if r.fields.Sources.Latency == "" {
			return nil, fmt.Errorf("%s: the record names no sources for its figures (written by a k6/lib older than segments)", f)
		}
		r.from, r.to, err = parseSegment(r.fields.Segment)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].from.Cmp(recs[j].from) < 0 })
	return recs, nil
}

// parseSegment reads k6's "from:to", each a fraction (1/3), a decimal (0.5) or a percentage (50%).
func parseSegment(s string) (*big.Rat, *big.Rat, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return nil, nil, fmt.Errorf("segment %q is not k6's from:to", s)
	}
	from, err1 := parseFraction(a)
	to, err2 := parseFraction(b)
	if err := errors.Join(err1, err2); err != nil {
		return nil, nil, fmt.Errorf("segment %q: %w", s, err)
	}
	if from.Cmp(to) >= 0 || from.Sign() < 0 || to.Cmp(big.NewRat(1, 1)) > 0 {
		return nil, nil, fmt.Errorf("segment %q is not a part of 0:1", s)
	}
	return from, to, nil
}

func parseFraction(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return new(big.Rat), nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		r, ok := new(big.Rat).SetString(p)
		if !ok {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return r.Quo(r, big.NewRat(100, 1)), nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a number", s)
	}
	return r, nil
}

// covers checks that the segments tile 0:1 exactly, once each.
func covers(recs []record) error {
	at := new(big.Rat)
	for _, r := range recs {
		switch c := r.from.Cmp(at); {
		case c > 0:
			return fmt.Errorf("no record of the load's segment %s:%s (a process that wrote no record): the segments present cover %s only; a part of the load is no verdict on it", at.RatString(), r.from.RatString(), coverage(recs))
		case c < 0:
			return fmt.Errorf("segment %s of %s overlaps another: two runs' records in one directory?", r.fields.Segment, r.id)
		}
		at = r.to
	}
	if at.Cmp(big.NewRat(1, 1)) != 0 {
		return fmt.Errorf("no record of the load's segment %s:1 (a process that wrote no record): the segments present cover %s only; a part of the load is no verdict on it", at.RatString(), coverage(recs))
	}
	return nil
}

func coverage(recs []record) string {
	var parts []string
	for _, r := range recs {
		parts = append(parts, r.fields.Segment)
	}
	return strings.Join(parts, ", ")
}

// concatGzip writes the gzip files one after another into out: gzip members in a row are one stream to
// every reader of the format (Go's included), so the merged file reads as a single run's.
func concatGzip(out string, files []string) error {
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	for _, in := range files {
		src, err := os.Open(in)
		if err != nil {
			f.Close()
			os.Remove(tmp)
			return err
		}
		_, err = io.Copy(f, src)
		src.Close()
		if err != nil {
			f.Close()
			os.Remove(tmp)
			return err
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, out)
}

// wanted: every sub-metric the merged record reads from the samples.
func wanted(r record) []samples.Selector {
	keys := map[string]bool{r.fields.Sources.Latency: true, r.fields.Sources.Iteration: true, r.fields.Sources.ErrorRate: true}
	for _, k := range r.fields.Sources.Trends {
		keys[k] = true
	}
	for _, t := range r.fields.Thresholds {
		keys[t.Metric] = true
	}
	var out []samples.Selector
	for k := range keys {
		if k != "" {
			out = append(out, samples.Parse(k))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// pool is every wanted sub-metric's samples, from all segments.
type pool struct {
	Types  map[string]string    // metric name -> k6 type (trend, rate, counter, gauge)
	Values map[string][]float64 // sub-metric key -> sample values
}

// readPool pools every wanted sub-metric's samples, setup's and teardown's included: k6's own record
// judges them too, and the merged one must agree with it.
func readPool(path string, want []samples.Selector) (pool, error) {
	p := pool{Types: map[string]string{}, Values: map[string][]float64{}}
	byName := map[string][]samples.Selector{}
	var names []string
	for _, s := range want {
		p.Values[s.Key] = nil
		if byName[s.Name] == nil {
			names = append(names, s.Name)
		}
		byName[s.Name] = append(byName[s.Name], s)
	}
	types, err := samples.Read(path, names, func(pt samples.Point) {
		for _, s := range byName[pt.Metric] {
			if s.Matches(pt.Tags) {
				p.Values[s.Key] = append(p.Values[s.Key], pt.Value)
			}
		}
	})
	if types != nil {
		p.Types = types
	}
	if err != nil {
		return p, err
	}
	for k := range p.Values {
		sort.Float64s(p.Values[k])
	}
	return p, nil
}

// Latency is the record's latency figures of a sub-metric's sorted samples, ms.
func latencyOf(v []float64) map[string]float64 {
	out := map[string]float64{"avg": 0, "min": 0, "p50": 0, "p90": 0, "p95": 0, "p99": 0, "max": 0}
	if len(v) == 0 {
		return out
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	out["avg"] = round(sum/float64(len(v)), 3)
	out["min"] = round(v[0], 3)
	out["max"] = round(v[len(v)-1], 3)
	out["p50"] = round(samples.Percentile(v, 0.5), 3)
	out["p90"] = round(samples.Percentile(v, 0.9), 3)
	out["p95"] = round(samples.Percentile(v, 0.95), 3)
	out["p99"] = round(samples.Percentile(v, 0.99), 3)
	return out
}

func round(v float64, digits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	f := math.Pow(10, float64(digits))
	return math.Round(v*f) / f
}

func rate(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	n := 0.0
	for _, x := range v {
		if x != 0 {
			n++
		}
	}
	return n / float64(len(v))
}

// merged builds the scenario's record from the segments' and the pooled samples.
func merged(recs []record, pl pool, exitCodes map[string]int) (map[string]any, []Segment, bool) {
	first := recs[0]
	out := map[string]any{}
	for k, v := range first.raw {
		out[k] = v
	}
	delete(out, "segment")
	delete(out, "segment_id")
	var iterations, dropped, requests, runS float64
	counters := map[string]float64{}
	var segs []Segment
	for _, r := range recs {
		iterations += r.fields.Iterations
		dropped += r.fields.Dropped
		requests += r.fields.Requests
		runS = math.Max(runS, r.fields.RunS)
		if c, ok := r.raw["counters"].(map[string]any); ok {
			for k, v := range c {
				if f, ok := v.(float64); ok {
					counters[k] += f
				}
			}
		}
		s := Segment{ID: r.id, Segment: r.fields.Segment, Iterations: r.fields.Iterations, Requests: r.fields.Requests, Dropped: r.fields.Dropped, ThresholdsOK: r.fields.OK}
		if c, ok := exitCodes[r.id]; ok {
			s.ExitCode = &c
		}
		segs = append(segs, s)
	}
	seconds := first.fields.DurationS
	out["iterations"] = iterations
	out["dropped_iterations"] = dropped
	out["requests"] = requests
	if runS > 0 && runS < seconds {
		// Cut short, as summary.js judges it for one process: the rate over the time it lasted.
		seconds = runS
		out["cut_short"] = true
	}
	if seconds > 0 {
		out["achieved_rate_per_s"] = round(iterations/seconds, 3)
	}
	out["test_run_duration_s"] = runS
	src := first.fields.Sources
	out["error_rate"] = round(rate(pl.Values[src.ErrorRate]), 6)
	out["latency_ms"] = latencyOf(pl.Values[src.Latency])
	out["latency_samples"] = float64(len(pl.Values[src.Latency]))
	out["iteration_ms"] = latencyOf(pl.Values[src.Iteration])
	if len(src.Trends) > 0 {
		tr := map[string]any{}
		for f, key := range src.Trends {
			tr[f] = latencyOf(pl.Values[key])
		}
		out["trends_ms"] = tr
	}
	if len(counters) > 0 {
		out["counters"] = counters
	}
	ths, ok := thresholds(recs, pl, runS)
	out["thresholds"] = ths
	out["thresholds_ok"] = ok
	out["segments"] = segs
	return out, segs, ok
}

// thresholds judges every threshold of the scenario again, on the pooled samples.
func thresholds(recs []record, pl pool, runS float64) ([]Threshold, bool) {
	all := true
	var out []Threshold
	for i, t := range recs[0].fields.Thresholds {
		sel := samples.Parse(t.Metric)
		vals := pl.Values[t.Metric]
		agg, op, limit, err := parseExpression(t.Expression)
		r := Threshold{Metric: t.Metric, Expression: t.Expression}
		switch {
		case err != nil || len(vals) == 0:
			// No sample in any segment (or an expression this merge cannot read): each k6 judged it
			// alone on the same nothing, so their verdicts stand, a trend's or a rate's no sample too.
			r.OK, r.NoSample = true, err == nil
			sum, counted := 0.0, err == nil && agg == "count"
			for _, rec := range recs {
				if i >= len(rec.fields.Thresholds) {
					counted = false
					continue
				}
				rt := rec.fields.Thresholds[i]
				if !rt.OK {
					r.OK = false
				}
				r.NoSample = r.NoSample && rt.NoSample
				if rt.Value == nil {
					counted = false
				} else {
					sum += *rt.Value
				}
			}
			// A count with no sample anywhere (no iteration dropped) is each k6's 0, summed: shown as
			// measured, as one process shows it.
			if counted {
				r.Aggregate, r.Value = agg, &sum
			}
		default:
			v := aggregate(pl.Types[sel.Name], agg, vals, runS)
			r.Aggregate = agg
			rv := round(v, 3)
			r.Value = &rv
			r.OK = compare(v, op, limit)
		}
		all = all && r.OK
		out = append(out, r)
	}
	return out, all
}

func aggregate(typ, agg string, v []float64, runS float64) float64 {
	switch {
	case agg == "count":
		if typ == "rate" {
			n := 0.0
			for _, x := range v {
				if x != 0 {
					n++
				}
			}
			return n
		}
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		return sum
	case agg == "rate" && typ == "rate":
		return rate(v)
	case agg == "rate":
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		if runS <= 0 {
			return 0
		}
		return sum / runS
	case agg == "avg":
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v))
	case agg == "min":
		return v[0]
	// A Gauge's value is its last sample; of several processes' gauges, the highest is the one to judge.
	case agg == "max" || agg == "value":
		return v[len(v)-1]
	case agg == "med":
		return samples.Percentile(v, 0.5)
	case strings.HasPrefix(agg, "p("):
		p, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(agg, "p("), ")"), 64)
		return samples.Percentile(v, p/100)
	}
	return math.NaN()
}

// parseExpression reads a threshold expression: aggregate, operator, limit ("p(95)<800").
func parseExpression(expr string) (string, string, float64, error) {
	e := strings.ReplaceAll(expr, " ", "")
	for _, op := range []string{"<=", ">=", "===", "==", "!=", "<", ">"} {
		if i := strings.Index(e, op); i > 0 {
			limit, err := strconv.ParseFloat(e[i+len(op):], 64)
			if err != nil {
				return "", "", 0, fmt.Errorf("threshold %q: %w", expr, err)
			}
			return e[:i], op, limit, nil
		}
	}
	return "", "", 0, fmt.Errorf("threshold %q has no operator", expr)
}

func compare(v float64, op string, limit float64) bool {
	switch op {
	case "<":
		return v < limit
	case "<=":
		return v <= limit
	case ">":
		return v > limit
	case ">=":
		return v >= limit
	case "==", "===":
		return v == limit
	case "!=":
		return v != limit
	}
	return false
}
