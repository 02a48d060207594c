package report

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/diagnosis"
	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/results"
)

// scenarioFiles are the files k6 leaves for one scenario.
func scenarioFiles(name string) []string {
	return []string{"dashboard/" + name + ".html", "scenarios/" + name + ".json", "logs/" + name + ".log", "raw/" + name + ".json.gz"}
}

// failedRunFiles is a run cut short in places: list_certificates left everything, issuance_acceptance
// no raw samples, ghost (no record) only its log; the stack's logs/up.log is missing.
var failedRunFiles = []string{
	"dashboard/issuance_acceptance.html", "dashboard/list_certificates.html",
	"logs/down.log", "logs/ghost.log", "logs/issuance_acceptance.log", "logs/list_certificates.log", "logs/stack.log",
	"raw/list_certificates.json.gz", "run.json",
	"scenarios/issuance_acceptance.json", "scenarios/list_certificates.json",
	"summary.json", "summary.txt",
}

func loadFailedRun(t *testing.T) results.Summary {
	t.Helper()
	s, err := results.Load("testdata/run-failed")
	if err != nil {
		t.Fatal(err)
	}
	// list_certificates' k6 was stopped mid-write: its raw samples end early.
	for i, sr := range s.Run.Scenarios {
		if sr.Name == "list_certificates" {
			s.Run.Scenarios[i].Raw = &results.RawFile{Path: "raw/list_certificates.json.gz", Bytes: 81234}
		}
	}
	return s
}

