package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"

	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/results"

	"certctl-loadtest/internal/testenv"

	"gopkg.in/yaml.v3"
)

// A known defect explains only what its own signature accounts for (internal/defects): on the real
// builds, with KNOWN_DEFECTS=pass, each rule is broken by a fault the defect cannot cause, beside the
// defect itself, and the run's breach turns new. The rules' unit tests are in internal/defects; these
// runs show the signatures are what the real builds produce and nothing else does.
func TestKnownDefectsBounded(t *testing.T) {
	e2e(t)
	next := os.Getenv("CERTCTL_NEXT_DIST")
	if next == "" {
		testenv.SkipOrFailInCI(t, "CERTCTL_NEXT_DIST unset: the auth tier's latencies are judged on main-151107c")
	}
	authEnv := func(t *testing.T, extra ...string) []string {
		return stackEnv(t, append([]string{"CERTCTL_DIST=" + next, "TIER=auth", "START_TIMEOUT=4m", "KNOWN_DEFECTS=pass", "AUTH_WORKAROUNDS=1"}, extra...)...)
	}

	// The Done-when of the registry's magnitude, on whatever testbed this is: a recording is a testbed's
	// (internal/defects), and the registry's own of the login were made on another machine, where this
	// one's would be unjudged (exit 6). So the login is recorded here first. Without a recording of its
	// size on main-151107c the callback's breach is new (exit 99); recorded from that run (loadtest
	// defects record), the login is known, exit 0; a stall of 3 s on the callback, one leg of it, is known
	// and worse than recorded, exit 99, and names that leg. Three runs alone, one after another (five when
	// the testbed moves under them).
	t.Run("the login unrecorded, recorded here, then stalled", func(t *testing.T) {
		alone(t)
		const id = "session-pbkdf2-per-request"
		withRecording := func(recs []defects.Recording) string {
			return editedRegistry(t, func(e *defects.Entry) bool {
				if e.ID == id {
					e.Recorded = recs
				}
				return true
			})
		}
		// recordedHere is a registry with the login recorded from a run on the machine as it is now.
		recordedHere := func(first bool) string {
			unrecorded := loadtestRun(t, authEnv(t, "SCENARIOS=oidc_login", "DURATION=60s", "DEFECTS_REGISTRY="+withRecording(nil)))
			wantCode(t, unrecorded, 99)
			if first {
				wantNew(t, unrecorded.summary, "oidc_callback_ms p(99)<25", "never recorded on main-151107c")
			}
			rec := run(t, nil, loadtest, "defects", "record", "--id", id, unrecorded.dir)
			wantCode(t, rec, 0)
			var recs []defects.Recording
			if err := yaml.Unmarshal([]byte(rec.output[strings.Index(rec.output, "\n")+1:]), &recs); err != nil || len(recs) != 1 {
				t.Fatalf("loadtest defects record printed no recording (%v):\n%s", err, rec.output)
			}
			return withRecording(recs)
		}
		registry := recordedHere(true)

		r := loadtestRun(t, authEnv(t, "SCENARIOS=oidc_login", "DURATION=60s", "DEFECTS_REGISTRY="+registry))
		wantCode(t, r, 0)
		wantOutput(t, r, `(?m)^loadtest: exit 0, not 99: every breach is a known defect of certctl \(session-pbkdf2-per-request: docs/certctl-findings.md\)`)
		wantAttributed(t, r.summary, "known", "oidc_callback_ms p(99)<25", id)

		stalled := func() result {
			return loadtestRun(t, authEnv(t, "SCENARIOS=oidc_login", "DURATION=60s", "DEFECTS_REGISTRY="+registry, "FAULT_LATENCY=3s", "FAULT_ROUTE=GET /auth/oidc/callback"))
		}
		r = stalled()
		// This VM's core has calibrated 13,493/s and, four minutes later, 8,109/s with the machine to
		// itself (the full suite of 2026-12-07): another testbed, where a recorded size is rightly
		// unjudged (exit 6). That is the machine's verdict, not the rule's, so the recording is made again
		// on the machine as it is and the stall repeated, once.
		if r.code == 6 && r.summary.Breaches != nil && slices.ContainsFunc(r.summary.Breaches.Unjudged, func(k defects.Known) bool { return strings.Contains(k.Why, "another testbed") }) {
			logExcused(t, "the stalled login unjudged", "the testbed moved between the recording and the stall ("+r.summary.Breaches.Unjudged[0].Why+"); recorded again")
			registry = recordedHere(false)
			r = stalled()
		}
		wantCode(t, r, 99)
		wantAttributed(t, r.summary, "worse", "oidc_callback_ms p(99)<25", id)
		wantOutput(t, r, `(?m)^  known, and worse than recorded \(counted as new\)`)
		wantOutput(t, r, `(?m)^    - oidc_login: oidc_callback_ms p\(99\)<25 \(p\(99\)=[0-9.]+ ms\): session-pbkdf2-per-request — [0-9.]+ past the [0-9.]+ recorded on main-151107c`)
	})

	// bcl-sid-revokes-nothing accounts for the back-channel half: certctl's own logouts failing (the
	// fault proxy answers them 500), their sessions kept, are new.
	t.Run("a front-channel logout that does not revoke", func(t *testing.T) {
		t.Parallel()
		r := loadtestRun(t, authEnv(t, "SCENARIOS=logout", "DURATION=20s", "AUTH_BCL_SID=true", "FAULT_ERROR_RATE=1", "FAULT_ROUTE=POST /auth/logout"))
		wantCode(t, r, 99)
		wantNew(t, r.summary, "session_revoked_accepted count==0", "bcl-sid-revokes-nothing: backchannel_kept accounts for")
	})

	// acme-finalize accounts for the orders its finalize 500s failed: 500s of the fault proxy's making on
	// every ACME POST, beside them, are not its (neither at finalize, where the signature is certctl's
	// serverInternal without a nonce, nor before it).
	t.Run("faults beside finalize's 500s", func(t *testing.T) {
		t.Parallel()
		r := loadtestRun(t, stackEnv(t, "TIER=pki", "SCENARIOS=acme_order_flow", "DURATION=15s", "RATE_ACME_ORDER_FLOW=2", "KNOWN_DEFECTS=pass",
			"FAULT_ERROR_RATE=0.3", "FAULT_ROUTE=POST /acme"))
		wantCode(t, r, 99)
		wantNew(t, r.summary, "acme_order_ok rate>0.99", "acme-finalize: finalize_500 accounts for")
		wantAttributed(t, r.summary, "known", "acme_finalize_500 count==0", "acme-finalize")
	})

	// job-processor-steals cannot explain anything under the deploy tier's own 1 h job processor: agents
	// that never finish a deployment (every reload takes 5 minutes) are new, not a steal.
	t.Run("agents that never finish under the 1 h job processor", func(t *testing.T) {
		t.Parallel()
		r := loadtestRun(t, stackEnv(t, "TIER=deploy", "SCENARIOS=deploy_latency", "DURATION=1m", "START_TIMEOUT=3m", "KNOWN_DEFECTS=pass",
			"DEPLOY_RELOAD_DELAY=300", "DEPLOY_STUCK_AFTER=60s"))
		wantCode(t, r, 99)
		wantNew(t, r.summary, "deploy_loop_ok rate>0.95", "job-processor-steals: worked around in this run (job_processor_interval=1h)")
	})
}

