package docs

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// docs/architecture.md's package table says what each package imports of ours: it must say what the
// code does, and name every package there is.
func TestArchitecturePackageTable(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	table := map[string][]string{}
	row := regexp.MustCompile("(?m)^\\| `internal/([a-z0-9]+)` \\|[^|]*\\|[^|]*\\| ([^|]*) \\|$")
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		table[m[1]] = importList(m[2])
	}
	// A row for several leaves: `internal/a`, `internal/b` | — | — | — (...).
	leaves := regexp.MustCompile("(?m)^\\| ((?:`internal/[a-z0-9]+`,? ?)+) \\|[^|]*\\|[^|]*\\| — [^|]*\\|$")
	for _, m := range leaves.FindAllStringSubmatch(string(b), -1) {
		for _, p := range regexp.MustCompile("`internal/([a-z0-9]+)`").FindAllStringSubmatch(m[1], -1) {
			table[p[1]] = nil
		}
	}
	dirs, err := filepath.Glob(filepath.Join(root, "internal", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		pkg := filepath.Base(dir)
		imports, ok := internalImports(t, dir)
		if !ok {
			continue // not a package
		}
		said, there := table[pkg]
		if !there {
			t.Errorf("docs/architecture.md: no row for internal/%s (it imports %v)", pkg, imports)
			continue
		}
		delete(table, pkg)
		if !slices.Equal(said, imports) {
			t.Errorf("docs/architecture.md: internal/%s imports %v, its row says %v", pkg, imports, said)
		}
	}
	for pkg := range table {
		t.Errorf("docs/architecture.md: a row for internal/%s, which is no package", pkg)
	}
}

// importList reads the table's imports cell: "harness, results" → [harness results], a package of the
// module outside internal/ by its path (`docs/findings`); "—" → nothing; parentheticals are comments.
func importList(cell string) []string {
	cell = strings.TrimSpace(regexp.MustCompile(` ?\([^)]*\)`).ReplaceAllString(cell, ""))
	if strings.HasPrefix(cell, "—") {
		return nil
	}
	var out []string
	for _, s := range strings.Split(cell, ",") {
		if s = strings.Trim(strings.TrimSpace(s), "`"); s != "" {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// internalImports are the packages of ours a package's non-test files import: one of internal/ by its
// name, another by its path in the module; ok is false for a folder without Go files.
func internalImports(t *testing.T, dir string) ([]string, bool) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	seen := map[string]bool{}
	any := false
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		any = true
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range parsed.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			if p, ok := strings.CutPrefix(path, "certctl-loadtest/internal/"); ok {
				seen[p] = true
			} else if p, ok := strings.CutPrefix(path, "certctl-loadtest/"); ok {
				seen[p] = true
			}
		}
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, any
}
