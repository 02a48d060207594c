package report

import (
	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/results"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadFailedRun(t *testing.T) {
	s, err := results.Load("testdata/run-failed")
	if err != nil {
		t.Fatal(err)
	}
	if s.Passed || s.ExitCode != 99 {
		t.Fatalf("passed=%v exit=%d, want a failed run with exit 99", s.Passed, s.ExitCode)
	}
	if s.CertctlVersion != "v2.1.7" {
		t.Errorf("certctl version %q", s.CertctlVersion)
	}
	byName := map[string]results.Scenario{}
	for _, sc := range s.Scenarios {
		byName[sc.Name] = sc
	}
	if got := byName["issuance_acceptance"].Status; got != "passed" {
		t.Errorf("issuance_acceptance status %q", got)
	}
	if got := byName["list_certificates"].Status; got != "failed" {
		t.Errorf("list_certificates status %q", got)
	}
	// k6 exits 0 even when it could not write its record: that scenario must not count as a pass.
	if got := byName["ghost"]; got.Status != "no-results" || !strings.Contains(got.Problem, "k6 wrote no results") {
		t.Errorf("ghost: %+v", got)
	}
	want := "list_certificates: threshold http_req_duration{scenario:list_certificates} p(95)<800 (measured p(95)=910 ms)"
	found := false
	for _, f := range s.FailedChecks {
		found = found || f == want
	}
	if !found {
		t.Errorf("failed checks %q lack %q", s.FailedChecks, want)
	}
}

func TestGoldenText(t *testing.T) {
	s, err := results.Load("testdata/run-failed")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "run-failed.summary.txt", Text(s))
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "run-failed.summary.json", string(b)+"\n")
}

// A default run (API + connector tiers) recorded against certctl 151107c on this machine, rendered offline.
func TestGoldenRecordedDefaultRun(t *testing.T) {
	s, err := results.Load("testdata/run-default")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Passed || len(s.ConnectorTier) != 4 {
		t.Fatalf("passed=%v connector rows %d", s.Passed, len(s.ConnectorTier))
	}
	for tt, row := range s.ConnectorTier {
		if row.TLSHandshakeMS.P50 <= 0 || row.P50MS < row.TLSHandshakeMS.P50 {
			t.Errorf("%s: handshake %v within a %v ms exchange", tt, row.TLSHandshakeMS.P50, row.P50MS)
		}
	}
	golden.Check(t, "run-default.summary.txt", Text(s))
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "run-default.summary.json", string(b)+"\n")
}