func render(t *testing.T, s results.Summary, files []string) string {
	t.Helper()
	page, err := Index(s, files)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// index.html of a passing and of a failing run, one golden file each (testdata/index-<case>.html).
func TestGoldenIndex(t *testing.T) {
	passed, err := results.Load("testdata/run-default")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, sc := range passed.Scenarios {
		all = append(all, scenarioFiles(sc.Name)...)
	}
	all = append(all, "logs/stack.log", "logs/up.log", "run.json", "summary.json", "summary.txt")
	golden.Check(t, "index-passed.html", render(t, passed, all))
	golden.Check(t, "index-failed.html", render(t, loadFailedRun(t), failedRunFiles))

	diagnosed := loadFailedRun(t)
	diagnosed.Diagnosis = testDiagnosis()
	golden.Check(t, "index-diagnosis.html", withoutUPlot(t, render(t, diagnosed, failedRunFiles)))
	// No time series, and the database's collector could not connect: every chart says why it is missing.
	diagnosed.Diagnosis = testDiagnosis()
	diagnosed.Diagnosis.Series = nil
	diagnosed.Diagnosis.Sources[1] = diagnosis.Source{Name: "postgres", Status: "not available", Reason: "connection refused"}
	golden.Check(t, "index-diagnosis-no-series.html", render(t, diagnosed, failedRunFiles))
}

// withoutUPlot is the page with the vendored uPlot's 50 kB of minified script and its stylesheet each
// replaced by a line that names them, so that a golden file reads and diffs as the page's own. The
// policy still carries the real script's hash; TestIndexPolicyHashesItsScripts checks the real page.
func withoutUPlot(t *testing.T, page string) string {
	t.Helper()
	for _, a := range []struct{ text, name string }{{uplotJS, "uPlot.iife.min.js"}, {uplotCSS, "uPlot.min.css"}} {
		if strings.Count(page, a.text) != 1 {
			t.Fatalf("the page does not inline %s once", a.name)
		}
		page = strings.Replace(page, a.text, fmt.Sprintf("/* uPlot %s: assets/uplot/%s, %d bytes, inlined whole */", uplotVersion, a.name, len(a.text)), 1)
	}
	return page
}

func f64(v float64) *float64 { return &v }

func share(name string, of float64, samples int) diagnosis.Share {
	return diagnosis.Share{Name: name, Share: of, Samples: samples}
}

// testDiagnosis has a finding of each kind, a collector that could not collect, more waits, queries and
// statements than the page shows, and a short series with a gap (nothing was sampled at 10 s).
func testDiagnosis() *diagnosis.Diagnosis {
	from := time.Date(2026, 11, 22, 15, 0, 30, 0, time.UTC)
	long := "SELECT c.id, c.common_name, c.status, c.not_after FROM managed_certificates c JOIN issuers i ON i.id = c.issuer_id WHERE c.status = $1 AND c.not_after < $2 " +
		strings.Repeat("AND c.owner_id <> $3 ", 12) + "ORDER BY c.not_after LIMIT $4"
	waits := []diagnosis.Share{share("Lock:tuple", 0.31, 620), share("CPU", 0.24, 480), share("LWLock:WALWrite", 0.12, 240), share("IO:DataFileRead", 0.09, 180),
		share("IO:WALSync", 0.08, 160), share("Lock:transactionid", 0.06, 120), share("LWLock:BufferMapping", 0.04, 80), share("Client:ClientRead", 0.03, 60),
		share("IPC:ProcArrayGroupUpdate", 0.02, 40), share("Timeout:PgSleep", 0.01, 20)}
	return &diagnosis.Diagnosis{
		Window: diagnosis.Window{From: from, To: from.Add(5 * time.Minute), Basis: "failing scenarios: list_certificates"},
		Sources: []diagnosis.Source{
			{Name: "containers", Status: "ok", Samples: 150},
			{Name: "postgres", Status: "ok", Samples: 1200},
			{Name: "certctl_metrics", Status: "not available", Reason: "GET http://certctl:8443/metrics: 404 Not Found"},
		},
		Findings: []diagnosis.Finding{
			{Rule: "host-cpu-saturated", Kind: "limit", Sentence: "the machine's 4 CPUs were 93 % busy on average: the load test is CPU-bound here"},
			{Rule: "db-lock-contention", Kind: "contention", Sentence: "31 % of sampled active backends waiting on locks (Lock:tuple 31 %), 80 % of those in `UPDATE managed_certificates SET status = $1 WHERE id = $2`: concurrent calls queue for the same rows"},
			{Rule: "top-statement", Kind: "info", Sentence: "the statement that took most of the database's time: `SELECT count(*) FROM certificates WHERE a < b`, 44 % of it"},
			{Rule: "source-unavailable", Kind: "unavailable", Sentence: "certctl_metrics: not available: GET http://certctl:8443/metrics: 404 Not Found"},
		},
		HostCPUs: 4,
		Containers: []diagnosis.ContainerUse{
			{Service: "certctl", CPUMeanPct: 181.4, CPUP95Pct: 236.2, CPUMaxPct: 251.9, MemMaxBytes: 187 << 20, Samples: 150},
			{Service: "postgres", CPUMeanPct: 96.7, CPUP95Pct: 131, CPUMaxPct: 140.2, MemMaxBytes: 412 << 20, Samples: 150},
			{Service: "k6-list_certificates", CPUMeanPct: 4.26, CPUP95Pct: 6.1, CPUMaxPct: 9.94, MemMaxBytes: 63 << 20, Samples: 150},
		},
		ActiveBackends: 2.31, ActivitySample: 1200,
		Waits: waits,
		Queries: []diagnosis.QueryShare{
			{Query: "UPDATE managed_certificates SET status = $1 WHERE id = $2", Share: 0.38, Samples: 760, Waits: []diagnosis.Share{share("CPU", 0.05, 100), share("Lock:tuple", 0.25, 500)}},
			{Query: long, Share: 0.22, Samples: 440, Waits: []diagnosis.Share{share("IO:DataFileRead", 0.08, 160)}},
			{Query: "COMMIT", Share: 0.15, Samples: 300, Waits: []diagnosis.Share{share("LWLock:WALWrite", 0.1, 200), share("IO:WALSync", 0.05, 100)}},
			{Query: "SELECT count(*) FROM certificates WHERE a < b", Share: 0.1, Samples: 200},
			{Query: "INSERT INTO audit_events (id, kind) VALUES ($1, $2)", Share: 0.06, Samples: 120},
			{Query: "SELECT 1", Share: 0.01, Samples: 20},
		},
		Statements: []diagnosis.Statement{
			{Query: "SELECT count(*) FROM certificates WHERE a < b", Calls: 9000, TotalMS: 41250.5, MeanMS: 4.583, Rows: 9000, TimeShare: 0.44},
			{Query: "UPDATE managed_certificates SET status = $1 WHERE id = $2", Calls: 27000, TotalMS: 30120, MeanMS: 1.116, Rows: 27000, TimeShare: 0.32},
			{Query: long, Calls: 900, TotalMS: 15040, MeanMS: 16.71, Rows: 45000, TimeShare: 0.16},
		},
		Series: &diagnosis.Series{
			StepS: 5, T: []float64{0, 5, 10, 15, 20},
			Rate: []diagnosis.Line{
				{Name: "list_certificates", Values: []*float64{f64(19.8), f64(20.2), nil, f64(14.1), f64(12)}},
				{Name: "issuance_acceptance", Values: []*float64{f64(2), f64(2), nil, f64(2), f64(1.8)}},
			},
			P95MS: []diagnosis.Line{{Name: "list_certificates", Values: []*float64{f64(41.2), f64(44), nil, f64(612), f64(910)}}},
			CPU: []diagnosis.Line{
				{Name: "certctl", Values: []*float64{f64(120), f64(150), nil, f64(240), f64(250)}},
				{Name: "postgres", Values: []*float64{f64(60), f64(70), nil, f64(130), f64(140)}},
			},
			Waits: []diagnosis.Line{
				{Name: "Lock", Values: []*float64{f64(0.1), f64(0.2), nil, f64(1.4), f64(1.9)}},
				{Name: "CPU", Values: []*float64{f64(0.4), f64(0.5), nil, f64(0.6), f64(0.6)}},
			},
		},
	}
}

var hrefRE = regexp.MustCompile(`href="([^"]*)"`)

func hrefs(page string) []string {
	var out []string
	for _, m := range hrefRE.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// Every file the page links is one the run directory holds, and every file it should link that the
// directory holds is linked: down.log is no file the page names.
func TestIndexLinksWhatExists(t *testing.T) {
	got := hrefs(render(t, loadFailedRun(t), failedRunFiles))
	want := []string{
		"logs/ghost.log", // ghost wrote no record: its log is all there is

		"dashboard/issuance_acceptance.html", "scenarios/issuance_acceptance.json", "logs/issuance_acceptance.log",
		"dashboard/list_certificates.html", "scenarios/list_certificates.json", "logs/list_certificates.log", "raw/list_certificates.json.gz",
		"summary.txt", "summary.json", "run.json", "logs/stack.log"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links\n got %q\nwant %q", got, want)
	}
	if got := hrefs(render(t, loadFailedRun(t), nil)); len(got) != 0 {
		t.Errorf("an empty directory got links %q", got)
	}
}

// The page loads nothing: no script, stylesheet, image, font or frame, from anywhere. A page with
// charts carries scripts, inline: less them, it is held to the same; they call nothing that loads.
func TestIndexLoadsNothing(t *testing.T) {
	diagnosed := loadFailedRun(t)
	diagnosed.Diagnosis = testDiagnosis()
	for name, page := range map[string]string{
		"no charts": render(t, loadFailedRun(t), failedRunFiles),
		"charts":    render(t, diagnosed, failedRunFiles),
	} {
		if name == "charts" {
			for _, js := range []string{uplotJS, chartsJS} {
				page = strings.Replace(page, "<script>"+js+"</script>", "", 1)
			}
			page = regexp.MustCompile(`(?s)<script type="application/json" id="lt-series">.*?</script>`).ReplaceAllString(page, "")
			// The summary's findings and sources quote the collector's address as text.
			page = strings.ReplaceAll(page, "http://certctl:8443/metrics", "the metrics endpoint")
		}
		for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "@import", "url(", "src=", "http:", "https:", "//"} {
			if strings.Contains(page, bad) {
				t.Errorf("%s: index.html holds %q", name, bad)
			}
		}
		for _, h := range hrefs(page) {
			if strings.Contains(h, ":") || strings.HasPrefix(h, "/") {
				t.Errorf("%s: link %q is not relative to the run directory", name, h)
			}
		}
	}
	for name, js := range map[string]string{"uPlot": uplotJS, "charts.js": chartsJS} {
		for _, bad := range []string{"fetch(", "XMLHttpRequest", "sendBeacon", "WebSocket", "EventSource", "import(", "importScripts", "Worker(", ".src=", ".src =", "innerHTML", "eval(", "Function("} {
			if strings.Contains(js, bad) {
				t.Errorf("%s holds %q", name, bad)
			}
		}
	}
}

var (
	cspRE    = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`)
	scriptRE = regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`)
)

