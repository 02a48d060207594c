package docs

import (
	"fmt"
	"slices"
	"strings"

	"certctl-loadtest/internal/results"
)

// authRows are certctl's published authentication figures (its docs/operator/auth-benchmarks.md,
// `make benchmark-auth`: Go micro-benchmarks with in-memory repositories and a mock provider on
// loopback), each beside the auth tier's end-to-end measurement of the same path, and the paths certctl
// publishes nothing for. trend "" is the scenario's own latency.
var authRows = []struct{ path, published, scenario, trend string }{
	{"session validation, steady: what the session adds to a call (the who-am-I by session cookie less the same by API key, in one iteration)", "p99 < 1 ms", "session_api", "session_added"},
	{"session validation, cold process: the session's who-am-I end to end", "p99 < 10 ms", "session_api", "check_session"},
	{"the same who-am-I by API key (the control)", "", "session_api", "check_key"},
	{"a listing by session cookie (`GET /api/v1/certificates`)", "", "session_api", "list_session"},
	{"OIDC callback, steady", "p99 < 5 ms", "oidc_login", "callback"},
	{"OIDC callback, cold JWKS: the first login after certctl dropped the provider's discovery and keys", "p99 < 200 ms, never measured (\"none yet\")", "oidc_cold_jwks", "callback_refresh"},
	{"OIDC callback, cold JWKS: the first login after Keycloak rotated its signing key", "p99 < 200 ms, never measured (\"none yet\")", "oidc_cold_jwks", "callback_rotation"},
	{"login start: certctl's redirect to the provider", "", "oidc_login", "initiate"},
	{"a whole login, Keycloak's form included", "", "oidc_login", ""},
	{"logout or back-channel logout: from the session's end to certctl's first refusal of it", "", "logout", ""},
}

// AuthPrefix names the auth tier's recorded runs in docs/baselines/<build>/: auth-<scenario>.json,
// one scenario each (`loadtest baseline --name auth-<scenario>`).
const AuthPrefix = "auth-"

// AuthTable renders docs/auth.md's table: each path, certctl's published p99, and p50 / p95 / p99 of
// every build with recorded auth runs, the pinned release first; then each build's runs.
func AuthTable(root string) (string, error) {
	all, ref, err := recorded(root)
	if err != nil {
		return "", err
	}
	runs := map[string]map[string]baseline{} // build → scenario → its run
	var builds []string
	for _, b := range all {
		if !strings.HasPrefix(b.what, AuthPrefix) {
			continue
		}
		sc := strings.ReplaceAll(strings.TrimPrefix(b.what, AuthPrefix), "-", "_")
		if _, ok := runs[b.build]; !ok {
			runs[b.build] = map[string]baseline{}
			builds = append(builds, b.build)
		}
		runs[b.build][sc] = b
	}
	if len(builds) == 0 {
		return "No auth run recorded yet.\n", nil
	}
	slices.SortFunc(builds, func(x, y string) int {
		switch {
		case x == ref:
			return -1
		case y == ref:
			return 1
		}
		return strings.Compare(x, y)
	})
	var b strings.Builder
	b.WriteString("| path | certctl publishes |")
	for _, bd := range builds {
		fmt.Fprintf(&b, " %s p50 / p95 / p99 ms |", bd)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(builds)) + "\n")
	for _, r := range authRows {
		pub := r.published
		if pub == "" {
			pub = "—"
		}
		fmt.Fprintf(&b, "| %s (`%s`) | %s |", r.path, r.scenario, pub)
		for _, bd := range builds {
			b.WriteString(" " + authCell(runs[bd][r.scenario], r.scenario, r.trend) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\nThe runs, each a scenario alone on a fresh stack of its own:\n\n")
	for _, bd := range builds {
		for _, sc := range []string{"oidc_login", "session_api", "oidc_cold_jwks", "logout"} {
			run, ok := runs[bd][sc]
			if !ok {
				continue
			}
			rec := authRecord(run.sum, sc)
			n := ""
			if rec != nil && rec.LatencySamples != nil {
				n = fmt.Sprintf(", %d samples of its latency", int(*rec.LatencySamples))
			}
			fmt.Fprintf(&b, "- %s `%s`: [%s](%s), %s%s; `%s`\n", bd, sc, run.sum.RunID, run.file, run.sum.Verdict(), n, run.sum.Run.Command)
		}
	}
	return b.String(), nil
}

func authRecord(s results.Summary, scenario string) *results.Record {
	for _, sc := range s.Scenarios {
		if sc.Name == scenario {
			return sc.Record
		}
	}
	return nil
}

// authCell is one build's p50 / p95 / p99 of a path, or a dash where nothing was recorded.
func authCell(run baseline, scenario, trend string) string {
	rec := authRecord(run.sum, scenario)
	if rec == nil {
		return "—"
	}
	l := rec.LatencyMS
	if trend != "" {
		var ok bool
		if l, ok = rec.TrendsMS[trend]; !ok {
			return "—"
		}
	}
	if l.Max == 0 {
		return "no sample"
	}
	return fmt.Sprintf("%s / %s / %s", ms(l.P50), ms(l.P95), ms(l.P99))
}
