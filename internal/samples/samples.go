// Package samples reads k6's raw output (the gzipped JSON lines of `k6 run --out json`), the one
// reader of it: compare pools requests from it, the diagnosis draws its time series from it, and
// segment merging recomputes a split run's figures from it. It also holds the one percentile rule
// every figure of a run uses, k6's.
package samples

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

// Selector is a metric with the tags its samples must carry, in k6's sub-metric syntax:
// `http_req_duration{expected_response:true,endpoint:nonce}`.
type Selector struct {
	Key  string // as written
	Name string // the metric
	Tags map[string]string
}

// Parse reads a sub-metric; a bare name selects every sample of the metric, "" selects
// http_req_duration, the latency k6 judges by default.
func Parse(key string) Selector {
	s := Selector{Key: key, Tags: map[string]string{}}
	name, rest, ok := strings.Cut(key, "{")
	s.Name = strings.TrimSpace(name)
	if s.Name == "" {
		s.Name = "http_req_duration"
	}
	if ok {
		for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
			if k, v, ok := strings.Cut(strings.TrimSpace(kv), ":"); ok {
				s.Tags[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return s
}

// Matches reports whether a sample's tags carry every tag of the selector.
func (s Selector) Matches(tags map[string]string) bool {
	for k, v := range s.Tags {
		if tags[k] != v {
			return false
		}
	}
	return true
}

// Without is the selector less a tag: compare keeps failed requests (expected_response:false) to count
// them in the error rate, where the judged latency leaves them out.
func (s Selector) Without(tag string) Selector {
	out := Selector{Key: s.Key, Name: s.Name, Tags: map[string]string{}}
	for k, v := range s.Tags {
		if k != tag {
			out.Tags[k] = v
		}
	}
	return out
}

// Point is one sample.
type Point struct {
	Metric string
	Time   time.Time
	Value  float64
	Tags   map[string]string
}

// Load reports whether the sample is the load's: setup() and teardown() are not, and k6 tags them by
// phase or, in older outputs, by group.
func (p Point) Load() bool {
	t := p.Tags
	return t["phase"] != "setup" && t["phase"] != "teardown" && t["group"] != "::setup" && t["group"] != "::teardown"
}

// Read calls fn for every sample of the named metrics in a raw file, in file order, and returns the
// metrics' k6 types (trend, rate, counter, gauge) as the file declares them. A file cut off where k6
// was killed ends mid-stream: what was read before is the run's, and no error. A line longer than any
// sample (1 MiB) is skipped.
func Read(path string, metrics []string, fn func(Point)) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	want := map[string]bool{}
	for _, m := range metrics {
		want[m] = true
	}
	types := map[string]string{}
	br := bufio.NewReaderSize(zr, 1<<20)
	var line struct {
		Type   string `json:"type"`
		Metric string `json:"metric"`
		Data   struct {
			Type  string            `json:"type"`
			Time  time.Time         `json:"time"`
			Value float64           `json:"value"`
			Tags  map[string]string `json:"tags"`
		} `json:"data"`
	}
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		// Most lines are samples of metrics nobody asked for: skip them before decoding.
		if name := metricOf(b); name != "" && want[name] {
			line.Data.Tags = nil
			if json.Unmarshal(b, &line) == nil {
				switch line.Type {
				case "Metric":
					types[line.Metric] = line.Data.Type
				case "Point":
					fn(Point{Metric: line.Metric, Time: line.Data.Time, Value: line.Data.Value, Tags: line.Data.Tags})
				}
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return types, nil
		default:
			return types, fmt.Errorf("%s: %w", path, err)
		}
	}
}

var metricKey = []byte(`"metric":"`)

// metricOf is the value of a line's "metric" field, read without decoding the line.
func metricOf(b []byte) string {
	i := bytes.Index(b, metricKey)
	if i < 0 {
		return ""
	}
	rest := b[i+len(metricKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// Percentile is k6's rule: linear interpolation between the closest ranks of the sorted values; 0 for
// none.
func Percentile(sorted []float64, p float64) float64 {
	switch n := len(sorted); n {
	case 0:
		return 0
	case 1:
		return sorted[0]
	default:
		i := p * float64(n-1)
		lo, hi := sorted[int(math.Floor(i))], sorted[int(math.Ceil(i))]
		return lo + (hi-lo)*(i-math.Floor(i))
	}
}

// Quantile is Percentile of values in any order.
func Quantile(values []float64, p float64) float64 {
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	return Percentile(s, p)
}
