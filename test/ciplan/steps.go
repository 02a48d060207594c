package ciplan

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Step is one step of CI as .ci/run runs it: a command of its own, or a target make runs for it, in
// order. Its name is the key of its measured cost (.ci/costs.tsv).
type Step struct {
	Name string
	Via  string // the line of .ci/run that runs it
}

// plumbing are the lines of a shell script that set the shell up rather than run a step.
var plumbing = regexp.MustCompile(`^(set |cd |export |mkdir -p |if |then$|else$|fi$|[A-Za-z_][A-Za-z0-9_]*=|\[ |\{$|\}$|#)`)

// stepRE is a step that names itself: scripts/ci-step.sh NAME COMMAND...
var stepRE = regexp.MustCompile(`^scripts/ci-step\.sh\s+(\S+)\s`)

// Steps reads CI's steps from the script (.ci/run) and the Makefile: every line of the script that runs
// a command is a step (a step runs through scripts/ci-step.sh, which records its cost, and is named by
// it); `make T` is each target T needs, in the order make runs them, that has a recipe of its own.
func Steps(script, makefile string) ([]Step, error) {
	rules, vars := parseMakefile(makefile)
	var steps []Step
	for _, raw := range strings.Split(script, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#!") || plumbing.MatchString(line) {
			continue
		}
		if m := stepRE.FindStringSubmatch(line + " "); m != nil {
			steps = append(steps, Step{Name: m[1], Via: line})
			continue
		}
		if rest, ok := strings.CutPrefix(line, "make "); ok {
			var seen []string
			for _, target := range strings.Fields(rest) {
				if strings.Contains(target, "=") {
					continue
				}
				if _, ok := rules[target]; !ok {
					return nil, fmt.Errorf("%q: the Makefile has no target %s", line, target)
				}
				for _, t := range order(rules, vars, target, &seen) {
					steps = append(steps, Step{Name: t, Via: line})
				}
			}
			continue
		}
		// A command that does not say which step it is: planned only if a cost is recorded under its line.
		steps = append(steps, Step{Name: line, Via: line})
	}
	return steps, nil
}

type rule struct {
	prereqs []string
	recipe  bool
}

// parseMakefile reads the Makefile's rules (their prerequisites, whether they have a recipe) and its
// simple variables, enough to follow `make test` to the targets that do the work.
func parseMakefile(src string) (map[string]rule, map[string]string) {
	rules, vars := map[string]rule{}, map[string]string{}
	assign := regexp.MustCompile(`^([A-Z_][A-Z0-9_]*)\s*:?=\s*(.*)$`)
	ruleRE := regexp.MustCompile(`^([^\s:#=][^:=]*):(?:[^=]|$)(.*)$`)
	var current string
	for _, l := range strings.Split(src, "\n") {
		if m := assign.FindStringSubmatch(l); m != nil {
			vars[m[1]] = strings.TrimSpace(m[2])
			current = ""
			continue
		}
		if strings.HasPrefix(l, "\t") {
			if current != "" {
				r := rules[current]
				r.recipe = true
				rules[current] = r
			}
			continue
		}
		m := ruleRE.FindStringSubmatch(l)
		if m == nil || strings.HasPrefix(m[1], ".") {
			current = ""
			continue
		}
		deps, _, _ := strings.Cut(l[len(m[1])+1:], "##")
		name := expand(strings.TrimSpace(m[1]), vars)
		rules[name] = rule{prereqs: strings.Fields(deps)}
		current = name
	}
	return rules, vars
}

// expand replaces $(VAR) by the Makefile's value of VAR.
func expand(s string, vars map[string]string) string {
	return regexp.MustCompile(`\$\(([A-Z_][A-Z0-9_]*)\)`).ReplaceAllStringFunc(s, func(v string) string {
		if x, ok := vars[v[2:len(v)-1]]; ok {
			return x
		}
		return v
	})
}

// order is target and what it needs as make runs them: prerequisites first, each once; a file that is
// not a target (a source) is not a step.
func order(rules map[string]rule, vars map[string]string, target string, seen *[]string) []string {
	if slices.Contains(*seen, target) {
		return nil
	}
	*seen = append(*seen, target)
	r, ok := rules[target]
	if !ok {
		return nil
	}
	var out []string
	for _, p := range r.prereqs {
		p = expand(p, vars)
		if strings.Contains(p, "$(") {
			continue // a list of sources ($(GO_SOURCES)): files, not steps
		}
		out = append(out, order(rules, vars, p, seen)...)
	}
	if r.recipe {
		out = append(out, target)
	}
	return out
}

// ReadSteps is Steps of the repository at root.
func ReadSteps(root string) ([]Step, error) {
	script, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		return nil, err
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, err
	}
	return Steps(string(script), string(mk))
}
