package e2e

import (
	"certctl-loadtest/internal/results"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"certctl-loadtest/internal/samples"
	"certctl-loadtest/internal/testenv"
)

// Faults in the middle of a run against the real certctl: each keeps a verdict that names what
// happened, keeps the figures of what ran, and leaves nothing behind (run's cleanup checks that). Each
// acts 7 s into a 12 s API-tier run, once both k6 containers are up (list_certificates starts at 5 s)
// and both scenarios' raw samples hold a request.
func TestFaultsKeepTheVerdict(t *testing.T) {
	e2e(t)
	t.Parallel()
	cases := []struct {
		name string
		code int
		// act does the fault; p is the harness's process, project the compose project.
		act     func(t *testing.T, p *os.Process, project string)
		pattern string // the sentence, on stdout after "! "
		// figures: every scenario kept a record with requests (false: the one named lost its record).
		lost string
		// maxS bounds the seconds from the fault to the verdict.
		maxS float64
	}{
		{"SIGTERM to the harness", 130, func(t *testing.T, p *os.Process, _ string) { p.Signal(syscall.SIGTERM) },
			`the run was interrupted by SIGTERM at 00:\d\d into the load \(during issuance_acceptance, list_certificates\): k6 stopped early, and the figures up to then are kept`, "", 60},
		{"SIGINT to the harness alone", 130, func(t *testing.T, p *os.Process, _ string) { p.Signal(os.Interrupt) },
			`the run was interrupted by SIGINT at 00:\d\d into the load \(during issuance_acceptance, list_certificates\)`, "", 60},
		{"server paused", 5, func(t *testing.T, _ *os.Process, project string) {
			docker(t, "pause", project+"-certctl-server-1")
			time.Sleep(4 * time.Second)
			docker(t, "unpause", project+"-certctl-server-1")
		}, `certctl-server was paused at 00:\d\d into the load \(during issuance_acceptance, list_certificates\) and resumed 4\.\d s later: requests to it hung meanwhile`, "", 60},
		{"server still paused when the load ends", 5, func(t *testing.T, _ *os.Process, project string) {
			docker(t, "pause", project+"-certctl-server-1")
		}, `certctl-server was paused at 00:\d\d into the load \(during issuance_acceptance, list_certificates\) and was still paused when the load ended`, "", 90},
		{"database restarted", 5, func(t *testing.T, _ *os.Process, project string) {
			docker(t, "restart", "--time", "1", project+"-postgres-1")
		}, `postgres exited with \d+ at 00:\d\d into the load \(during issuance_acceptance, list_certificates\)( \(sent signal \w+\))? and restarted \d+\.\d s later`, "", 60},
		{"k6 killed", 5, func(t *testing.T, _ *os.Process, project string) {
			docker(t, "kill", project+"-k6-list-certificates")
		}, `k6 of list_certificates was killed \(exit 137\) at 00:\d\d into the load: its record is lost, and raw/list_certificates.json.gz ends there`, "list_certificates", 60},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			id := newRunID()
			results := t.TempDir()
			var acted time.Time
			r := runDuring(t, stackEnv(t, "DURATION=12s", "RUN_ID="+id, "RESULTS_DIR="+results), func(p *os.Process) {
				if waitForContainers(t, id, "-k6-", 2, 2*time.Minute) != nil {
					time.Sleep(7 * time.Second)
					// A k6 still starting on a busy machine has sent no request yet 7 s after its
					// container came up (the full suite, three tests at once): what is under test is
					// that the figures of what ran are kept, so act once there are some.
					for _, sc := range []string{"issuance_acceptance", "list_certificates"} {
						waitForRequests(t, filepath.Join(results, id, "raw", sc+".json.gz"), 30*time.Second)
					}
					acted = time.Now()
					c.act(t, p, "certctl-lt-"+id)
				}
			}, loadtest, "run")
			wantCode(t, r, c.code)
			wantOutput(t, r, `(?m)^! `+c.pattern)
			if s := time.Since(acted).Seconds(); s > c.maxS {
				t.Errorf("the verdict came %.0f s after the fault, want under %.0f", s, c.maxS)
			}
			keptFigures(t, r, c.lost)
		})
	}
}

