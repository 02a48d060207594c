package findings

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/golden"
)

func page(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "certctl-findings.md"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The catalogue and the page hold the same findings, under the same titles, and each has its
// reproduction script.
func TestCatalogMatchesThePage(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	secs := Sections(page(t))
	for _, e := range c.Findings {
		s, ok := secs[e.ID]
		if !ok {
			t.Errorf("%s: no section with that anchor in docs/certctl-findings.md", e.ID)
			continue
		}
		if s.Title != e.Title {
			t.Errorf("%s: catalogue title %q, page heading %q", e.ID, e.Title, s.Title)
		}
		if _, ok := s.Paragraphs["Symptom"]; !ok {
			t.Errorf("%s: its section has no **Symptom.** paragraph for the issue body", e.ID)
		}
		if _, err := os.Stat(filepath.Join("..", "..", ReproDir, e.ID+".sh")); err != nil {
			t.Errorf("%s: no reproduction script: %v", e.ID, err)
		}
	}
	for id := range secs {
		if _, ok := c.Find(id); !ok {
			t.Errorf("the page's section %s is not in catalog.yaml", id)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	base := `builds:
  - {name: b1, repo: o/r, commit: 0123456789012345678901234567890123456789}
findings:
  - id: x
    title: X
    kind: %KIND%
    impact: costs
    builds: {b1: %HOW%}
    reproduces: [%REPRO%]
    code:
      b1: [%LOC%]
`
	good := map[string]string{"%KIND%": "defect", "%HOW%": "observed", "%REPRO%": "b1", "%LOC%": "{file: a.go, line: 3, func: f, what: w}"}
	render := func(over map[string]string) string {
		s := base
		for k, v := range good {
			if o, ok := over[k]; ok {
				v = o
			}
			s = strings.ReplaceAll(s, k, v)
		}
		return s
	}
	if _, err := Parse([]byte(render(nil))); err != nil {
		t.Fatalf("the good catalogue: %v", err)
	}
	for name, c := range map[string]struct {
		over map[string]string
		want string
	}{
		"kind":                       {map[string]string{"%KIND%": "bug"}, "kind"},
		"how":                        {map[string]string{"%HOW%": "seen"}, "not observed"},
		"reproduces":                 {map[string]string{"%REPRO%": "b2"}, "reproduces on"},
		"no code":                    {map[string]string{"%LOC%": ""}, "no code location"},
		"no line":                    {map[string]string{"%LOC%": "{file: a.go, what: w}"}, "a file, a line"},
		"absent":                     {map[string]string{"%HOW%": "absent", "%LOC%": "", "%REPRO%": ""}, ""},
		"reproduced where only read": {map[string]string{"%HOW%": "read in the source"}, "where builds says"},
	} {
		_, err := Parse([]byte(render(c.over)))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error with %q", name, err, c.want)
		}
	}
	if _, err := Parse([]byte("builds:\n  - {name: b, repo: o/r, commit: abc}\n")); err == nil || !strings.Contains(err.Error(), "40-digit") {
		t.Errorf("a short commit: %v", err)
	}
}

// The issue body speaks of certctl only: no paragraph on what the harness does, no link into this
// repository, the script standing alone.
var linkRE = regexp.MustCompile(`\]\(([^)]*)\)`)

func TestIssueBody(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	secs := Sections(page(t))
	lib, err := os.ReadFile(filepath.Join("..", "..", ReproDir, "lib.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Findings {
		script, err := os.ReadFile(filepath.Join("..", "..", ReproDir, e.ID+".sh"))
		if err != nil {
			continue // TestCatalogMatchesThePage says so
		}
		body := IssueBody(c, e, secs[e.ID], Bundle(string(lib), string(script)))
		// Outside the script, the body is read by certctl's maintainers: a link leads to certctl or to a
		// public page, and no word needs this repository to make sense.
		prose, _, _ := strings.Cut(body, "<details>")
		for _, banned := range []string{"In the harness", "lib.sh\"", "k6", "make loadtest", "make spotcheck", "make seed", "loadtest",
			"harness", "growth sweep", "growth mix", "seed/", "inventory_", "RUN_ID", "results/", "docs/findings", "docs/growth",
			"docs/auth", "docs/comparing", "TIER=", " RATE_", "`RATE_", "e2e", "compose project"} {
			if strings.Contains(prose, banned) {
				t.Errorf("%s: the issue body holds %q, which only makes sense inside this repository", e.ID, banned)
			}
		}
		for _, m := range linkRE.FindAllStringSubmatch(prose, -1) {
			if !strings.HasPrefix(m[1], "https://") || strings.Contains(m[1], "certctl-loadtest") {
				t.Errorf("%s: the issue body links %q, which is not a public page", e.ID, m[1])
			}
		}
		if !strings.Contains(body, "https://github.com/certctl-io/certctl/blob/") {
			t.Errorf("%s: the issue body links no code", e.ID)
		}
		if e.ID == "pagination-cursor" {
			golden.Check(t, "issue-pagination-cursor.md", body)
		}
	}
}

func TestRunJudgesExitCodes(t *testing.T) {
	c := Catalog{
		Builds: []Build{{Name: "b1", Repo: "o/r", Commit: strings.Repeat("0", 40)}},
		Findings: []Entry{
			{ID: "yes", Reproduces: []string{"b1"}}, {ID: "no"}, {ID: "cannot"}, {ID: "fixed", Reproduces: []string{"b1"}},
		},
	}
	codes := map[string]int{"yes": 0, "no": 1, "cannot": 2, "fixed": 1}
	says := map[int]string{0: "reproduces: it does", 1: "does not reproduce: it does not"}
	var gotArgs []string
	var gotEnv []string
	exec := func(_ context.Context, script string, args, env []string) (int, []byte, []byte, error) {
		gotArgs, gotEnv = args, env
		code := codes[strings.TrimSuffix(filepath.Base(script), ".sh")]
		if code == 2 {
			return 2, nil, []byte("  progress\ncould not run: needs PGURL\n"), nil
		}
		return code, []byte(says[code] + "\n"), nil, nil
	}
	clock := time.Unix(0, 0)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	rep := Run(context.Background(), c, "/root", []string{"yes", "no", "cannot", "fixed"},
		Target{URL: "https://s:8443", Key: "k", CA: "/ca", PGURL: "postgres://p", ConnectTo: "s:8443:10.0.0.2:8443", Build: "b1"}, exec, now, nil)
	if !slices.Equal(gotArgs, []string{"https://s:8443", "k", "/ca"}) || !slices.Contains(gotEnv, "CERTCTL_CONNECT_TO=s:8443:10.0.0.2:8443") || !slices.Contains(gotEnv, "PGURL=postgres://p") {
		t.Errorf("the script got %q, env %q", gotArgs, gotEnv)
	}
	var outcomes []string
	for _, r := range rep.Results {
		outcomes = append(outcomes, r.Outcome+"/"+r.Says)
	}
	want := []string{"reproduces/it does", "does not/it does not", "could not run/needs PGURL", "does not/it does not"}
	if !slices.Equal(outcomes, want) {
		t.Errorf("outcomes %q, want %q", outcomes, want)
	}
	if u := rep.Unexpected(); len(u) != 1 || u[0].ID != "fixed" {
		t.Errorf("unexpected %v, want only fixed (reproduced on b1 before)", u)
	}
	golden.Check(t, "run.txt", rep.Text())
}

func TestSectionsReadLabels(t *testing.T) {
	doc := []byte("<a id=\"a\"></a>\n## Title `x`\n\n**Builds:** observed.\n\n**Symptom.** It breaks\nhere.\n\nMore of it.\n\n**Cause** (read in the source, same in both). Because.\n\n**In the harness.** We cope.\n\n## Next part\n\ntext\n")
	s := Sections(doc)["a"]
	if s.Title != "Title `x`" {
		t.Errorf("title %q", s.Title)
	}
	if got := s.Paragraphs["Symptom"]; got != "It breaks\nhere.\n\nMore of it." {
		t.Errorf("symptom %q", got)
	}
	if got := s.Paragraphs["Cause"]; got != "(read in the source, same in both) Because." {
		t.Errorf("cause %q", got)
	}
	if !slices.Equal(s.Order, []string{"Builds", "Symptom", "Cause", "In the harness"}) {
		t.Errorf("order %q", s.Order)
	}
}
