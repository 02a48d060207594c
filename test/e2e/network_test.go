package e2e

import (
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// certctl and its database run in stack-net's network namespace, which netguard holds with no route out
// (docker-compose.yml). During a real run: the server's routing table has no default route, and a TCP
// dial from the namespace to a port this test opens on the bridge gateway (the host) fails for want of a
// route, while the same dial from a container on the same network outside the namespace connects. That
// control shows the test could see a way out if there were one. No packet leaves the machine.
//
// The run is one scenario as two execution segments, so that the gate's one stack for both shows the
// segments too (wantMerged): both k6 processes ran their share and the merged record counts every
// iteration of the arrival rate. TestSegments compares a split run with one process, in the full suite.
func TestNoRouteOut(t *testing.T) {
	e2e(t)
	t.Parallel()
	id := newRunID()
	project := "certctl-lt-" + id
	var checked atomic.Bool
	// 10/s: this test is about the network, and the run must pass beside two other stacks on 2 CPUs while
	// the checks below exec into its containers (at 50/s it once dropped iterations on CPU alone).
	r := runDuring(t, stackEnv(t, "RUN_ID="+id, "SCENARIOS=list_certificates", "DURATION=20s", "RATE_LIST_CERTIFICATES=10"), func(*os.Process) {
		// k6 starts once certctl-server is healthy: from then on every service of the namespace is up.
		if waitForContainers(t, id, "k6", 1, 3*time.Minute) == nil {
			return
		}
		guard := project + "-stack-net-1"
		guardID := dockerInspect(t, "container", guard, "{{.Id}}")
		for _, c := range []string{project + "-certctl-server-1", project + "-postgres-1"} {
			if mode := dockerInspect(t, "container", c, "{{.HostConfig.NetworkMode}}"); mode != "container:"+guardID {
				t.Errorf("%s runs in network mode %q, not in %s's namespace", c, mode, guard)
			}
			v4, v6 := procRoutes(t, "exec", c)
			for _, table := range []struct {
				name, text string
				v6         bool
			}{{"/proc/net/route", v4, false}, {"/proc/net/ipv6_route", v6, true}} {
				if d, err := defaultRoute(table.text, table.v6); err != nil || d != "" {
					t.Errorf("%s: %s: default route %q (%v)", c, table.name, d, err)
				}
			}
		}

		gw := dockerInspect(t, "network", project+"_loadnet", "{{range .IPAM.Config}}{{.Gateway}} {{end}}")
		if f := strings.Fields(gw); len(f) > 0 {
			gw = f[0]
		}
		if net.ParseIP(gw).To4() == nil {
			t.Errorf("%s_loadnet has no IPv4 gateway (%q)", project, gw)
			return
		}
		if logs, _ := exec.Command("docker", "logs", guard).CombinedOutput(); !strings.Contains(string(logs), "deleted default via "+gw+" ") {
			t.Errorf("netguard did not log deleting the default route via %s:\n%s", gw, logs)
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(gw, "0"))
		if err != nil {
			t.Errorf("listening on the gateway %s: %v", gw, err)
			return
		}
		defer ln.Close()
		var accepted atomic.Int32
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
		target := ln.Addr().String()

		// The controls first, from loadnet outside the namespace: the route reader finds the default route
		// Docker gives such a container, and the host answers a dial.
		image := dockerInspect(t, "container", guard, "{{.Config.Image}}")
		// Compose stamps the image it builds with the run's project label, which a container inherits:
		// blank it, or the harness counts the control's exit as stack-net's.
		control := []string{"run", "--rm", "--network", project + "_loadnet",
			"--label", "com.docker.compose.project=", "--label", "com.docker.compose.service="}
		v4, _ := procRoutes(t, append(control, "--entrypoint", "", image)...)
		if d, err := defaultRoute(v4, false); err != nil || !strings.Contains(d, ipHex(gw)) {
			t.Errorf("control: no default route via %s found outside the namespace (%q, %v), so reading the routes proves nothing:\n%s", gw, d, err, v4)
		}
		out, err := exec.Command("docker", append(control, "--entrypoint", "/usr/local/bin/netguard", image, "dial", target, "3s")...).CombinedOutput()
		if err != nil {
			t.Errorf("control: a container on loadnet outside the namespace could not reach %s (%v), so this test could not see a route out:\n%s", target, err, out)
		}
		if !eventually(func() bool { return accepted.Load() == 1 }, 2*time.Second) {
			t.Errorf("control: the listener on %s accepted %d connections, want 1", target, accepted.Load())
		}

		// Inside the namespace: refused by the routing table, before any packet is sent. A timeout or a
		// refusal would mean a packet went out.
		out, err = exec.Command("docker", "exec", guard, "/usr/local/bin/netguard", "dial", target, "3s").CombinedOutput()
		if code := exitStatus(err); code != 1 || !strings.Contains(string(out), "no route to host") {
			t.Errorf("dial from the guarded namespace to %s: exit %d, want 1 with \"no route to host\":\n%s", target, code, out)
		}
		if n := accepted.Load(); n != 1 {
			t.Errorf("the listener on %s accepted %d connections: one came from the guarded namespace", target, n)
		}
		checked.Store(true)
	}, loadtest, "run", "--segments", "2")
	wantCode(t, r, 0)
	if !checked.Load() {
		t.Fatal("the checks did not finish while the stack was up")
	}
	// 10/s for 20 s is 200 iterations, whoever sends them (four of margin for the last in flight).
	if b := wantMerged(t, r); math.Abs(b.Iterations-200) > 4 {
		t.Errorf("two segments ran %v iterations of 10/s for 20 s", b.Iterations)
	}
}

// defaultRoute finds a default route in /proc/net/route (a header, then destination in column 1, flags
// in 3, mask in 7) or /proc/net/ipv6_route (no header; destination 0, prefix length 1, flags 8): an
// all-zero destination and prefix that is not a reject route. The kernel lists IPv6's null entry (an
// unreachable default on lo) even with IPv6 off; it is a reject route. An IPv4 table without a single
// route is an error: even a guarded namespace has its own network's.
func defaultRoute(table string, v6 bool) (string, error) {
	const rtfReject = 0x200
	lines := strings.Split(strings.TrimSpace(table), "\n")
	dst, bits, flagsCol, zero := 1, 7, 3, "00000000"
	if v6 {
		dst, bits, flagsCol, zero = 0, 1, 8, "00"
	} else {
		if len(lines) < 2 {
			return "", fmt.Errorf("no route at all:\n%s", table)
		}
		lines = lines[1:]
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) <= flagsCol || len(f) <= bits {
			return "", fmt.Errorf("unexpected line %q", l)
		}
		flags, err := strconv.ParseUint(f[flagsCol], 16, 32)
		if err != nil {
			return "", fmt.Errorf("flags %q: %v", f[flagsCol], err)
		}
		if strings.Trim(f[dst], "0") == "" && f[bits] == zero && flags&rtfReject == 0 {
			return strings.Join(f, " "), nil
		}
	}
	return "", nil
}

