package harness

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// DIAGNOSIS names its two samplers; true and false are both and neither.
func TestDiagnosisSources(t *testing.T) {
	root := fakeRepo(t, "k6/api/list_certificates.js")
	for v, want := range map[string][2]bool{"": {true, true}, "true": {true, true}, "false": {false, false}, "collector": {true, false}, "containers": {false, true}, "containers,collector": {true, true}} {
		c, err := Load(root, env("DIAGNOSIS="+v), now)
		if err != nil || c.Collector != want[0] || c.Containers != want[1] {
			t.Errorf("DIAGNOSIS=%q: collector %v containers %v (%v), want %v", v, c.Collector, c.Containers, err, want)
			continue
		}
		if got := c.Redacted()["DIAGNOSIS"]; v != "" && v != "containers,collector" && got != v {
			t.Errorf("DIAGNOSIS=%q recorded as %q", v, got)
		}
	}
	for _, bad := range []string{"yes", "collector,collector", "collector,", "cgroups"} {
		if _, err := Load(root, env("DIAGNOSIS="+bad), now); err == nil || !strings.Contains(err.Error(), "use true") {
			t.Errorf("DIAGNOSIS=%q: %v", bad, err)
		}
	}
	c, _ := Load(root, env("DIAGNOSIS=containers"), now)
	if args := strings.Join(Compose{Cfg: c}.base(), " "); strings.Contains(args, "--profile collector") {
		t.Errorf("the collector's profile without the collector: %s", args)
	}
}

// A fake /proc: the harness (pid 10) with a docker command (11) and that command's plugin (12), the
// engine (dockerd 20, a shim 21), and a process of nobody's (30).
func TestProcCPU(t *testing.T) {
	proc := t.TempDir()
	stat := func(pid, ppid int, comm string, utime, stime, cutime, cstime uint64) {
		os.MkdirAll(filepath.Join(proc, strconv.Itoa(pid)), 0o755)
		line := strconv.Itoa(pid) + " (" + comm + ") S " + strconv.Itoa(ppid) + " 1 1 0 -1 4194560 100 0 0 0 " +
			strconv.FormatUint(utime, 10) + " " + strconv.FormatUint(stime, 10) + " " + strconv.FormatUint(cutime, 10) + " " + strconv.FormatUint(cstime, 10) + " 20 0 1 0 100 0 0\n"
		os.WriteFile(filepath.Join(proc, strconv.Itoa(pid), "stat"), []byte(line), 0o644)
	}
	stat(10, 1, "loadtest", 100, 50, 10, 0)
	stat(11, 10, "docker", 5, 5, 0, 0)
	stat(20, 1, "dockerd", 1000, 500, 0, 0)
	stat(21, 1, "containerd-shim", 10, 10, 400, 0) // its children's time is the containers'
	stat(30, 1, "bash (a) b", 7000, 0, 0, 0)
	p := &procCPU{proc: proc, self: 10}
	if h, e := p.read(); h != 0 || e != 0 {
		t.Fatalf("the first read counts from there: %d %d", h, e)
	}
	// The docker command ran 10 ticks and was waited for: its time is in the harness's children's now.
	os.RemoveAll(filepath.Join(proc, "11"))
	stat(10, 1, "loadtest", 102, 51, 30, 0)
	stat(20, 1, "dockerd", 1004, 501, 0, 0)
	stat(21, 1, "containerd-shim", 11, 10, 900, 0)
	stat(30, 1, "bash (a) b", 9000, 0, 0, 0)
	if h, e := p.read(); h != 3+20-10 || e != 5+1 {
		t.Errorf("second read: harness %d (want 13: its own 3, the command's 10 more once waited for), engine %d (want 6)", h, e)
	}
	// A command and a shim that started since: the rescan (every 5 reads) finds them, whole.
	for range rescanEvery - 2 {
		p.read()
	}
	stat(40, 10, "docker", 2, 1, 0, 0)
	stat(41, 40, "docker-compose", 4, 0, 0, 0)
	stat(42, 1, "containerd-shim", 3, 0, 0, 0)
	if h, e := p.read(); h != 7 || e != 3 {
		t.Errorf("after the rescan: harness %d (want 7), engine %d (want 3)", h, e)
	}
	if got, ok := readProcTicks(proc, 30); !ok || got.comm != "bash (a) b" || got.own != 9000 || got.ppid != 1 {
		t.Errorf("a name with spaces and parentheses: %+v", got)
	}
}

