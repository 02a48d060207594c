// Package chart draws line charts as standalone SVG: the capacity curve and the weekly trend. No script,
// no font or file from elsewhere, the same bytes for the same data (golden files), so a plot can sit in
// an artifact, a job summary's artifact list or a docs page as it is.
package chart

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// Chart is one plot. A NaN Y leaves a gap in its line.
type Chart struct {
	Title, XLabel, YLabel string
	LogY                  bool
	XTicks                []Tick // labels at given X values instead of numbers (weeks)
	Series                []Series
	Marks                 []Mark // vertical lines: the knee
	Width, Height         int
}

type Series struct {
	Name   string
	Points []Point
	Dashed bool // a budget or a reference, not a measurement
}

type Point struct{ X, Y float64 }

type Tick struct {
	X     float64
	Label string
}

type Mark struct {
	X     float64
	Label string
}

// Okabe–Ito: told apart by colour-blind readers too.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}

const (
	left, right, top, bottom = 64, 40, 36, 48
	legendRow                = 16
)

// SVG renders the chart.
func SVG(c Chart) string {
	if c.Width == 0 {
		c.Width = 720
	}
	if c.Height == 0 {
		c.Height = 360
	}
	legendH := legendRow * ((len(c.Series) + 2) / 3)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", c.Width, c.Height+legendH, c.Width, c.Height+legendH)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(c.Title))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="13" font-weight="bold">%s</text>`+"\n", left, esc(c.Title))
	x0, x1, y0, y1, ok := bounds(c)
	pw, ph := float64(c.Width-left-right), float64(c.Height-top-bottom)
	if !ok {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#666">no data</text>`+"\n</svg>\n", c.Width/2-20, c.Height/2)
		return b.String()
	}
	fy := func(y float64) float64 {
		if c.LogY {
			y, y0l, y1l := math.Log10(y), math.Log10(y0), math.Log10(y1)
			return float64(top) + ph*(1-(y-y0l)/(y1l-y0l))
		}
		return float64(top) + ph*(1-(y-y0)/(y1-y0))
	}
	fx := func(x float64) float64 { return float64(left) + pw*(x-x0)/(x1-x0) }
	// Axes and grid.
	fmt.Fprintf(&b, `<g stroke="#ddd">`+"\n")
	yt := yTicks(y0, y1, c.LogY)
	for _, t := range yt {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%s" y2="%s"/>`+"\n", left, c.Width-right, f1(fy(t)), f1(fy(t)))
	}
	b.WriteString("</g>\n")
	for _, t := range yt {
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", left-6, f1(fy(t)+4), Num(t))
	}
	xt := c.XTicks
	if len(xt) == 0 {
		for _, v := range niceTicks(x0, x1) {
			xt = append(xt, Tick{v, Num(v)})
		}
	}
	for _, t := range xt {
		if t.X < x0 || t.X > x1 {
			continue
		}
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", f1(fx(t.X)), c.Height-bottom+16, esc(t.Label))
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`+"\n", left, c.Width-right, c.Height-bottom, c.Height-bottom)
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`+"\n", left, left, top, c.Height-bottom)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", left+int(pw/2), c.Height-bottom+34, esc(c.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(14 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+int(ph/2), esc(c.YLabel))
	for i, m := range c.Marks {
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%d" y2="%d" stroke="#555" stroke-dasharray="2 3"/>`+"\n", f1(fx(m.X)), f1(fx(m.X)), top, c.Height-bottom)
		// Labels one under the other: marks can stand close together.
		fmt.Fprintf(&b, `<text x="%s" y="%d" fill="#333">%s</text>`+"\n", f1(fx(m.X)+4), top+12+14*i, esc(m.Label))
	}
	// Lines, points, legend.
	for i, s := range c.Series {
		col := palette[i%len(palette)]
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		var seg []string
		flush := func() {
			if len(seg) > 1 {
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", col, dash, strings.Join(seg, " "))
			}
			seg = nil
		}
		for _, p := range s.Points {
			if !usable(p.Y, c.LogY) {
				flush()
				continue
			}
			seg = append(seg, f1(fx(p.X))+","+f1(fy(p.Y)))
		}
		flush()
		if !s.Dashed {
			for _, p := range s.Points {
				if usable(p.Y, c.LogY) {
					fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"><title>%s: %s</title></circle>`+"\n", f1(fx(p.X)), f1(fy(p.Y)), col, esc(s.Name), Num(p.Y))
				}
			}
		}
		lx, ly := left+(i%3)*(c.Width-left-right)/3, c.Height+(i/3)*legendRow
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", lx, lx+18, ly-4, ly-4, col, dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", lx+24, ly, esc(s.Name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func usable(y float64, logY bool) bool {
	return !math.IsNaN(y) && !math.IsInf(y, 0) && (!logY || y > 0)
}

func bounds(c Chart) (x0, x1, y0, y1 float64, ok bool) {
	x0, y0 = math.Inf(1), math.Inf(1)
	x1, y1 = math.Inf(-1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			x0, x1 = math.Min(x0, p.X), math.Max(x1, p.X)
			if usable(p.Y, c.LogY) {
				y0, y1 = math.Min(y0, p.Y), math.Max(y1, p.Y)
				ok = true
			}
		}
	}
	for _, t := range c.XTicks {
		x0, x1 = math.Min(x0, t.X), math.Max(x1, t.X)
	}
	if !ok {
		return
	}
	if x0 == x1 {
		x0, x1 = x0-1, x1+1
	}
	if c.LogY {
		y0, y1 = math.Pow(10, math.Floor(math.Log10(y0))), math.Pow(10, math.Ceil(math.Log10(y1)))
		if y0 == y1 {
			y1 *= 10
		}
		return x0, x1, y0, y1, true
	}
	t := niceTicks(0, y1)
	y0, y1 = 0, t[len(t)-1]
	if y1 <= 0 {
		y1 = 1
	}
	return x0, x1, y0, y1, true
}

// niceTicks are about five round values (1, 2, 5 × a power of ten apart) covering lo..hi.
func niceTicks(lo, hi float64) []float64 {
	if hi <= lo {
		return []float64{lo}
	}
	raw := (hi - lo) / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; v < hi+step*0.999; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// yTicks: decades with 2 and 5 between them on a log axis (when there are few decades), round values
// otherwise.
func yTicks(y0, y1 float64, logY bool) []float64 {
	if !logY {
		return niceTicks(y0, y1)
	}
	var out []float64
	decades := math.Log10(y1 / y0)
	for d := y0; d <= y1*1.0001; d *= 10 {
		out = append(out, d)
		if decades <= 3 && d*10 <= y1*1.0001 {
			out = append(out, 2*d, 5*d)
		}
	}
	return out
}

// Num prints a figure compactly: 1.2k, 15, 0.5.
func Num(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(math.Round(v/100)/10, 'f', -1, 64) + "k"
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	case a >= 10:
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

func f1(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func esc(s string) string { return html.EscapeString(s) }
