package workflow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/results"
)

// The harness as certctl's repository names it in README's snippet: act maps it to this working tree.
const harnessRepo = "certctl-io/certctl-loadtest"

// readmeSnippet is the workflow README's "In certctl's own CI" tells certctl to commit, unchanged.
func readmeSnippet(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- snippet:certctl-pull-request -->\n```yaml\n(.*?)```\n<!-- /snippet -->").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md has no snippet:certctl-pull-request block (a ```yaml fence between the markers)")
	}
	return string(m[1])
}

// certctlFixture is a repository laid out as certctl's for the snippet's build job: its workflow is
// README's snippet, and its `make build` stands in for certctl's by copying the real build in
// CERTCTL_DIST to bin/ (compiling certctl here would take minutes and its modules); migrations/ and
// LICENSE are the build's. origin names certctl's repository, so the job's github.repository is it.
func certctlFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".github/workflows/loadtest.yml", readmeSnippet(t))
	write("Makefile", fmt.Sprintf("# Stand-in for certctl's build target: the real build, copied.\nbuild:\n\tmkdir -p bin\n\tcp %s/server %s/agent bin/\n", dist(), dist()))
	goVersion, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	write("go.mod", "module github.com/certctl-io/certctl\n\ngo "+strings.TrimPrefix(strings.TrimSpace(string(goVersion)), "go")+"\n")
	for _, c := range [][]string{
		{"cp", "-r", filepath.Join(dist(), "migrations"), filepath.Join(dist(), "LICENSE"), dir},
		{"git", "-C", dir, "init", "-q", "-b", "main"},
		{"git", "-C", dir, "remote", "add", "origin", "https://github.com/certctl-io/certctl.git"},
		{"git", "-C", dir, "add", "-A"},
		{"git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "fixture"},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	return dir
}

// ghStandIn is a gh on the PATH that answers the comment listing with nothing and records every call
// and the body it would post: the log's path, and the env that makes act's steps find it.
func ghStandIn(t *testing.T) (log string, env []string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "gh.log")
	script := `#!/bin/sh
# Stand-in for gh under act: records the call, and the body of a post, and answers with nothing.
echo "gh $*" >>"$GH_STAND_IN_LOG"
for a in "$@"; do case "$a" in body=@*) cat "${a#body=@}" >"$GH_STAND_IN_LOG.body" ;; esac; done
`
	if err := os.WriteFile(filepath.Join(dir, "gh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return log, []string{pathPrepend + dir, "GH_STAND_IN_LOG=" + log}
}

const prPayload = `{"number": 7, "pull_request": {"number": 7, "head": {"ref": "feature", "sha": "0000000000000000000000000000000000000000"}, "base": {"ref": "main"}}}`

// sameTestbed points the gate at recorded runs of the release that name no CPU model: compare judges
// them with a warning instead of calling them another testbed.
const sameTestbed = "LOADTEST_BASELINE=internal/compare/testdata/v217-a,internal/compare/testdata/v217-b"

// prRun runs the fixture's pull_request workflow, README's snippet, with the repository variables vars
// and env on the jobs, and returns the run, the artifact's summary, and the comment gh was given.
func prRun(t *testing.T, vars []string, env []string) (actRun, results.Summary, string) {
	t.Helper()
	needAct(t)
	fixture := certctlFixture(t)
	log, ghEnv := ghStandIn(t)
	env = append(append([]string{withoutDist, "ACT_CHECKOUT_TREES=" + harnessRepo + "=" + root}, ghEnv...), env...)
	args := []string{"--local-repository", harnessRepo + "@main=" + root}
	for _, v := range vars {
		args = append(args, "--var", v)
	}
	r := runActIn(t, fixture, filepath.Join(".github", "workflows", "loadtest.yml"), "pull_request", prPayload, env, args...)
	// The build job's artifact is what the harness ran: certctl's server, byte for byte.
	runID := "pr-7-" + r.runID + "-1"
	_, s := artifact(t, r, runID, completeRun...)
	b, err := os.ReadFile(filepath.Join(dist(), "server"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); s.Run.Certctl.ServerSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("the run's certctl server has sha256 %q; want the build artifact's, %x", s.Run.Certctl.ServerSHA256, sum)
	}
	if !strings.HasPrefix(s.Run.Command, "make loadtest ") {
		t.Errorf("run.json's command %q; want the make target that reproduces the load", s.Run.Command)
	}
	comment, _ := os.ReadFile(log + ".body")
	calls, _ := os.ReadFile(log)
	if !strings.Contains(string(calls), "gh api repos/certctl-io/certctl/issues/7/comments") {
		t.Errorf("gh was called %q; want the pull request's comments listed and posted", calls)
	}
	if !strings.HasPrefix(string(comment), "<!-- certctl-loadtest pull-request -->\n") {
		t.Errorf("the comment does not start with the marker the next push edits it by:\n%s", comment)
	}
	return r, s, string(comment)
}

// README's snippet, committed in a fixture repository laid out as certctl's, on a pull request: its build
// job uploads certctl's build, and the reusable workflow (.github/workflows/pull-request.yml, mapped to
// this working tree) checks out the harness, runs the load against that build, compares it with the
// committed baseline of the release, and writes one verdict as the job summary and the pull request's
// comment. A known defect (OCSP answering 500, registered) is reported and passes; a regression injected
// by the fault proxy, 150 ms on every certificate listing (under its budget, ×5 its median), fails.
func TestPullRequestGate(t *testing.T) {
	// The committed baselines name another machine's CPU (docs/methodology.md#testbeds): the verdicts are
	// judged against runs whose testbed compare cannot set apart (recorded before hosts kept their model),
	// and the not-comparable verdict against the committed ones, in the full suite.
	t.Parallel()
	t.Run("known defect passes", func(t *testing.T) {
		t.Parallel()
		// The tolerance is wide: this checks what a known defect does to the verdict, on a machine the
		// suite's other stacks share, against a baseline of two minutes on a quiet one.
		// Rates a tenth of the defaults: the suite's other stacks share the machine.
		r, s, comment := prRun(t, []string{"LOADTEST_TIERS=api,pki", "LOADTEST_SCENARIOS=list_certificates,ocsp_crl",
			"LOADTEST_DURATION=20s", "LOADTEST_TOLERANCE=10", sameTestbed}, []string{"RATE_LIST_CERTIFICATES=5", "RATE_OCSP_CRL=10"})
		if r.code != 0 {
			t.Fatalf("act exited %d; want 0 (a known defect is not a failure):\n%s", r.code, r.output)
		}
		wantOutput(t, r, `verdict: pass: `)
		wantOutput(t, r, `## Pull-request verdict: pass`)
		if s.ExitCode != 0 || s.Breaches == nil || !slices.ContainsFunc(s.Breaches.Known, func(k defects.Known) bool { return slices.Contains(k.Defects, "ocsp-500") }) {
			t.Errorf("summary.json: exit %d, breaches %+v; want exit 0 with ocsp-500 known", s.ExitCode, s.Breaches)
		}
		for _, want := range []string{"**certctl load test: pass: ", "ocsp-500", "## Against the baseline", "list_certificates"} {
			if !strings.Contains(comment, want) {
				t.Errorf("the comment has no %q:\n%s", want, comment)
			}
		}
		wantOutput(t, r, `## Against the baseline`)
	})
	t.Run("another testbed is not comparable", func(t *testing.T) {
		if testing.Short() {
			t.Skip("full suite: the gate's verdicts are judged above; this one reads the committed baselines' machine")
		}
		t.Parallel()
		r, _, _ := prRun(t, []string{"LOADTEST_SCENARIOS=list_certificates", "LOADTEST_DURATION=20s"}, []string{"RATE_LIST_CERTIFICATES=5"})
		if r.code != 0 {
			t.Fatalf("act exited %d; want 0 (another testbed is reported, not failed):\n%s", r.code, r.output)
		}
		wantOutput(t, r, `verdict: not-comparable: `)
		wantOutput(t, r, `NOT COMPARABLE: `)
	})
	t.Run("regression fails", func(t *testing.T) {
		t.Parallel()
		r, _, comment := prRun(t, []string{"LOADTEST_SCENARIOS=list_certificates", "LOADTEST_DURATION=20s", sameTestbed},
			[]string{"FAULT_LATENCY=150ms", "FAULT_ROUTE=GET /api/v1/certificates", "RATE_LIST_CERTIFICATES=5"})
		if r.code == 0 {
			t.Fatalf("act exited 0 for a pull request 150 ms slower on every listing:\n%s", r.output)
		}
		wantOutput(t, r, `verdict: regressed: `)
		wantOutput(t, r, `## Pull-request verdict: regressed`)
		wantOutput(t, r, `❌  Failure - Main Fail on something new`)
		if !strings.Contains(comment, "**certctl load test: regressed: ") {
			t.Errorf("the comment does not say regressed:\n%s", comment)
		}
		b, err := os.ReadFile(filepath.Join(r.sink, "loadtest-pr-7-"+r.runID+"-1", "compare", "compare.json"))
		if err != nil {
			t.Fatalf("no compare in the artifact: %v", err)
		}
		var c struct {
			Verdict string `json:"verdict"`
		}
		if err := json.Unmarshal(b, &c); err != nil || c.Verdict != "regressed" {
			t.Errorf("compare.json: verdict %q (%v); want regressed", c.Verdict, err)
		}
	})
}
