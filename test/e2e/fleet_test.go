package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"certctl-loadtest/internal/fleet"
	"certctl-loadtest/internal/results"
)

// loadtest fleet against the real certctl, on its two ends that need few runs: a fleet no size carries
// (one run, broken by its own load whatever the machine), and one every size up to FLEET_MAX carries (two
// runs, alone: held budgets are latency budgets). Each size is a run of the fleet's mix on a stack seeded
// with that many certificates; the bisection between is internal/fleet's unit test.
func TestFleetSearch(t *testing.T) {
	e2e(t)
	readFleet := func(t *testing.T, dir string) fleet.Result {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "fleet.json"))
		if err != nil {
			t.Fatal(err)
		}
		var r fleet.Result
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "fleet.txt")); err != nil {
			t.Error(err)
		}
		return r
	}
	runOf := func(t *testing.T, dir string, tr fleet.Try) results.Summary {
		t.Helper()
		sum, err := results.Load(filepath.Join(dir, tr.RunDir))
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}

	t.Run("no size carried", func(t *testing.T) {
		t.Parallel()
		// 1,000 OCSP checks a second at the smallest size: the search breaks there and says so.
		dir := t.TempDir()
		r := run(t, knobEnv("RESULTS_DIR="+dir, "RUN_ID=fleet-flood", "FLEET=test/e2e/testdata/fleet-ocsp-flood.yaml",
			"FLEET_BRACKET=100,400", "FLEET_STEP=10s"), loadtest, "fleet")
		wantCode(t, r, 99)
		res := readFleet(t, filepath.Join(dir, "fleet-flood"))
		if res.Answer != 0 || len(res.Tries) != 1 || !strings.HasPrefix(res.Verdict, "carries no fleet of this shape: 100 certificates, the smallest size tried, broke: ocsp_crl: ") {
			t.Fatalf("answer %g after %d runs: %q", res.Answer, len(res.Tries), res.Verdict)
		}
		sum := runOf(t, filepath.Join(dir, "fleet-flood"), res.Tries[0])
		env := sum.Run.Config
		var names []string
		for _, sc := range sum.Scenarios {
			names = append(names, sc.Name)
		}
		if env["SEED_INVENTORY"] != "100" || env["RATE_OCSP_CRL"] != "1000" || env["TIME_UNIT_OCSP_CRL"] != "s" || !sameSet(names, "agent_work", "ocsp_crl", "issuance_acceptance") {
			t.Errorf("the run at 100 certificates: %v, scenarios %q", env, names)
		}
		wantOutput(t, r, `(?m)^fleet ocsp-flood at 47-day rotation: carries no fleet of this shape`)
	})

	t.Run("every size carried up to its most", func(t *testing.T) {
		t.Parallel()
		alone(t)
		dir := t.TempDir()
		r := run(t, knobEnv("RESULTS_DIR="+dir, "RUN_ID=fleet-light", "FLEET=test/e2e/testdata/fleet-light.yaml",
			"FLEET_BRACKET=100,200", "FLEET_MAX=200", "FLEET_STEP=10s"), loadtest, "fleet")
		wantCode(t, r, 0)
		res := readFleet(t, filepath.Join(dir, "fleet-light"))
		if res.Answer != 200 || !res.AtLeast || len(res.Tries) != 2 || !strings.HasPrefix(res.Verdict, "carries at least 200 certificates") {
			t.Fatalf("answer %g in %v after %d runs: %q", res.Answer, res.Interval, len(res.Tries), res.Verdict)
		}
		if res.Testbed == nil || res.Build == "" || len(res.Mix) != 7 {
			t.Errorf("testbed %v, build %q, mix %+v: want the runs' testbed and build, and the seven operations' load", res.Testbed, res.Build, res.Mix)
		}
		for _, tr := range res.Tries {
			sum := runOf(t, filepath.Join(dir, "fleet-light"), tr)
			if got := sum.Run.Config["SEED_INVENTORY"]; got != fmt.Sprint(int(tr.Size)) || len(sum.Scenarios) != 7 {
				t.Errorf("run at %g: seeded %q, %d scenarios", tr.Size, got, len(sum.Scenarios))
			}
		}
	})
}

// sameSet: got holds exactly want's names, in any order.
func sameSet(got []string, want ...string) bool {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}
