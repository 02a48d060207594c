package e2e

import (
	"certctl-loadtest/internal/results"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A green run of every tier that shares a stack (API, connector, ACME: TIER=all) through make, against
// the real certctl: exit 0, and summary.json carries every figure and says which certctl ran. ACME at
// 20/s: its own green run (TestACMEFlow) is in the full suite, and beside the API tier's 100/s the
// default 100/s would judge what 2 CPUs can carry, not the harness.
func TestAllTiersGreen(t *testing.T) {
	e2e(t)
	t.Parallel()
	alone(t)
	// Progress lines every 2 s: read over the stack's network, no process in the containers.
	env := stackEnv(t, "TIER=all", "RATE_ACME_FLOW=20", "PROGRESS_INTERVAL=2s")
	r := run(t, env, "make", "loadtest")
	// make turns the recipe's 99 into its own 2: the run's verdict is the summary's. Seven k6 processes
	// start at once on 2 CPUs and are judged over 5 s: when only timing budgets broke and the run's own
	// samples say the machine decided them (its k6, its stack's saturation), that is the machine's, said
	// with the evidence; no retry: a certctl that breaks a budget once in two breaks the gate once in two.
	s := r.summary
	broke, why := runExcuse(s)
	excused := why != ""
	if excused {
		logExcused(t, "timing budgets broke, nothing else ("+strings.Join(broke, "; ")+"): every other figure is judged", why)
	} else {
		wantCode(t, r, 0)
		if !s.Passed || s.ExitCode != 0 || len(s.FailedChecks) != 0 {
			t.Fatalf("summary says passed=%v exit=%d failed=%v", s.Passed, s.ExitCode, s.FailedChecks)
		}
	}
	wantOutput(t, r, `(?m)^loadtest: \[list_certificates\] 00:0\d of 00:05 `)
	if strings.Contains(r.output, "does not reach") {
		t.Errorf("progress read with docker exec:\n%s", r.output)
	}
	// certctl's builds stamp no version: the image identifies it (docs/certctl-findings.md#no-version).
	if s.CertctlVersion != "dev" {
		t.Errorf("certctl version %q: a plain certctl build reports dev", s.CertctlVersion)
	}
	c := s.Run.Certctl
	if c.Image != certctlImage || !strings.HasPrefix(c.ImageID, "sha256:") || c.Build == "" || len(c.ServerSHA256) != 64 || c.Faults != "" {
		t.Errorf("run.json certctl %+v: want image %s with its id, build and server sha256", c, certctlImage)
	}
	if !strings.Contains(s.Run.K6Version, "v2.2.0") {
		t.Errorf("k6 version %q", s.Run.K6Version)
	}
	// The major certctl pins (postgres:16-alpine), named in the summary's header.
	if txt, _ := os.ReadFile(filepath.Join(r.dir, "summary.txt")); !strings.HasPrefix(s.Run.Postgres, "16.") || !strings.Contains(string(txt), " · PostgreSQL "+s.Run.Postgres+"\n") {
		t.Errorf("PostgreSQL %q, or not in the summary's header", s.Run.Postgres)
	}
	if s.Run.Images["certctl-server"] != certctlImage || !strings.HasPrefix(s.Run.Images["k6"], "certctl-loadtest/offline-k6:") {
		t.Errorf("images %v", s.Run.Images)
	}
	if s.Run.Host.CPUs < 1 || s.Run.DurationS <= 0 || !s.Run.EndedAt.After(s.Run.StartedAt) {
		t.Errorf("run metadata: cpus %d duration %v start %v end %v", s.Run.Host.CPUs, s.Run.DurationS, s.Run.StartedAt, s.Run.EndedAt)
	}
	if s.Run.Config["CERTCTL_TOKEN"] != "[redacted]" || s.Run.Config["DURATION"] != "5s" {
		t.Errorf("effective config %v", s.Run.Config)
	}
	var names []string
	for _, sc := range s.Scenarios {
		names = append(names, sc.Name)
	}
	if got := strings.Join(names, ","); got != "acme_flow,issuance_acceptance,list_certificates,apache,f5,haproxy,nginx" {
		t.Fatalf("scenarios %s", got)
	}
	wantThresholds(t, r, "acme_flow")
	for _, tt := range targetTypes {
		row, ok := s.ConnectorTier[tt]
		if !ok || row.Status != "passed" || row.Iterations < 5 || row.ErrorRate != 0 {
			t.Errorf("connector_tier[%s] = %+v", tt, row)
			continue
		}
		h := row.TLSHandshakeMS
		if !(h.P50 > 0 && h.P50 <= h.P95 && h.P95 <= h.P99 && h.P99 <= h.Max) || !(row.P50MS >= h.P50 && row.MaxMS >= row.P99MS) {
			t.Errorf("connector_tier[%s]: request %v/%v/%v/%v ms, handshake %+v", tt, row.P50MS, row.P95MS, row.P99MS, row.MaxMS, h)
		}
	}
	for _, sc := range s.Scenarios {
		if sc.Tier != "api" {
			continue
		}
		res := sc.Record
		if sc.Status != "passed" || res == nil {
			t.Errorf("%s: %s %s", sc.Name, sc.Status, sc.Problem)
			continue
		}
		if res.TargetRatePerS != 50 || res.Requests < 200 || res.ErrorRate != 0 || (!excused && (res.AchievedRatePerS < 45 || res.DroppedIterations != 0)) {
			t.Errorf("%s: target %v achieved %v requests %v dropped %v errors %v", sc.Name, res.TargetRatePerS, res.AchievedRatePerS, res.Requests, res.DroppedIterations, res.ErrorRate)
		}
		l := res.LatencyMS
		if !(l.P50 > 0 && l.P50 <= l.P90 && l.P90 <= l.P95 && l.P95 <= l.P99 && l.P99 <= l.Max && l.Avg > 0) {
			t.Errorf("%s: latency %+v", sc.Name, l)
		}
		if len(res.Thresholds) != 5 {
			t.Errorf("%s: %d thresholds, want p95, p99, failed rate, checks, dropped", sc.Name, len(res.Thresholds))
		}
	}
	txt, err := os.ReadFile(filepath.Join(r.dir, "summary.txt"))
	if err != nil || (!excused && !strings.Contains(string(txt), "PASSED (exit 0)")) || !strings.Contains(string(txt), "certctl "+certctlImage+" (image sha256:") ||
		!strings.Contains(string(txt), `reports version "dev"`) {
		t.Errorf("summary.txt: %v\n%s", err, txt)
	}
	latest, err := os.Readlink(filepath.Join(filepath.Dir(r.dir), "latest"))
	if err != nil || latest != filepath.Base(r.dir) {
		t.Errorf("results/latest -> %q (%v), want %s", latest, err, filepath.Base(r.dir))
	}
	for _, sc := range s.Scenarios {
		for _, f := range []string{"dashboard/" + sc.Name + ".html", "raw/" + sc.Name + ".json.gz", "scenarios/" + sc.Name + ".json", "logs/" + sc.Name + ".log"} {
			if st, err := os.Stat(filepath.Join(r.dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	assertNoSecrets(t, r.dir)
	assertDiagnosis(t, r.dir, s)
}

// assertDiagnosis: every collector sampled the real stack, and the diagnosis has findings, evidence
// and a chart line for every scenario.
func assertDiagnosis(t *testing.T, dir string, s results.Summary) {
	t.Helper()
	d := s.Diagnosis
	if d == nil {
		t.Fatal("summary.json has no diagnosis")
	}
	for _, src := range d.Sources {
		switch {
		case src.Status != "ok" || src.Samples == 0:
			t.Errorf("collector source %+v: want ok with samples", src)
		}
	}
	if len(d.Sources) != 6 {
		t.Errorf("%d sources, want containers, host, pg_activity, pg_statements, pg_database, certctl_metrics", len(d.Sources))
	}
	// The machine split into the run and the rest, read beside the containers' cgroups.
	if m := d.Machine; m == nil || m.Samples == 0 || m.BusyPct <= 0 || m.StackPct <= 0 || m.LoadGenPct <= 0 || m.Decided {
		t.Errorf("machine share %+v: want samples of a busy machine, not judged (MACHINE_CHECK=false)", m)
	} else if m.CollectorPct <= 0 || m.HarnessPct == nil || *m.HarnessPct <= 0 || m.EnginePct == nil || *m.EnginePct <= 0 || m.CollectorQueriesPct == nil || *m.CollectorQueriesPct <= 0 {
		t.Errorf("the instruments' share %+v: want the collector's, the harness's, the engine's and the collector's queries'", m)
	}
	if len(d.Findings) == 0 || len(d.Containers) == 0 || d.ActivitySample == 0 || len(d.DatabaseDelta) == 0 || len(d.Metrics) == 0 || len(d.Statements) == 0 {
		t.Errorf("diagnosis findings %v, %d containers, %d activity samples, database delta %v, %d metrics, %d statements", d.Findings, len(d.Containers), d.ActivitySample, d.DatabaseDelta, len(d.Metrics), len(d.Statements))
	}
	svcs := map[string]bool{}
	for _, c := range d.Containers {
		svcs[c.Service] = true
	}
	for _, want := range []string{"postgres", "certctl-server", "k6"} {
		if !svcs[want] {
			t.Errorf("no CPU figures for %s: %v", want, d.Containers)
		}
	}
	if d.Series == nil || len(d.Series.Rate) != len(s.Scenarios) || len(d.Series.CPU) == 0 || len(d.Series.T) == 0 {
		t.Errorf("series %+v", d.Series)
	}
	txt, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if !strings.Contains(string(txt), "\ndiagnosis (over ") || !strings.Contains(string(txt), "\n  the run's own instruments, % of the machine: ") {
		t.Errorf("summary.txt has no diagnosis section, or no instruments' share")
	}
}

// assertNoSecrets: the per-run token is in no file of the results.
func assertNoSecrets(t *testing.T, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"CERTCTL_TOKEN": "lt-`) {
		t.Errorf("run.json holds the token")
	}
}

// Each API-tier threshold is breached by a run built for it, and only the intended ones fail: latency
// and errors through the fault proxy, dropped iterations by the real server alone.
func TestAPIThresholdsCanFail(t *testing.T) {
	e2e(t)
	t.Parallel()
	cases := []struct {
		name  string
		env   []string
		issue []string // failing thresholds of issuance_acceptance
		list  []string // failing thresholds of list_certificates
	}{
		{
			// 6 s on creates and lists, a fifth of them answered 500: past both issuance budgets (2 s,
			// 5 s) and both list budgets (800 ms, 2 s), and past both error budgets; 10/s keeps 60 VUs of
			// each scenario busy, well under their max. Not on the setup probe's /api/v1/auth/check: that
			// would abort the run before any load.
			name: "latency and errors",
			// PRE_VUS: VUs k6 adds mid-run start late and drop iterations; this case is not about those.
			env: []string{"FAULT_LATENCY=6s", "FAULT_ERROR_RATE=0.2", "FAULT_ROUTE=POST /api/v1/certificates,GET /api/v1/certificates$",
				"RATE_ISSUANCE_ACCEPTANCE=10", "RATE_LIST_CERTIFICATES=10", "PRE_VUS=100"},
			issue: []string{"http_req_duration p(95)<2000", "http_req_duration p(99)<5000", "http_req_failed rate<0.01", "checks rate>0.99"},
			list:  []string{"http_req_duration p(95)<800", "http_req_duration p(99)<2000", "http_req_failed rate<0.01", "checks rate>0.99"},
		},
		{
			// certctl's status and headers, an empty body: no status, latency or error threshold can see
			// it, only the body checks. 20/s, as above: the list's 800 ms p95 budget once broke at 50/s
			// beside two other stacks.
			name: "wrong body",
			env: []string{"FAULT_BODY_RATE=0.5", "FAULT_ROUTE=POST /api/v1/certificates$,GET /api/v1/certificates$",
				"RATE_ISSUANCE_ACCEPTANCE=20", "RATE_LIST_CERTIFICATES=20"},
			issue: []string{"checks rate>0.99"},
			list:  []string{"checks rate>0.99"},
		},
		{
			// No fault: one VU cannot deliver 2000 requests a second to the real certctl, whose requests
			// take milliseconds. The load was not delivered, and the run says so.
			name:  "dropped iterations",
			env:   []string{"MAX_VUS=1", "RATE_ISSUANCE_ACCEPTANCE=2000", "RATE_LIST_CERTIFICATES=2000"},
			issue: []string{"dropped_iterations count==0"},
			list:  []string{"dropped_iterations count==0"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := loadtestRun(t, stackEnv(t, c.env...))
			wantCode(t, r, 99)
			wantThresholds(t, r, "issuance_acceptance", c.issue...)
			wantThresholds(t, r, "list_certificates", c.list...)
			wantOutput(t, r, `FAILED \(exit 99\)`)
		})
	}
}
