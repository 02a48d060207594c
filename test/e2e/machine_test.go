package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A run that breaks a timing budget while work outside it takes the machine is inconclusive: exit 6,
// one sentence naming the outside work, and no finding that blames certctl. Two busy loops outside
// the stack take the 2 CPUs; list_certificates' 1 s of injected latency makes the breach certain, so
// the verdict, not the breach, is what is judged. Without the burner the same breach exits 99
// (TestAPIThresholdsCanFail), and MACHINE_CHECK=false, the other tests' setting, judges it so here too.
func TestMachineDecides(t *testing.T) {
	e2e(t)
	t.Parallel()
	alone(t)
	env := stackEnv(t, "MACHINE_CHECK=true", "SCENARIOS=list_certificates", "DURATION=20s", "RATE_LIST_CERTIFICATES=10",
		"FAULT_LATENCY=1s", "FAULT_ROUTE=GET /api/v1/certificates$")
	r := runDuring(t, env, func(*os.Process) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		for i := 0; i < 3; i++ {
			burner := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
			if err := burner.Start(); err != nil {
				t.Errorf("burner: %v", err)
				return
			}
			go burner.Wait()
		}
	}, loadtest, "run")
	wantCode(t, r, 6)
	wantOutput(t, r, `(?m)^loadtest: exit 6, not 99: the machine decided, not certctl: work outside the run took \d+ % of the machine's 2 CPUs`)
	d := r.summary.Diagnosis
	if d == nil || d.Machine == nil || !d.Machine.Decided || d.Machine.OutsidePct < 20 {
		t.Fatalf("diagnosis machine %+v", d)
	}
	for _, f := range d.Findings {
		if f.Kind == "contention" || f.Kind == "limit" {
			t.Errorf("a finding blames certctl while the machine decided: %s", f.Sentence)
		}
	}
	if !strings.HasPrefix(r.summary.Inconclusive, "the machine decided, not certctl") || !strings.HasPrefix(r.summary.FailedChecks[0], "inconclusive: ") {
		t.Errorf("summary inconclusive %q, failed %q", r.summary.Inconclusive, r.summary.FailedChecks)
	}
}
