package findings

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"certctl-loadtest/internal/golden"
)

// Every record has its reproduction script and a **Symptom.** paragraph for the issue body.
func TestRecordsHaveScriptAndSymptom(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Findings) == 0 {
		t.Fatal("no records")
	}
	for _, e := range c.Findings {
		if _, ok := e.Section().Paragraphs["Symptom"]; !ok {
			t.Errorf("%s: its record's body has no **Symptom.** paragraph for the issue body", e.ID)
		}
		if _, err := os.Stat(filepath.Join("..", "..", ReproDir, e.ID+".sh")); err != nil {
			t.Errorf("%s: no reproduction script: %v", e.ID, err)
		}
	}
}

// A finding is its record: one more file in the folder is one more finding, placed by its order, its
// registry part and sentence read with the rest (testdata/records holds a throwaway one).
func TestANewFindingIsOneRecord(t *testing.T) {
	c, err := LoadFrom(os.DirFS(filepath.Join("testdata", "records")))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.IDs(); !slices.Equal(got, []string{"throwaway-first", "throwaway"}) {
		t.Fatalf("ids %q: the records' order, not their names'", got)
	}
	e, _ := c.Find("throwaway")
	if e.Summary == nil || e.Summary.Text(e.ID, "s", 3, false) != "s: it broke 3 times (docs/certctl-findings.md#throwaway); THROWAWAY=1 avoids it" {
		t.Errorf("sentence %+v", e.Summary)
	}
	reg, err := c.RegistryYAML()
	if err != nil || !strings.Contains(string(reg), "- id: throwaway\n  title: A throwaway finding\n  seen: [b1]\n") {
		t.Errorf("registry %v:\n%s", err, reg)
	}
	if got := e.PageBody(); !strings.Contains(got, "[the other](#throwaway-first)") || !strings.Contains(got, "[its script](findings/repro/throwaway.sh)") ||
		!strings.Contains(got, "[how a run judges](#how-a-run-judges-them)") || !strings.Contains(got, "[a scenario](../k6/api/x.js)") || !strings.Contains(got, "`[code](keep.md)`") {
		t.Errorf("the body's links as the page has them:\n%s", got)
	}
}

func TestLoadRefuses(t *testing.T) {
	base := `---
title: X
kind: %KIND%
order: %ORDER%
impact: costs
builds: {b1: %HOW%}
reproduces: [%REPRO%]
code:
  b1: [%LOC%]
---

**Symptom.** It breaks; see [the other](%LINK%).
`
	good := map[string]string{"%KIND%": "defect", "%HOW%": "observed", "%REPRO%": "b1", "%LOC%": "{file: a.go, line: 3, func: f, what: w}", "%ORDER%": "10", "%LINK%": "y.md"}
	render := func(over map[string]string) fstest.MapFS {
		s := base
		for k, v := range good {
			if o, ok := over[k]; ok {
				v = o
			}
			s = strings.ReplaceAll(s, k, v)
		}
		other := strings.NewReplacer("%KIND%", "design", "%HOW%", "observed", "%REPRO%", "", "%LOC%", "{file: a.go, line: 3, what: w}", "%ORDER%", "20", "%LINK%", "x.md").Replace(base)
		return fstest.MapFS{
			"builds.yaml": {Data: []byte("- {name: b1, repo: o/r, commit: 0123456789012345678901234567890123456789}\n")},
			"x.md":        {Data: []byte(s)},
			"y.md":        {Data: []byte(other)},
			"README.md":   {Data: []byte("# the folder's guide, not a record\n")},
		}
	}
	if _, err := LoadFrom(render(nil)); err != nil {
		t.Fatalf("the good records: %v", err)
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
		"no order":                   {map[string]string{"%ORDER%": "0"}, "no order"},
		"an order twice":             {map[string]string{"%ORDER%": "20"}, "order 20 is"},
		"a link to no record":        {map[string]string{"%LINK%": "z.md"}, "no record of this folder"},
	} {
		_, err := LoadFrom(render(c.over))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error with %q", name, err, c.want)
		}
	}
	builds := render(nil)["builds.yaml"]
	withSentence := strings.Replace(string(render(nil)["x.md"].Data), "\n---\n", "\nsummary: {counter: c, says: \"it broke ({link})\", offers: o}\n---\n", 1)
	for name, c := range map[string]struct {
		fs   fstest.MapFS
		want string
	}{
		"a short commit":               {fstest.MapFS{"builds.yaml": {Data: []byte("- {name: b, repo: o/r, commit: abc}\n")}}, "40-digit"},
		"no front matter":              {fstest.MapFS{"builds.yaml": builds, "x.md": {Data: []byte("**Symptom.** x\n")}}, "no front matter"},
		"a name not an id":             {fstest.MapFS{"builds.yaml": builds, "X_1.md": render(nil)["x.md"]}, "lower-case words"},
		"an unknown field":             {fstest.MapFS{"builds.yaml": builds, "x.md": {Data: []byte("---\ntitel: X\n---\n")}}, "field titel not found"},
		"a sentence without its count": {fstest.MapFS{"builds.yaml": builds, "x.md": {Data: []byte(withSentence)}, "y.md": render(nil)["y.md"]}, "no {n}"},
	} {
		if _, err := LoadFrom(c.fs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
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
	lib, err := os.ReadFile(filepath.Join("..", "..", ReproDir, "lib.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Findings {
		script, err := os.ReadFile(filepath.Join("..", "..", ReproDir, e.ID+".sh"))
		if err != nil {
			continue // TestRecordsHaveScriptAndSymptom says so
		}
		body := IssueBody(c, e, Bundle(string(lib), string(script)))
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
	e := Entry{ID: "a", Title: "Title `x`", Body: "**Builds:** observed.\n\n**Symptom.** It breaks\nhere.\n\nMore of it.\n\n**Cause** (read in the source, same in both). Because.\n\n**In the harness.** We cope.\n\n## Next part\n\ntext\n"}
	s := e.Section()
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

// The responders start for the scripts that order at them and for no others: a findings run of
// acme-finalize alone starts none.
func TestNeedsResponders(t *testing.T) {
	need, err := NeedsResponders(filepath.Join("..", ".."), []string{"acme-finalize", "validation-wait-unbounded", "ocsp-500"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(need, []string{"validation-wait-unbounded"}) {
		t.Errorf("NeedsResponders = %v, want [validation-wait-unbounded]", need)
	}
	if _, err := NeedsResponders(filepath.Join("..", ".."), []string{"no-such-finding"}); err == nil {
		t.Error("a finding without a script: want an error")
	}
}
