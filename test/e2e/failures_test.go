package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Bad input fails in seconds with a sentence that says what to fix, before any stack exists.
func TestBadInput(t *testing.T) {
	e2e(t)
	t.Parallel()
	cases := []struct {
		name, pattern string
		code          int
		env           []string
	}{
		{"unknown tier", `TIER="bogus": unknown tier "bogus"; known tiers: [a-z, ]+ \(or default: api,connector; all: every tier but [a-z, ]+\)`, 2, []string{"TIER=bogus"}},
		{"malformed duration", `DURATION="5x" is not a duration: use a number with ms, s, m or h`, 2, []string{"DURATION=5x"}},
		{"bad rate", `RATE_LIST_CERTIFICATES="fast" must be a positive whole number`, 2, []string{"RATE_LIST_CERTIFICATES=fast"}},
		{"unknown image set", `IMAGES="local": use upstream .* or offline`, 2, []string{"IMAGES=local"}},
		{"not a certctl build", `CERTCTL_DIST=/nonexistent is not a certctl build`, 2, []string{"CERTCTL_DIST=/nonexistent"}},
		{"malformed fault", `FAULT_ERROR_RATE="lots" must be a number from 0 to 1`, 2, []string{"FAULT_ERROR_RATE=lots"}},
		{"missing image", `image\(s\) not available: certctl-loadtest/no-such-certctl:1: certctl-loadtest/\* images are built on this machine, never pulled: run .make images.`, 3,
			[]string{"CERTCTL_DIST=", "CERTCTL_IMAGE=certctl-loadtest/no-such-certctl:1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := loadtestRun(t, stackEnv(t, c.env...))
			wantCode(t, r, c.code)
			wantOutput(t, r, c.pattern)
			if r.elapsed > 20*time.Second {
				t.Errorf("took %s to reject bad input", r.elapsed)
			}
		})
	}
	t.Run("a RUN_ID already used", func(t *testing.T) {
		results := t.TempDir()
		if err := os.Mkdir(filepath.Join(results, "used-once"), 0o755); err != nil {
			t.Fatal(err)
		}
		r := loadtestRun(t, stackEnv(t, "RESULTS_DIR="+results, "RUN_ID=used-once"))
		wantCode(t, r, 2)
		wantOutput(t, r, `used-once already exists: results of a run are never overwritten; pick another RUN_ID`)
		wantOutput(t, r, `loadtest: exit 2 \(bad input.*\): no run directory was created for run used-once`)
	})
	t.Run("through make", func(t *testing.T) {
		r := run(t, stackEnv(t, "TIER=bogus"), "make", "loadtest")
		if r.code == 0 {
			t.Fatal("make loadtest passed with an unknown tier")
		}
		wantOutput(t, r, `unknown tier "bogus"`)
		wantOutput(t, r, `make: loadtest exited 2`)
	})
}

// A server that never becomes healthy stops the run at START_TIMEOUT, naming the service and its log.
// certctl runs, but its certificate does not name localhost, so its healthcheck never verifies it.
func TestServerNeverHealthy(t *testing.T) {
	e2e(t)
	t.Parallel()
	r := loadtestRun(t, stackEnv(t, "TLS_NAMES=certctl-server", "START_TIMEOUT=8s"))
	wantCode(t, r, 3)
	wantOutput(t, r, `certctl-server did not become healthy within 8s \(START_TIMEOUT\)`)
	if r.elapsed > 90*time.Second {
		t.Errorf("took %s", r.elapsed)
	}
	if r.summary.Passed || r.summary.ExitCode != 3 {
		t.Errorf("summary.json: passed=%v exit=%d", r.summary.Passed, r.summary.ExitCode)
	}
}

// A wrong token is refused by setup() before any load, in one sentence, and the results say so.
func TestWrongToken(t *testing.T) {
	e2e(t)
	t.Parallel()
	r := loadtestRun(t, stackEnv(t, "CLIENT_TOKEN=not-the-token"))
	wantCode(t, r, 108)
	wantOutput(t, r, `certctl rejected the API token \(401 on /api/v1/auth/check\): set CERTCTL_TOKEN`)
	for _, sc := range r.summary.Scenarios {
		if sc.Status != "failed" || sc.ExitCode != 108 {
			t.Errorf("%s: %s exit %d", sc.Name, sc.Status, sc.ExitCode)
		}
		if sc.Problem == "" {
			t.Errorf("%s: no problem recorded", sc.Name)
		}
	}
}

// The server is killed mid-run: the run fails as a stack fault that names the server, when and during
// what; the figures of what did run are kept, and the failed requests are not in the latency. A re-run
// right after works and gets its own directory.
func TestServerKilledMidRunThenRerun(t *testing.T) {
	e2e(t)
	t.Parallel()
	results := t.TempDir()
	id := newRunID()
	env := stackEnv(t, "DURATION=20s", "RESULTS_DIR="+results, "RUN_ID="+id)
	r := runDuring(t, env, func(*os.Process) {
		if waitForContainers(t, id, "-k6-", 2, 2*time.Minute) != nil {
			time.Sleep(10 * time.Second)
			docker(t, "kill", "certctl-lt-"+id+"-certctl-server-1")
		}
	}, loadtest, "run")
	if r.code == 0 {
		t.Fatalf("run passed although the server died:\n%s", r.output)
	}
	wantCode(t, r, 5)
	wantOutput(t, r, `(?m)^! certctl-server exited with 137 at 00:1\d into the load \(during issuance_acceptance, list_certificates\) \(sent signal (9|KILL)\) and did not come back$`)
	for _, sc := range r.summary.Scenarios {
		if sc.Record == nil || sc.Record.Requests == 0 {
			t.Errorf("%s: the figures of the part that ran are lost", sc.Name)
			continue
		}
		_, th := scenarioByName(t, r.summary, sc.Name)
		if th["http_req_failed rate<0.01"] {
			t.Errorf("%s: failed-requests threshold passed with the server gone", sc.Name)
		}
		// The latency is the successful requests': an outage cannot read as fast.
		if n := sc.Record.LatencySamples; n == nil || *n == 0 || *n >= sc.Record.Requests || sc.Record.LatencyMS.P50 == 0 {
			t.Errorf("%s: latency of %v samples of %.0f requests, p50 %.2f ms: the failed requests are in it", sc.Name, n, sc.Record.Requests, sc.Record.LatencyMS.P50)
		}
	}
	if s := afterLoad(r.summary, "certctl-server"); s.State != "exited" || s.ExitCode != 137 {
		t.Errorf("certctl-server after the load: %+v", s)
	}

	// 10/s: the re-run must pass its budgets beside two other stacks (at 50/s its list p95 reached 1.1 s
	// there); what it shows is a clean start after a killed run, not certctl's speed.
	again := loadtestRun(t, stackEnv(t, "RESULTS_DIR="+results, "RATE_ISSUANCE_ACCEPTANCE=10", "RATE_LIST_CERTIFICATES=10"))
	wantCode(t, again, 0)
	if again.dir == r.dir {
		t.Fatal("the re-run wrote into the failed run's directory")
	}
	for _, d := range []string{r.dir, again.dir} {
		if _, err := os.Stat(filepath.Join(d, "summary.json")); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
}
