package report

import (
	"path/filepath"

	"certctl-loadtest/internal/results"
)

// Write writes summary.json and renders summary.txt and index.html into dir. index.html comes last:
// it links the files the directory holds by then, the other two included.
func Write(dir string, s results.Summary) error {
	if err := results.Write(dir, s); err != nil {
		return err
	}
	if err := results.WriteFile(filepath.Join(dir, "summary.txt"), []byte(Text(s))); err != nil {
		return err
	}
	page, err := Index(s, results.RegularFiles(dir))
	if err != nil {
		return err
	}
	return results.WriteFile(filepath.Join(dir, "index.html"), []byte(page))
}
