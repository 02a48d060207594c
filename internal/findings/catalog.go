// Package findings reads certctl's findings, one record a finding (docs/findings/<id>.md: its kind, its
// impact on a fleet, the builds it was seen and reproduced on, the code that causes it at each build, the
// run-visible part internal/defects judges runs with, its sentence in a run's summary and its section's
// prose), and renders what lists them: the page's sections, the registry, the issue body a maintainer
// pastes. It also runs the reproductions (docs/findings/repro/<id>.sh, which need no harness).
package findings

import (
	"bytes"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"

	records "certctl-loadtest/docs/findings"

	"gopkg.in/yaml.v3"
)

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

// Entry is one finding: its record's front matter, its id the record's name and its body the prose.
type Entry struct {
	ID     string `yaml:"-" json:"id"`
	Title  string `yaml:"title" json:"title"`
	Kind   string `yaml:"kind" json:"kind"`
	Impact string `yaml:"impact" json:"impact"`
	// Order places it among the findings: the page's sections of its kind, the registry and the summary's
	// sentences follow it. Unique; leave gaps, so a new finding goes between two without renumbering.
	Order int `yaml:"order" json:"-"`
	// Builds says, per build name, how the entry was established there.
	Builds map[string]string `yaml:"builds" json:"builds"`
	// Note qualifies Builds where one word per build says too little (how it was seen, why it is absent).
	Note string `yaml:"note" json:"note,omitempty"`
	// Reproduces lists the builds whose reproduction script exits 0 (TestFindings pins it).
	Reproduces []string `yaml:"reproduces" json:"reproduces"`
	// Code is where the cause is, per build name, the decisive place first.
	Code map[string][]Location `yaml:"code" json:"code"`
	// Registry is what a run can see of it, for a finding that meets a run's budgets: an entry of
	// internal/defects/registry.yaml without its id and title. It stays a YAML node, so internal/defects
	// reads it with the one reader a DEFECTS_REGISTRY file goes through, comments and all.
	Registry yaml.Node `yaml:"registry" json:"-"`
	// Summary is its sentence in a run's summary when a scenario's record counts it.
	Summary *Sentence `yaml:"summary" json:"-"`
	// Repro is what its script checks and the rows it leaves on the certctl it runs against: its row in
	// docs/findings/repro/README.md's table of scripts.
	Repro Repro `yaml:"repro" json:"-"`
	// Body is the section's prose under its generated head, its links relative to the record
	// (PageBody has them relative to the page).
	Body string `yaml:"-" json:"-"`
}

// Repro says what a finding's script does to the certctl it asks.
type Repro struct {
	Checks  string `yaml:"checks"`
	Creates string `yaml:"creates"`
}

// Sentence is a finding's line in a run's summary, for a scenario whose record counts its Counter:
// "<scenario>: " then Says ({n} the count, {link} the finding's section), then "; " and what the harness
// Offers around it, or IfWorkedAround instead when the run's setup says the registry part's
// worked_around_by held.
type Sentence struct {
	Counter        string `yaml:"counter"`
	Says           string `yaml:"says"`
	Offers         string `yaml:"offers"`
	IfWorkedAround string `yaml:"if_worked_around"`
}

// Text is the sentence for a scenario that counted n.
func (s Sentence) Text(id, scenario string, n float64, workedAround bool) string {
	says := strings.NewReplacer("{n}", fmt.Sprintf("%.0f", n), "{link}", Link(id)).Replace(s.Says)
	offers := s.Offers
	if workedAround && s.IfWorkedAround != "" {
		offers = s.IfWorkedAround
	}
	return scenario + ": " + says + "; " + offers
}

// Page is the findings page, rendered from the records; Link is a finding's section on it.
const Page = "docs/certctl-findings.md"

func Link(id string) string { return Page + "#" + id }

// Catalog is every record, in their order, and the builds they speak of.
type Catalog struct {
	Builds   []Build `json:"builds"`
	Findings []Entry `json:"findings"`
}

// Load reads the records the binary carries, checked.
func Load() (Catalog, error) { return LoadFrom(records.Files()) }

const (
	buildsFile = "builds.yaml"
	guideFile  = "README.md" // the folder's guide, not a record
)

var idRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// LoadFrom reads a folder of records (docs/findings' form: builds.yaml and one <id>.md a finding) and checks
// it: every entry has a title, a known kind, an impact and an order of its own; says how it was
// established on every build; names the code at every build it was not found absent from; and its
// summary sentence and links are whole.
func LoadFrom(fsys fs.FS) (Catalog, error) {
	var c Catalog
	b, err := fs.ReadFile(fsys, buildsFile)
	if err != nil {
		return c, err
	}
	if err := decodeStrict(b, &c.Builds); err != nil {
		return c, fmt.Errorf("%s: %w", buildsFile, err)
	}
	if len(c.Builds) == 0 {
		return c, fmt.Errorf("%s: no builds", buildsFile)
	}
	names := map[string]bool{}
	for _, b := range c.Builds {
		if b.Name == "" || len(b.Commit) != 40 || b.Repo == "" {
			return c, fmt.Errorf("%s: build %q needs a name, a repo and a full 40-digit commit", buildsFile, b.Name)
		}
		names[b.Name] = true
	}
	files, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return c, err
	}
	ids := map[string]bool{}
	for _, f := range files {
		if f == guideFile {
			continue
		}
		e, err := readRecord(fsys, f)
		if err != nil {
			return c, err
		}
		c.Findings = append(c.Findings, e)
		ids[e.ID] = true
	}
	sort.SliceStable(c.Findings, func(i, j int) bool { return c.Findings[i].Order < c.Findings[j].Order })
	orders := map[int]string{}
	for _, e := range c.Findings {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%s.md: %s", e.ID, fmt.Sprintf(format, a...))
		}
		if err := e.check(c.Builds, names); err != nil {
			return c, bad("%v", err)
		}
		if other, ok := orders[e.Order]; ok {
			return c, bad("order %d is %s's too", e.Order, other)
		}
		orders[e.Order] = e.ID
		for _, target := range links(e.Body) {
			if id, ok := strings.CutSuffix(target, ".md"); ok && !strings.Contains(id, "/") && !ids[id] {
				return c, bad("links %q, which is no record of this folder", target)
			}
		}
	}
	return c, nil
}

