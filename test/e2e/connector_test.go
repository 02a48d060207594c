package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

var targetTypes = []string{"apache", "f5", "haproxy", "nginx"}

func connectorEnv(t *testing.T, extra ...string) []string {
	return append(stackEnv(t, "TIER=connector"), extra...)
}

// Each connector threshold is breached by a run built for it, for every target type.
func TestConnectorThresholdsCanFail(t *testing.T) {
	e2e(t)
	t.Parallel()
	perTarget := func(format string) []string {
		var env []string
		for _, tt := range targetTypes {
			env = append(env, strings.ReplaceAll(format, "{T}", strings.ToUpper(tt)))
		}
		return env
	}
	t.Run("stalled targets", func(t *testing.T) {
		// Every sidecar frozen for 8 s mid-run: connections queue in the kernel and wait. 10/s per target
		// with enough VUs: the latency budgets break, nothing is dropped and nothing times out (10 s).
		id := newRunID()
		env := connectorEnv(t, append(perTarget("RATE_{T}=600"), "DURATION=20s", "PRE_VUS=150", "MAX_VUS=200", "RUN_ID="+id)...)
		r := runDuring(t, env, func(*os.Process) {
			if waitForContainers(t, id, "-k6-", 4, 2*time.Minute) == nil {
				return
			}
			// The connector tier's load starts 10 s after its k6 does (k6/lib/connector.js).
			time.Sleep(13 * time.Second)
			sidecars := waitForContainers(t, id, "", 0, time.Second)
			var frozen []string
			for _, c := range sidecars {
				for _, tt := range targetTypes {
					if strings.HasSuffix(c, "-"+tt+"-1") {
						frozen = append(frozen, c)
					}
				}
			}
			docker(t, append([]string{"pause"}, frozen...)...)
			time.Sleep(8 * time.Second)
			docker(t, append([]string{"unpause"}, frozen...)...)
		}, loadtest, "run")
		// A paused target is the stack failing, and the run says so; the budgets break all the same.
		wantCode(t, r, 5)
		wantOutput(t, r, `(?m)^! nginx was paused at 00:\d\d into the load \(during .*nginx.*\) and resumed \d+\.\d s later`)
		for _, tt := range targetTypes {
			wantThresholds(t, r, tt, tagged("connection_duration", tt)+" p(95)<"+p95[tt], tagged("connection_duration", tt)+" p(99)<"+p99[tt])
		}
	})
	t.Run("wrong starter certificate", func(t *testing.T) {
		r := loadtestRun(t, connectorEnv(t, "DURATION=5s", "STARTER_NAMES=somewhere-else.example"))
		wantCode(t, r, 99)
		// No connection was made: the connection-time budgets judged no sample, and do not pass.
		for _, tt := range targetTypes {
			wantThresholds(t, r, tt, tagged("http_req_failed", tt)+" rate<0.01", tagged("checks", tt)+" rate>0.99",
				tagged("connection_duration", tt)+" p(95)<"+p95[tt], tagged("connection_duration", tt)+" p(99)<"+p99[tt])
		}
		wantOutput(t, r, `(?m)^  FAIL  connection_duration\{target_type:nginx,scenario:nginx\} +p\(95\)<1000 +no sample$`)
		// k6's warnings stay in the scenario's log; the console counts them, with the first one's words.
		wantOutput(t, r, `(?m)^loadtest: scenario nginx: k6 exited 99; requests k6 could not complete: \d+ tls \(first: .*x509: certificate is valid for somewhere-else.example`)
	})
	t.Run("unexpected TLS version", func(t *testing.T) {
		r := loadtestRun(t, connectorEnv(t, "DURATION=5s", "EXPECT_TLS_VERSION=tls1.2"))
		wantCode(t, r, 99)
		for _, tt := range targetTypes {
			wantThresholds(t, r, tt, tagged("checks", tt)+" rate>0.99")
		}
	})
	t.Run("dropped iterations", func(t *testing.T) {
		// One VU cannot open 1000 fresh TLS connections a second.
		r := loadtestRun(t, connectorEnv(t, append(perTarget("RATE_{T}=60000"), "DURATION=5s", "MAX_VUS=1")...))
		wantCode(t, r, 99)
		for _, tt := range targetTypes {
			wantThresholds(t, r, tt, "dropped_iterations count==0")
		}
	})
}

var (
	p95 = map[string]string{"nginx": "1000", "apache": "1000", "haproxy": "1000", "f5": "1500"}
	p99 = map[string]string{"nginx": "3000", "apache": "3000", "haproxy": "3000", "f5": "5000"}
)

// A sidecar that dies fails its own scenario; the other targets still run and report.
func TestConnectorSidecarDown(t *testing.T) {
	e2e(t)
	t.Parallel()
	id := newRunID()
	r := runDuring(t, connectorEnv(t, "DURATION=10s", "RUN_ID="+id), func(*os.Process) {
		if waitForContainers(t, id, "-k6-", 4, 2*time.Minute) != nil {
			docker(t, "kill", "certctl-lt-"+id+"-nginx-1")
		}
	}, loadtest, "run")
	wantCode(t, r, 5)
	wantOutput(t, r, `(?m)^! nginx exited with 137 at 00:\d\d into the load .*and did not come back`)
	// A vanished host also stalls VUs on name resolution, so dropped iterations may fail too.
	if _, th := scenarioByName(t, r.summary, "nginx"); th["http_req_failed rate<0.01"] || th["checks rate>0.99"] {
		t.Errorf("nginx: thresholds %v: the dead target's failures were not counted", th)
	}
	for _, tt := range []string{"apache", "f5", "haproxy"} {
		wantThresholds(t, r, tt)
		if status, _ := scenarioByName(t, r.summary, tt); status != "passed" {
			t.Errorf("%s: %s", tt, status)
		}
	}
}

// tagged is a connector metric as its thresholds name it: scoped to one target type.
func tagged(metric, targetType string) string { return metric + "{target_type:" + targetType + "}" }
