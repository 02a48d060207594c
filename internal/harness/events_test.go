package harness

import (
	"certctl-loadtest/internal/results"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestDescribeEvents(t *testing.T) {
	start := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	line := func(svc, action string, s float64, extra ...string) string {
		attrs := map[string]string{"com.docker.compose.service": svc, "name": "p-" + svc + "-1"}
		if svc == "k6" {
			attrs["name"] = "p-k6-list-certificates"
		}
		for i := 0; i+1 < len(extra); i += 2 {
			attrs[extra[i]] = extra[i+1]
		}
		b := `{"Type":"container","Action":"` + action + `","Actor":{"Attributes":{`
		first := true
		for k, v := range attrs {
			if !first {
				b += ","
			}
			first = false
			b += `"` + k + `":"` + v + `"`
		}
		return b + `}},"timeNano":` + itoa(at(s).UnixNano()) + "}\n"
	}
	scenarios := []results.ScenarioRun{{Name: "list_certificates", StartedAt: ptr(at(0)), EndedAt: ptr(at(30))}}
	running := map[string]bool{"certctl-server": true, "postgres": true, "nginx": true}
	k6 := map[string]string{"p-k6-list-certificates": "list_certificates"}
	cases := []struct {
		name   string
		events string
		want   []string
	}{
		{"nothing happened", line("k6", "die", 31, "exitCode", "0"), nil},
		{"paused and resumed", line("certctl-server", "pause", 8) + line("certctl-server", "unpause", 12.5),
			[]string{"certctl-server was paused at 00:08 into the load (during list_certificates) and resumed 4.5 s later: requests to it hung meanwhile"}},
		{"restarted", line("postgres", "kill", 10, "signal", "15") + line("postgres", "die", 10.2, "exitCode", "0") +
			line("postgres", "stop", 10.3) + line("postgres", "start", 11) + line("postgres", "restart", 11),
			[]string{"postgres exited with 0 at 00:10 into the load (during list_certificates) (sent signal 15) and restarted 0.8 s later"}},
		{"out of memory", line("certctl-server", "oom", 20) + line("certctl-server", "die", 20.1, "exitCode", "137"),
			[]string{"certctl-server exited with 137 at 00:20 into the load (during list_certificates) (out of memory) and did not come back"}},
		{"k6 killed", line("k6", "kill", 9, "signal", "9") + line("k6", "die", 9.1, "exitCode", "137"),
			[]string{"k6 of list_certificates was killed (exit 137) at 00:09 into the load: its record is lost, and raw/list_certificates.json.gz ends there"}},
		{"a service not running when the load began", line("scale-seed", "die", 1, "exitCode", "0"), nil},
		{"after the load", line("nginx", "die", 40, "exitCode", "0"),
			[]string{"nginx exited with 0 at 00:40 into the load and did not come back"}},
	}
	for _, c := range cases {
		events, err := parseEvents(strings.NewReader(c.events), start)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := describeEvents(events, running, k6, scenarios); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func ptr(t time.Time) *time.Time { return &t }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
