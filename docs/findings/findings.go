// Package findings is certctl's findings as data, one record a finding: <id>.md, whose YAML front
// matter holds its claim, its code at each build, its part of the defects registry and its sentence in a
// run's summary, and whose body is its section's prose; builds.yaml names the builds the records speak of.
// internal/findings reads them, and everything that lists findings is rendered from that reading
// (README.md here says how to add one).
package findings

import (
	"embed"
	"io/fs"
)

// The records live beside the page and the scripts they belong to, and go:embed reaches no folder above
// the package that embeds: hence a package of its own here, which imports nothing of the harness.
//
//go:embed *.md builds.yaml
var files embed.FS

// Files is every record, this folder's README.md and builds.yaml.
func Files() fs.FS { return files }