// procRoutes reads the routing tables of a container: IPv4, and IPv6 when the kernel has it.
func procRoutes(t *testing.T, args ...string) (v4, v6 string) {
	out, err := exec.Command("docker", append(args, "cat", "/proc/net/route")...).CombinedOutput()
	if err != nil {
		t.Errorf("docker %v cat /proc/net/route: %v\n%s", args, err, out)
	}
	v4 = string(out)
	out, err = exec.Command("docker", append(args, "cat", "/proc/net/ipv6_route")...).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "No such file") {
		t.Errorf("docker %v cat /proc/net/ipv6_route: %v\n%s", args, err, out)
	}
	if err == nil {
		v6 = string(out)
	}
	return v4, v6
}

func dockerInspect(t *testing.T, kind, object, format string) string {
	out, err := exec.Command("docker", "inspect", "--type", kind, "--format", format, object).CombinedOutput()
	if err != nil {
		t.Errorf("docker inspect %s: %v\n%s", object, err, out)
	}
	return strings.TrimSpace(string(out))
}

func exitStatus(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func eventually(cond func() bool, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// ipHex is an IPv4 address as /proc/net/route writes it: the bytes in host order, little-endian here.
func ipHex(ip string) string {
	b := net.ParseIP(ip).To4()
	if b == nil {
		return ip
	}
	return fmt.Sprintf("%02X%02X%02X%02X", b[3], b[2], b[1], b[0])
}
