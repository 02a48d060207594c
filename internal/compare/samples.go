package compare

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
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
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	metric, _, _ := strings.Cut(latencyMetric, "{")
	if metric == "" {
		metric = "http_req_duration"
	}
	key := []byte(`"metric":"` + metric + `"`)
	var first time.Time
	out := samples{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, key) || !bytes.Contains(line, []byte(`"type":"Point"`)) {
			continue
		}
		var p struct {
			Data struct {
				Time  time.Time         `json:"time"`
				Value float64           `json:"value"`
				Tags  map[string]string `json:"tags"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &p) != nil {
			continue
		}
		tags := p.Data.Tags
		if tags["phase"] == "setup" || tags["phase"] == "teardown" || tags["group"] == "::setup" || tags["group"] == "::teardown" {
			continue
		}
		if first.IsZero() || p.Data.Time.Before(first) {
			first = p.Data.Time
		}
		s := sample{t: float64(p.Data.Time.UnixNano()), v: p.Data.Value, ok: tags["expected_response"] != "false"}
		out[""] = append(out[""], s)
		if e := tags["endpoint"]; e != "" {
			out["endpoint="+e] = append(out["endpoint="+e], s)
		}
	}
	// A raw file cut off by a killed k6 ends mid-line: what was read is still the run's.
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) && len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", path, err)
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
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(out, gzip.BestCompression)
	metric, _, _ := strings.Cut(latencyMetric, "{")
	if metric == "" {
		metric = "http_req_duration"
	}
	key := []byte(`"metric":"` + metric + `"`)
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	enc := json.NewEncoder(zw)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, key) || !bytes.Contains(line, []byte(`"type":"Point"`)) {
			continue
		}
		var p point
		if json.Unmarshal(line, &p) != nil {
			continue
		}
		t := p.Data.Tags
		if t["phase"] == "setup" || t["phase"] == "teardown" || t["group"] == "::setup" || t["group"] == "::teardown" {
			continue
		}
		keep := map[string]string{"expected_response": t["expected_response"]}
		if e := t["endpoint"]; e != "" {
			keep["endpoint"] = e
		}
		p.Data.Time = p.Data.Time.Truncate(time.Millisecond)
		p.Data.Value = math.Round(p.Data.Value*1000) / 1000
		p.Data.Tags = keep
		p.Metric, p.Type = metric, "Point"
		if err := enc.Encode(p); err != nil {
			out.Close()
			return err
		}
	}
	if err := zw.Close(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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
