package browser_test

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/diagnosis"
	"certctl-loadtest/internal/report"
	"certctl-loadtest/internal/results"
)

// The Diagnosis section of a failed run's page, drawn: every chart with lines has a canvas with them
// on it, all on one time axis with one cursor, and a chart without says why in its place; the page
// still loads nothing and says nothing on its console.
func TestDiagnosisInChromium(t *testing.T) {
	chromium := findChromium(t)
	cases := []struct {
		name string
		// change makes the case's diagnosis of the one every case starts from.
		change func(*diagnosis.Diagnosis)
		// noData are the charts that must say why they are missing, by id.
		noData map[string]string
	}{
		{name: "series", change: func(*diagnosis.Diagnosis) {}},
		{name: "postgres-unavailable", change: func(d *diagnosis.Diagnosis) {
			d.Sources[1] = diagnosis.Source{Name: "postgres", Status: "not available", Reason: "password authentication failed"}
			d.Series.Waits = nil
		}, noData: map[string]string{"waits": "postgres not available: password authentication failed"}},
		{name: "no-series", change: func(d *diagnosis.Diagnosis) { d.Series = nil }, noData: map[string]string{
			"rate": noSeries, "p95": noSeries, "cpu": noSeries, "waits": noSeries,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, _ := runDir(t, "run-failed", nil)
			s, err := results.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			d := browserDiagnosis()
			c.change(d)
			s.Diagnosis = d
			if err := report.Write(dir, s); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "index.html")

			// As a reader's browser opens it: nothing requested, nothing on the console, styled.
			page := open(t, chromium, file)
			page.loadedNothing(t)
			page.drawn(t, color.RGBA{0xff, 0xeb, 0xe9, 0xff})
			diag := section(page.DOM, `<h2 id="diagnosis">`, `<h2>Files of the run</h2>`)
			for _, want := range []string{
				`<li data-kind="limit"><span class="kind kind-limit">limit</span> ` + text(d.Findings[0].Sentence) + `</li>`,
				`<tr data-source="certctl_metrics"><td class="mono">certctl_metrics</td><td class="source-unavailable">not available</td><td>` + text(d.Sources[2].Reason) + `</td></tr>`,
				`<tr data-service="certctl"><td class="mono">certctl</td>`,
				`<table id="waits">`, `<table id="queries">`, `<table id="statements">`,
			} {
				if !strings.Contains(diag, want) {
					t.Errorf("the diagnosis section lacks %s", want)
				}
			}
			for id, why := range c.noData {
				if want := fmt.Sprintf(`<p class="no-data" data-no-data="%s">no data: %s</p>`, id, text(why)); !strings.Contains(diag, want) {
					t.Errorf("the diagnosis section lacks %s", want)
				}
			}
			if len(c.noData) == 4 && (strings.Contains(page.DOM, "<canvas") || strings.Contains(page.DOM, "<script")) {
				t.Errorf("a page with no chart to draw has a canvas or a script")
			}

			// Driven: what each chart drew, and whether the cursor is shared.
			b := startDevtools(t, chromium)
			b.load(file)
			var charts []drawnChart
			b.eval(probeCharts, &charts)
			want := map[string]int{} // lines per chart with lines
			if d.Series != nil {
				for id, lines := range map[string][]diagnosis.Line{"rate": d.Series.Rate, "p95": d.Series.P95MS, "cpu": d.Series.CPU, "waits": d.Series.Waits} {
					if len(lines) > 0 {
						want[id] = len(lines)
					}
				}
			}
			if len(charts) != len(want) {
				t.Errorf("%d charts on the page, want %d (%v)", len(charts), len(want), want)
			}
			for _, ch := range charts {
				switch {
				case !ch.Canvas:
					t.Errorf("chart %s has no canvas", ch.ID)
				case ch.Width == 0 || ch.Height == 0 || ch.CSSWidth < 400 || ch.CSSHeight < 100:
					t.Errorf("chart %s's canvas is %dx%d (%.0fx%.0f CSS px)", ch.ID, ch.Width, ch.Height, ch.CSSWidth, ch.CSSHeight)
				case ch.Coloured < 200:
					// Axes and grid are grey; the lines are the palette's colours.
					t.Errorf("chart %s drew %d coloured pixels (of %d drawn): its lines are not on it", ch.ID, ch.Coloured, ch.Inked)
				}
				if ch.Legend != want[ch.ID] {
					t.Errorf("chart %s's legend names %d lines, want %d", ch.ID, ch.Legend, want[ch.ID])
				}
			}
			if len(charts) > 1 {
				// One time axis: every plot area spans the same x.
				for _, ch := range charts[1:] {
					if math.Abs(ch.PlotLeft-charts[0].PlotLeft) > 0.5 || math.Abs(ch.PlotWidth-charts[0].PlotWidth) > 0.5 {
						t.Errorf("chart %s's plot spans x %.1f+%.1f, %s's %.1f+%.1f: not one time axis", ch.ID, ch.PlotLeft, ch.PlotWidth, charts[0].ID, charts[0].PlotLeft, charts[0].PlotWidth)
					}
				}
				// One cursor: the mouse over the first chart puts a cursor on every chart, at the same x.
				var at struct{ X, Y float64 }
				b.eval(`(() => { const o = document.querySelector("[data-chart] .u-over"); o.scrollIntoView({block: "center"});
					const r = o.getBoundingClientRect(); return {x: r.left + r.width * 0.6, y: r.top + r.height / 2}; })()`, &at)
				b.mouse(at.X, at.Y)
				var cursors []struct {
					ID   string
					On   bool
					Left float64
				}
				b.eval(afterPaint+`.then(() => [...document.querySelectorAll("[data-chart]")].map(el => {
					const c = el.querySelector(".u-cursor-x");
					return {id: el.dataset.chart, on: !!c && !c.classList.contains("u-off"), left: c ? c.getBoundingClientRect().left : -1};
				}))`, &cursors)
				for _, cur := range cursors {
					if !cur.On || math.Abs(cur.Left-cursors[0].Left) > 1 {
						t.Errorf("cursors %+v: not one cursor at one time on every chart", cursors)
						break
					}
				}
			}
			var noData []string
			b.eval(`[...document.querySelectorAll(".no-data")].map(p => p.dataset.noData)`, &noData)
			if len(noData) != len(c.noData) {
				t.Errorf("charts saying no data: %q, want those of %v", noData, c.noData)
			}
			if got := b.complaints(); len(got) > 0 {
				t.Errorf("the page complained:\n%s", strings.Join(got, "\n"))
			}
			if got := b.requested(); len(got) > 0 {
				t.Errorf("the page requested %q", got)
			}

			// The section as a reader sees it, and the whole page, kept with the window's screenshot.
			var area struct{ Top, Bottom, Width, Page float64 }
			b.eval(`(() => { window.scrollTo(0, 0); const h = document.getElementById("diagnosis"); let end = h.nextElementSibling;
				while (end && end.tagName !== "H2" && end.tagName !== "DETAILS") end = end.nextElementSibling;
				const doc = document.documentElement;
				return {top: h.getBoundingClientRect().top, bottom: end ? end.getBoundingClientRect().top : doc.scrollHeight, width: doc.clientWidth, page: doc.scrollHeight}; })()`, &area)
			shot := b.screenshot(0, area.Top-12, area.Width, area.Bottom-area.Top+12)
			img, err := png.Decode(bytes.NewReader(shot))
			if err != nil {
				t.Fatalf("the diagnosis section's screenshot: %v", err)
			}
			if colours(img) < 8 {
				t.Errorf("the diagnosis section's screenshot is all but blank")
			}
			keep(t, "diagnosis", shot)
			keep(t, "page", b.screenshot(0, 0, area.Width, area.Page))
		})
	}
}