// The page's policy admits its inline scripts by their SHA-256 and nothing else: one hash per script,
// each the hash of the script's text exactly as the page carries it, no other source of script, and
// the rest of the policy as strict as the page was before it had scripts.
func TestIndexPolicyHashesItsScripts(t *testing.T) {
	s := loadFailedRun(t)
	s.Diagnosis = testDiagnosis()
	page := render(t, s, failedRunFiles)
	m := cspRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no Content-Security-Policy")
	}
	directives := map[string][]string{}
	for _, d := range strings.Split(m[1], ";") {
		f := strings.Fields(d)
		directives[f[0]] = f[1:]
	}
	want := map[string]bool{}
	var scripts int
	for _, sm := range scriptRE.FindAllStringSubmatch(page, -1) {
		if strings.TrimSpace(sm[1]) == `type="application/json" id="lt-series"` {
			continue // data, which the browser does not run
		}
		if sm[1] != "" {
			t.Errorf("a script with attributes %q", sm[1])
		}
		scripts++
		sum := sha256.Sum256([]byte(sm[2]))
		want["'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'"] = true
	}
	if scripts != 2 || !strings.Contains(page, "<script>"+uplotJS+"</script>") || !strings.Contains(page, "<script>"+chartsJS+"</script>") {
		t.Errorf("the page does not carry uPlot and charts.js whole, each in a script of its own (%d scripts)", scripts)
	}
	got := map[string]bool{}
	for _, src := range directives["script-src"] {
		got[src] = true
	}
	if !reflect.DeepEqual(got, want) || len(directives["script-src"]) != scripts {
		t.Errorf("script-src %q, want the scripts' hashes %v", directives["script-src"], want)
	}
	delete(directives, "script-src")
	if want := map[string][]string{"default-src": {"'none'"}, "style-src": {"'unsafe-inline'"}}; !reflect.DeepEqual(directives, want) {
		t.Errorf("the rest of the policy is %q, want %q", directives, want)
	}

	// No chart to draw: no script, and the policy allows none.
	s.Diagnosis.Series = nil
	page = render(t, s, failedRunFiles)
	if strings.Contains(page, "<script") {
		t.Errorf("a page without charts carries a script")
	}
	if m := cspRE.FindStringSubmatch(page); m == nil || m[1] != "default-src 'none'; style-src 'unsafe-inline'" {
		t.Errorf("the policy of a page without scripts: %q", m)
	}
}

