package fleet

import (
	"bytes"
	"fmt"
	"html/template"
	"path"
	"sort"

	"certctl-loadtest/internal/chart"
)

type indexPage struct {
	Title, Verdict, GivesWay, Bracket string
	Plot                              template.HTML
	Runs                              []indexRun
	Mix                               []Op
	At                                string
}

type indexRun struct {
	Size, Role, Verdict, Took, Dir, Index string
}

var indexTemplate = template.Must(template.New("fleet.html").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{{.Title}}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}code{font-size:90%}</style>
</head><body>
<h1>{{.Title}}</h1>
<p><strong>{{.Verdict}}</strong></p>
{{if .GivesWay}}<p>{{.GivesWay}}</p>{{end}}
<p>Bracket: {{.Bracket}}.</p>
<figure>{{.Plot}}</figure>
<h2>Runs</h2>
<p>Each a fresh stack seeded with that many certificates' year of history, running the fleet's load at that size (<code>fleet.json</code>, <code>fleet.txt</code>).</p>
<table><tr><th>size</th><th>role</th><th>verdict</th><th>took</th><th>run</th></tr>
{{range .Runs}}<tr><td>{{.Size}}</td><td>{{.Role}}</td><td>{{.Verdict}}</td><td>{{.Took}}</td><td>{{if .Index}}<a href="{{.Index}}">{{.Dir}}</a>{{else}}{{.Dir}}{{end}}</td></tr>
{{end}}</table>
{{if .Mix}}<h2>The load at {{.At}} certificates</h2>
<table><tr><th>scenario</th><th>what</th><th>derived</th><th>run as</th><th>from</th></tr>
{{range .Mix}}<tr><td><code>{{.Scenario}}</code></td><td>{{.What}}</td><td>{{printf "%.3g" .PerSecond}}/s</td><td>{{.RunAs}}</td><td>{{.Formula}}</td></tr>
{{end}}</table>{{end}}
</body></html>
`))

// SVG is the curve: each operation's p95 at every size run, the answer and the size beyond it marked.
func SVG(r Result) string {
	byOp := map[string][]chart.Point{}
	for _, t := range r.Tries {
		for op, p95 := range t.P95 {
			byOp[op] = append(byOp[op], chart.Point{X: t.Size, Y: p95})
		}
	}
	var names []string
	for op := range byOp {
		names = append(names, op)
	}
	sort.Strings(names)
	c := chart.Chart{Title: "p95 of each operation at each size run", XLabel: "certificates", YLabel: "p95 (ms)", LogY: true, Width: 760, Height: 360}
	for _, op := range names {
		pts := byOp[op]
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		// A size run twice (the confirming run) is drawn at its last figure.
		var uniq []chart.Point
		for _, p := range pts {
			if n := len(uniq); n > 0 && uniq[n-1].X == p.X {
				uniq[n-1] = p
				continue
			}
			uniq = append(uniq, p)
		}
		c.Series = append(c.Series, chart.Series{Name: op, Points: uniq})
	}
	if r.Answer > 0 {
		c.Marks = append(c.Marks, chart.Mark{X: r.Answer, Label: "answer " + SizeText(r.Answer)})
		if !r.AtLeast && r.Interval[1] > r.Answer {
			c.Marks = append(c.Marks, chart.Mark{X: r.Interval[1], Label: "broke " + SizeText(r.Interval[1])})
		}
	}
	return chart.SVG(c)
}

// Index is fleet.html.
func Index(r Result) (string, error) {
	p := indexPage{Title: fmt.Sprintf("Fleet %s at %g-day rotation", r.Fleet.Name, r.Fleet.RotationDays), Verdict: r.Verdict,
		Bracket: r.Plan.From, Plot: template.HTML(SVG(r)), Mix: r.Mix, At: SizeText(r.Answer)}
	if r.Testbed != nil {
		p.Verdict += " on this testbed (" + r.Testbed.String() + ")"
	}
	p.GivesWay = givesWay(r)
	for _, t := range r.Tries {
		run := indexRun{Size: SizeText(t.Size), Role: t.Role, Verdict: t.Detail(), Took: fmt.Sprintf("%.0f s", t.TookS), Dir: t.RunDir}
		if t.RunDir != "" {
			run.Index = path.Join(t.RunDir, "index.html")
		}
		p.Runs = append(p.Runs, run)
	}
	var b bytes.Buffer
	if err := indexTemplate.Execute(&b, p); err != nil {
		return "", err
	}
	return b.String(), nil
}
