package chart

import (
	"certctl-loadtest/internal/golden"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

// wellFormed walks the document as XML: a browser shows nothing of an SVG that is not.
func wellFormed(t *testing.T, svg string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := d.Token(); err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
	}
}

func curve() Chart {
	return Chart{Title: "list_certificates: latency against arrival rate", XLabel: "arrival rate, per second", YLabel: "ms (log)", LogY: true,
		Series: []Series{
			{Name: "p50", Points: []Point{{50, 2.3}, {100, 1.8}, {200, 2.9}, {400, 41}}},
			{Name: "p95", Points: []Point{{50, 3.9}, {100, 3.2}, {200, 12}, {400, 910}}},
			{Name: "p95 budget", Points: []Point{{50, 800}, {400, 800}}, Dashed: true},
		},
		Marks: []Mark{{X: 200, Label: "knee 200/s"}},
	}
}

func TestCurve(t *testing.T) {
	svg := SVG(curve())
	wellFormed(t, svg)
	golden.Check(t, "curve.svg", svg)
	for _, want := range []string{"<title>p95: 910</title>", `stroke-dasharray="6 4"`, "knee 200/s", ">1000<", ">1<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %q", want)
		}
	}
}

func TestAMissingWeekIsAGap(t *testing.T) {
	c := Chart{Title: "p95 <&> week", XTicks: []Tick{{0, "#40"}, {1, "#41"}, {2, "#42"}, {3, "this run"}},
		Series: []Series{{Name: "all/list_certificates <x>", Points: []Point{{0, 20}, {1, 18}, {2, math.NaN()}, {3, 22}}},
			{Name: "b", Points: []Point{{0, 5}, {1, 6}, {2, 7}, {3, 8}}}}}
	svg := SVG(c)
	wellFormed(t, svg)
	golden.Check(t, "gap.svg", svg)
	if n := strings.Count(svg, "<polyline"); n != 2 {
		// the gapped series' two points before the gap make one line, its lone point after it none
		t.Errorf("%d polylines, want 2", n)
	}
	if !strings.Contains(svg, "p95 &lt;&amp;&gt; week") || strings.Contains(svg, "<x>") {
		t.Error("names are not escaped")
	}
}

func TestNoData(t *testing.T) {
	svg := SVG(Chart{Title: "nothing", Series: []Series{{Name: "a", Points: []Point{{0, math.NaN()}}}}})
	wellFormed(t, svg)
	if !strings.Contains(svg, "no data") {
		t.Error(svg)
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0.5: "0.5", 15: "15", 123.4: "123", 1234: "1234", 12345: "12.3k", 2e6: "2M", 3.14159: "3.14"} {
		if got := Num(v); got != want {
			t.Errorf("Num(%g) = %s, want %s", v, got, want)
		}
	}
}