// What the page inlines cannot end its element early: the browser would read the rest as markup.
func TestIndexInlinedAssetsStayInTheirElements(t *testing.T) {
	for name, a := range map[string]struct{ text, end string }{"uPlot": {uplotJS, "</script"}, "charts.js": {chartsJS, "</script"}, "uPlot's style": {uplotCSS, "</style"}} {
		if low := strings.ToLower(a.text); strings.Contains(low, a.end) || strings.Contains(low, "<!--") {
			t.Errorf("%s holds %s or <!--", name, a.end)
		}
	}
}

// The vendored uPlot is the one its README names, file for file, and the one the goldens name.
func TestIndexVendoredUPlot(t *testing.T) {
	if banner := "/*! https://github.com/leeoniya/uPlot (v" + uplotVersion + ") */"; !strings.HasPrefix(uplotJS, banner) {
		t.Errorf("assets/uplot/uPlot.iife.min.js does not begin %s", banner)
	}
	readme, err := os.ReadFile("assets/uplot/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "uPlot](https://github.com/leeoniya/uPlot) "+uplotVersion) {
		t.Errorf("assets/uplot/README.md does not name uPlot %s", uplotVersion)
	}
	for _, f := range []string{"uPlot.iife.min.js", "uPlot.min.css", "LICENSE"} {
		b, err := os.ReadFile(filepath.Join("assets/uplot", f))
		if err != nil {
			t.Fatal(err)
		}
		if sum := fmt.Sprintf("| %s | package/", f); !strings.Contains(string(readme), sum) {
			t.Errorf("assets/uplot/README.md has no row for %s", f)
		} else if sum := fmt.Sprintf("%x", sha256.Sum256(b)); !strings.Contains(string(readme), sum) {
			t.Errorf("assets/uplot/README.md does not carry %s's sha256 %s", f, sum)
		}
	}
}

