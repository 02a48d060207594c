package output

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// A link planted where a file goes is refused, and its target left alone, by every way of writing.
func TestRefusesPlantedLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	link := filepath.Join(dir, "summary.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func() error{
		"Write": func() error { return Write(link, []byte("x")) },
		"Text":  func() error { return Text(link, "x") },
		"JSON":  func() error { return JSON(link, 1) },
		"Files": func() error { return Files(dir, File{Name: "summary.json", Text: "x"}) },
		"Create": func() error {
			f, err := Create(link)
			if err == nil {
				f.Close()
			}
			return err
		},
	} {
		if err := write(); err == nil {
			t.Errorf("%s followed a symbolic link", name)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the link's target was written")
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "old.txt"), []byte("a longer file than its replacement"), 0o600)
	err := Files(dir, File{Name: "m.json", JSON: map[string]int{"a": 1}}, File{Name: "old.txt", Text: "new\n"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"m.json": "{\n  \"a\": 1\n}\n", "old.txt": "new\n"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", name, b, err, want)
		}
	}
	if st, _ := os.Stat(filepath.Join(dir, "m.json")); st.Mode().Perm() != 0o644 {
		t.Errorf("m.json is %v, want 0644", st.Mode().Perm())
	}
	// A value JSON cannot hold fails the set before any of it is written.
	err = Files(dir, File{Name: "first.txt", Text: "x"}, File{Name: "nan.json", JSON: math.NaN()})
	if err == nil {
		t.Error("NaN was written as JSON")
	}
	if _, err := os.Stat(filepath.Join(dir, "first.txt")); err == nil {
		t.Error("a set that failed left a file")
	}
}
