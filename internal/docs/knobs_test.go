package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/results"

	"gopkg.in/yaml.v3"
)

// The registry (harness.Knobs) is the one place a default lives. Every other place that falls back to
// a value when a variable is unset (the Go code, k6 scripts, docker-compose.yml, .env, the seeds) must
// fall back to the registry's, and images fall back to nothing: .env pins them.
func TestKnobDefaultsAgree(t *testing.T) {
	root := repoRoot(t)
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	agree := func(where, name, fallback string) {
		t.Helper()
		k, ok := harness.LookupKnob(name)
		switch {
		case !ok:
			t.Errorf("%s falls back for %s, which harness.Knobs does not list", where, name)
		case k.Note == harness.PinnedInEnv:
			t.Errorf("%s falls back to %q for %s: images are pinned in .env only", where, fallback, name)
		case k.Default == "" && fallback != "":
			t.Errorf("%s falls back to %q for %s, which has no literal default (%s)", where, fallback, name, k.Note)
		case fallback != "" && fallback != k.Default:
			t.Errorf("%s falls back to %q for %s; the registry says %q", where, fallback, name, k.Default)
		}
	}

	// Go: get("NAME", "literal") in the harness; KnobDefault("NAME") must name a knob with a default.
	goFiles, _ := filepath.Glob(filepath.Join(root, "internal", "*", "*.go"))
	goFiles = append(goFiles, must(filepath.Glob(filepath.Join(root, "cmd", "*", "*.go")))...)
	getRE := regexp.MustCompile(`get\("([A-Z][A-Z0-9_]+)",\s*"([^"]*)"\)`)
	defRE := regexp.MustCompile(`KnobDefault\("([^"]+)"\)`)
	for _, f := range goFiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		rel, _ := filepath.Rel(root, f)
		src := read(rel)
		for _, m := range getRE.FindAllStringSubmatch(src, -1) {
			agree(rel, m[1], m[2])
		}
		for _, m := range defRE.FindAllStringSubmatch(src, -1) {
			if k, ok := harness.LookupKnob(m[1]); !ok || k.Default == "" {
				t.Errorf("%s: KnobDefault(%q) names no knob with a literal default", rel, m[1])
			}
		}
	}

	// k6: a literal after `||` for a variable, and every knob() a script calls.
	var jsFiles []string
	filepath.WalkDir(filepath.Join(root, "k6"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".js") && !strings.Contains(p, "/k6/test/") {
			jsFiles = append(jsFiles, p)
		}
		return nil
	})
	fallbackRE := regexp.MustCompile(`\b(?:__ENV|env|e)\.([A-Z][A-Z0-9_]+)\s*\|\|\s*['"]([^'"]*)['"]`)
	knobCallRE := regexp.MustCompile(`\bknob\(\s*\w+,\s*(?:'([A-Z][A-Z0-9_]+)'|\x60[^\x60]*\x60)(?:,\s*'([^']+)')?\)`)
	for _, f := range jsFiles {
		rel, _ := filepath.Rel(root, f)
		src := read(rel)
		for _, m := range fallbackRE.FindAllStringSubmatch(src, -1) {
			agree(rel, m[1], m[2])
		}
		for _, m := range knobCallRE.FindAllStringSubmatch(src, -1) {
			name := m[1]
			if m[2] != "" {
				name = m[2]
			}
			if k, ok := harness.LookupKnob(name); !ok || k.Name != name || !k.ReadBy("k6") || k.Default == "" {
				t.Errorf("%s: knob(…, %q): the registry has no k6 default by that name (read by k6, literal default)", rel, name)
			}
		}
	}

	// docker-compose.yml: ${NAME:-fallback}. An empty fallback passes "unset" on, which is no default.
	composeRE := regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*):-([^}$]*)\}`)
	for _, file := range []string{"docker-compose.yml", "compose.external.yml", "compose.observability.yml"} {
		for _, m := range composeRE.FindAllStringSubmatch(read(file), -1) {
			if _, ok := harness.LookupKnob(m[1]); !ok {
				continue // set for the containers, not a knob (RUN_DIR)
			}
			agree(file, m[1], m[2])
		}
	}
	if m := regexp.MustCompile(`\$\{(IMAGE_[A-Z0-9_]+|CERTCTL_IMAGE)\}`).FindString(read("docker-compose.yml")); m != "" {
		t.Errorf("docker-compose.yml reads %s without :?: an image missing from .env must stop compose", m)
	}

	// .env holds the image pins and nothing else; every image knob is pinned there.
	env, err := harness.ReadEnvFile(filepath.Join(root, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range env {
		if k, ok := harness.LookupKnob(name); !ok || k.Note != harness.PinnedInEnv {
			t.Errorf(".env sets %s=%s: .env holds image pins only; other defaults are the registry's", name, v)
		}
	}
	for _, k := range harness.Knobs {
		if k.Note == harness.PinnedInEnv && env[k.Name] == "" {
			t.Errorf("%s is an image knob, but .env pins no %s", k.Name, k.Name)
		}
	}

	// Seeds: the count defaults inside the SQL; the ids have none (every caller passes them).
	vars, err := SeedVariables(root)
	if err != nil {
		t.Fatal(err)
	}
	byPsql := map[string]harness.Knob{}
	for _, v := range vars {
		byPsql[v.Psql] = v.Knob
	}
	countRE := regexp.MustCompile(`coalesce\(nullif\(btrim\(:'(\w+)'\), ''\), '([^']*)'\)`)
	sqlFiles := must(filepath.Glob(filepath.Join(root, "seed", "*.sql")))
	sqlFiles = append(sqlFiles, must(filepath.Glob(filepath.Join(root, "seed", "*", "*.sql")))...)
	counts := 0
	for _, f := range sqlFiles {
		rel, _ := filepath.Rel(root, f)
		src := read(rel)
		for _, m := range countRE.FindAllStringSubmatch(src, -1) {
			k, ok := byPsql[m[1]]
			if !ok {
				t.Errorf("%s defaults psql variable %s, which docker-compose.yml does not pass", rel, m[1])
				continue
			}
			counts++
			agree(rel, k.Name, m[2])
		}
		for _, k := range harness.Knobs {
			if strings.HasPrefix(k.Name, "LT_") && strings.Contains(src, k.Default) {
				t.Errorf("%s names %s's default %q: the seeds take the ids from their callers", rel, k.Name, k.Default)
			}
		}
	}
	if counts == 0 {
		t.Error("no count default found in seed/*.sql: the pattern above is stale")
	}
}

