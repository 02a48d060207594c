package report

import (
	"path/filepath"

	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// Write writes summary.json and renders summary.txt, junit.xml and index.html into dir. index.html comes last:
// it links the files the directory holds by then, the other two included.
func Write(dir string, s results.Summary) error {
	if err := results.Write(dir, s); err != nil {
		return err
	}
	if err := output.Text(filepath.Join(dir, "summary.txt"), Text(s)); err != nil {
		return err
	}
	if err := output.Text(filepath.Join(dir, "junit.xml"), JUnit(s)); err != nil {
		return err
	}
	page, err := Index(s, results.RegularFiles(dir))
	if err != nil {
		return err
	}
	return output.Text(filepath.Join(dir, "index.html"), page)
}