func TestWriteIsTheOnlyWriter(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"run.json", "scenarios/issuance_acceptance.json"} {
		b, err := os.ReadFile(filepath.Join("testdata/run-failed", f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	s, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "summary.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

func TestNotARunDirectory(t *testing.T) {
	if _, err := results.Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not a run directory") {
		t.Fatalf("err = %v", err)
	}
}

// A deploy tier run recorded against the real certctl v2.1.7 and its agents on this machine: one
// row per target type, every loop served, its stages within the loop.
func TestGoldenRecordedDeployRun(t *testing.T) {
	s, err := results.Load("testdata/run-deploy")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Passed || len(s.DeployTier) != 4 {
		t.Fatalf("passed=%v deploy rows %d", s.Passed, len(s.DeployTier))
	}
	for _, d := range s.DeployTier {
		stages := d.SignedMS.P50 + d.JobMS.P50 + d.ServedMS.P50
		if d.Completed == 0 || d.LoopMS.P50 <= 0 || stages > d.LoopMS.Max+1000 {
			t.Errorf("%s: completed %v, loop p50 %v ms, stages %v ms", d.TargetType, d.Completed, d.LoopMS.P50, stages)
		}
	}
	txt := Text(s)
	if strings.Contains(txt, "completed_nginx") {
		t.Error("the per-target counters are in the totals line as well as in the deploy table")
	}
	golden.Check(t, "run-deploy.summary.txt", txt)
	b, _ := json.MarshalIndent(s, "", "  ")
	golden.Check(t, "run-deploy.summary.json", string(b)+"\n")
}

// A mass rotation of 1,000 certificates recorded against the real certctl v2.1.7: every target served a
// new certificate, and the F5's refused logins (certctl's token leak) are counted apart from failures,
// with the note that says why.
func TestGoldenRecordedMassRotation(t *testing.T) {
	s, err := results.Load("testdata/run-deploy-mass")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]results.DeployRow{}
	for _, d := range s.DeployTier {
		rows[d.TargetType] = d
	}
	if !s.Passed || len(rows) != 4 || rows["f5"].F5TokenLimit != 200 || rows["f5"].Failed != 0 || rows["nginx"].Completed != 250 {
		t.Fatalf("passed=%v rows %+v", s.Passed, rows)
	}
	txt := Text(s)
	if !strings.Contains(txt, "certctl-findings.md#f5-token-leak") {
		t.Error("the token limit is counted without saying why")
	}
	golden.Check(t, "run-deploy-mass.summary.txt", txt)
}

// The scheduler's side, recorded against the real certctl v2.1.7: 10,000 due certificates scanned into
// Renewal jobs and drained by the job processor, in one line with the clocks that bounded it.
func TestGoldenRecordedRenewalScan(t *testing.T) {
	s, err := results.Load("testdata/run-deploy-scan")
	if err != nil {
		t.Fatal(err)
	}
	txt := Text(s)
	if !s.Passed || !strings.Contains(txt, "renewal_scan: 10000 due certificates, 10000 Renewal jobs created over 157.2 s (15.72 ms per certificate)") {
		t.Errorf("passed=%v\n%s", s.Passed, txt)
	}
	golden.Check(t, "run-deploy-scan.summary.txt", txt)
}

// A fleet of 50 real agents and 200 targets at 30 renewals a minute, recorded against the real certctl
// v2.1.7: the rate and the fleet it stands for, every renewal deployed, the loop and the job backlog.
func TestGoldenRecordedFleetRotation(t *testing.T) {
	s, err := results.Load("testdata/run-deploy-fleet")
	if err != nil {
		t.Fatal(err)
	}
	txt := Text(s)
	if !s.Passed || !strings.Contains(txt, "a 2030400-certificate fleet's rate); 151 renewed: 151 deployed") {
		t.Errorf("passed=%v\n%s", s.Passed, txt)
	}
	golden.Check(t, "run-deploy-fleet.summary.txt", txt)
}

// The PKI tier, recorded against the real certctl v2.1.7 without the workarounds: every ACME finalize
// answered 500 and every OCSP request 500, each named in one sentence with its count and the knob that
// works around it; the CRL half measured; issuance at four clients in a CA benchmark's columns.
func TestGoldenRecordedPKI(t *testing.T) {
	for _, c := range []struct{ dir, want string }{
		{"run-pki-finalize", "acme_order_flow: ACME finalize answered 500 16 times: this certctl cannot store a certificate it signed for ACME"},
		{"run-pki-ocsp", "ocsp_crl: OCSP answered 500 76 times: this certctl's local issuer cannot create its OCSP responder key, so it answers no OCSP request (docs/certctl-findings.md#ocsp-500); OCSP_RESPONDER_WORKAROUND=1 gives it a responder"},
		{"run-pki-issuance", "issuance_c4  issue (create + agent CSR signed)  4        615  41.0"},
		// Both workarounds, 5 minutes: every check held, and POST's leading-zero unknowns named apart.
		{"run-pki-ocsp-leading-zero", "ocsp_crl: OCSP by POST answered unknown 1000 times for a good or revoked certificate whose serial starts with 0"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			s, err := results.Load("testdata/" + c.dir)
			if err != nil {
				t.Fatal(err)
			}
			txt := Text(s)
			if !strings.Contains(txt, c.want) {
				t.Errorf("want %q in\n%s", c.want, txt)
			}
			golden.Check(t, c.dir+".summary.txt", txt)
			page, err := Index(s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(page, `<table id="pki">`) || (len(s.Findings) > 0) != strings.Contains(page, `<ul id="findings">`) {
				t.Errorf("index.html without the PKI table or the findings")
			}
		})
	}
}

// TARGET=external and --segments 2, both recorded against the real certctl v2.1.7 (API tier, 5 min):
// the external run names the scenarios and the diagnosis it could not have; the split run lists each
// process's part and links the files it left, the merged figures above them.
func TestGoldenRecordedExternalAndSplit(t *testing.T) {
	for _, c := range []struct {
		dir   string
		files []string
		want  []string
	}{
		{"run-external", nil, []string{
			"certctl at https://certctl-server:8443 (external: not started by the harness)",
			"unavailable against an external certctl: nginx (its targets are the harness's own TLS sidecars, not certctl)",
		}},
		{"run-segments", []string{"dashboard/segments/list_certificates@1of2.html", "raw/segments/list_certificates@2of2.json.gz"}, []string{
			"list_certificates: 1of2 0:1/2: 7491 iterations, 7491 requests, 10 dropped",
		}},
	} {
		t.Run(c.dir, func(t *testing.T) {
			s, err := results.Load("testdata/" + c.dir)
			if err != nil {
				t.Fatal(err)
			}
			txt := Text(s)
			for _, w := range c.want {
				if !strings.Contains(txt, w) {
					t.Errorf("want %q in\n%s", w, txt)
				}
			}
			golden.Check(t, c.dir+".summary.txt", txt)
			page, err := Index(s, c.files)
			if err != nil {
				t.Fatal(err)
			}
			// The body only: the head and its stylesheet are the same on every page, and index-passed.html
			// pins them.
			i := strings.Index(page, "<body>")
			if i < 0 {
				t.Fatalf("no <body> in the page:\n%s", page)
			}
			golden.Check(t, "index-"+strings.TrimPrefix(c.dir, "run-")+".body.html", page[i:])
		})
	}
}

// The totals say where failed orders stopped and what that step answered, so a failure no defect's
// signature explains can be read from the summary alone.
func TestTotalsNameFailedSteps(t *testing.T) {
	sc := results.Scenario{Name: "acme_order_flow", Record: &results.Record{Counters: map[string]float64{"failed_finalize": 20, "failed_account": 1}},
		Failures: []results.Failure{{Step: "finalize", Status: "500", Count: 20}, {Step: "account", Status: "0", Count: 1}}}
	line, note := totals(sc)
	if line != "failed_account 1, failed_finalize 20" || note != "failed at, with the step's answer: finalize HTTP 500 ×20, account no answer ×1" {
		t.Errorf("totals %q, note %q", line, note)
	}
}