// The checks above see what they look for: a blank canvas, a script that throws or writes an error,
// a script the page's policy refuses, and a request of the network.
func TestDiagnosisChecksSeeFailures(t *testing.T) {
	chromium := findChromium(t)
	dir := t.TempDir()
	blank := filepath.Join(dir, "blank.html")
	os.WriteFile(blank, []byte(`<!DOCTYPE html><html><body><div data-chart="x"><canvas width="600" height="200"></canvas></div>`+
		`<img src="http://example.invalid/b.png"><script>console.error("said so")</script><script>throw new Error("boom")</script></body></html>`), 0o644)
	refused := filepath.Join(dir, "refused.html")
	os.WriteFile(refused, []byte(`<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='"></head>`+
		`<body><script>document.title = "ran"</script></body></html>`), 0o644)

	b := startDevtools(t, chromium)
	b.load(blank)
	var charts []drawnChart
	b.eval(probeCharts, &charts)
	if len(charts) != 1 || !charts[0].Canvas || charts[0].Inked != 0 || charts[0].Coloured != 0 {
		t.Errorf("a blank canvas reads as %+v", charts)
	}
	got := strings.Join(b.complaints(), "\n")
	for _, want := range []string{"said so", "boom"} {
		if !strings.Contains(got, want) {
			t.Errorf("the page's %q went unseen; seen:\n%s", want, got)
		}
	}
	if r := b.requested(); len(r) != 1 || r[0] != "http://example.invalid/b.png" {
		t.Errorf("requests seen: %q", r)
	}

	b.load(refused)
	var title string
	b.eval(`document.title`, &title)
	if title == "ran" || !strings.Contains(strings.Join(b.complaints(), "\n"), "Content Security Policy") {
		t.Errorf("a script the policy refuses: title %q, complaints %q", title, b.complaints())
	}
}

