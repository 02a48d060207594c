package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"certctl-loadtest/internal/report"
)

var deployScenarios = []string{"deploy_latency", "mass_rotation", "rotation_under_traffic"}

// deployRun is one scenario's run of a deploy sequence; a sequence of one scenario is the run itself.
func deployRun(t *testing.T, r result, scenario string) result {
	t.Helper()
	if _, err := os.Stat(filepath.Join(filepath.Dir(r.dir), r.runID+"-"+strings.ReplaceAll(scenario, "_", "-"))); err == nil {
		return sequenceRun(t, r, scenario)
	}
	return r
}

func deployRows(s report.Summary, scenario string) map[string]report.DeployRow {
	rows := map[string]report.DeployRow{}
	for _, d := range s.DeployTier {
		if d.Scenario == scenario {
			rows[d.TargetType] = d
		}
	}
	return rows
}

// The deploy tier against the real certctl and its agents: renewals go through the agents to nginx,
// Apache, HAProxy and the F5 stand-in, and each target is seen serving the new certificate. Not parallel
// with the other tests: its six stacks, three at a time, take the CPU that the spot checks' latency
// budgets are judged on (a stats_summary median of 50.2 ms against < 50 beside them).
func TestDeployTier(t *testing.T) {
	deployEnv := func(t *testing.T, extra ...string) []string {
		return stackEnv(t, append([]string{"TIER=deploy", "START_TIMEOUT=2m"}, extra...)...)
	}
	targets := []string{"apache", "f5", "haproxy", "nginx"}

	t.Run("green", func(t *testing.T) {
		t.Parallel()
		// 90 s: six loops of deploy_latency, a mass rotation of 40 certificates well inside its deadline
		// (two agent polls and the work), and a rotation of every target under client load.
		r := loadtestRun(t, deployEnv(t, "DURATION=90s", "DEPLOY_MASS_CERTS=40"))
		wantCode(t, r, 0)
		for _, sc := range deployScenarios {
			one := deployRun(t, r, sc)
			wantThresholds(t, one, sc)
			rows := deployRows(one.summary, sc)
			if len(rows) != 4 {
				t.Fatalf("%s: deploy rows %v", sc, rows)
			}
			for _, tt := range targets {
				d := rows[tt]
				// Served: a handshake with the target gave the renewed certificate's serial, its chain verified.
				if d.Completed == 0 || d.LoopMS.P50 <= 0 || d.NotServed > 0 || d.Stolen > 0 || d.Failed > 0 {
					t.Errorf("%s %s: %+v", sc, tt, d)
				}
				if sc != "mass_rotation" && (d.LoopMS.Max > 100000 || d.SignedMS.P50+d.JobMS.P50+d.ServedMS.P50 > d.LoopMS.Max+1000) {
					t.Errorf("%s %s: stages signed %.0f + job %.0f + served %.0f ms against a loop of %.0f ms", sc, tt, d.SignedMS.P50, d.JobMS.P50, d.ServedMS.P50, d.LoopMS.Max)
				}
			}
			if sc == "deploy_latency" {
				cfg := one.summary.Run.Config
				if cfg["CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL"] != "1h" || cfg["CERTCTL_SCHEDULER_RENEWAL_CHECK_INTERVAL"] != "1h" || cfg["CERTCTL_VERIFY_DEPLOYMENT"] != "true" {
					t.Errorf("run.json does not state the scheduler's clocks: %v", cfg)
				}
			}
			if sc == "mass_rotation" {
				var done float64
				for _, d := range rows {
					done += d.Completed + d.F5TokenLimit
				}
				if done != 40 {
					t.Errorf("mass_rotation: %v deployments ended, want 40: %v", done, rows)
				}
			}
			if sc == "rotation_under_traffic" {
				c := one.summary.Scenarios[0].Record.Counters
				if c["handshake_failed"] != 0 || c["wrong_serial"] != 0 || one.summary.Scenarios[0].Record.Iterations < 1000 {
					t.Errorf("rotation_under_traffic: %v, %v iterations", c, one.summary.Scenarios[0].Record.Iterations)
				}
			}
		}
	})

	t.Run("broken reload", func(t *testing.T) {
		t.Parallel()
		// Every reload fails (the F5 has none): the connector rolls back and certctl fails the job.
		r := loadtestRun(t, deployEnv(t, "DURATION=1m", "DEPLOY_MASS_CERTS=8", "DEPLOY_RELOAD_BROKEN=1"))
		wantCode(t, r, 99)
		wantThresholds(t, deployRun(t, r, "deploy_latency"), "deploy_latency", "deploy_loop_ok rate>0.95", "checks rate>0.95")
		wantThresholds(t, deployRun(t, r, "mass_rotation"), "mass_rotation", "deploy_mass_ok rate==1", "deploy_failed count==0", "checks rate>0.99")
		wantThresholds(t, deployRun(t, r, "rotation_under_traffic"), "rotation_under_traffic", "deploy_loop_ok rate>0.95")
		for _, sc := range deployScenarios {
			rows := deployRows(deployRun(t, r, sc).summary, sc)
			if rows["nginx"].Failed == 0 || rows["f5"].Failed != 0 {
				t.Errorf("%s: a broken reload shows as failed deployments on the file targets only: %+v", sc, rows)
			}
		}
	})

	t.Run("slow target", func(t *testing.T) {
		t.Parallel()
		// One VU, a reload that takes 75 s and a fifth of the job polls answered 500 by the fault proxy:
		// the loop outlasts its budget, the arrivals have no VU, requests fail; the mass rotation cannot
		// finish within its minute.
		r := loadtestRun(t, deployEnv(t, "DURATION=1m", "DEPLOY_MASS_CERTS=8", "MAX_VUS=1", "DEPLOY_RELOAD_DELAY=75",
			"DEPLOY_STUCK_AFTER=200s", "FAULT_ERROR_RATE=0.2", "FAULT_ROUTE=GET /api/v1/jobs"))
		wantCode(t, r, 99)
		wantThresholds(t, deployRun(t, r, "deploy_latency"), "deploy_latency", "deploy_loop_ms p(95)<100000", "dropped_iterations count==0", "http_req_failed rate<0.01")
		wantThresholds(t, deployRun(t, r, "mass_rotation"), "mass_rotation", "deploy_mass_ok rate==1", "checks rate>0.99", "http_req_failed rate<0.01")
		wantThresholds(t, deployRun(t, r, "rotation_under_traffic"), "rotation_under_traffic", "dropped_iterations count==0", "http_req_failed rate<0.01")
	})

	t.Run("stolen", func(t *testing.T) {
		t.Parallel()
		// certctl's job processor every 10 s claims each Deployment job before the agent's next poll.
		r := loadtestRun(t, deployEnv(t, "SCENARIOS=deploy_latency", "DURATION=1m", "CERTCTL_SCHEDULER_JOB_PROCESSOR_INTERVAL=10s"))
		wantCode(t, r, 99)
		wantThresholds(t, r, "deploy_latency", "deploy_loop_ok rate>0.95", "checks rate>0.95")
		var stolen, completed float64
		for _, d := range deployRows(r.summary, "deploy_latency") {
			stolen += d.Stolen
			completed += d.Completed
		}
		if stolen < 3 || completed != 0 {
			t.Errorf("%v loops stolen, %v completed; every deployment job should be stolen", stolen, completed)
		}
		wantOutput(t, r, `certctl-findings.md#job-processor-steals`)
	})

	t.Run("hard reload", func(t *testing.T) {
		t.Parallel()
		// Each file target stops its server for 4 s to reload: clients are refused meanwhile. Two minutes,
		// so the client load still runs when the rotations, each started at a random phase of the
		// agents' poll, reach their reloads.
		r := loadtestRun(t, deployEnv(t, "SCENARIOS=rotation_under_traffic", "DURATION=2m", "DEPLOY_RELOAD_HARD=1"))
		wantCode(t, r, 99)
		wantThresholds(t, r, "rotation_under_traffic", "deploy_handshake_failed count==0", "http_req_failed rate<0.01", "checks rate>0.99")
	})

	t.Run("late reload, unverified", func(t *testing.T) {
		t.Parallel()
		// The reload takes effect 5 s after it returns, and the targets do not check their deployment:
		// certctl calls it Completed while the old certificate is still served.
		r := loadtestRun(t, deployEnv(t, "SCENARIOS=rotation_under_traffic", "DURATION=1m", "DEPLOY_RELOAD_LAG=5", "DEPLOY_TARGET_VERIFY=0"))
		wantCode(t, r, 99)
		wantThresholds(t, r, "rotation_under_traffic", "deploy_wrong_serial count==0")
	})
}