// Every variable the seeders get is passed the same way by both seeders and names a knob.
func TestSeedVariablesAreKnobs(t *testing.T) {
	vars, err := SeedVariables(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range vars {
		names = append(names, v.Psql+"←"+v.Knob.Name)
	}
	want := "team_id←LT_TEAM_ID owner_id←LT_OWNER_ID policy_id←LT_POLICY_ID issuer_id←LT_ISSUER_ID profile_id←LT_PROFILE_ID per_target←DEPLOY_CERTS_PER_TARGET bulk_certs←SEED_BULK_CERTS agent_count←SEED_AGENTS inventory_certs←SEED_INVENTORY growth_audit←SEED_INVENTORY_AUDIT"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("seed variables:\n got %s\nwant %s", got, want)
	}
}

func TestLookupKnob(t *testing.T) {
	for in, want := range map[string]string{
		"DURATION": "DURATION", "RATE_LIST_CERTIFICATES": "RATE_<SCENARIO>", "CONNECTOR_F5_URL": "CONNECTOR_<TYPE>_URL",
		"VUS_ACME_BURST": "VUS_<SCENARIO>", "RATE_": "", "PATH": "", "CONNECTOR_URL": "",
	} {
		k, ok := harness.LookupKnob(in)
		if k.Name != want || ok != (want != "") {
			t.Errorf("LookupKnob(%s) = %q %v, want %q", in, k.Name, ok, want)
		}
	}
}

func TestDefaultCell(t *testing.T) {
	pins := map[string]string{"IMAGE_K6": "grafana/k6:9"}
	for _, c := range []struct {
		k    harness.Knob
		want string
	}{
		{harness.Knob{Default: "5m"}, "`5m`"},
		{harness.Knob{Note: "the scenario's"}, "the scenario's"},
		{harness.Knob{Default: "manual", Note: "`loadtest run`: generated"}, "`manual` (`loadtest run`: generated)"},
		{harness.Knob{Name: "IMAGE_K6", Note: harness.PinnedInEnv}, "`grafana/k6:9` (`.env`)"},
		{harness.Knob{Name: "IMAGE_X", Note: harness.PinnedInEnv}, harness.PinnedInEnv},
	} {
		if got := defaultCell(c.k, pins); got != c.want {
			t.Errorf("%+v: %q, want %q", c.k, got, c.want)
		}
	}
}

// The k6 block is a module body that ends inside the end marker's comment.
func TestK6Defaults(t *testing.T) {
	got := K6Defaults([]harness.Knob{
		{Name: "A", Default: "1", Read: "k6"}, {Name: "B", Default: "2", Read: "compose"}, {Name: "C", Note: "x", Read: "k6"},
		{Name: "CONNECTOR_<TYPE>_URL", Default: "https://<type>/", Read: "loadtest, k6"},
	})
	want := "export const DEFAULTS = Object.freeze({\n  \"A\": \"1\",\n  \"CONNECTOR_<TYPE>_URL\": \"https://<type>/\",\n});\n// "
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestExitCodeTable(t *testing.T) {
	got := ExitCodeTable([]results.ExitCode{{Code: 0, Meaning: "fine"}, {Code: 99, Meaning: "breached"}})
	if want := "| exit | meaning |\n|---|---|\n| 0 | fine |\n| 99 | breached |\n"; got != want {
		t.Errorf("got %q", got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// K6Env passes every knob k6 reads by name, but those compose's k6 service sets in its own environment:
// harness.K6ServiceEnv must name exactly the knobs that environment sets, or a knob reaches k6 twice or
// not at all.
func TestK6ServiceEnv(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Environment map[string]any `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var sets []string
	for name := range doc.Services["k6"].Environment {
		if k, ok := harness.LookupKnob(name); ok && k.ReadBy("k6") {
			sets = append(sets, name)
		}
	}
	want := append([]string(nil), harness.K6ServiceEnv...)
	sort.Strings(sets)
	sort.Strings(want)
	if !slices.Equal(sets, want) {
		t.Errorf("the k6 service sets the knobs %v; harness.K6ServiceEnv says %v", sets, want)
	}
	for _, name := range want {
		if harness.K6Env(name) {
			t.Errorf("%s is passed by name although the k6 service sets it", name)
		}
	}
	if !harness.K6Env("RATE_LIST_CERTIFICATES") || !harness.K6Env("DEPLOY_STUCK_AFTER") || harness.K6Env("K6_OUT") || harness.K6Env("TIER") {
		t.Error("K6Env: a k6 knob not passed, or K6_OUT or a harness-only knob passed")
	}
}
