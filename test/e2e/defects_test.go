package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/results"

	"gopkg.in/yaml.v3"
)

// The PKI tier without its workarounds, judged against the registry of certctl's known defects
// (KNOWN_DEFECTS=pass, a run's default) on the release and on the next build: finalize's and OCSP's
// breaches are known, so the run exits 0 and lists them; with acme-finalize taken out of the registry
// (DEFECTS_REGISTRY) the same breaches are new and the run exits 99, naming them; and a build that
// does not show ocsp-500 (the responder worked around, with the registry not knowing the workaround)
// lists it as not appearing.
func TestKnownDefects(t *testing.T) {
	e2e(t)
	builds := releaseAndNext()
	for name, build := range builds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := func(extra ...string) []string {
				return stackEnv(t, append([]string{"CERTCTL_DIST=" + build, "TIER=pki", "SCENARIOS=acme_order_flow,ocsp_crl", "DURATION=10s",
					"RATE_ACME_ORDER_FLOW=2", "RATE_OCSP_CRL=20", "KNOWN_DEFECTS=pass"}, extra...)...)
			}
			r := loadtestRun(t, env())
			wantCode(t, r, 0)
			wantOutput(t, r, `(?m)^loadtest: exit 0, not 99: every breach is a known defect of certctl \(acme-finalize: docs/certctl-findings.md\)`)
			wantOutput(t, r, `(?m)^loadtest: exit 0, not 99: every breach is a known defect of certctl \(ocsp-500: docs/certctl-findings.md\)`)
			for sc, id := range map[string]string{"acme_order_flow": "acme-finalize", "ocsp_crl": "ocsp-500"} {
				s := sequenceRun(t, r, sc).summary
				if !s.Passed || s.Breaches == nil || len(s.Breaches.New) != 0 || len(s.Breaches.Known) == 0 {
					t.Fatalf("%s: passed %v, breaches %+v", sc, s.Passed, s.Breaches)
				}
				for _, k := range s.Breaches.Known {
					if len(k.Defects) != 1 || k.Defects[0] != id {
						t.Errorf("%s: %+v, want %s", sc, k, id)
					}
				}
				if s.Breaches.Build != filepath.Base(build) {
					t.Errorf("%s: judged against build %q, want %q", sc, s.Breaches.Build, filepath.Base(build))
				}
			}

			// The registry less acme-finalize: its breaches are new.
			path := editedRegistry(t, func(e *defects.Entry) bool { return e.ID != "acme-finalize" })
			r = loadtestRun(t, env("DEFECTS_REGISTRY="+path))
			wantCode(t, r, 99)
			s := sequenceRun(t, r, "acme_order_flow").summary
			if s.Passed || len(s.Breaches.Known) != 0 || len(s.Breaches.New) == 0 {
				t.Fatalf("without its entry: passed %v, breaches %+v", s.Passed, s.Breaches)
			}
			wantOutput(t, r, `(?m)^  new: no known defect explains them$`)
			if _, err := os.Stat(filepath.Join(sequenceRun(t, r, "acme_order_flow").dir, results.DefectsFile)); err != nil {
				t.Errorf("the run does not keep the registry it was judged with: %v", err)
			}
			if !strings.Contains(strings.Join(s.FailedChecks, "\n"), "acme_order_ok") {
				t.Errorf("failed checks %q", s.FailedChecks)
			}

			// A build without ocsp-500, as a fixed build would be: the responder worked around and the
			// registry not told how, so nothing says the defect was avoided rather than gone.
			path = editedRegistry(t, func(e *defects.Entry) bool {
				if e.ID == "ocsp-500" {
					e.WorkedAroundBy = nil
				}
				return true
			})
			r = loadtestRun(t, env("DEFECTS_REGISTRY="+path, "SCENARIOS=ocsp_crl", "OCSP_RESPONDER_WORKAROUND=1"))
			wantCode(t, r, 0)
			wantOutput(t, r, `(?m)^  not appearing: seen on `+regexp.QuoteMeta(filepath.Base(build))+` before, not met by this run \(fixed\?\)$`)
			wantOutput(t, r, `(?m)^    - ocsp-500 \(OCSP always 500 for a local issuer\): ocsp_crl ran without it$`)
			// One scenario of the tier is one run, not a sequence: its summary is the run's.
			if got := r.summary.Breaches; got == nil || len(got.NotAppearing) != 1 || got.NotAppearing[0].Defect != "ocsp-500" || len(got.New)+len(got.Known) != 0 {
				t.Fatalf("without the defect: %+v", got)
			}
		})
	}
}

// editedRegistry writes the registry as keep leaves it (an entry it returns false for is dropped; it may
// change the entry) and returns its path, for DEFECTS_REGISTRY.
func editedRegistry(t *testing.T, keep func(*defects.Entry) bool) string {
	t.Helper()
	reg, err := defects.Registry()
	if err != nil {
		t.Fatal(err)
	}
	var out []defects.Entry
	for _, e := range reg {
		if keep(&e) {
			out = append(out, e)
		}
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "registry.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
