package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"certctl-loadtest/internal/coldstart"
)

// loadtest coldstart at one small inventory against the real certctl: stopped and started, the time to
// a healthy answer and the first hundred listings beside a hundred warm; restarted under a steady
// listing load, the requests it failed and the hundred answered after it.
func TestColdStartSmall(t *testing.T) {
	t.Parallel()
	e2e(t)
	dir := t.TempDir()
	r := run(t, knobEnv("RESULTS_DIR="+dir, "RUN_ID=cold-small", "GROWTH_SIZES=300"), loadtest, "coldstart")
	wantCode(t, r, 0)
	b, err := os.ReadFile(filepath.Join(dir, "cold-small", "coldstart.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c coldstart.Result
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Sizes) != 1 || c.Build == "" {
		t.Fatalf("%+v", c)
	}
	s := c.Sizes[0]
	if s.Problem != "" || s.ToHealthyS <= 0 || s.First.N != coldstart.Requests || s.Warm.N != coldstart.Requests {
		t.Errorf("cold: %+v", s)
	}
	if u := s.UnderLoad; u == nil || u.After.N != coldstart.Requests || u.ToFirstOKS <= 0 {
		t.Errorf("under load: %+v", u)
	}
	if _, err := os.Stat(filepath.Join(dir, "cold-small", "cold-small-300", "logs", "compose.log")); err != nil {
		t.Error(err)
	}
	t.Logf("coldstart:\n%s", r.output[max(0, len(r.output)-1200):])
}
