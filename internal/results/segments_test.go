package results

import (
	"certctl-loadtest/internal/samples"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// copyTree copies testdata/<name> to a temporary run directory.
func copyTree(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", name)
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// okLatencies reads the successful requests' latencies from a raw file, sorted.
func okLatencies(t *testing.T, path string) []float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	dec := json.NewDecoder(zr)
	for dec.More() {
		var l struct {
			Type   string
			Metric string
			Data   struct {
				Value float64
				Tags  map[string]string
			}
		}
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		if l.Type == "Point" && l.Metric == "http_req_duration" && l.Data.Tags["expected_response"] == "true" {
			out = append(out, l.Data.Value)
		}
	}
	sort.Float64s(out)
	return out
}

type mergedRecord struct {
	Iterations       float64            `json:"iterations"`
	Requests         float64            `json:"requests"`
	AchievedRatePerS float64            `json:"achieved_rate_per_s"`
	LatencyMS        map[string]float64 `json:"latency_ms"`
	LatencySamples   float64            `json:"latency_samples"`
	Thresholds       []Threshold        `json:"thresholds"`
	ThresholdsOK     bool               `json:"thresholds_ok"`
	Segments         []Segment          `json:"segments"`
	Segment          *string            `json:"segment"`
	Setup            map[string]any     `json:"setup"`
}

func readMerged(t *testing.T, dir string) mergedRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "scenarios", "list_certificates.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m mergedRecord
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Two recorded segments of list_certificates whose latencies differ as two load generators' can (here
// v2.1.7's samples and main-151107c's, 6001 each): the pooled p95 is not the mean of the two p95s, and
// the merge gives the pooled one exactly.
func TestMergeRecordedSegments(t *testing.T) {
	dir := copyTree(t, "recorded")
	a := okLatencies(t, filepath.Join(dir, "raw", SegmentsDir, "list_certificates@1of2.json.gz"))
	b := okLatencies(t, filepath.Join(dir, "raw", SegmentsDir, "list_certificates@2of2.json.gz"))
	segs, ok, err := MergeSegments(dir, "list_certificates", map[string]int{"1of2": 0, "2of2": 0})
	if err != nil {
		t.Fatal(err)
	}
	if !ok || len(segs) != 2 || segs[0].ID != "1of2" || segs[1].Segment != "1/2:1" || segs[0].ExitCode == nil {
		t.Fatalf("segments %+v, thresholds ok %v", segs, ok)
	}
	m := readMerged(t, dir)
	all := append(append([]float64(nil), a...), b...)
	sort.Float64s(all)
	for _, p := range []struct {
		field string
		q     float64
	}{{"p50", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99}} {
		if want := round(samples.Percentile(all, p.q), 3); m.LatencyMS[p.field] != want {
			t.Errorf("merged %s %v, pooled samples' %v", p.field, m.LatencyMS[p.field], want)
		}
	}
	mean := (samples.Percentile(a, 0.95) + samples.Percentile(b, 0.95)) / 2
	// Averaging the segments' p95s would say 347 ms; the load's p95 is 426 ms.
	if math.Abs(m.LatencyMS["p95"]-mean)/m.LatencyMS["p95"] < 0.15 {
		t.Errorf("the recorded segments no longer show the point: pooled p95 %v, mean of p95s %v", m.LatencyMS["p95"], mean)
	}
	if m.LatencyMS["min"] != round(all[0], 3) || m.LatencyMS["max"] != round(all[len(all)-1], 3) {
		t.Errorf("min/max %v", m.LatencyMS)
	}
	if m.Iterations != 12002 || m.Requests != 12002 || m.LatencySamples != float64(len(all)) || m.AchievedRatePerS != round(12002.0/120, 3) {
		t.Errorf("counts: %+v", m)
	}
	if m.Segment != nil {
		t.Errorf("the merged record still names a segment: %v", *m.Segment)
	}
	for _, th := range m.Thresholds {
		if th.Expression == "p(95)<800" && (th.Value == nil || *th.Value != m.LatencyMS["p95"] || !th.OK) {
			t.Errorf("p95 threshold judged %+v on the pooled p95 %v", th, m.LatencyMS["p95"])
		}
		// Nothing dropped: no sample in either process, each one's count of 0, summed and shown.
		if th.Expression == "count==0" && (th.Value == nil || *th.Value != 0 || th.Aggregate != "count" || !th.OK) {
			t.Errorf("dropped_iterations threshold %+v", th)
		}
	}
	// The merged raw file is both segments' samples, readable as one gzip stream.
	if n := len(okLatencies(t, filepath.Join(dir, "raw", "list_certificates.json.gz"))); n != len(all) {
		t.Errorf("merged raw file has %d samples, want %d", n, len(all))
	}
}

// A budget between the averaged p95 and the pooled one: the merge breaches it, as one process
// running the whole load would have.
func TestMergeJudgesThresholdsOnThePool(t *testing.T) {
	dir := copyTree(t, "recorded")
	for _, id := range []string{"1of2", "2of2"} {
		p := filepath.Join(dir, "scenarios", SegmentsDir, "list_certificates@"+id+".json")
		b, _ := os.ReadFile(p)
		s := strings.Replace(string(b), `"p(95)<800"`, `"p(95)<400"`, 1)
		if s == string(b) {
			t.Fatal("the recorded record has no p(95)<800 threshold")
		}
		os.WriteFile(p, []byte(s), 0o644)
	}
	_, ok, err := MergeSegments(dir, "list_certificates", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := readMerged(t, dir)
	if ok || m.ThresholdsOK {
		t.Fatalf("p(95)<400 held on a pooled p95 of %v", m.LatencyMS["p95"])
	}
	for _, th := range m.Thresholds {
		if th.Expression == "p(95)<400" && th.OK {
			t.Errorf("%+v", th)
		}
		if th.Expression == "rate<0.01" && (!th.OK || th.Value == nil || *th.Value != 0) {
			t.Errorf("error rate threshold %+v", th)
		}
	}
}

func TestMergeRefusesAPartialLoad(t *testing.T) {
	dir := copyTree(t, "recorded")
	os.Remove(filepath.Join(dir, "scenarios", SegmentsDir, "list_certificates@2of2.json"))
	_, _, err := MergeSegments(dir, "list_certificates", nil)
	if err == nil || !strings.Contains(err.Error(), "no record of the load's segment 1/2:1") {
		t.Fatalf("merge of half a load: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "scenarios", "list_certificates.json")); err == nil {
		t.Error("a partial load got a record")
	}
}

func TestCovers(t *testing.T) {
	rec := func(seg string) record {
		var r record
		r.fields.Segment = seg
		var err error
		if r.from, r.to, err = parseSegment(seg); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		segs []string
		want string
	}{
		{[]string{"0:1/3", "1/3:2/3", "2/3:1"}, ""},
		{[]string{"0:50%", "0.5:1"}, ""},
		{[]string{"0:1/3", "2/3:1"}, "segment 1/3:2/3"},
		{[]string{"0:1/2", "0:1/2", "1/2:1"}, "overlaps"},
		{[]string{"1/4:1"}, "segment 0:1/4"},
	} {
		var recs []record
		for _, s := range c.segs {
			recs = append(recs, rec(s))
		}
		err := covers(recs)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.segs, err, c.want)
		}
	}
	if _, _, err := parseSegment("1/2"); err == nil {
		t.Error("a segment without its colon was read")
	}
	if _, _, err := parseSegment("2/3:1/3"); err == nil {
		t.Error("a backwards segment was read")
	}
}

func TestPercentileIsK6s(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	// k6's rule: index p*(n-1), linear between its neighbours: p95 of 1..10 is 9.55.
	if got := samples.Percentile(v, 0.95); math.Abs(got-9.55) > 1e-9 {
		t.Errorf("p95 %v", got)
	}
	if samples.Percentile(nil, 0.5) != 0 || samples.Percentile([]float64{7}, 0.99) != 7 {
		t.Error("edge cases")
	}
}

func TestAggregates(t *testing.T) {
	for _, c := range []struct {
		typ, agg string
		v        []float64
		want     float64
	}{
		{"rate", "rate", []float64{0, 1, 1, 0}, 0.5},
		{"rate", "count", []float64{0, 1, 1, 0}, 2},
		{"counter", "count", []float64{3, 4}, 7},
		{"counter", "rate", []float64{3, 7}, 1},
		{"trend", "avg", []float64{1, 3}, 2},
		{"trend", "med", []float64{1, 2, 3}, 2},
		{"trend", "p(99.9)", []float64{0, 1000}, 999},
	} {
		if got := aggregate(c.typ, c.agg, c.v, 10); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s %s of %v: %v, want %v", c.typ, c.agg, c.v, got, c.want)
		}
	}
	for _, e := range []struct {
		expr string
		v    float64
		ok   bool
	}{{"count==0", 0, true}, {"count==0", 1, false}, {"rate>0.95", 0.96, true}, {"p(95) < 800", 800, false}, {"max<=50", 50, true}, {"rate!=0", 0, false}} {
		agg, op, limit, err := parseExpression(e.expr)
		if err != nil || compare(e.v, op, limit) != e.ok || agg == "" {
			t.Errorf("%s on %v: %v %v", e.expr, e.v, compare(e.v, op, limit), err)
		}
	}
}
