package harness

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The package's files stand in layers: a file uses names (types, functions, methods, fields) only of
// files below it, so each can be read knowing only what is under it. A name used back up closes a
// circle of files; this lists each circle with the names that tie it. Uses are read by the type
// checker, so a field and a function of one name, or a word in a comment, are not taken for each other.
func TestFilesUseOnlyFilesBelow(t *testing.T) {
	fset := token.NewFileSet()
	names, _ := filepath.Glob("*.go")
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("certctl-loadtest/internal/harness", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	uses := map[string]map[string][]string{} // file → file it uses → the names
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() || !declaredOnce(obj, pkg) {
			continue
		}
		from, to := filepath.Base(fset.File(id.Pos()).Name()), filepath.Base(fset.File(obj.Pos()).Name())
		if from == to {
			continue
		}
		if uses[from] == nil {
			uses[from] = map[string][]string{}
		}
		if !contains(uses[from][to], id.Name) {
			uses[from][to] = append(uses[from][to], id.Name)
		}
	}
	for _, set := range circles(uses) {
		circle := pathBack(uses, set)
		var ties []string
		for i, f := range circle {
			next := circle[(i+1)%len(circle)]
			ns := uses[f][next]
			sort.Strings(ns)
			ties = append(ties, fmt.Sprintf("%s uses %s of %s", f, strings.Join(ns, ", "), next))
		}
		t.Errorf("%d files use each other (%s), e.g. %s", len(set), strings.Join(set, " "), strings.Join(ties, "; "))
	}
}

// declaredOnce: a package-level name, or a method or field, which one file declares for the package
// (not a local variable or parameter).
func declaredOnce(obj types.Object, pkg *types.Package) bool {
	switch o := obj.(type) {
	case *types.Func:
		return true
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	}
	return obj.Parent() == pkg.Scope()
}

// circles finds the sets of files that reach each other (Tarjan's strongly connected components).
func circles(g map[string]map[string][]string) [][]string {
	var nodes []string
	for n := range g {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	index, low, on := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var sets [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack, on[v] = append(stack, v), true
		for _, w := range sortedKeys(g[v]) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var set []string
			for {
				w := stack[len(stack)-1]
				stack, on[w] = stack[:len(stack)-1], false
				set = append(set, w)
				if w == v {
					break
				}
			}
			if len(set) > 1 {
				sets = append(sets, set)
			}
		}
	}
	for _, n := range nodes {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	for _, set := range sets {
		sort.Strings(set)
	}
	return sets
}

// pathBack is a circle inside set from its first file back to it, found breadth first.
func pathBack(g map[string]map[string][]string, set []string) []string {
	in := map[string]bool{}
	for _, s := range set {
		in[s] = true
	}
	start := set[0]
	from := map[string]string{}
	queue := []string{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range sortedKeys(g[v]) {
			if !in[w] {
				continue
			}
			if w == start {
				path := []string{v}
				for p := v; p != start; {
					p = from[p]
					path = append([]string{p}, path...)
				}
				return path
			}
			if _, seen := from[w]; !seen {
				from[w] = v
				queue = append(queue, w)
			}
		}
	}
	return set
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
