package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"certctl-loadtest/internal/harness"
)

func repoRoot(t *testing.T) string {
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The generated tables in the docs match what the code says; `loadtest docs` rewrites them.
func TestDocsMatchTheCode(t *testing.T) {
	root := repoRoot(t)
	blocks, err := Blocks(root, sharedInspector(root))
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

// Every variable the code reads is in the configuration table (harness.Knobs).
func TestEveryKnobIsDocumented(t *testing.T) {
	root := repoRoot(t)
	documented := map[string]bool{}
	var patterns []*regexp.Regexp
	for _, k := range harness.Knobs {
		for _, n := range strings.Split(k.Name, ", ") {
			if strings.Contains(n, "<") {
				patterns = append(patterns, regexp.MustCompile("^"+regexp.MustCompile(`<[A-Z]+>`).ReplaceAllString(n, "[A-Z0-9_]+")+"$"))
			} else {
				documented[n] = true
			}
		}
	}
	// Set for the containers, not read from the caller: not knobs.
	notKnobs := map[string]bool{"PGPASSWORD": true, "RESULTS_DIR": false, "SSL_CERT_FILE": true, "LOADTEST_GOAL": true, "RUN_DIR": true, "LT_OWNER": true, "PG_SHARED_PRELOAD": true, "COLLECT_STATEMENTS": true,
		// Set by loadtest for k6 and compose, from the knobs: a segment's name, TARGET=external's TLS settings
		// and its k6's LT_TARGET (compose.external.yml, the k8s TestRun).
		"LT_SEGMENT": true, "LT_SSL_CERT_FILE": true, "LT_CA_BUNDLE": true, "LT_INSECURE_SKIP_TLS_VERIFY": true, "LT_TARGET": true,
		// Set by loadtest findings: a viewer key beside the admin one (docs/findings/repro/read-only-keys.sh).
		"LT_MORE_KEYS": true,
		// Set by test/k6lib for k6/test/lib.test.js (a test function left out), not by anyone running loads.
		"LIB_TEST_SKIP": true}
	reads := map[string]*regexp.Regexp{
		"k6/lib/*.js":           regexp.MustCompile(`(?:env|__ENV)(?:\.([A-Z][A-Z0-9_]+)|\[\x60([A-Z_]+)\$)`),
		"k6/*/*.js":             regexp.MustCompile(`__ENV\.([A-Z][A-Z0-9_]+)`),
		"internal/harness/*.go": regexp.MustCompile(`get\("([A-Z][A-Z0-9_]+)",`),
		"docker-compose.yml":    regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]+)`),
		"compose.external.yml":  regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]+)`),
		"compose.*.yml":         regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]+)`),
	}
	for glob, re := range reads {
		files, _ := filepath.Glob(filepath.Join(root, glob))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				name := m[1]
				if name == "" && len(m) > 2 {
					name = m[2] + "X" // RATE_${…} style: a pattern instance
				}
				if documented[name] || notKnobs[name] || strings.HasPrefix(name, "K6_") {
					continue
				}
				ok := false
				for _, p := range patterns {
					ok = ok || p.MatchString(name)
				}
				if !ok {
					t.Errorf("%s reads %s, which docs/configuration.md (harness.Knobs) does not list", filepath.Base(f), name)
				}
			}
		}
	}
}
