package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"certctl-loadtest/internal/harness"
)

// Tests that fail when prose restates a fact the code defines and the two disagree: the facts the
// generated blocks cannot carry because they sit inside a sentence, a help line or a workflow input.

var (
	rowsOnce sync.Once
	rowsVal  []Row
	rowsErr  error
)

var (
	inspectMu   sync.Mutex
	inspectSeen = map[string][]byte{}
)

// sharedInspector is K6Inspector remembering each script's answer, so this package's tests inspect
// every scenario once between them (each pass is dozens of k6 processes).
func sharedInspector(root string) Inspector {
	k6 := K6Inspector(root)
	return func(script string) ([]byte, error) {
		inspectMu.Lock()
		out, ok := inspectSeen[script]
		inspectMu.Unlock()
		if ok {
			return out, nil
		}
		out, err := k6(script)
		if err == nil {
			inspectMu.Lock()
			inspectSeen[script] = out
			inspectMu.Unlock()
		}
		return out, err
	}
}

// inspectedRows is every scenario as k6 resolves it, inspected once for the tests that need it.
func inspectedRows(t *testing.T) []Row {
	t.Helper()
	root := repoRoot(t)
	rowsOnce.Do(func() { rowsVal, rowsErr = Collect(root, sharedInspector(root)) })
	if rowsErr != nil {
		t.Fatal(rowsErr)
	}
	return rowsVal
}

