package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"certctl-loadtest/internal/harness"
)

// The k6 that runs in the stack (IMAGE_K6 in .env, its offline stand-in in images/offline.env) is the k6
// go.mod pins for `go tool k6` (k6 inspect, the library tests): a script the plan inspected must be the
// script the run's k6 executes.
func TestK6PinsAgree(t *testing.T) {
	root := repoRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*go\.k6\.io/k6/v\d+ v(\d+\.\d+\.\d+)\b`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod requires no go.k6.io/k6 module")
	}
	want := string(m[1])
	for _, f := range []string{".env", "images/offline.env"} {
		pins, err := harness.ReadEnvFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		img := pins["IMAGE_K6"]
		_, tag, _ := strings.Cut(img, ":")
		if tag = strings.TrimPrefix(tag, "v"); tag != want {
			t.Errorf("%s: IMAGE_K6=%s, but go.mod's k6 is v%s: raise both together", f, img, want)
		}
	}
}
