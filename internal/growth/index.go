package growth

import (
	"bytes"
	"fmt"
	"html/template"
	"path"

	"certctl-loadtest/internal/chart"
)

// indexPage is what index.html shows: the table of growth.txt, the plot, the statements and a link to
// each size's run.
type indexPage struct {
	Title      string
	Sizes      []string
	Ops        []indexOp
	Plot       template.HTML
	Statements []indexStatement
	Runs       []indexRun
}

type indexOp struct {
	Name     string
	At       []string
	P50, P95 string
}

type indexStatement struct {
	Query string
	Busy  []string
}

type indexRun struct {
	Size, Dir, Index, What string
}

var indexTemplate = template.Must(template.New("index.html").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{{.Title}}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}td:first-child,th:first-child{text-align:left}code{font-size:90%}</style>
</head><body>
<h1>{{.Title}}</h1>
<p>p50 / p95 in ms of each operation at each inventory size, and the growth fitted to them (<code>growth.json</code>, <code>growth.txt</code>).</p>
<table><tr><th>operation</th>{{range .Sizes}}<th>{{.}}</th>{{end}}<th>p50 grows</th><th>p95 grows</th></tr>
{{range .Ops}}<tr><td>{{.Name}}</td>{{range .At}}<td>{{.}}</td>{{end}}<td>{{.P50}}</td><td>{{.P95}}</td></tr>
{{end}}</table>
<figure>{{.Plot}}</figure>
{{if .Statements}}<h2>Busiest statements</h2>
<p>The mean number of backends running each, at each size; the first grew most.</p>
<table><tr><th>statement</th>{{range .Sizes}}<th>{{.}}</th>{{end}}</tr>
{{range .Statements}}<tr><td><code>{{.Query}}</code></td>{{range .Busy}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>{{end}}
<h2>Runs</h2>
<ul>{{range .Runs}}<li>{{.Size}}: {{if .Index}}<a href="{{.Index}}">{{.Dir}}</a>{{else}}{{.Dir}}{{end}} ({{.What}})</li>
{{end}}</ul>
</body></html>
`))

// Index is the sweep's index.html.
func Index(r Result) (string, error) {
	p := indexPage{Title: "How certctl's cost grows with its inventory", Plot: template.HTML(SVG(r))}
	for _, s := range r.Sizes {
		p.Sizes = append(p.Sizes, SizeText(s))
	}
	for _, op := range r.Ops {
		row := indexOp{Name: op.Name, P50: fitText(op.P50), P95: fitText(op.P95)}
		at := map[float64]Point{}
		for _, pt := range op.Points {
			at[pt.Size] = pt
		}
		for _, s := range r.Sizes {
			if pt, ok := at[s]; ok {
				row.At = append(row.At, chart.Num(pt.P50)+" / "+chart.Num(pt.P95))
			} else {
				row.At = append(row.At, "—")
			}
		}
		p.Ops = append(p.Ops, row)
	}
	for _, st := range r.Statements {
		row := indexStatement{Query: oneLine(st.Query, 200)}
		for _, v := range st.Busy {
			row.Busy = append(row.Busy, chart.Num(v))
		}
		p.Statements = append(p.Statements, row)
	}
	for _, st := range r.Steps {
		run := indexRun{Size: SizeText(st.Size), Dir: st.RunDir, What: fmt.Sprintf("exit %d, %.0f s", st.ExitCode, st.TookS)}
		if st.Problem != "" {
			run.What += ": " + st.Problem
		} else if st.RunDir != "" {
			run.Index = path.Join(st.RunDir, "index.html")
		}
		p.Runs = append(p.Runs, run)
	}
	var b bytes.Buffer
	if err := indexTemplate.Execute(&b, p); err != nil {
		return "", err
	}
	return b.String(), nil
}
