// Package growth reads how certctl's cost grows with its inventory: the same fixed mix of operations run
// at several inventory sizes (make growth), each operation's p50 and p95 against the size, and
// which growth fits them. The runs are ordinary runs; this package only reads their records.
package growth

import (
	"fmt"
	"math"
	"sort"
)

// Point is one operation's latency at one inventory size.
type Point struct {
	Size float64 `json:"size"` // certificates in the inventory
	P50  float64 `json:"p50_ms"`
	P95  float64 `json:"p95_ms"`
	N    int     `json:"requests"`
}

// Fit is how one figure of an operation grows with the size.
type Fit struct {
	// Exponent is b in latency ≈ a·size^b, by least squares on the logs: 0 constant, 1 linear.
	Exponent float64 `json:"exponent"`
	// R2 of that power fit, and of latency ≈ a + c·ln(size), the logarithmic alternative.
	R2Power float64 `json:"r2_power"`
	R2Log   float64 `json:"r2_log"`
	// Class is the reading: constant, logarithmic, sublinear, linear or worse than linear.
	Class string `json:"class"`
	// PerDecade is the factor the figure gains for every tenfold of the inventory (10^b).
	PerDecade float64 `json:"per_decade"`
}

// Classes, in the order of growth.
const (
	Constant    = "constant"
	Logarithmic = "logarithmic"
	Sublinear   = "sublinear"
	Linear      = "linear"
	Worse       = "worse than linear"
)

// Thresholds of the reading. A figure that moves less than 10 % a decade (b < 0.04) is constant: two
// runs of one build on a shared machine differ by that much. Linear is b in [0.8, 1.25): a tenfold of the
// inventory costing 6.3 to 17.8 times as much.
const (
	constantBelow = 0.04
	linearFrom    = 0.8
	worseFrom     = 1.25
)

// FitPoints fits one figure (get) of an operation's points; at least three sizes are needed.
func FitPoints(points []Point, get func(Point) float64) (Fit, error) {
	ps := make([]Point, 0, len(points))
	for _, p := range points {
		if p.Size > 0 && get(p) > 0 {
			ps = append(ps, p)
		}
	}
	if len(ps) < 3 {
		return Fit{}, fmt.Errorf("%d sizes with a figure: a growth needs at least three", len(ps))
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Size < ps[j].Size })
	var lx, ly, y []float64
	for _, p := range ps {
		lx = append(lx, math.Log(p.Size))
		ly = append(ly, math.Log(get(p)))
		y = append(y, get(p))
	}
	b, _, r2p := line(lx, ly)
	_, _, r2l := line(lx, y)
	f := Fit{Exponent: round(b, 3), R2Power: round(r2p, 3), R2Log: round(r2l, 3), PerDecade: round(math.Pow(10, b), 2)}
	switch {
	case b < constantBelow:
		f.Class = Constant
	case b >= worseFrom:
		f.Class = Worse
	case b >= linearFrom:
		f.Class = Linear
	case r2l >= r2p:
		// Growing by a constant amount per tenfold fits better than by a constant factor.
		f.Class = Logarithmic
	default:
		f.Class = Sublinear
	}
	return f, nil
}

// line is the least-squares line y = a + b·x, and its R².
func line(x, y []float64) (b, a, r2 float64) {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0, sy / n, 0
	}
	b = (n*sxy - sx*sy) / d
	a = (sy - b*sx) / n
	mean := sy / n
	var ssTot, ssRes float64
	for i := range x {
		ssTot += (y[i] - mean) * (y[i] - mean)
		r := y[i] - (a + b*x[i])
		ssRes += r * r
	}
	if ssTot == 0 {
		return b, a, 1
	}
	return b, a, 1 - ssRes/ssTot
}

func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}