// afterPaint is a promise of the page's next frame but one: what a script queued is drawn by then.
const afterPaint = `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))`

// probeCharts reads back every chart's canvas: its size, how many pixels are drawn at all, and how
// many in a colour (not grey, not black: the lines, not the axes and grid).
const probeCharts = afterPaint + `.then(() => [...document.querySelectorAll("[data-chart]")].map(el => {
	const c = el.querySelector("canvas"), over = el.querySelector(".u-over");
	const out = {id: el.dataset.chart, canvas: !!c, legend: el.querySelectorAll(".u-legend .u-series").length - 1};
	if (over) { const r = over.getBoundingClientRect(); out.plotLeft = r.left; out.plotWidth = r.width; }
	if (!c) return out;
	const r = c.getBoundingClientRect();
	Object.assign(out, {width: c.width, height: c.height, cssWidth: r.width, cssHeight: r.height, inked: 0, coloured: 0});
	if (c.width && c.height) {
		const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		for (let i = 0; i < px.length; i += 4) {
			if (px[i + 3] === 0) continue;
			out.inked++;
			if (px[i + 3] > 128 && Math.max(px[i], px[i + 1], px[i + 2]) - Math.min(px[i], px[i + 1], px[i + 2]) > 60) out.coloured++;
		}
	}
	return out;
}))`

type drawnChart struct {
	ID                  string
	Canvas              bool
	Width, Height       int
	CSSWidth, CSSHeight float64
	Inked, Coloured     int
	Legend              int
	PlotLeft, PlotWidth float64
}

const noSeries = "the diagnosis holds no time series (summary.json has no diagnosis.series)"

// keep saves a screenshot in SCREENSHOT_DIR, beside the window's (open), when it is set.
func keep(t *testing.T, what string, png []byte) {
	t.Helper()
	dir := os.Getenv("SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	name := strings.ReplaceAll(t.Name(), "/", "-") + "-" + what + ".png"
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Errorf("keeping the screenshot: %v", err)
	}
}

