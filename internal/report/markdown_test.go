package report

import (
	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/results"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// readSummary reads a summary.json golden, as `loadtest report --format markdown` reads a run's.
func readSummary(t *testing.T, name string) *results.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// The job summary of every way a run can end, one golden file each (testdata/markdown-<case>.md).
func TestGoldenMarkdown(t *testing.T) {
	files := []string{"dashboard/list_certificates.html", "logs/stack.log", "raw/list_certificates.json.gz",
		"run.json", "summary.json", "summary.txt"}
	dir := results.RunDir{Path: "<tmp>/20261122-120000-abcd", Exists: true, Name: "20261122-120000-abcd", Files: files}
	withBackticks := readSummary(t, "run-default.summary.json")
	withBackticks.Run.Command = "make loadtest FAULT_ROUTE='GET /a```b'"
	// A breach a registered defect explains, one it does not, a defect of this build the run did not
	// meet, and the diagnosis's findings: the reviewer's whole page.
	known := readSummary(t, "run-failed.summary.json")
	known.Breaches = &defects.Verdict{Build: "v2.1.7",
		New: []defects.Breach{{Scenario: "list_certificates", Threshold: "dropped_iterations count==0", Measured: "count=540"}},
		Known: []defects.Known{{Breach: defects.Breach{Scenario: "list_certificates", Threshold: "http_req_duration p(95)<800", Measured: "p(95)=910 ms"}, Defects: []string{"list-full-sort"}},
			{Breach: defects.Breach{Scenario: "list_certificates", Threshold: "http_req_duration p(99)<2000", Measured: "p(99)=2500 ms"}, Defects: []string{"list-full-sort"}}},
		NotAppearing: []defects.Absent{{Defect: "acme-finalize", Title: "ACME finalize answers 500", Scenarios: []string{"acme_order_flow"}}}}
	known.Diagnosis = testDiagnosis()
	cases := []struct {
		name     string
		summary  *results.Summary
		dir      results.RunDir
		stepCode string
	}{
		{"passed", readSummary(t, "run-default.summary.json"), dir, "0"},
		{"thresholds-breached", readSummary(t, "run-failed.summary.json"), dir, "99"},
		// summary.json's code wins; the step's is named beside it.
		{"summary-disagrees-with-the-step", readSummary(t, "run-failed.summary.json"), dir, "0"},
		{"no-run-directory", nil, results.RunDir{Path: dir.Path}, "2"},
		{"never-ran", nil, results.RunDir{}, ""},
		{"cut-short-before-the-summary", nil, results.RunDir{Path: dir.Path, Exists: true, Name: dir.Name, Files: []string{"logs/stack.log"}}, ""},
		{"empty-directory", nil, results.RunDir{Path: dir.Path, Exists: true, Name: dir.Name}, "3"},
		{"backticks-in-the-summary", withBackticks, dir, "0"},
		{"known-defects-and-diagnosis", known, dir, "99"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			golden.Check(t, "markdown-"+c.name+".md", Markdown(c.summary, c.dir, c.stepCode))
		})
	}
}

func TestExitMeaning(t *testing.T) {
	for _, code := range []string{"0", "2", "3", "99"} {
		if m, _ := results.ExitMeaning(atoi(code)); exitMeaning(code) != m {
			t.Errorf("exit %s: %q, want %q", code, exitMeaning(code), m)
		}
	}
	if m := exitMeaning(""); !strings.HasPrefix(m, "no code was recorded") {
		t.Errorf("no exit code: %q", m)
	}
	for _, code := range []string{"1", "00", "-0", "+0", "99x", " 0"} {
		if m := exitMeaning(code); !strings.HasPrefix(m, "unexpected code") {
			t.Errorf("exit %q: %q, want an unexpected code", code, m)
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestFence(t *testing.T) {
	for text, want := range map[string]string{"plain": "```", "a `b` c": "```", "a ```b``` c": "````", "``````": "```````"} {
		if got := fence(text); got != want {
			t.Errorf("fence(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestOpenRunDir(t *testing.T) {
	top := t.TempDir()
	run := filepath.Join(top, "20261122-120000-abcd")
	for _, f := range []string{"summary.txt", "logs/stack.log", "raw/a.json.gz"} {
		os.MkdirAll(filepath.Dir(filepath.Join(run, f)), 0o755)
		os.WriteFile(filepath.Join(run, f), []byte("x\n"), 0o644)
	}
	b, _ := os.ReadFile("testdata/run-failed.summary.json")
	os.WriteFile(filepath.Join(run, "summary.json"), b, 0o644)
	if err := os.Symlink("20261122-120000-abcd", filepath.Join(top, "latest")); err != nil {
		t.Fatal(err)
	}

	// results/latest, with a trailing slash as a shell completes it: the run's own name, every file.
	d, s := results.OpenRunDir(filepath.Join(top, "latest") + "/")
	want := results.RunDir{Path: filepath.Join(top, "latest"), Exists: true, Name: "20261122-120000-abcd",
		Files: []string{"logs/stack.log", "raw/a.json.gz", "summary.json", "summary.txt"}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("results.OpenRunDir = %+v, want %+v", d, want)
	}
	if s == nil || s.ExitCode != 99 || s.RunID != "20261122-150000-ab12" {
		t.Errorf("summary %+v, want run-failed's", s)
	}

	os.WriteFile(filepath.Join(run, "summary.json"), []byte("{"), 0o644)
	if _, s := results.OpenRunDir(run); s != nil {
		t.Errorf("a summary.json that cannot be read gave %+v, want none", s)
	}
	for _, p := range []string{"", filepath.Join(top, "missing"), filepath.Join(run, "summary.txt")} {
		if d, s := results.OpenRunDir(p); d.Exists || s != nil || d.Path != p {
			t.Errorf("results.OpenRunDir(%q) = %+v, %v; want a directory that does not exist", p, d, s)
		}
	}
}
