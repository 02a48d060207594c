package compare

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	raw "certctl-loadtest/internal/samples"
)

// sample is one request of the load: when it ended (seconds from the scenario's first request) and its
// latency in ms; ok is k6's expected_response (a failed request counts in the error rate, not the latency).
type sample struct {
	t  float64
	v  float64
	ok bool
}

// samples are one scenario's requests in one run, by group: "" is every request, "endpoint=nonce" those
// with that tag (the ACME tier's thresholds are per endpoint, so a regression can hide in one of them).
type samples map[string][]sample

// readSamples reads the judged latency metric's points from a scenario's raw file (k6's JSON output),
// leaving out setup and teardown, which are not the load. The metric's own tag filter (expected_response:
// true) is dropped: failed requests are kept, marked, for the error rate.
func readSamples(path, latencyMetric string) (samples, error) {
	sel := raw.Parse(latencyMetric).Without("expected_response")
	var first time.Time
	out := samples{}
	_, err := raw.Read(path, []string{sel.Name}, func(p raw.Point) {
		if !p.Load() || !sel.Matches(p.Tags) {
			return
		}
		if first.IsZero() || p.Time.Before(first) {
			first = p.Time
		}
		s := sample{t: float64(p.Time.UnixNano()), v: p.Value, ok: p.Tags["expected_response"] != "false"}
		out[""] = append(out[""], s)
		if e := p.Tags["endpoint"]; e != "" {
			out["endpoint="+e] = append(out["endpoint="+e], s)
		}
	})
	if err != nil && len(out) == 0 {
		return nil, err
	}
	t0 := float64(first.UnixNano())
	for g, ss := range out {
		for i := range ss {
			ss[i].t = (ss[i].t - t0) / 1e9
		}
		sort.Slice(ss, func(i, j int) bool { return ss[i].t < ss[j].t })
		out[g] = ss
	}
	return out, nil
}

// rawPath is where a run keeps a scenario's raw samples, or "" when it has none: raw/ in a run
// directory, <name>.raw/ beside a baseline's <name>.json.
func rawPath(dir, scenario string) string {
	p := filepath.Join(dir, "raw", scenario+".json.gz")
	if strings.HasSuffix(dir, ".json") {
		p = filepath.Join(strings.TrimSuffix(dir, ".json")+".raw", scenario+".json.gz")
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return p
}

// TrimRaw copies a scenario's raw file keeping only what compare reads: the judged latency metric's
// points outside setup and teardown, with their expected_response and endpoint tags, times to the
// millisecond. A 2-minute ACME run's 30 MB of k6 JSON becomes about 300 kB.
func TrimRaw(src, dst, latencyMetric string) error {
	sel := raw.Parse(latencyMetric).Without("expected_response")
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(out, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	var werr error
	_, err = raw.Read(src, []string{sel.Name}, func(p raw.Point) {
		if werr != nil || !p.Load() || !sel.Matches(p.Tags) {
			return
		}
		var q point
		q.Metric, q.Type = sel.Name, "Point"
		q.Data.Time = p.Time.Truncate(time.Millisecond)
		q.Data.Value = math.Round(p.Value*1000) / 1000
		q.Data.Tags = map[string]string{"expected_response": p.Tags["expected_response"]}
		if e := p.Tags["endpoint"]; e != "" {
			q.Data.Tags["endpoint"] = e
		}
		werr = enc.Encode(q)
	})
	if err == nil {
		err = werr
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

type point struct {
	Metric string `json:"metric"`
	Type   string `json:"type"`
	Data   struct {
		Time  time.Time         `json:"time"`
		Value float64           `json:"value"`
		Tags  map[string]string `json:"tags"`
	} `json:"data"`
}