// proseFiles are the files whose sentences state facts about the harness: the docs, the Makefile's
// help, the workflows' inputs and the harness's own messages.
func proseFiles(t *testing.T, root string) []string {
	var files []string
	for _, g := range []string{"*.md", "docs/*.md", "seed/*.md", "images/*.md", "Makefile", ".github/workflows/*.yml",
		".github/actions/*/action.yml", "internal/harness/*.go"} {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 10 {
		t.Fatalf("found only %d prose files under %s", len(files), root)
	}
	return files
}

func readRel(t *testing.T, root, f string) (rel, text string) {
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ = filepath.Rel(root, f)
	return rel, string(b)
}

// tierTokenRE splits a phrase listing tiers: names, commas, "and", "+", parentheticals (a tier's reason).
var tierTokenRE = regexp.MustCompile(`^\s*(\([^()]*(?:\([^()]*\)[^()]*)*\)|,|\+|[A-Za-z0-9_./-]+)`)

// tiersAfter reads the tier names listed from the start of s: "scale, limiter (why) and pki; …" →
// scale, limiter, pki. It stops at the first word that is not a tier name or a separator.
func tiersAfter(s string, known map[string][]harness.Scenario) []string {
	s = strings.ReplaceAll(s, "`", "")
	var out []string
	for {
		m := tierTokenRE.FindStringSubmatch(s)
		if m == nil {
			return out
		}
		tok := m[1]
		switch _, isTier := known[tok]; {
		case isTier:
			out = append(out, tok)
		case tok == "," || tok == "+" || tok == "and" || strings.HasPrefix(tok, "("):
		default:
			return out
		}
		s = s[len(m[0]):]
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}

// Wherever a sentence says what TIER=all leaves out ("every tier but …"), what TIER=default runs
// ("`default` is api,connector"), or which tiers there are ("folders of `k6/` (…)"), it names the
// tiers the code does.
func TestTierPhrasesMatchTheCode(t *testing.T) {
	root := repoRoot(t)
	known, err := harness.DiscoverTiers(root)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for tier := range known {
		all = append(all, tier)
	}
	phrases := []struct {
		re   *regexp.Regexp
		want []string
		what string
	}{
		{regexp.MustCompile(`every\s+tier\s+but\s+`), harness.AllExcluded(), "TIER=all leaves out"},
		{regexp.MustCompile("\\bdefault`?(?: is|:| =) "), harness.DefaultTiers(), "TIER=default runs"},
		{regexp.MustCompile("folders of `?k6/`? \\("), all, "the tiers are"},
	}
	checked := 0
	for _, f := range proseFiles(t, root) {
		rel, text := readRel(t, root, f)
		for _, p := range phrases {
			for _, loc := range p.re.FindAllStringIndex(text, -1) {
				got := tiersAfter(text[loc[1]:], known)
				if len(got) == 0 {
					continue // "default: 5m" and the like: not a list of tiers
				}
				checked++
				if !sameSet(got, p.want) {
					line := strings.Count(text[:loc[0]], "\n") + 1
					t.Errorf("%s:%d says %s %s; the code: %s", rel, line, p.what, strings.Join(got, ", "), strings.Join(p.want, ", "))
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d tier phrases found: has the wording changed under this test?", checked)
	}
}

// tiersAfter reads a phrase the way the test needs: through parentheticals, up to the first other word.
func TestTiersAfter(t *testing.T) {
	known := map[string][]harness.Scenario{"scale": nil, "limiter": nil, "deploy": nil, "pki": nil, "api": nil, "connector": nil}
	for in, want := range map[string]string{
		"`scale`, `limiter` (which runs alone, with x), `deploy` (real agents: docs/deploy.md) and `pki` (y).": "scale limiter deploy pki",
		"scale; scale = every scale scenario":             "scale",
		"api + connector (as make loadtest); all = …":     "api connector",
		"deploy, limiter, pki and scale, `make loadtest`": "deploy limiter pki scale",
		"5m": "",
	} {
		if got := strings.Join(tiersAfter(in, known), " "); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// `make help` and the workflow's dispatch input say what TIER=all does in the code's own words.
func TestMakeHelpAndWorkflowSayWhatAllIs(t *testing.T) {
	root := repoRoot(t)
	_, mk := readRel(t, root, filepath.Join(root, "Makefile"))
	if want := "TIER=all runs " + harness.AllMeaning(); !strings.Contains(mk, want) {
		t.Errorf("Makefile: no help line says %q", want)
	}
	_, wf := readRel(t, root, filepath.Join(root, ".github", "workflows", "loadtest.yml"))
	desc := regexp.MustCompile(`(?m)^\s+tier:\n(?:\s*#.*\n)*\s+description: "([^"]*)"\n\s+type: choice\n\s+options: \[([^\]]*)\]`).FindStringSubmatch(wf)
	if desc == nil {
		t.Fatal(".github/workflows/loadtest.yml: no tier input with a description and options")
	}
	if want := "all = " + harness.AllMeaning(); !strings.Contains(desc[1], want) {
		t.Errorf("workflow tier input: %q does not say %q", desc[1], want)
	}
	if want := "default = " + strings.Join(harness.DefaultTiers(), " + "); !strings.Contains(desc[1], want) {
		t.Errorf("workflow tier input: %q does not say %q", desc[1], want)
	}
	known, _ := harness.DiscoverTiers(root)
	for _, o := range strings.Split(desc[2], ",") {
		o = strings.TrimSpace(o)
		// The aliases, and the spot checks (k6/spotcheck: a command of their own, not a tier).
		if _, ok := known[o]; !ok && o != "default" && o != "all" && o != "spotcheck" {
			t.Errorf("workflow tier input offers %q, which is no tier", o)
		}
	}
}

// The methodology's promise: every arrival-rate scenario fails when it did not deliver its load.
func TestArrivalRateScenariosBudgetDroppedIterations(t *testing.T) {
	for _, r := range inspectedRows(t) {
		if !strings.HasSuffix(r.Executor, "arrival-rate") {
			continue
		}
		if !slices.Contains(r.Thresholds["dropped_iterations"], "count==0") {
			t.Errorf("%s (%s) has no dropped_iterations count==0 threshold", r.Script, r.Executor)
		}
	}
}

// The registry's SEED_BULK_CERTS entry states the seed at the defaults in words: it is the harness's.
func TestBulkSeedStatedInTheRegistry(t *testing.T) {
	n, _, err := BulkSeedAtDefaults(inspectedRows(t))
	if err != nil {
		t.Fatal(err)
	}
	k, _ := harness.LookupKnob("SEED_BULK_CERTS")
	if want := strconv.Itoa(n) + " at the defaults"; !strings.Contains(k.Doc, want) {
		t.Errorf("harness.Knobs SEED_BULK_CERTS says %q; the harness seeds %d at the defaults", k.Doc, n)
	}
}

// codeLines are the lines of a document's fenced code blocks, continuations joined, comments dropped.
func codeLines(text string) []string {
	var out []string
	in := false
	var cont string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if !in {
			continue
		}
		if c, ok := strings.CutSuffix(strings.TrimRight(l, " "), "\\"); ok {
			cont += c + " "
			continue
		}
		l = cont + l
		cont = ""
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		out = append(out, l)
	}
	return out
}

var (
	makeCallRE = regexp.MustCompile(`\bmake ([a-z0-9-]+)`)
	assignRE   = regexp.MustCompile(`\b([A-Z][A-Z0-9_]*)=(\S*)`)
)

// A documented command that sizes the scale seed (SEED_BULK_CERTS=…, SEED_AGENTS=…) runs something
// that seeds: the scale tier, or a scenario that brings the scale seeder. `make loadtest` with
// SEED_* does not, and the seed README once said it did.
func TestSeedingCommandsSeed(t *testing.T) {
	root := repoRoot(t)
	_, mk := readRel(t, root, filepath.Join(root, "Makefile"))
	checked := 0
	for _, f := range proseFiles(t, root) {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		rel, text := readRel(t, root, f)
		for _, line := range codeLines(text) {
			call := makeCallRE.FindStringSubmatch(line)
			if call == nil || !strings.Contains(line, "SEED_BULK_CERTS=") && !strings.Contains(line, "SEED_AGENTS=") {
				continue
			}
			checked++
			env := map[string]string{"RUN_ID": "docs-check"}
			for _, m := range assignRE.FindAllStringSubmatch(line, -1) {
				env[m[1]] = m[2]
			}
			recipe := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(call[1]) + `:[^\n]*\n\t@LOADTEST_GOAL=\$@ ((?:[A-Z_]+=\S+ )*)\$\(LOADTEST\) run\b`).FindStringSubmatch(mk)
			if recipe == nil {
				t.Errorf("%s: %q: make %s is no target that runs a load", rel, line, call[1])
				continue
			}
			// The recipe's own assignments win over make's command line: they are the command's environment.
			for _, m := range assignRE.FindAllStringSubmatch(recipe[1], -1) {
				env[m[1]] = m[2]
			}
			c, err := harness.Load(root, func(k string) string { return env[k] }, time.Now())
			if err != nil {
				t.Errorf("%s: %q: %v", rel, line, err)
				continue
			}
			if !slices.Contains(c.Tiers, "scale") && !slices.Contains(c.Profiles, "scale") {
				t.Errorf("%s: %q runs %v, which the scale seeder does not seed: SEED_* changes nothing", rel, line, c.Tiers)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no documented command sets SEED_BULK_CERTS or SEED_AGENTS: has the wording changed under this test?")
	}
}

// A documented psql command that applies a seed needing the base rows gives every id those seeds
// require, with the registry's values when it spells them out: the seeds name a missing id and
// insert nothing.
func TestPsqlSeedCommandsGiveTheIds(t *testing.T) {
	root := repoRoot(t)
	vars, err := SeedVariables(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range proseFiles(t, root) {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		rel, text := readRel(t, root, f)
		for _, line := range codeLines(text) {
			if !strings.Contains(line, "psql") || !regexp.MustCompile(`-f \S*0[1-9]_\w+\.sql`).MatchString(line) {
				continue
			}
			checked++
			for _, v := range vars {
				if !strings.HasSuffix(v.Psql, "_id") {
					continue // counts default inside the seeds
				}
				m := regexp.MustCompile(`-v ` + v.Psql + `=(\S+)`).FindStringSubmatch(line)
				switch {
				case m == nil:
					t.Errorf("%s: %q gives no %s: the seed stops and inserts nothing", rel, line, v.Psql)
				case m[1] != "…" && m[1] != v.Knob.Default:
					t.Errorf("%s: %q gives %s=%s; the base rows' id is %s (%s)", rel, line, v.Psql, m[1], v.Knob.Default, v.Knob.Name)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no documented psql command applies a seed: has the wording changed under this test?")
	}
}

// A knob's default quoted in a sentence ("`SEED_BULK_CERTS` (10,000)", "(SEED_AGENTS, default 5000)",
// "`REQUEST_TIMEOUT` (10 s by default)") is the registry's.
func TestQuotedKnobDefaults(t *testing.T) {
	root := repoRoot(t)
	res := []*regexp.Regexp{
		regexp.MustCompile("`([A-Z][A-Z0-9_]+)` \\((\\d[\\d,]*)\\)"),
		regexp.MustCompile("`?([A-Z][A-Z0-9_]+)`?,? default `?([^\\s`),;]+)`?( in certctl)?"),
		regexp.MustCompile("`?([A-Z][A-Z0-9_]+)`? \\(default `?([^`(),\\n]+?)`?[),]( in certctl)?"),
		regexp.MustCompile("`([A-Z][A-Z0-9_]+)` \\(([^()]+?) by default\\)"),
	}
	checked := 0
	for _, f := range proseFiles(t, root) {
		if strings.HasSuffix(f, ".go") {
			continue
		}
		rel, text := readRel(t, root, f)
		for _, re := range res {
			for _, m := range re.FindAllStringSubmatch(text, -1) {
				k, ok := harness.LookupKnob(m[1])
				if !ok || k.Default == "" || len(m) > 3 && m[len(m)-1] != "" { // certctl's own default, not the harness's
					continue
				}
				checked++
				got := strings.NewReplacer(",", "", " ", "").Replace(m[2])
				if got != k.Default {
					t.Errorf("%s: %q quotes %s's default as %s; the registry says %s", rel, m[0], m[1], m[2], k.Default)
				}
			}
		}
	}
	if checked < 3 {
		t.Fatalf("only %d quoted knob defaults found: has the wording changed under this test?", checked)
	}
}

// A port the prose says something listens on ("127.0.0.1:9090 and :3000") is one a compose file
// publishes there.
func TestQuotedPortsArePublished(t *testing.T) {
	root := repoRoot(t)
	_, ports, err := PublishedPorts(root)
	if err != nil {
		t.Fatal(err)
	}
	published := map[string]bool{}
	for _, p := range ports {
		published[p.Address+":"+p.Host] = true
	}
	re := regexp.MustCompile(`\b(127\.0\.0\.1):(\d+)\b(?: and :(\d+)\b)?`)
	checked := 0
	for _, f := range proseFiles(t, root) {
		if strings.HasSuffix(f, ".go") {
			continue // the code's 127.0.0.1 is inside a container (k6's REST API), not the host
		}
		rel, text := readRel(t, root, f)
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			for _, port := range []string{m[2], m[3]} {
				if port == "" {
					continue
				}
				checked++
				if !published[m[1]+":"+port] {
					t.Errorf("%s: %q: no compose file publishes %s:%s", rel, m[0], m[1], port)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no port quoted in the docs: has the wording changed under this test?")
	}
}
