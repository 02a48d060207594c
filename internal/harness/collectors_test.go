package harness

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseStatsLine(t *testing.T) {
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		line    string
		ok      bool
		service string
		cpu     float64
		mem     int64
	}{
		{`{"BlockIO":"0B / 0B","CPUPerc":"91.27%","Container":"abc","ID":"abc","MemPerc":"0.50%","MemUsage":"120.5MiB / 23.54GiB","Name":"certctl-lt-x-postgres-1","NetIO":"1kB / 2kB","PIDs":"30"}`, true, "postgres", 91.27, int64(120.5 * (1 << 20))},
		{`{"CPUPerc":"150.00%","MemUsage":"1.5GiB / 23.54GiB","Name":"certctl-lt-x-certctl-server-1"}`, true, "certctl-server", 150, 1 << 30 * 3 / 2},
		{`{"CPUPerc":"12.00%","MemUsage":"30MiB / 23GiB","Name":"certctl-lt-x-k6-list-certificates"}`, true, "k6-list-certificates", 12, 30 << 20},
		{`{"CPUPerc":"--","MemUsage":"-- / --","Name":"certctl-lt-x-postgres-1"}`, false, "", 0, 0},
		{`{"CPUPerc":"1.00%","MemUsage":"3MiB / 23GiB","Name":"some-other-container"}`, false, "", 0, 0},
		{`not json`, false, "", 0, 0},
	} {
		s, ok := ParseStatsLine([]byte(tc.line), "certctl-lt-x", at)
		if ok != tc.ok || s.Service != tc.service || s.CPUPct != tc.cpu || s.MemBytes != tc.mem {
			t.Errorf("%s:\n got %v %+v\nwant %v %s %v %d", tc.line, ok, s, tc.ok, tc.service, tc.cpu, tc.mem)
		}
	}
}

// docker stats writes a refresh as: cursor home, the lines, clear to the end of the screen.
func TestStatsWriterCountsRefreshes(t *testing.T) {
	var out bytes.Buffer
	w := &statsWriter{out: &out, project: "p", now: time.Now}
	line := func(n string) string { return `{"CPUPerc":"1.00%","MemUsage":"1MiB / 2GiB","Name":"p-` + n + `-1"}` }
	w.Write([]byte("\x1b[2J\x1b[H" + line("postgres") + "\n" + line("nginx") + "\n\x1b[J\x1b[H" + line("postgres")))
	w.Write([]byte("\n" + line("nginx") + "\n"))
	w.flush()
	got := out.String()
	if strings.Count(got, `"refresh":1`) != 2 || strings.Count(got, `"refresh":2`) != 2 || w.samples != 4 {
		t.Fatalf("samples %d:\n%s", w.samples, got)
	}
}
