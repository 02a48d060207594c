package report

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
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

func loadFailedRun(t *testing.T) Summary {
	t.Helper()
	s, err := Load("testdata/run-failed")
	if err != nil {
		t.Fatal(err)
	}
	// list_certificates' k6 was stopped mid-write: its raw samples end early.
	for i, sr := range s.Run.Scenarios {
		if sr.Name == "list_certificates" {
			s.Run.Scenarios[i].Raw = &RawFile{Path: "raw/list_certificates.json.gz", Bytes: 81234}
		}
	}
	return s
}

func render(t *testing.T, s Summary, files []string, meaning ExitMeaning) string {
	t.Helper()
	page, err := Index(s, files, meaning)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// index.html of a passing and of a failing run, one golden file each (testdata/index-<case>.html).
func TestGoldenIndex(t *testing.T) {
	passed, err := Load("testdata/run-default")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, sc := range passed.Scenarios {
		all = append(all, scenarioFiles(sc.Name)...)
	}
	all = append(all, "logs/stack.log", "logs/up.log", "run.json", "summary.json", "summary.txt")
	golden(t, "index-passed.html", render(t, passed, all, meanings))
	golden(t, "index-failed.html", render(t, loadFailedRun(t), failedRunFiles, meanings))
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
	got := hrefs(render(t, loadFailedRun(t), failedRunFiles, meanings))
	want := []string{
		"logs/ghost.log", // ghost wrote no record: its log is all there is

		"dashboard/issuance_acceptance.html", "scenarios/issuance_acceptance.json", "logs/issuance_acceptance.log",
		"dashboard/list_certificates.html", "scenarios/list_certificates.json", "logs/list_certificates.log", "raw/list_certificates.json.gz",
		"summary.txt", "summary.json", "run.json", "logs/stack.log"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links\n got %q\nwant %q", got, want)
	}
	if got := hrefs(render(t, loadFailedRun(t), nil, meanings)); len(got) != 0 {
		t.Errorf("an empty directory got links %q", got)
	}
}

// The page loads nothing: no script, stylesheet, image, font or frame, from anywhere.
func TestIndexLoadsNothing(t *testing.T) {
	page := render(t, loadFailedRun(t), failedRunFiles, meanings)
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "@import", "url(", "src=", "http:", "https:", "//"} {
		if strings.Contains(page, bad) {
			t.Errorf("index.html holds %q", bad)
		}
	}
	for _, h := range hrefs(page) {
		if strings.Contains(h, ":") || strings.HasPrefix(h, "/") {
			t.Errorf("link %q is not relative to the run directory", h)
		}
	}
}

func TestIndexEscapes(t *testing.T) {
	s := Summary{RunID: "r1", ExitCode: 4, FailedChecks: []string{"<b>bold</b>"},
		Run:       Run{Scenarios: []ScenarioRun{{Name: "odd <name>", Tier: "api", Log: "logs/a b#c?.log"}, {Name: "colon", Tier: "api", Log: "a:b.log"}}},
		Scenarios: []Scenario{{Name: "odd <name>", Tier: "api", Status: "no-results", Problem: `k6 said "<script>"`}, {Name: "colon", Tier: "api", Status: "no-results"}}}
	page := render(t, s, []string{"logs/a b#c?.log", "a:b.log"}, meanings)
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
	if page := render(t, s, nil, meanings); !strings.Contains(page, "Exit 99: thresholds were breached.") {
		t.Errorf("exit meaning missing")
	}
	// The harness has not said what its codes mean (ExitMeanings unset): the page says where to look.
	if page := render(t, s, nil, nil); !strings.Contains(page, "Exit 99: README.md&#39;s table of exit codes says what it means.") {
		t.Errorf("no pointer to README.md's table")
	}
	s.ExitCode = 42
	if page := render(t, s, nil, meanings); !strings.Contains(page, "Exit 42: unexpected code") {
		t.Errorf("an unknown code is not called unexpected")
	}
}

func TestWriteIndex(t *testing.T) {
	defer func(m ExitMeaning) { ExitMeanings = m }(ExitMeanings)
	ExitMeanings = meanings
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
	s, err := Load(dir)
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
	s, err := Load(dir)
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