// Names and sentences from the run reach the page as text: in the markup escaped, in the charts' data
// as JSON that cannot end its script element, and they read back as they were.
func TestIndexDiagnosisEscapes(t *testing.T) {
	s := loadFailedRun(t)
	d := testDiagnosis()
	odd := `</script><script>alert("x & y")</script><!--`
	d.Series.Rate[0].Name = odd
	d.Findings[0].Sentence = "a <b>bold</b> `<i>quoted</i>` claim"
	d.Sources[2].Reason = "<img src=x>"
	s.Diagnosis = d
	page := render(t, s, failedRunFiles)
	for _, want := range []string{
		"a &lt;b&gt;bold&lt;/b&gt; <code>&lt;i&gt;quoted&lt;/i&gt;</code> claim",
		"<td>&lt;img src=x&gt;</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Count(page, "<script") != 3 || strings.Contains(page, odd) {
		t.Errorf("a scenario's name broke out of the charts' data")
	}
	block := regexp.MustCompile(`(?s)<script type="application/json" id="lt-series">(.*?)</script>`).FindStringSubmatch(page)
	if block == nil {
		t.Fatal("no lt-series block")
	}
	var data chartData
	if err := json.Unmarshal([]byte(block[1]), &data); err != nil {
		t.Fatalf("lt-series is no JSON: %v", err)
	}
	if got := data.Charts[0].Lines[0].Name; got != odd {
		t.Errorf("the name reads back as %q", got)
	}
}

// A chart with nothing to draw says why in its place, the reason of the collector it comes from first.
func TestIndexDiagnosisNoData(t *testing.T) {
	noData := func(page string) map[string]string {
		out := map[string]string{}
		for _, m := range regexp.MustCompile(`<p class="no-data" data-no-data="(\w+)">no data: ([^<]*)</p>`).FindAllStringSubmatch(page, -1) {
			out[m[1]] = html.UnescapeString(m[2])
		}
		return out
	}
	charts := func(page string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`<div class="chart" id="chart-(\w+)" data-chart="(\w+)"></div>`).FindAllStringSubmatch(page, -1) {
			out = append(out, m[1])
		}
		return out
	}
	s := loadFailedRun(t)
	if page := render(t, s, nil); !strings.Contains(page, `<p class="note" id="no-diagnosis">This run has no diagnosis`) || strings.Contains(page, "no data:") {
		t.Errorf("a run without a diagnosis does not say so")
	}

	s.Diagnosis = testDiagnosis()
	s.Diagnosis.Series = nil
	s.Diagnosis.Sources[0] = diagnosis.Source{Name: "containers", Status: "not available", Reason: "docker stats: permission denied"}
	page := render(t, s, nil)
	want := map[string]string{
		"rate": "the diagnosis holds no time series (summary.json has no diagnosis.series)", "p95": "the diagnosis holds no time series (summary.json has no diagnosis.series)",
		"cpu": "containers not available: docker stats: permission denied", "waits": "the diagnosis holds no time series (summary.json has no diagnosis.series)",
	}
	if got := noData(page); !reflect.DeepEqual(got, want) {
		t.Errorf("no data\n got %q\nwant %q", got, want)
	}
	if c := charts(page); len(c) != 0 || strings.Contains(page, "<script") {
		t.Errorf("charts %q with no series", c)
	}

	// A series whose CPU lines are all gaps, whose waits are none, and whose p95 is not a number.
	s.Diagnosis = testDiagnosis()
	sr := s.Diagnosis.Series
	sr.CPU = []diagnosis.Line{{Name: "certctl", Values: make([]*float64, len(sr.T))}}
	sr.Waits = nil
	nan := 0.0
	nan /= nan
	sr.P95MS[0].Values = []*float64{&nan, f64(3)} // short, too
	page = render(t, s, nil)
	want = map[string]string{"cpu": "no container's CPU was sampled", "waits": "no active database backend was sampled"}
	if got := noData(page); !reflect.DeepEqual(got, want) {
		t.Errorf("no data\n got %q\nwant %q", got, want)
	}
	if c := charts(page); !reflect.DeepEqual(c, []string{"rate", "p95"}) {
		t.Errorf("charts %q, want rate and p95", c)
	}
	if !strings.Contains(page, `{"id":"p95","unit":"ms","lines":[{"name":"list_certificates","values":[null,3,null,null,null]}]}`) {
		t.Errorf("p95's line is not padded to the time axis with NaN a gap:\n%s", page[strings.Index(page, "lt-series"):][:600])
	}
}

