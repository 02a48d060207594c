package samples

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeRaw(t *testing.T, lines []string, cut int) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(strings.Join(lines, "\n") + "\n"))
	zw.Close()
	b := buf.Bytes()
	if cut > 0 {
		b = b[:len(b)-cut]
	}
	p := filepath.Join(t.TempDir(), "raw.json.gz")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	metricLine = `{"type":"Metric","data":{"name":"http_req_duration","type":"trend","contains":"time"},"metric":"http_req_duration"}`
	setupPoint = `{"type":"Point","data":{"time":"2026-01-01T00:00:00Z","value":900,"tags":{"phase":"setup","expected_response":"true"}},"metric":"http_req_duration"}`
	oldSetup   = `{"type":"Point","data":{"time":"2026-01-01T00:00:00Z","value":800,"tags":{"group":"::setup","expected_response":"true"}},"metric":"http_req_duration"}`
	point1     = `{"type":"Point","data":{"time":"2026-01-01T00:00:01Z","value":10,"tags":{"endpoint":"nonce","expected_response":"true"}},"metric":"http_req_duration"}`
	point2     = `{"type":"Point","data":{"time":"2026-01-01T00:00:02Z","value":20,"tags":{"expected_response":"false"}},"metric":"http_req_duration"}`
	otherPoint = `{"type":"Point","data":{"time":"2026-01-01T00:00:02Z","value":1,"tags":{}},"metric":"iterations"}`
)

func TestRead(t *testing.T) {
	long := `{"type":"Point","metric":"http_req_duration","data":{"tags":{"x":"` + strings.Repeat("a", 2<<20) + `"}}}`
	p := writeRaw(t, []string{metricLine, setupPoint, oldSetup, long, point1, otherPoint, point2}, 0)
	var got []float64
	var load []float64
	types, err := Read(p, []string{"http_req_duration"}, func(pt Point) {
		got = append(got, pt.Value)
		if pt.Load() {
			load = append(load, pt.Value)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []float64{900, 800, 10, 20}) || !reflect.DeepEqual(load, []float64{10, 20}) {
		t.Errorf("read %v, load %v", got, load)
	}
	if types["http_req_duration"] != "trend" {
		t.Errorf("types %v", types)
	}
}

// A raw file cut off where k6 was killed: what was read is the run's.
func TestReadCutOff(t *testing.T) {
	var lines []string
	for i := 0; i < 2000; i++ {
		lines = append(lines, point1)
	}
	p := writeRaw(t, lines, 200)
	n := 0
	if _, err := Read(p, []string{"http_req_duration"}, func(Point) { n++ }); err != nil {
		t.Fatal(err)
	}
	if n == 0 || n >= 2000 {
		t.Errorf("read %d of 2000 points from a cut-off file", n)
	}
}

func TestReadNotGzip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "raw.json.gz")
	os.WriteFile(p, []byte("{}\n"), 0o644)
	if _, err := Read(p, nil, func(Point) {}); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("err = %v, want one naming %s", err, p)
	}
}

func TestSelector(t *testing.T) {
	s := Parse("http_req_duration{expected_response:true, endpoint:nonce}")
	if s.Name != "http_req_duration" || !reflect.DeepEqual(s.Tags, map[string]string{"expected_response": "true", "endpoint": "nonce"}) {
		t.Fatalf("%+v", s)
	}
	if !s.Matches(map[string]string{"expected_response": "true", "endpoint": "nonce", "name": "x"}) || s.Matches(map[string]string{"endpoint": "nonce"}) {
		t.Error("matches")
	}
	if w := s.Without("expected_response"); !w.Matches(map[string]string{"endpoint": "nonce", "expected_response": "false"}) {
		t.Errorf("without: %+v", w)
	}
	if Parse("").Name != "http_req_duration" {
		t.Error(`"" is http_req_duration`)
	}
}

// k6's rule, as its end-of-test summary computes p(95) and friends.
func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {0.5, 2.5}, {0.95, 3.85}, {1, 4}} {
		if got := Percentile(v, c.p); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("p%.2f = %v, want %v", c.p, got, c.want)
		}
	}
	if Percentile(nil, 0.5) != 0 || Percentile([]float64{7}, 0.99) != 7 {
		t.Error("edges")
	}
	if Quantile([]float64{4, 1, 3, 2}, 0.5) != 2.5 {
		t.Error("quantile sorts")
	}
}