// wantAttributed: the run's breach of threshold is in the verdict's group (known, worse, unjudged),
// attributed to the defect id.
func wantAttributed(t *testing.T, s results.Summary, group, threshold, id string) {
	t.Helper()
	if s.Breaches == nil {
		t.Fatalf("no breaches judged; want %s %s as %s", threshold, group, id)
	}
	ks := map[string][]defects.Known{"known": s.Breaches.Known, "worse": s.Breaches.Worse, "unjudged": s.Breaches.Unjudged}[group]
	if !slices.ContainsFunc(ks, func(k defects.Known) bool { return k.Threshold == threshold && slices.Contains(k.Defects, id) }) {
		t.Errorf("%s is not %s as %s: %+v", threshold, group, id, s.Breaches)
	}
}

// wantNew: the run's breach of threshold is new, and why names the entry that does not explain it.
func wantNew(t *testing.T, s results.Summary, threshold, why string) {
	t.Helper()
	if s.Breaches == nil {
		t.Fatalf("no breaches judged; want %s new", threshold)
	}
	if !slices.ContainsFunc(s.Breaches.New, func(b defects.Breach) bool { return b.Threshold == threshold && strings.Contains(b.Why, why) }) {
		t.Errorf("%s is not new because %q: %+v", threshold, why, s.Breaches)
	}
}