func TestIndexEscapes(t *testing.T) {
	s := results.Summary{RunID: "r1", ExitCode: 4, FailedChecks: []string{"<b>bold</b>"},
		Run:       results.Run{Scenarios: []results.ScenarioRun{{Name: "odd <name>", Tier: "api", Log: "logs/a b#c?.log"}, {Name: "colon", Tier: "api", Log: "a:b.log"}}},
		Scenarios: []results.Scenario{{Name: "odd <name>", Tier: "api", Status: "no-results", Problem: `k6 said "<script>"`}, {Name: "colon", Tier: "api", Status: "no-results"}}}
	page := render(t, s, []string{"logs/a b#c?.log", "a:b.log"})
	for _, want := range []string{`href="logs/a%20b%23c%3F.log"`, `href="a%3Ab.log"`, "odd &lt;name&gt;", "&lt;b&gt;bold&lt;/b&gt;", "&lt;script&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "<b>") || strings.Contains(page, "ZgotmplZ") {
		t.Errorf("index.html let markup through or refused a link:\n%s", page)
	}
}

func TestIndexExitMeaning(t *testing.T) {
	s := loadFailedRun(t)
	if page := render(t, s, nil); !strings.Contains(page, "Exit 99: thresholds were breached.") {
		t.Errorf("exit meaning missing")
	}
	s.ExitCode = 42
	if page := render(t, s, nil); !strings.Contains(page, "Exit 42: unexpected code") {
		t.Errorf("an unknown code is not called unexpected")
	}
}

func TestWriteIndex(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"run.json", "scenarios/list_certificates.json", "logs/list_certificates.log", "logs/up.log"} {
		src := filepath.Join("testdata/run-failed", f)
		b, err := os.ReadFile(src)
		if err != nil {
			b = []byte("log\n")
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	// A link in place of a file is no file of the run.
	os.Symlink("/etc/hostname", filepath.Join(dir, "logs", "stack.log"))
	s, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	got := hrefs(page)
	// summary.json and summary.txt are written before the page, so it links them.
	want := []string{"scenarios/list_certificates.json", "logs/list_certificates.log", "summary.txt", "summary.json", "run.json", "logs/up.log"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(page, "Exit 99: thresholds were breached.") {
		t.Errorf("Write did not use ExitMeanings")
	}
}

// Write refuses to follow a link planted where index.html goes, as it does for the summaries.
func TestWriteIndexRefusesALink(t *testing.T) {
	dir := t.TempDir()
	b, _ := os.ReadFile("testdata/run-failed/run.json")
	os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep\n"), 0o644)
	if err := os.Symlink(victim, filepath.Join(dir, "index.html")); err != nil {
		t.Fatal(err)
	}
	s, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, s); err == nil {
		t.Fatal("Write followed a symbolic link in place of index.html")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the link's target was overwritten: %q", b)
	}
}
