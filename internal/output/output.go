// Package output is the one writer of the files a run or a measurement leaves: summary.json, run.json,
// capacity.svg, compare.md and the rest. Every file is created 0644 without following a symbolic link
// planted in its place (results/ may be shared, and a link there would point a root-run harness at any
// file of the machine), and a file cut short is removed, since it would read as a whole one.
package output

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
)

// Create creates (or truncates) path for writing, 0644, refusing to follow a symbolic link: for a file
// written as it goes (a log, samples).
func Create(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
}

// Append opens path for writing at its end, creating it 0644, refusing to follow a symbolic link: for a
// log that several steps add to.
func Append(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
}

// Write writes b to path through Create.
func Write(path string, b []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// Text writes s to path.
func Text(path, s string) error { return Write(path, []byte(s)) }

// Marshal is v as every JSON file of ours holds it (and `--format json` prints it): indented by two
// spaces, ending in a newline.
func Marshal(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}

// JSON writes v to path as Marshal renders it.
func JSON(path string, v any) error {
	b, err := Marshal(v)
	if err != nil {
		return err
	}
	return Write(path, b)
}

// File is one file of a directory's set: its name and either its text or, when JSON is set, a value
// written as Marshal renders it.
type File struct {
	Name string
	Text string
	JSON any
}

// Files writes files into dir in their order. Every JSON value is rendered before the first file is
// written: a value that cannot be (a NaN) leaves the directory as it was, not half of a new set.
func Files(dir string, files ...File) error {
	bodies := make([][]byte, len(files))
	for i, f := range files {
		if f.JSON == nil {
			bodies[i] = []byte(f.Text)
			continue
		}
		b, err := Marshal(f.JSON)
		if err != nil {
			return err
		}
		bodies[i] = b
	}
	for i, f := range files {
		if err := Write(filepath.Join(dir, f.Name), bodies[i]); err != nil {
			return err
		}
	}
	return nil
}
