package growth

import (
	"fmt"
	"sort"
	"strings"

	"certctl-loadtest/internal/chart"
)

// Recorded is a sweep kept in the docs (docs/growth/<build>.json): the build it measured and its
// growth.json.
type Recorded struct {
	Build  string
	Result Result
}

// Markdown renders recorded sweeps as one table for docs/growth.md: per operation, each build's p50 / p95
// at every size any sweep has (— where it has none, or where no request was answered) and the growth
// read from them.
func Markdown(rs []Recorded) string {
	var sizes []float64
	seen := map[float64]bool{}
	ops := map[string]bool{}
	for _, r := range rs {
		for _, s := range r.Result.Sizes {
			if !seen[s] {
				seen[s] = true
				sizes = append(sizes, s)
			}
		}
		for _, op := range r.Result.Ops {
			ops[op.Name] = true
		}
	}
	sort.Float64s(sizes)
	names := make([]string, 0, len(ops))
	for n := range ops {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| operation | build |")
	for _, s := range sizes {
		fmt.Fprintf(&b, " %s p50 / p95 ms |", SizeText(s))
	}
	b.WriteString(" p50 grows | p95 grows |\n|---|---|")
	b.WriteString(strings.Repeat("---|", len(sizes)+2) + "\n")
	for _, name := range names {
		for _, r := range rs {
			var op *Op
			for i := range r.Result.Ops {
				if r.Result.Ops[i].Name == name {
					op = &r.Result.Ops[i]
				}
			}
			if op == nil {
				continue
			}
			at := map[float64]Point{}
			for _, p := range op.Points {
				at[p.Size] = p
			}
			fmt.Fprintf(&b, "| `%s` | %s |", name, r.Build)
			for _, s := range sizes {
				if p, ok := at[s]; ok {
					fmt.Fprintf(&b, " %s / %s |", chart.Num(p.P50), chart.Num(p.P95))
				} else {
					b.WriteString(" — |")
				}
			}
			fmt.Fprintf(&b, " %s | %s |\n", fitText(op.P50), fitText(op.P95))
		}
	}
	return b.String()
}