// readRecord reads one <id>.md: the front matter between two lines of ---, then the body.
func readRecord(fsys fs.FS, name string) (Entry, error) {
	e := Entry{ID: strings.TrimSuffix(name, ".md")}
	if !idRE.MatchString(e.ID) {
		return e, fmt.Errorf("%s: a record's name is its id, lower-case words joined by hyphens", name)
	}
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return e, err
	}
	front, body, ok := bytes.Cut(bytes.TrimPrefix(b, []byte("---\n")), []byte("\n---\n"))
	if !bytes.HasPrefix(b, []byte("---\n")) || !ok {
		return e, fmt.Errorf("%s: no front matter: the file opens with a line ---, then the data, then a line ---", name)
	}
	if err := decodeStrict(front, &e); err != nil {
		return e, fmt.Errorf("%s: %w", name, err)
	}
	e.ID = strings.TrimSuffix(name, ".md")
	e.Body = strings.TrimSpace(string(body))
	return e, nil
}

func decodeStrict(b []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

func (e Entry) check(builds []Build, names map[string]bool) error {
	switch {
	case e.Title == "":
		return fmt.Errorf("no title")
	case !slices.Contains([]string{KindDefect, KindDesign, KindDocumentation}, e.Kind):
		return fmt.Errorf("kind %q: one of defect, design, documentation", e.Kind)
	case strings.TrimSpace(e.Impact) == "":
		return fmt.Errorf("no impact")
	case e.Order < 1:
		return fmt.Errorf("no order (a number above 0 that places it among the findings)")
	case e.Registry.Kind != 0 && e.Registry.Kind != yaml.MappingNode:
		return fmt.Errorf("registry: a mapping, as an entry of internal/defects/registry.yaml without its id and title")
	}
	if s := e.Summary; s != nil {
		switch {
		case s.Counter == "" || s.Offers == "":
			return fmt.Errorf("summary: names no counter or nothing the harness offers")
		case !strings.Contains(s.Says, "{n}") || !strings.Contains(s.Says, "{link}"):
			return fmt.Errorf("summary: says %q holds no {n} (the count) or no {link} (its section)", s.Says)
		}
	}
	for _, b := range builds {
		how, ok := e.Builds[b.Name]
		if !ok {
			return fmt.Errorf("does not say how it was established on %s", b.Name)
		}
		if !slices.Contains([]string{Observed, Read, NotChecked, Absent}, how) {
			return fmt.Errorf("%s: %q is not observed, read in the source, not checked or absent", b.Name, how)
		}
		if how != Absent && len(e.Code[b.Name]) == 0 {
			return fmt.Errorf("no code location at %s", b.Name)
		}
		for _, l := range e.Code[b.Name] {
			if l.File == "" || l.Line < 1 || l.What == "" {
				return fmt.Errorf("a location at %s needs a file, a line and what is there", b.Name)
			}
		}
	}
	for k := range e.Builds {
		if !names[k] {
			return fmt.Errorf("build %q is not among the builds (%s)", k, buildsFile)
		}
	}
	for k := range e.Code {
		if !names[k] {
			return fmt.Errorf("code at build %q, which is not among the builds (%s)", k, buildsFile)
		}
	}
	for _, b := range e.Reproduces {
		if !names[b] {
			return fmt.Errorf("reproduces on %q, which is not among the builds (%s)", b, buildsFile)
		}
		if e.Builds[b] != Observed {
			return fmt.Errorf("its script reproduces it on %s, where builds says %q, not observed", b, e.Builds[b])
		}
	}
	return nil
}

// RegistryYAML is the records' run-visible parts as internal/defects/registry.yaml holds them: one entry
// each, in the records' order.
func (c Catalog) RegistryYAML() ([]byte, error) {
	var out [][]byte
	for _, e := range c.Findings {
		b, err := e.RegistryYAML()
		if err != nil {
			return nil, err
		}
		if b != nil {
			out = append(out, b)
		}
	}
	return bytes.Join(out, []byte("\n")), nil
}

// RegistryYAML is the entry's run-visible part as an entry of internal/defects/registry.yaml, its id and
// title first; nil when it has none.
func (e Entry) RegistryYAML() ([]byte, error) {
	if e.Registry.Kind == 0 {
		return nil, nil
	}
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	entry := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map",
		Content: append([]*yaml.Node{str("id"), str(e.ID), str("title"), str(e.Title)}, e.Registry.Content...)}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode([]*yaml.Node{entry}); err != nil {
		return nil, fmt.Errorf("%s.md: registry: %w", e.ID, err)
	}
	return b.Bytes(), nil
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