// waitForRequests polls until the raw samples at path, as far as k6 has written them, hold a request,
// and gives up after timeout.
func waitForRequests(t *testing.T, path string, timeout time.Duration) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		n := 0
		if _, err := samples.Read(path, []string{"http_reqs"}, func(samples.Point) { n++ }); err == nil && n > 0 {
			return
		}
	}
	t.Logf("%s holds no request after %s", path, timeout)
}

// keptFigures: every scenario but lost kept its record with requests; lost says where its samples are.
func keptFigures(t *testing.T, r result, lost string) {
	t.Helper()
	if len(r.summary.Scenarios) != 2 {
		t.Fatalf("summary.json has %d scenarios, want 2", len(r.summary.Scenarios))
	}
	for _, sc := range r.summary.Scenarios {
		if sc.Name == lost {
			if sc.Record != nil || !strings.Contains(sc.Problem, "its raw samples are in raw/"+lost+".json.gz") {
				t.Errorf("%s: record %v, problem %q; want no record and where its raw samples are", sc.Name, sc.Record != nil, sc.Problem)
			}
			continue
		}
		if sc.Record == nil || sc.Record.Requests == 0 {
			t.Errorf("%s: the figures of what ran are lost (%s)", sc.Name, sc.Problem)
		}
	}
}

// afterLoad is a service's state once the load ended, as summary.json records it.
func afterLoad(s results.Summary, service string) results.ServiceState {
	for _, st := range s.Run.AfterLoad {
		if st.Service == service {
			return st
		}
	}
	return results.ServiceState{}
}

// The results' file system fills up: before the run, the run is refused in seconds with how much it
// needs; during the run, the verdict still reaches stdout although nothing can be written.
func TestDiskFull(t *testing.T) {
	e2e(t)
	t.Parallel()
	if os.Geteuid() != 0 {
		testenv.SkipOrFailInCI(t, "mounting a small tmpfs needs root (CI runs as root)")
	}
	mount := func(t *testing.T, size string) string {
		dir := t.TempDir()
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
			t.Fatalf("mount tmpfs: %v\n%s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", dir).Run() })
		return dir
	}
	t.Run("too small before the run", func(t *testing.T) {
		t.Parallel()
		r := loadtestRun(t, stackEnv(t, "RESULTS_DIR="+mount(t, "1m"), "DURATION=5m"))
		wantCode(t, r, 108)
		wantOutput(t, r, `not enough disk space for the results: \w+ writes about \d+ MB in 5m, 2 scenario\(s\) about \d+ MB, and RESULTS_DIR has \d MB free`)
		for _, sc := range r.summary.Scenarios {
			if sc.Record == nil || sc.Record.Requests != 0 {
				t.Errorf("%s: load was generated, or the refusal left no record", sc.Name)
			}
		}
	})
	t.Run("full during the run", func(t *testing.T) {
		t.Parallel()
		results := mount(t, "64m")
		id := newRunID()
		r := runDuring(t, stackEnv(t, "RESULTS_DIR="+results, "DURATION=20s", "RUN_ID="+id), func(*os.Process) {
			if waitForContainers(t, id, "-k6-", 2, 2*time.Minute) != nil {
				time.Sleep(5 * time.Second)
				// Fill it to the last byte: dd stops at ENOSPC.
				exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(results, "filler"), "bs=1M").Run()
			}
		}, loadtest, "run")
		wantCode(t, r, 4)
		wantOutput(t, r, `FAILED \(exit 4\)`)
		wantOutput(t, r, `the results could not be written to \S+: .*no space left on device.*; the summary below is the only copy`)
		wantOutput(t, r, fmt.Sprintf(`loadtest: exit 4 \(.*\); run %s: `, id))
	})
}

// A results directory the harness cannot write to is refused before any stack starts.
func TestReadOnlyResults(t *testing.T) {
	e2e(t)
	t.Parallel()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		// root writes through a directory's mode: a read-only mount is what stops it.
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
			t.Fatalf("mount: %v\n%s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", dir).Run() })
	} else if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	r := loadtestRun(t, stackEnv(t, "RESULTS_DIR="+dir))
	wantCode(t, r, 3)
	wantOutput(t, r, `cannot create the results directory: .*(read-only file system|permission denied)`)
	wantOutput(t, r, `no run directory was created for run `)
	if r.elapsed > 20*time.Second {
		t.Errorf("took %s", r.elapsed)
	}
}
