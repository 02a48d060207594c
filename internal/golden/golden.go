// Package golden holds rendered output to files in a test package's testdata/: a test fails when what
// it renders differs, and `go test <package> -update` rewrites the files to be read in the diff.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Check compares got with testdata/name, after writing it there under -update.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update in this package writes it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what was rendered (go test -update in this package, then read the diff):\n%s", path, got)
	}
}

// Update reports whether the test run rewrites golden files (-update).
func Update() bool { return *update }
