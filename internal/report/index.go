package report

import (
	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/results"
	_ "embed"
	"fmt"
	"html/template"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

//go:embed index.html.tmpl
var indexSource string

var indexTemplate = template.Must(template.New("index.html").Parse(indexSource))

// runFiles are the files of the run as a whole that index.html links, when the run has them.
var runFiles = []struct{ path, what string }{
	{"summary.txt", "the summary as the run printed it"},
	{"summary.json", "the summary as data"},
	{"run.json", "what ran, where, with what, and how each k6 process ended"},
	{"logs/stack.log", "the stack's container logs"},
	{"logs/up.log", "docker compose up"},
	// A soak's reading of the run (loadtest soak, docs/growth.md#soak), written after the run.
	{"soak.txt", "the soak: p95 drift per window, memory, tables and autovacuum"},
	{"soak.json", "the soak as data"},
	{"soak-p95.svg", "the soak's p95 per window"},
	{"soak-memory.svg", "the soak's memory per window"},
}

type indexPage struct {
	Title, Headline, Verdict string
	Passed                   bool
	Exit                     string
	Problems, About          []string
	Columns                  []string
	Span                     int // columns of the scenario table
	Rows                     []indexRow
	ConnectorColumns         []string
	Connector                []connectorIndexRow
	DeployColumns            []string
	DeployStages             string
	Deploy                   []deployIndexRow
	PKI                      []deployIndexRow // Target: the operation
	PKIColumns               []string
	PKINote                  string
	Findings                 []string
	Totals                   []indexTotals
	Unavailable              []results.Unavailable
	Segments                 []segmentIndexRow
	Failed                   []failedThreshold
	FailedChecks             []string
	Breaches                 *defects.Verdict
	Thresholds               []indexThresholds
	Files                    []indexLink
	Diagnosis                *indexDiagnosis
	// What draws the diagnosis charts, all inline: none of it when there is no chart to draw.
	Series   *chartData
	ChartCSS template.CSS
	Scripts  []template.JS
	// CSP is the content attribute of the page's Content-Security-Policy: it names each script's hash.
	CSP template.HTMLAttr
}

type indexRow struct {
	Tier, Name, Status, Problem string
	Figures                     []string
	Links                       []indexLink
}

type indexLink struct{ Href, Label, Title string }

type connectorIndexRow struct {
	Target, Status string
	Figures        []string
}

type deployIndexRow struct {
	Scenario, Target, Status string
	Figures                  []string
}

type indexTotals struct{ Scenario, Line, Note string }

// segmentIndexRow is one k6 process of a split load, with the files it left beside the merged ones.
type segmentIndexRow struct {
	Scenario, ID, Segment, Status string
	Figures                       []string
	Links                         []indexLink
}

type failedThreshold struct{ Scenario, Metric, Limit, Measured string }

type indexThresholds struct {
	Scenario   string
	Unjudged   bool
	Thresholds []judgedThreshold
}

// Index renders index.html: the page a reader of a downloaded run opens first. It links the files of
// the run that are in files (the run directory's, relative and slash-separated) and no other: a run cut
// short lacks some, and a link that leads nowhere would read as a file lost since. The page carries its
// own style and scripts and loads nothing, so it reads the same from file:// and from an unpacked
// artifact.
func Index(s results.Summary, files []string) (string, error) {
	have := make(map[string]bool, len(files))
	for _, f := range files {
		have[f] = true
	}
	link := func(rel, label, title string) []indexLink {
		rel = path.Clean(filepath.ToSlash(rel))
		if !have[rel] {
			return nil
		}
		return []indexLink{{Href: href(rel), Label: label, Title: title}}
	}

	verdict := s.Verdict()
	p := indexPage{
		Title:    fmt.Sprintf("certctl-loadtest %s: %s", s.RunID, verdict),
		Headline: fmt.Sprintf("certctl-loadtest run %s: %s (exit %d)", s.RunID, verdict, s.ExitCode),
		Verdict:  verdict, Passed: s.Passed,
		Exit:     fmt.Sprintf("Exit %d: %s.", s.ExitCode, exitMeaning(strconv.Itoa(s.ExitCode))),
		Problems: append(nonEmpty(s.Run.Error), s.Run.Faults...),
		About:    aboutLines(s), Columns: figureColumns, Span: len(figureColumns) + 4,
		ConnectorColumns: connectorColumns, FailedChecks: s.FailedChecks, Breaches: s.Breaches,
		DeployColumns: deployColumns, DeployStages: deployStages,
	}

	ran := map[string]results.ScenarioRun{}
	for _, sr := range s.Run.Scenarios {
		ran[sr.Name] = sr
	}
	for _, sc := range s.Scenarios {
		row := indexRow{Tier: sc.Tier, Name: sc.Name, Status: sc.Status, Problem: sc.Problem, Figures: figures(sc)}
		sr := ran[sc.Name]
		logPath := sr.Log
		if logPath == "" {
			logPath = "logs/" + sc.Name + ".log"
		}
		rawPath, rawLabel, rawTitle := "raw/"+sc.Name+".json.gz", "raw samples", "k6's samples (gzipped JSON lines)"
		if sr.Raw != nil {
			rawPath = sr.Raw.Path
			if !sr.Raw.Complete {
				rawLabel += " (cut off)"
				rawTitle += ", cut off where k6 stopped"
			}
		}
		row.Links = append(row.Links, link("dashboard/"+sc.Name+".html", "dashboard", "k6's web dashboard report")...)
		row.Links = append(row.Links, link("scenarios/"+sc.Name+".json", "record", "the scenario's record, as k6 wrote it")...)
		row.Links = append(row.Links, link(logPath, "log", "k6's log")...)
		row.Links = append(row.Links, link(rawPath, rawLabel, rawTitle)...)
		p.Rows = append(p.Rows, row)

		if sc.Record != nil && len(sc.Record.Segments) > 1 {
			for _, g := range sc.Record.Segments {
				status := "passed"
				if !g.ThresholdsOK || (g.ExitCode != nil && *g.ExitCode != 0) {
					status = "failed"
				}
				files := results.SegmentsDir + "/" + sc.Name + "@" + g.ID
				row := segmentIndexRow{Scenario: sc.Name, ID: g.ID, Segment: g.Segment, Status: status,
					Figures: []string{fmt.Sprintf("%.0f", g.Iterations), fmt.Sprintf("%.0f", g.Requests), fmt.Sprintf("%.0f", g.Dropped)}}
				row.Links = append(row.Links, link("dashboard/"+files+".html", "dashboard", "this process's web dashboard report")...)
				row.Links = append(row.Links, link("scenarios/"+files+".json", "record", "this process's record, as its k6 wrote it")...)
				row.Links = append(row.Links, link("raw/"+files+".json.gz", "raw samples", "this process's samples (gzipped JSON lines)")...)
				p.Segments = append(p.Segments, row)
			}
		}
		if line, note := totals(sc); line != "" {
			p.Totals = append(p.Totals, indexTotals{sc.Name, line, note})
		}
		if sc.Record == nil || len(sc.Record.Thresholds) == 0 {
			continue
		}
		ts, unjudged := judgedThresholds(sc.Record)
		p.Thresholds = append(p.Thresholds, indexThresholds{sc.Name, unjudged, ts})
		// Every breach Assemble counts against the run, judged or not: the verdict rests on them.
		for _, t := range ts {
			if !t.OK {
				m := t.Measured()
				if m == "" {
					m = "no value recorded"
				}
				p.Failed = append(p.Failed, failedThreshold{sc.Name, t.Metric, t.Expression, m})
			}
		}
	}
	for _, t := range sortedKeys(s.ConnectorTier) {
		c := s.ConnectorTier[t]
		p.Connector = append(p.Connector, connectorIndexRow{t, c.Status, connectorFigures(c)})
	}
	for _, d := range s.DeployTier {
		p.Deploy = append(p.Deploy, deployIndexRow{d.Scenario, d.TargetType, d.Status, deployFigures(d)})
	}
	for _, r := range s.PKITier {
		p.PKI = append(p.PKI, deployIndexRow{r.Scenario, r.Operation, r.Status, pkiFigures(r)})
	}
	p.PKIColumns, p.PKINote, p.Findings = pkiColumns, pkiNote, s.Findings
	p.Unavailable = s.Run.Unavailable
	for _, f := range runFiles {
		p.Files = append(p.Files, link(f.path, f.path, f.what)...)
	}
	p.Diagnosis, p.Series = indexDiagnosisSection(s.Diagnosis)
	if p.Series != nil {
		p.ChartCSS = template.CSS(uplotCSS)
	}
	p.Scripts = indexScripts(p.Series)
	p.CSP = contentSecurityPolicy(p.Scripts)

	var b strings.Builder
	if err := indexTemplate.Execute(&b, p); err != nil {
		return "", fmt.Errorf("index.html: %w", err)
	}
	return b.String(), nil
}

// href is a relative link to a file of the run, each segment escaped: a name with a space, "#" or "?"
// must still name the file, and one with a colon must not read as a URL scheme.
func href(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
	}
	return strings.Join(segs, "/")
}
