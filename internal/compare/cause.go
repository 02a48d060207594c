package compare

import (
	"fmt"
	"sort"

	"certctl-loadtest/internal/diagnosis"
)

// Cause is what the runs' diagnoses say beside the figures: each side's leading findings, the
// statements whose cost moved, and the CPU each service used. Absent when neither side recorded one.
type Cause struct {
	Old        []string          `json:"old_findings"`
	New        []string          `json:"new_findings"`
	Statements []StatementChange `json:"statements,omitempty"`
	CPU        []CPUChange       `json:"cpu,omitempty"`
}

// StatementChange is one statement on both sides. From pg_stat_statements when both sides have it
// (mean time per call, share of the database's time), else from the activity samples (share of the
// sampled active backends; means 0).
type StatementChange struct {
	Query     string  `json:"query"`
	Basis     string  `json:"basis"` // pg_stat_statements | activity samples
	OldMeanMS float64 `json:"old_mean_ms,omitempty"`
	NewMeanMS float64 `json:"new_mean_ms,omitempty"`
	OldCalls  float64 `json:"old_calls,omitempty"`
	NewCalls  float64 `json:"new_calls,omitempty"`
	OldShare  float64 `json:"old_share"`
	NewShare  float64 `json:"new_share"`
}

type CPUChange struct {
	Service string  `json:"service"`
	Old     float64 `json:"old_pct"` // mean % of one CPU, over the side's runs
	New     float64 `json:"new_pct"`
}

// leading findings a cause shows per side, and statements.
const (
	leadFindings = 2
	topQueries   = 4
	minShare     = 0.05
)

func cause(s [2]loaded) *Cause {
	var diags [2][]*diagnosis.Diagnosis
	for i, l := range s {
		for _, sum := range l.summaries {
			if sum.Diagnosis != nil {
				diags[i] = append(diags[i], sum.Diagnosis)
			}
		}
	}
	if len(diags[0]) == 0 && len(diags[1]) == 0 {
		return nil
	}
	c := &Cause{Old: findings(diags[0]), New: findings(diags[1])}
	c.Statements = statements(diags)
	c.CPU = cpu(diags)
	return c
}

// findings are a side's leading findings, the most frequent first, each said once with how many of the
// side's runs found it.
func findings(ds []*diagnosis.Diagnosis) []string {
	type f struct {
		sentence string
		runs     int
		first    int
	}
	byRule := map[string]*f{}
	order := 0
	for _, d := range ds {
		n := 0
		for _, x := range d.Findings {
			if x.Kind == "unavailable" || n == leadFindings {
				continue
			}
			n++
			if byRule[x.Rule] == nil {
				byRule[x.Rule] = &f{sentence: x.Sentence, first: order}
				order++
			}
			byRule[x.Rule].runs++
		}
	}
	all := make([]*f, 0, len(byRule))
	for _, v := range byRule {
		all = append(all, v)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].runs != all[j].runs {
			return all[i].runs > all[j].runs
		}
		return all[i].first < all[j].first
	})
	out := []string{}
	for _, v := range all {
		s := v.sentence
		if len(ds) > 1 {
			s += fmt.Sprintf(" (%d of %d runs)", v.runs, len(ds))
		}
		out = append(out, s)
	}
	return out
}

func statements(diags [2][]*diagnosis.Diagnosis) []StatementChange {
	type agg struct{ calls, total, share float64 }
	var sides [2]map[string]*agg
	pgss := true
	for i := range diags {
		sides[i] = map[string]*agg{}
		has := false
		for _, d := range diags[i] {
			has = has || len(d.Statements) > 0
		}
		pgss = pgss && has
	}
	for i, ds := range diags {
		var total float64
		for _, d := range ds {
			if pgss {
				for _, st := range d.Statements {
					a := sides[i][st.Query]
					if a == nil {
						a = &agg{}
						sides[i][st.Query] = a
					}
					a.calls += st.Calls
					a.total += st.TotalMS
					total += st.TotalMS
				}
				continue
			}
			for _, q := range d.Queries {
				a := sides[i][q.Query]
				if a == nil {
					a = &agg{}
					sides[i][q.Query] = a
				}
				a.share += q.Share / float64(len(ds))
			}
		}
		if pgss && total > 0 {
			for _, a := range sides[i] {
				a.share = a.total / total
			}
		}
	}
	var out []StatementChange
	for q := range union(sides[0], sides[1]) {
		a, b := sides[0][q], sides[1][q]
		if a == nil {
			a = &agg{}
		}
		if b == nil {
			b = &agg{}
		}
		if a.share < minShare && b.share < minShare {
			continue
		}
		sc := StatementChange{Query: q, Basis: "activity samples", OldShare: round(a.share, 3), NewShare: round(b.share, 3)}
		if pgss {
			sc.Basis = "pg_stat_statements"
			sc.OldCalls, sc.NewCalls = a.calls, b.calls
			if a.calls > 0 {
				sc.OldMeanMS = round(a.total/a.calls, 3)
			}
			if b.calls > 0 {
				sc.NewMeanMS = round(b.total/b.calls, 3)
			}
		}
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].NewShare != out[j].NewShare {
			return out[i].NewShare > out[j].NewShare
		}
		return out[i].Query < out[j].Query
	})
	if len(out) > topQueries {
		out = out[:topQueries]
	}
	return out
}

func union[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// cpu is each service under test's mean CPU on both sides; k6 and the collector are the harness's.
func cpu(diags [2][]*diagnosis.Diagnosis) []CPUChange {
	var sides [2]map[string]float64
	for i, ds := range diags {
		sides[i] = map[string]float64{}
		for _, d := range ds {
			for _, c := range d.Containers {
				sides[i][c.Service] += c.CPUMeanPct / float64(len(ds))
			}
		}
	}
	var out []CPUChange
	for svc := range union(sides[0], sides[1]) {
		if svc == "k6" || svc == "collector" || sides[0][svc]+sides[1][svc] < 5 {
			continue
		}
		out = append(out, CPUChange{Service: svc, Old: round(sides[0][svc], 1), New: round(sides[1][svc], 1)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].New != out[j].New {
			return out[i].New > out[j].New
		}
		return out[i].Service < out[j].Service
	})
	return out
}
