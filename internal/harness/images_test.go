package harness

import (
	"certctl-loadtest/internal/results"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadEnvFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".env")
	writeFile(t, p, "# pins\nIMAGE_K6=grafana/k6:2.2.0\n\n  IMAGE_BASE = alpine:3.19 \n")
	got, err := ReadEnvFile(p)
	if want := map[string]string{"IMAGE_K6": "grafana/k6:2.2.0", "IMAGE_BASE": "alpine:3.19"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%v %v", got, err)
	}
	writeFile(t, p, "IMAGE_K6\n")
	if _, err := ReadEnvFile(p); err == nil || !strings.Contains(err.Error(), ".env:1: not KEY=VALUE") {
		t.Errorf("a line without = : %v", err)
	}
}

// run.json says what each stand-in stood in for; an upstream run has nothing to say.
func TestImagePins(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".env"), "IMAGE_NGINX=nginx:1.27-alpine\nIMAGE_K6=grafana/k6:2.2.0\nCERTCTL_IMAGE=ghcr.io/x/server:v1\n")
	writeFile(t, filepath.Join(root, "images", "offline.env"), "IMAGE_NGINX=certctl-loadtest/offline-nginx:1.22\nPULL_POLICY=never\n")
	if got := ImagePins(root, false, []string{"PATH=/bin"}); got != nil {
		t.Errorf("upstream run: %v", got)
	}
	got := ImagePins(root, true, []string{"CERTCTL_IMAGE=certctl-loadtest/certctl-server:v1-local", "IMAGE_K6=grafana/k6:2.2.0"})
	want := map[string]string{
		"certctl-loadtest/offline-nginx:1.22":      "nginx:1.27-alpine",
		"certctl-loadtest/certctl-server:v1-local": "ghcr.io/x/server:v1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("offline run with a packaged certctl: %v, want %v", got, want)
	}
	if got := ImagePins(t.TempDir(), true, nil); got != nil {
		t.Errorf("no .env: %v", got)
	}
}

func TestExitCodes(t *testing.T) {
	seen := map[int]bool{}
	for _, e := range results.ExitCodes {
		if seen[e.Code] || e.Meaning == "" {
			t.Errorf("exit %d listed twice or without a meaning", e.Code)
		}
		seen[e.Code] = true
	}
	for _, c := range []int{results.ExitOK, results.ExitBadInput, results.ExitEnvironment, results.ExitNoResults, results.ExitThresholds, results.ExitScriptError, results.ExitAborted, results.ExitInterrupted} {
		if _, ok := results.ExitMeaning(c); !ok {
			t.Errorf("exit %d has no meaning in results.ExitCodes", c)
		}
	}
	if _, ok := results.ExitMeaning(1); ok {
		t.Error("exit 1 is not the harness's")
	}
	if got := results.ExitCodeText(); !strings.Contains(got, "  99   thresholds were breached\n") {
		t.Errorf("usage lines: %q", got)
	}
}

// checkedCopies are the places outside .env that still carry a pin, in files this test can only check:
// each must equal the pin it copies. The Dockerfiles keep a default so that a plain `docker build` works
// without compose (which always passes the pins).
var checkedCopies = []struct {
	file, re, pin string
}{
	{"cmd/f5-standin/Dockerfile", `ARG BASE_IMAGE=(\S+)`, "IMAGE_BASE"},
	{"cmd/fault-proxy/Dockerfile", `ARG BASE_IMAGE=(\S+)`, "IMAGE_BASE"},
	{"cmd/collector/Dockerfile", `ARG BASE_IMAGE=(\S+)`, "IMAGE_BASE"},
	{"cmd/tlsprobe/Dockerfile", `ARG BASE_IMAGE=(\S+)`, "IMAGE_BASE"},
}

var generatedBlock = regexp.MustCompile(`(?s)<!-- generated:(\S+) .*?<!-- end:\S+ -->`)

// An image is pinned in .env and nowhere else: no file of the repository repeats a pin, except the
// checked copies above and the blocks `make docs` generates. Recorded runs (results/, docs/baselines/, testdata/) say what ran then, and test
// code fakes compose's output with pins; neither is configuration.
func TestPinsOnlyInEnv(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pins, err := ReadEnvFile(filepath.Join(root, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	blanked := map[string]string{}
	for _, c := range checkedCopies {
		src, ok := blanked[c.file]
		if !ok {
			b, err := os.ReadFile(filepath.Join(root, c.file))
			if err != nil {
				continue // the copy is gone: nothing to check
			}
			src = string(b)
		}
		re := regexp.MustCompile(c.re)
		for _, m := range re.FindAllStringSubmatch(src, -1) {
			if m[1] != pins[c.pin] {
				t.Errorf("%s copies %s as %q; .env pins %q", c.file, c.pin, m[1], pins[c.pin])
			}
		}
		blanked[c.file] = re.ReplaceAllString(src, "")
	}
	skipDir := map[string]bool{".git": true, "results": true, "testdata": true, "bin": true, "baselines": true}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if skipDir[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == ".env" || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > 1<<20 || !info.Mode().IsRegular() {
			return nil
		}
		src, ok := blanked[filepath.ToSlash(rel)]
		if !ok {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			src = string(b)
		}
		// Blocks `make docs` renders from .env are copies a test already keeps current.
		src = generatedBlock.ReplaceAllString(src, "")
		for name, pin := range pins {
			if strings.Contains(src, pin) {
				t.Errorf("%s repeats %s's pin %s: name %s instead (.env is its one place)", rel, name, pin, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The offline kit names every stand-in in images/offline.env, for a pin .env has, under its own name:
// certctl-loadtest/offline-<folder>:<version>, never the upstream's.
func TestOfflineTags(t *testing.T) {
	root := filepath.Join("..", "..")
	pins, err := ReadEnvFile(filepath.Join(root, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	offline, err := ReadEnvFile(filepath.Join(root, "images", "offline.env"))
	if err != nil {
		t.Fatal(err)
	}
	confs, _ := filepath.Glob(filepath.Join(root, "images", "*", "image.conf"))
	if len(confs) == 0 {
		t.Fatal("no images/*/image.conf")
	}
	pinRE := regexp.MustCompile(`(?m)^PIN=(\w+)$`)
	for _, c := range confs {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(filepath.Dir(c))
		m := pinRE.FindStringSubmatch(string(b))
		if m == nil {
			t.Errorf("images/%s/image.conf has no PIN=IMAGE_…", name)
			continue
		}
		if pins[m[1]] == "" {
			t.Errorf("images/%s stands in for %s, which .env does not pin", name, m[1])
		}
		tag := offline[m[1]]
		if !regexp.MustCompile(`^certctl-loadtest/offline-` + regexp.QuoteMeta(name) + `:[0-9a-z][0-9a-z.]*$`).MatchString(tag) {
			t.Errorf("images/offline.env: %s=%q; want certctl-loadtest/offline-%s:<the version inside>", m[1], tag, name)
		}
	}
	for k := range offline {
		if _, ok := pins[k]; !ok && k != "PULL_POLICY" {
			t.Errorf("images/offline.env sets %s, which .env does not pin", k)
		}
	}
}