// The harness lists the engine's cgroup folder each refresh and asks docker only when it holds a
// container it has not seen.
func TestCgroupIDsFresh(t *testing.T) {
	dir := t.TempDir()
	mk := func(id string) {
		os.MkdirAll(filepath.Join(dir, id), 0o755)
		os.WriteFile(filepath.Join(dir, id, "cpuacct.usage"), []byte("1\n"), 0o644)
	}
	mk("aaa")
	c := cgroupIDs{pattern: filepath.Join(dir, "%s", "cpuacct.usage"), ids: map[string]bool{}}
	if !c.fresh() || c.fresh() {
		t.Fatal("the first listing is new, the same one again is not")
	}
	mk("bbb")
	if !c.fresh() || !c.ids["bbb"] {
		t.Errorf("a container started since: %v", c.ids)
	}
}

// The progress lines read k6's REST API over HTTP; where the host does not reach the container, with
// `docker exec … k6 stats`, for good after HTTP failed twice.
func TestReadStatsOverHTTPThenExec(t *testing.T) {
	var calls []string
	var console bytes.Buffer
	reach := true
	r := &Runner{
		Stderr: &console,
		Exec: func(ctx context.Context, c Cmd) (int, error) {
			calls = append(calls, strings.Join(c.Args[:2], " "))
			switch c.Args[0] {
			case "inspect":
				c.Stdout.Write([]byte("172.22.0.7 \n"))
			case "exec":
				c.Stdout.Write([]byte("- name: iterations\n  sample:\n    count: 5\n"))
			}
			return 0, nil
		},
		HTTPGet: func(ctx context.Context, url string) ([]byte, error) {
			calls = append(calls, "GET "+url)
			if !reach {
				return nil, errors.New("no route to host")
			}
			return []byte(`{"data":[{"type":"metrics","id":"iterations","attributes":{"type":"counter","contains":"default","tainted":null,"sample":{"count":7,"rate":1.4}}}]}`), nil
		},
	}
	var path statsPath
	s, ok := r.readStats(context.Background(), "c1", &path)
	if !ok || s["iterations"]["count"] != 7 {
		t.Fatalf("over HTTP: %v %v", s, ok)
	}
	if want := "inspect --format|GET http://172.22.0.7:6565/v1/metrics"; strings.Join(calls, "|") != want {
		t.Errorf("calls %q, want %q", calls, want)
	}
	reach, calls = false, nil
	for range 3 {
		if s, ok := r.readStats(context.Background(), "c1", &path); !ok || s["iterations"]["count"] != 5 {
			t.Fatalf("through exec: %v %v", s, ok)
		}
	}
	if want := "GET http://172.22.0.7:6565/v1/metrics|exec c1|GET http://172.22.0.7:6565/v1/metrics|exec c1|exec c1"; strings.Join(calls, "|") != want {
		t.Errorf("calls %q, want %q", calls, want)
	}
	if want := "loadtest: progress: this host does not reach c1's k6 over the stack's network; its figures are read with docker exec from now on\n"; console.String() != want {
		t.Errorf("console %q", console.String())
	}
}

func TestParseMetrics(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "k6-v1-metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseMetrics(b)
	if err != nil || s["http_reqs"]["count"] <= 0 || s["http_req_duration"]["p(95)"] <= 0 {
		t.Fatalf("%v %v", s, err)
	}
	if _, err := ParseMetrics(bytes.Repeat([]byte("{"), 3)); err == nil {
		t.Error("garbage parsed")
	}
}