// browserDiagnosis is the diagnosis of a run whose list_certificates fell behind two minutes in:
// certctl's CPU hits the host's ceiling, locks pile up in the database, p95 climbs. Ten minutes of
// five-second buckets, with a gap where no sample came in.
func browserDiagnosis() *diagnosis.Diagnosis {
	const n, step, knee = 120, 5.0, 24 // the knee at 120 s
	from := time.Date(2026, 11, 22, 15, 0, 30, 0, time.UTC)
	s := &diagnosis.Series{StepS: step}
	line := func(name string, f func(i int) float64) diagnosis.Line {
		l := diagnosis.Line{Name: name, Values: make([]*float64, n)}
		for i := range l.Values {
			if i == 60 || i == 61 {
				continue // nothing sampled
			}
			v := f(i)
			l.Values[i] = &v
		}
		return l
	}
	after := func(i int) float64 { return math.Max(0, float64(i-knee)) }
	wobble := func(i int) float64 { return math.Sin(float64(i) * 0.7) }
	for i := 0; i < n; i++ {
		s.T = append(s.T, float64(i)*step)
	}
	s.Rate = []diagnosis.Line{
		line("list_certificates", func(i int) float64 { return 20 - math.Min(8, after(i)*0.2) + 0.3*wobble(i) }),
		line("issuance_acceptance", func(i int) float64 { return 2 + 0.1*wobble(i) }),
	}
	s.P95MS = []diagnosis.Line{
		line("list_certificates", func(i int) float64 { return 45 + after(i)*9 + 3*wobble(i) }),
		line("issuance_acceptance", func(i int) float64 { return 120 + after(i)*2 + 5*wobble(i) }),
	}
	s.CPU = []diagnosis.Line{
		line("certctl", func(i int) float64 { return math.Min(255, 120+float64(i)*6) + 4*wobble(i) }),
		line("postgres", func(i int) float64 { return 60 + math.Min(80, after(i)*1.5) + 3*wobble(i) }),
		line("k6-list_certificates", func(i int) float64 { return 5 + wobble(i) }),
	}
	s.Waits = []diagnosis.Line{
		line("Lock", func(i int) float64 { return math.Min(1.9, 0.05+after(i)*0.04) }),
		line("LWLock", func(i int) float64 { return 0.2 + 0.05*wobble(i) }),
		line("IO", func(i int) float64 { return 0.1 }),
		line("CPU", func(i int) float64 { return 0.5 + 0.1*wobble(i) }),
	}
	return &diagnosis.Diagnosis{
		Window: diagnosis.Window{From: from, To: from.Add(10 * time.Minute), Basis: "failing scenarios: list_certificates"},
		Sources: []diagnosis.Source{
			{Name: "containers", Status: "ok", Samples: 300},
			{Name: "postgres", Status: "ok", Samples: 2400},
			{Name: "certctl_metrics", Status: "not available", Reason: "GET /metrics answered 404 <not found>"},
		},
		Findings: []diagnosis.Finding{
			{Rule: "host-cpu-saturated", Kind: "limit", Sentence: "the machine's 4 CPUs were 91 % busy on average: the load test is CPU-bound here; certctl, the busiest service under test, used 238 % of one CPU (saturation began 2m00s into the load, certctl its largest user)"},
			{Rule: "db-lock-contention", Kind: "contention", Sentence: "postgres at 131 % CPU; 34 % of sampled active backends waiting on locks (Lock:tuple 30 %), 81 % of those in `UPDATE managed_certificates SET status = $1 WHERE id = $2`: concurrent calls queue for the same rows"},
			{Rule: "source-unavailable", Kind: "unavailable", Sentence: "certctl_metrics: not available: GET /metrics answered 404 <not found>"},
		},
		HostCPUs: 4,
		Containers: []diagnosis.ContainerUse{
			{Service: "certctl", CPUMeanPct: 238, CPUP95Pct: 254, CPUMaxPct: 259, MemMaxBytes: 190 << 20, Samples: 300},
			{Service: "postgres", CPUMeanPct: 131, CPUP95Pct: 140, CPUMaxPct: 143, MemMaxBytes: 420 << 20, Samples: 300},
		},
		ActiveBackends: 2.7, ActivitySample: 2400,
		Waits: []diagnosis.Share{{Name: "Lock:tuple", Share: 0.3, Samples: 720}, {Name: "CPU", Share: 0.2, Samples: 480}},
		Queries: []diagnosis.QueryShare{{Query: "UPDATE managed_certificates SET status = $1 WHERE id = $2", Share: 0.4, Samples: 960,
			Waits: []diagnosis.Share{{Name: "Lock:tuple", Share: 0.28, Samples: 670}}}},
		Statements: []diagnosis.Statement{{Query: "UPDATE managed_certificates SET status = $1 WHERE id = $2", Calls: 54000, TotalMS: 81000, MeanMS: 1.5, Rows: 54000, TimeShare: 0.61}},
		Series:     s,
	}
}
