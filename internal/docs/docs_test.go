package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// K6Inspector runs the k6 pinned in go.mod.
func k6Inspector(root string) Inspector {
	return func(script string) ([]byte, error) {
		cmd := exec.Command("go", "tool", "k6", "inspect", script)
		cmd.Dir = root
		cmd.Env = CleanEnv(os.Environ())
		return cmd.Output()
	}
}

// The generated tables in the docs match what the code says; `loadtest docs` rewrites them.
func TestDocsMatchTheCode(t *testing.T) {
	root := repoRoot(t)
	blocks, err := Blocks(root, k6Inspector(root))
	if err != nil {
		t.Fatal(err)
	}
	stale, err := Sync(root, blocks, Documents, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("generated tables out of date in %s: run `make docs`", strings.Join(stale, ", "))
	}
}

func TestReplaceNeedsMarkers(t *testing.T) {
	doc := []byte("a\n<!-- generated:x do not edit -->\nold\n<!-- end:x -->\nb\n")
	out, changed, err := Replace(doc, "x", "new\n")
	if err != nil || !changed || string(out) != "a\n<!-- generated:x do not edit -->\nnew\n<!-- end:x -->\nb\n" {
		t.Fatalf("%q %v %v", out, changed, err)
	}
	if _, _, err := Replace([]byte("no markers"), "x", ""); err == nil {
		t.Fatal("a document without markers was accepted")
	}
}

func TestUnscoped(t *testing.T) {
	for in, want := range map[string]string{
		"http_req_duration{scenario:s}":        "http_req_duration",
		"checks{target_type:nginx,scenario:s}": "checks{target_type:nginx}",
		"dropped_iterations{scenario:s}":       "dropped_iterations",
	} {
		if got := unscoped(in, "s"); got != want {
			t.Errorf("%s: %s", in, got)
		}
	}
}
