package report

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	gojunit "github.com/joshdk/go-junit"

	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/golden"
	"certctl-loadtest/internal/results"

	"certctl-loadtest/internal/testenv"
)

// A run as JUnit XML, one golden file a way a run ends, each read back by a JUnit consumer (joshdk/
// go-junit, as CI dashboards read it): a threshold a test case; a breach failed, or skipped with its
// reason when a known defect, the machine or the registry's reach explains it; a scenario with no
// record an error.
func TestJUnit(t *testing.T) {
	known := readSummary(t, "run-failed.summary.json")
	known.Breaches = &defects.Verdict{Build: "v2.1.7",
		New: []defects.Breach{{Scenario: "list_certificates", Threshold: "dropped_iterations count==0", Measured: "count=540"}},
		Known: []defects.Known{{Breach: defects.Breach{Scenario: "list_certificates", Threshold: "http_req_duration p(95)<800",
			Measured: "p(95)=910 ms", Why: "list_certificates' statement mean grew with the table"}, Defects: []string{"list-full-sort"}}}}
	failKnown := *known
	failKnown.Run.Config = map[string]string{"KNOWN_DEFECTS": "fail"}
	inconclusive := readSummary(t, "run-failed.summary.json")
	inconclusive.ExitCode, inconclusive.Inconclusive = results.ExitInconclusive, "the machine decided, not certctl: work outside the run took 41 % of the machine's 2 CPUs"
	type want struct{ passed, failed, skipped, errored int }
	cases := []struct {
		name    string
		summary *results.Summary
		want    want
		reasons []string // in the skipped or failed cases' messages
	}{
		{"passed", readSummary(t, "run-default.summary.json"), want{passed: 28}, nil},
		{"thresholds-breached", readSummary(t, "run-failed.summary.json"), want{passed: 4, failed: 4, errored: 1}, []string{"p(95)=910 ms", "k6 wrote no results"}},
		{"known-defects", known, want{passed: 4, failed: 3, skipped: 1, errored: 1}, []string{"known defect list-full-sort: p(95)=910 ms; list_certificates' statement mean grew"}},
		{"known-defects-fail", &failKnown, want{passed: 4, failed: 4, errored: 1}, []string{"known defect list-full-sort: p(95)=910 ms; list_certificates' statement mean grew with the table (KNOWN_DEFECTS=fail)"}},
		// The timing budgets the machine decided are skipped; the error rate is still certctl's.
		{"inconclusive", inconclusive, want{passed: 4, failed: 1, skipped: 3, errored: 1}, []string{"inconclusive: p(95)=910 ms; the machine decided, not certctl", "rate=0.0213"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := JUnit(*c.summary)
			golden.Check(t, "junit-"+c.name+".xml", x)
			validate(t, x)
			suites, err := gojunit.Ingest([]byte(x))
			if err != nil {
				t.Fatal(err)
			}
			var got want
			var messages []string
			for _, s := range suites {
				for _, tc := range s.Tests {
					switch tc.Status {
					case gojunit.StatusPassed:
						got.passed++
					case gojunit.StatusFailed:
						got.failed++
					case gojunit.StatusSkipped:
						got.skipped++
					case gojunit.StatusError:
						got.errored++
					}
					messages = append(messages, tc.Message)
					if tc.Error != nil {
						messages = append(messages, tc.Error.Error())
					}
				}
			}
			if got != c.want || len(suites) != len(c.summary.Scenarios) {
				t.Errorf("%d suites, cases %+v; want %d suites, %+v", len(suites), got, len(c.summary.Scenarios), c.want)
			}
			all := strings.Join(messages, "\n")
			for _, r := range c.reasons {
				if !strings.Contains(all, r) {
					t.Errorf("no case says %q:\n%s", r, all)
				}
			}
		})
	}
}

// validate checks a JUnit file against Jenkins' JUnit schema (junit-4.xsd, JUNIT_XSD; scripts/
// install-deps.sh fetches it) with xmllint: every element, its order and attributes, but for the skip
// reasons, which that 2010 schema predates and today's readers take from them (Jenkins' own junit plugin,
// GitLab, joshdk/go-junit read skipped@message): those two attributes are left out before validating.
func validate(t *testing.T, x string) {
	t.Helper()
	xsd := os.Getenv("JUNIT_XSD")
	if _, err := os.Stat(xsd); xsd == "" || err != nil {
		testenv.SkipOrFailInCI(t, fmt.Sprintf("JUNIT_XSD=%q: no schema to validate against (scripts/install-deps.sh fetches it)", xsd))
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		testenv.SkipOrFailInCI(t, "xmllint is missing (scripts/install-deps.sh installs libxml2-utils)")
	}
	reasons := regexp.MustCompile(`(<skipped|<testsuites[^>]*?) (?:message|skipped)="[^"]*"`)
	stripped := x
	for reasons.MatchString(stripped) {
		stripped = reasons.ReplaceAllString(stripped, "$1")
	}
	cmd := exec.Command("xmllint", "--noout", "--schema", xsd, "-")
	cmd.Stdin = strings.NewReader(stripped)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("not valid against %s: %v\n%s", xsd, err, out)
	}
}
