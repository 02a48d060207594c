// Package findings is the catalogue of what the harness knows about certctl (catalog.yaml: one entry per
// section of docs/certctl-findings.md, with its kind, its impact on a fleet, the builds it was seen and
// reproduced on and the code that causes it at each build), the runner of the reproductions
// (docs/findings/repro/<id>.sh, which need no harness) and the issue body a maintainer pastes.
// The judged subset, with detectors, is internal/defects' registry; the two are checked against each
// other.
package findings

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed catalog.yaml
var catalogSource []byte

// Kinds: a defect certctl should fix; a design choice its maintainers would likely close "as intended",
// whatever it costs; a documentation point (the code is consistent, what is written about it is not).
const (
	KindDefect        = "defect"
	KindDesign        = "design"
	KindDocumentation = "documentation"
)

// How an entry was established on a build.
const (
	Observed   = "observed"           // seen on that running build
	Read       = "read in the source" // found in its code, not triggered
	NotChecked = "not checked"
	Absent     = "absent" // checked, and that build does not have it
)

// Build is one certctl build the findings were checked against: its name (as CERTCTL_DIST's folder)
// and the commit it was built from, which the code locations are at.
type Build struct {
	Name   string `yaml:"name" json:"name"`
	Commit string `yaml:"commit" json:"commit"`
	Repo   string `yaml:"repo" json:"repo"`
}

// Location is a place in certctl's source at one build.
type Location struct {
	File string `yaml:"file" json:"file"`
	Line int    `yaml:"line" json:"line"`
	Func string `yaml:"func" json:"func"`
	What string `yaml:"what" json:"what"`
}

// Entry is one finding.
type Entry struct {
	ID     string `yaml:"id" json:"id"`
	Title  string `yaml:"title" json:"title"`
	Kind   string `yaml:"kind" json:"kind"`
	Impact string `yaml:"impact" json:"impact"`
	// Builds says, per build name, how the entry was established there.
	Builds map[string]string `yaml:"builds" json:"builds"`
	// Note qualifies Builds where one word per build says too little (how it was seen, why it is absent).
	Note string `yaml:"note" json:"note,omitempty"`
	// Reproduces lists the builds whose reproduction script exits 0 (TestFindings pins it).
	Reproduces []string `yaml:"reproduces" json:"reproduces"`
	// Code is where the cause is, per build name, the decisive place first.
	Code map[string][]Location `yaml:"code" json:"code"`
}

// Catalog is catalog.yaml.
type Catalog struct {
	Builds   []Build `yaml:"builds" json:"builds"`
	Findings []Entry `yaml:"findings" json:"findings"`
}

// Load reads the built-in catalogue, checked.
func Load() (Catalog, error) { return Parse(catalogSource) }

// Parse reads a catalogue in catalog.yaml's form and checks it: every entry has an id, a title, a known
// kind and an impact; says how it was established on every build; and names the code at every build it
// was not found absent from.
func Parse(b []byte) (Catalog, error) {
	var c Catalog
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("catalog.yaml: %w", err)
	}
	if len(c.Builds) == 0 {
		return c, fmt.Errorf("catalog.yaml: no builds")
	}
	names := map[string]bool{}
	for _, b := range c.Builds {
		if b.Name == "" || len(b.Commit) != 40 || b.Repo == "" {
			return c, fmt.Errorf("catalog.yaml: build %q needs a name, a repo and a full 40-digit commit", b.Name)
		}
		names[b.Name] = true
	}
	seen := map[string]bool{}
	for i, e := range c.Findings {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("catalog.yaml: %s: %s", cmp(e.ID, fmt.Sprintf("entry %d", i+1)), fmt.Sprintf(format, a...))
		}
		switch {
		case e.ID == "" || e.Title == "":
			return c, bad("no id or title")
		case seen[e.ID]:
			return c, bad("twice")
		case !slices.Contains([]string{KindDefect, KindDesign, KindDocumentation}, e.Kind):
			return c, bad("kind %q: one of defect, design, documentation", e.Kind)
		case strings.TrimSpace(e.Impact) == "":
			return c, bad("no impact")
		}
		seen[e.ID] = true
		for _, b := range c.Builds {
			how, ok := e.Builds[b.Name]
			if !ok {
				return c, bad("does not say how it was established on %s", b.Name)
			}
			if !slices.Contains([]string{Observed, Read, NotChecked, Absent}, how) {
				return c, bad("%s: %q is not observed, read in the source, not checked or absent", b.Name, how)
			}
			if how != Absent && len(e.Code[b.Name]) == 0 {
				return c, bad("no code location at %s", b.Name)
			}
			for _, l := range e.Code[b.Name] {
				if l.File == "" || l.Line < 1 || l.What == "" {
					return c, bad("a location at %s needs a file, a line and what is there", b.Name)
				}
			}
		}
		for k := range e.Builds {
			if !names[k] {
				return c, bad("build %q is not among the catalogue's builds", k)
			}
		}
		for k := range e.Code {
			if !names[k] {
				return c, bad("code at build %q, which is not among the catalogue's builds", k)
			}
		}
		for _, b := range e.Reproduces {
			if !names[b] {
				return c, bad("reproduces on %q, which is not among the catalogue's builds", b)
			}
			if e.Builds[b] != Observed {
				return c, bad("its script reproduces it on %s, where builds says %q, not observed", b, e.Builds[b])
			}
		}
	}
	return c, nil
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Find returns the entry with that id.
func (c Catalog) Find(id string) (Entry, bool) {
	i := slices.IndexFunc(c.Findings, func(e Entry) bool { return e.ID == id })
	if i < 0 {
		return Entry{}, false
	}
	return c.Findings[i], true
}

// IDs lists the entries' ids in the catalogue's order.
func (c Catalog) IDs() []string {
	out := make([]string, len(c.Findings))
	for i, e := range c.Findings {
		out[i] = e.ID
	}
	return out
}

// BuildsText says how each build showed the entry, builds established alike together, then its note:
// "observed on v2.1.7 and main-151107c", "absent from v2.1.7; observed on main-151107c (…)".
func (c Catalog) BuildsText(e Entry) string {
	var order []string
	on := map[string][]string{}
	for _, b := range c.Builds {
		how := e.Builds[b.Name]
		if _, ok := on[how]; !ok {
			order = append(order, how)
		}
		on[how] = append(on[how], b.Name)
	}
	parts := make([]string, len(order))
	for i, how := range order {
		prep := " on "
		if how == Absent {
			prep = " from "
		}
		parts[i] = how + prep + strings.Join(on[how], " and ")
	}
	s := strings.Join(parts, "; ")
	if e.Note != "" {
		s += " (" + e.Note + ")"
	}
	return s
}

// Link is the location on GitHub at the build's commit.
func (b Build) Link(l Location) string {
	return fmt.Sprintf("https://github.com/%s/blob/%s/%s#L%d", b.Repo, b.Commit, l.File, l.Line)
}
