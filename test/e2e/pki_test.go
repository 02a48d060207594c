package e2e

import (
	"certctl-loadtest/internal/results"
	"fmt"
	"strings"
	"testing"
)

func pkiRows(s results.Summary, scenario string) map[string]results.PKIRow {
	rows := map[string]results.PKIRow{}
	for _, r := range s.PKITier {
		if r.Scenario == scenario {
			rows[strings.TrimSpace(r.Operation)] = r
		}
	}
	return rows
}

func wantFinding(t *testing.T, s results.Summary, pattern string) {
	t.Helper()
	for _, f := range s.Findings {
		if regexpFind(pattern, f) {
			return
		}
	}
	t.Errorf("no finding matches %q: %q", pattern, s.Findings)
}

// The PKI tier against the real certctl: signed ACME orders end to end, certctl's issuance path,
// revocation checks; certctl's finalize and OCSP defects are named with their counts, and each budget
// breaks when certctl (or the fault proxy in front of it) is made slow or wrong.
func TestPKITier(t *testing.T) {
	e2e(t)
	gateParallel(t)
	pkiEnv := func(t *testing.T, extra ...string) []string {
		return stackEnv(t, append([]string{"TIER=pki", "DURATION=20s"}, extra...)...)
	}

	t.Run("orders, issuance and revocation checks", func(t *testing.T) {
		t.Parallel()
		// With both workarounds certctl answers every request of the tier; a latency budget broken beside
		// other stacks is logged, not failed (wantThresholds), so the exit code is judged alone. The
		// gate (short mode) runs it for 10 s: the counts below are a quarter of what each rate would
		// deliver, so that only a load not delivered at all fails them.
		// The gate's run leaves issuance_c4 to the full suite: every PKI scenario's setup signs through
		// the same issuance path, and the challenge-mode orders are the gate's one live run of certctl's
		// http-01 validation. Every fifth challenge-mode order answers wrong, which certctl must refuse.
		secs := 20.0
		scenarios := "acme_order_flow,issuance_c4,acme_http01_c5,acme_http01_saturated,ocsp_crl"
		if testing.Short() {
			secs, scenarios = 10, "acme_order_flow,acme_http01_c5,ocsp_crl"
		}
		r := loadtestRun(t, pkiEnv(t, "SCENARIOS="+scenarios, fmt.Sprintf("DURATION=%gs", secs),
			"ACME_FINALIZE_WORKAROUND=1", "OCSP_RESPONDER_WORKAROUND=1", "ACME_CHALLENGE_WRONG=0.2"))
		if r.code != 0 && r.code != 99 {
			t.Fatalf("exit %d:\n%s", r.code, r.output)
		}
		wantOutput(t, r, `(?m)^loadtest: pki tier \(as a CA benchmark reports it`)

		acme := sequenceRun(t, r, "acme_order_flow")
		wantThresholds(t, acme, "acme_order_flow")
		rows := pkiRows(acme.summary, "acme_order_flow")
		order := rows["order (new-order → chain verified)"]
		// 10 orders a second, each chain verified to the CA certctl signed the setup's certificate with.
		if order.OK < 10*secs/4 || order.PerSecond <= 0 || order.Latency.P50 <= 0 || order.Latency.Max < order.Latency.P99 {
			t.Errorf("acme order row %+v", order)
		}
		for _, st := range []string{"new-account", "new-order", "authz", "finalize", "certificate"} {
			if rows[st].Latency.P50 <= 0 {
				t.Errorf("acme step %s: %+v", st, rows[st])
			}
		}

		checked := []results.Summary{acme.summary}
		if !testing.Short() {
			iss := sequenceRun(t, r, "issuance_c4")
			wantThresholds(t, iss, "issuance_c4")
			row := pkiRows(iss.summary, "issuance_c4")["issue (create + agent CSR signed)"]
			if row.Clients != 4 || row.OK < 1 || row.PerSecond <= 0 || row.Latency.P95 <= 0 {
				t.Errorf("issuance row %+v", row)
			}
			checked = append(checked, iss.summary)
		}

		// Challenge mode: certctl fetched each order's http-01 answer from the stack's responder; a right
		// one made the authorization valid, a wrong one (every fifth order) invalid.
		h01 := sequenceRun(t, r, "acme_http01_c5")
		wantThresholds(t, h01, "acme_http01_c5")
		hrows := pkiRows(h01.summary, "acme_http01_c5")
		horder := hrows["order (new-order → http-01 validated → chain verified)"]
		if horder.Clients != 5 || horder.OK < secs || horder.PerSecond <= 0 || horder.Latency.P50 <= 0 {
			t.Errorf("http-01 order row %+v", horder)
		}
		for _, st := range []string{"challenge", "authz-poll", "validation"} {
			if hrows[st].Latency.P50 <= 0 {
				t.Errorf("http-01 step %s: %+v", st, hrows[st])
			}
		}
		if c := h01.summary.Scenarios[0].Record.Counters; c["wrong_refused"] < 1 || c["wrong_accepted"] != 0 || c["wrong_undecided"] != 0 || c["challenge_invalid"] != 0 {
			t.Errorf("wrong answers: refused %v, accepted %v, undecided %v; right answers refused %v: want some refused and nothing else",
				c["wrong_refused"], c["wrong_accepted"], c["wrong_undecided"], c["challenge_invalid"])
		}
		checked = append(checked, h01.summary)

		if !testing.Short() {
			// The validator pool full: 15 slow clients, each validation holding a slot 8 s, keep certctl's
			// ten http-01 slots busy with a queue, and the two fast clients' validations wait in it.
			sat := sequenceRun(t, r, "acme_http01_saturated")
			wantThresholds(t, sat, "acme_http01_saturated")
			srows := pkiRows(sat.summary, "acme_http01_saturated")
			slow, fast := srows["order, slow responder (holds a validation slot)"], srows["order, fast responder (while the pool is full)"]
			if slow.Clients != 17 || slow.OK < 10 || slow.Latency.P50 < 8000 || fast.OK < 1 {
				t.Errorf("saturated pool: slow %+v, fast %+v; want 17 clients, ten slow orders or more each over the responder's 8 s, a fast one", slow, fast)
			}
			if v := sat.summary.Scenarios[0].Record.TrendsMS["validation_fast"]; v.P50 < 1000 {
				t.Errorf("fast validation while the pool is full: %+v; want the queue's wait (over a second at p50)", v)
			}
			checked = append(checked, sat.summary)
		}

		rev := sequenceRun(t, r, "ocsp_crl")
		wantThresholds(t, rev, "ocsp_crl")
		rr := pkiRows(rev.summary, "ocsp_crl")
		// 100 checks a second, a quarter each: OCSP by GET and by POST, the CRL whole and by ETag.
		for _, op := range []string{"ocsp get", "ocsp post", "crl", "crl 304"} {
			if rr[op].OK < 25*secs/4 || rr[op].Latency.P95 <= 0 {
				t.Errorf("%s: %+v", op, rr[op])
			}
		}
		for _, s := range append(checked, rev.summary) {
			for _, f := range s.Findings {
				if !strings.Contains(f, "#ocsp-post-leading-zero") {
					t.Errorf("finding with both workarounds applied: %s", f)
				}
			}
		}
	})

	t.Run("orders revoked by their clients", func(t *testing.T) {
		t.Parallel()
		// Half the orders end with revokeCert. certctl answers 404 for a serial whose hex starts with a zero
		// digit (ari-leading-zero: revoke-cert's lookup drops the zero), about one in eight: counted apart,
		// and no check fails on it. Without that rule the checks budget breaks (16 % of the revocations).
		r := loadtestRun(t, pkiEnv(t, "SCENARIOS=acme_order_flow", "DURATION=30s", "ACME_FINALIZE_WORKAROUND=1", "ACME_REVOKE_SHARE=0.5"))
		if r.code != 0 && r.code != 99 {
			t.Fatalf("exit %d:\n%s", r.code, r.output)
		}
		wantThresholds(t, r, "acme_order_flow")
		c := r.summary.Scenarios[0].Record.Counters
		// 300 orders, 150 revocations: no leading-zero serial among them once in 10^8 runs.
		if c["revoked"] < 100 || c["revoke_leading_zero_404"] < 1 || c["revoke_unanswered"] != 0 || c["revoke_refused"] > 3 {
			t.Errorf("revocations: revoked %v, leading-zero 404 %v, refused %v, unanswered %v", c["revoked"], c["revoke_leading_zero_404"], c["revoke_refused"], c["revoke_unanswered"])
		}
		if row := pkiRows(r.summary, "acme_order_flow")["revoke"]; row.Latency.P50 <= 0 {
			t.Errorf("no revoke row: %+v", row)
		}
		wantOutput(t, r, `revoke_leading_zero_404: revoke-cert answered 404 for a certificate it issued whose serial starts with 0`)
	})

	t.Run("without the workarounds", func(t *testing.T) {
		t.Parallel()
		r := loadtestRun(t, pkiEnv(t, "SCENARIOS=acme_order_flow,acme_http01_c1,acme_http01_saturated,ocsp_crl", "DURATION=10s", "RATE_ACME_ORDER_FLOW=2", "RATE_OCSP_CRL=20"))
		wantCode(t, r, 99)
		// Challenge mode meets the same finalize: certctl validated the http-01 answer, then failed to sign.
		wantThresholds(t, sequenceRun(t, r, "acme_http01_c1"), "acme_http01_c1", "acme_order_ok rate>0.99", "acme_finalize_500 count==0",
			"http_req_failed rate<0.01", "checks rate>0.99", "acme_order_ms p(95)<5000")
		// So do the saturated pool's orders, slow and fast alike, once validated.
		wantThresholds(t, sequenceRun(t, r, "acme_http01_saturated"), "acme_http01_saturated", "acme_order_ok{part:fast} rate>0.99",
			"acme_order_ok{part:slow} rate>0.99", "acme_finalize_500 count==0", "http_req_failed rate<0.01", "checks rate>0.99")
		acme := sequenceRun(t, r, "acme_order_flow")
		// No order succeeds: the order's latency budget judges no sample, and does not pass.
		wantThresholds(t, acme, "acme_order_flow", "acme_order_ok rate>0.99", "acme_finalize_500 count==0", "http_req_failed rate<0.01", "checks rate>0.99",
			"acme_order_ms p(95)<2000")
		wantFinding(t, acme.summary, `^acme_order_flow: ACME finalize answered 500 \d+ times: .*#acme-finalize\); ACME_FINALIZE_WORKAROUND=1 adds the rows it assumes`)
		rev := sequenceRun(t, r, "ocsp_crl")
		// The CRL half still holds: only OCSP fails, and the run says why.
		wantThresholds(t, rev, "ocsp_crl", "pki_ocsp_ok rate>0.99", "pki_ocsp_500 count==0", "http_req_failed rate<0.01", "checks rate>0.99",
			"http_req_duration{endpoint:ocsp_get} p(95)<500", "http_req_duration{endpoint:ocsp_post} p(95)<500")
		wantFinding(t, rev.summary, `^ocsp_crl: OCSP answered 500 \d+ times: .*#ocsp-500\); OCSP_RESPONDER_WORKAROUND=1 gives it a responder`)
		wantOutput(t, r, `certctl's defects this run met\n  - acme_order_flow: ACME finalize answered 500`)
	})

	t.Run("slow signing", func(t *testing.T) {
		t.Parallel()
		// Every signed ACME request and every agent CSR 2.5 s late: an order of five signed requests
		// takes over 2 s, one VU cannot keep 10 orders a second, and an issuance takes over 2 s. A
		// challenge-mode order is eight signed requests (over 5 s), and its validation the challenge's
		// answer and at least one poll of the authorization (over 2 s).
		r := loadtestRun(t, pkiEnv(t, "SCENARIOS=acme_order_flow,issuance_c1,acme_http01_c1", "ACME_FINALIZE_WORKAROUND=1", "MAX_VUS=1",
			"FAULT_LATENCY=2500ms", "FAULT_ROUTE=POST /acme/,POST /api/v1/agents/"))
		wantCode(t, r, 99)
		wantThresholds(t, sequenceRun(t, r, "acme_order_flow"), "acme_order_flow", "acme_order_ms p(95)<2000", "dropped_iterations count==0")
		wantThresholds(t, sequenceRun(t, r, "issuance_c1"), "issuance_c1", "pki_issue_ms p(95)<2000")
		wantThresholds(t, sequenceRun(t, r, "acme_http01_c1"), "acme_http01_c1", "acme_validation_ms p(95)<2000", "acme_order_ms p(95)<5000")
	})

	t.Run("the validator pool held past certctl's timeouts", func(t *testing.T) {
		t.Parallel()
		// 45 slow clients whose responder holds every answer 12 s: certctl gives up on each after 10 s
		// (its validator's answer-header timeout), so every slow authorization goes invalid, each after
		// holding one of the ten slots 10 s. The queue for a slot is 45 long; a fast client's validation
		// waits in it about 45 s, past the 30 s certctl's pool gives one challenge, which starts only once
		// a slot is taken (docs/certctl-findings.md#validation-wait-unbounded).
		r := loadtestRun(t, pkiEnv(t, "SCENARIOS=acme_http01_saturated", "DURATION=1m", "ACME_FINALIZE_WORKAROUND=1",
			"ACME_SLOW_VUS=45", "CHALLENGE_SLOW_LATENCY=12s"))
		wantCode(t, r, 99)
		sat := r // one scenario: the run itself, not a sequence
		wantThresholds(t, sat, "acme_http01_saturated", "acme_order_ok{part:slow} rate>0.99", "acme_validation_ms{part:fast} p(95)<30000", "checks rate>0.99")
		c := sat.summary.Scenarios[0].Record.Counters
		if c["issued_slow"] != 0 || c["challenge_invalid_slow"] < 10 || c["issued_fast"] < 1 || c["challenge_invalid_fast"] != 0 {
			t.Errorf("slow issued %v, refused %v; fast issued %v, refused %v: want no slow order issued, ten or more refused, and fast ones issued, none refused",
				c["issued_slow"], c["challenge_invalid_slow"], c["issued_fast"], c["challenge_invalid_fast"])
		}
	})

	t.Run("nothing stored, revocation checks slow and failing", func(t *testing.T) {
		t.Parallel()
		// certctl's versions read back empty ({}): a 202 that stored nothing, so nothing counts as issued,
		// and the issuance's time judged no sample.
		// Every OCSP and CRL answer 600 ms late, half of them the proxy's 500 (not certctl's OCSP defect:
		// pki_ocsp_500 holds) and the rest emptied, two VUs for 100 checks a second.
		r := loadtestRun(t, pkiEnv(t, "SCENARIOS=issuance_c1,ocsp_crl", "MAX_VUS=2", "OCSP_RESPONDER_WORKAROUND=1",
			"FAULT_BODY_RATE=1", "FAULT_ERROR_RATE=0.5", "FAULT_LATENCY=600ms",
			"FAULT_ROUTE=GET /api/v1/certificates/,GET /.well-known/pki/,POST /.well-known/pki/"))
		wantCode(t, r, 99)
		wantThresholds(t, sequenceRun(t, r, "issuance_c1"), "issuance_c1",
			"pki_issued count>0", "pki_not_signed count==0", "http_req_failed rate<0.01", "checks rate>0.99", "pki_issue_ms p(95)<2000")
		wantThresholds(t, sequenceRun(t, r, "ocsp_crl"), "ocsp_crl",
			"pki_ocsp_ok rate>0.99", "pki_crl_ok rate>0.99",
			"http_req_duration{endpoint:ocsp_get} p(95)<500", "http_req_duration{endpoint:ocsp_post} p(95)<500",
			"http_req_duration{endpoint:crl} p(95)<500", "http_req_duration{endpoint:crl_304} p(95)<500",
			"http_req_failed rate<0.01", "checks rate>0.99", "dropped_iterations count==0")
	})
}
