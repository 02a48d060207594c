package harness

import (
	"reflect"
	"strings"
	"testing"
)

func TestInForce(t *testing.T) {
	env := []string{"PATH=/bin", "TIER=api", "DURATION=5m", "RATE_LIST_CERTIFICATES=80", "RATE_ACME_FLOW=20", "CERTCTL_API_KEY=s3cret",
		"RUN_ID=r1", "RESULTS_DIR=/tmp/r", "MAX_VUS=", "FAULT_LATENCY=2s"}
	got := InForce(env)
	want := []Setting{{"TIER", "api"}, {"RATE_ACME_FLOW", "20"}, {"RATE_LIST_CERTIFICATES", "80"}}
	if len(got) < len(want) || !reflect.DeepEqual(got[:3], want) {
		t.Errorf("in force %v, want it to begin %v (DURATION=5m is the default, PATH no knob, MAX_VUS empty)", got, want)
	}
	m := SettingsMap(got)
	if m["CERTCTL_API_KEY"] != "[redacted]" || m["FAULT_LATENCY"] != "2s" || m["RUN_ID"] != "r1" || m["DURATION"] != "" || m["PATH"] != "" {
		t.Errorf("settings %v", m)
	}
	cmd := RepeatCommand("run", env)
	for _, w := range []string{"loadtest run TIER=api ", " RATE_LIST_CERTIFICATES=80", " FAULT_LATENCY=2s", " CERTCTL_API_KEY=[redacted]"} {
		if !strings.Contains(cmd, w) {
			t.Errorf("repeat %q lacks %q", cmd, w)
		}
	}
	if strings.Contains(cmd, "RUN_ID") || strings.Contains(cmd, "RESULTS_DIR") || strings.Contains(cmd, "s3cret") {
		t.Errorf("repeat %q names the run's id, its results or a secret", cmd)
	}
}
