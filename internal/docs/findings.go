package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"certctl-loadtest/internal/findings"
)

// FindingSections is the findings page's sections of one kind, each rendered from its record
// (docs/findings/<id>.md): its anchor and title, what the record's data says (FindingBlock), then its
// prose. The page's own words (what it is, how a run judges, each kind's introduction) stay in the page.
func FindingSections(root string, c findings.Catalog, kind string) (string, error) {
	var sections []string
	for _, e := range c.Findings {
		if e.Kind != kind {
			continue
		}
		script, err := os.ReadFile(filepath.Join(root, findings.ReproDir, e.ID+".sh"))
		if err != nil {
			return "", fmt.Errorf("finding %s: %w", e.ID, err)
		}
		sections = append(sections, fmt.Sprintf("<a id=%q></a>\n### %s\n\n%s\n%s\n", e.ID, e.Title,
			FindingBlock(c, e, findings.NeedsDatabase(string(script))), e.PageBody()))
	}
	return strings.Join(sections, "\n"), nil
}

// RegistryFile is internal/defects/registry.yaml's entries: the records' registry parts in the form
// DEFECTS_REGISTRY reads, for a team to start its own from. The block ends inside the comment that carries
// the end marker, hence the trailing "# ".
func RegistryFile(c findings.Catalog) (string, error) {
	b, err := c.RegistryYAML()
	return string(b) + "# ", err
}
