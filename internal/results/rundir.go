package results

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// RunDir is what a job summary shows of a run directory besides the summary itself.
type RunDir struct {
	Path   string   // as given, without a trailing slash; "" when the workflow found no directory
	Exists bool     // Path is a directory
	Name   string   // its own name, links resolved: results/latest is named after its run
	Files  []string // every regular file in it, relative, in byte order
}

// OpenRunDir reads what Markdown shows of a run directory: the directory and its summary.json, nil
// when the run wrote none (or one that cannot be read, which is as good as none for a summary).
func OpenRunDir(path string) (RunDir, *Summary) {
	if path != "/" {
		path = strings.TrimSuffix(path, "/")
	}
	d := RunDir{Path: path}
	if path == "" {
		return d, nil
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return d, nil
	}
	d.Exists = true
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	if abs, err := filepath.Abs(real); err == nil {
		real = abs
	}
	d.Name = filepath.Base(real)
	d.Files = RegularFiles(real)
	b, err := os.ReadFile(filepath.Join(real, "summary.json"))
	if err != nil {
		return d, nil
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return d, nil
	}
	return d, &s
}

// RegularFiles is every regular file under root, relative and slash-separated, in byte order. A
// symbolic link is left out: what it points to is no part of the run.
func RegularFiles(root string) []string {
	var files []string
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if rel, err := filepath.Rel(root, p); err == nil {
				files = append(files, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	sort.Strings(files)
	return files
}
