package workflow

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of scripts/step-summary.sh")

// scripts/step-summary.sh renders a run directory as the job summary's Markdown: golden files under
// testdata/step-summary/, one per case, each rendered twice, with jq and with the sed fallback the script
// uses where jq is missing. Run with -update to rewrite them after a deliberate change.
func TestStepSummary(t *testing.T) {
	report := filepath.Join(root, "internal", "report", "testdata")
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) // fills the run directory; nil: there is none
		code  string                         // what bin/loadtest run returned ("" when it never ran)
		noDir bool                           // the workflow found no directory and passes ""
	}{
		{"passed", runDir(report, "run-default"), "0", false},
		{"thresholds breached", runDir(report, "run-failed"), "99", false},
		{"summary.json disagrees with the step", runDir(report, "run-failed"), "0", false},
		{"no run directory", nil, "2", false},
		{"never ran", nil, "", true},
		{"cut short before the summary", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "logs", "stack.log"), "postgres-1 | ready\n")
		}, "", false},
		{"backticks in the summary", func(t *testing.T, dir string) {
			runDir(report, "run-default")(t, dir)
			write(t, filepath.Join(dir, "summary.txt"), "certctl-loadtest run x: PASSED (exit 0)\na ```fenced``` line\n")
		}, "0", false},
	}
	noJQ := pathWithout(t, "jq")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "20261122-120000-abcd")
			if c.setup != nil {
				c.setup(t, dir)
			}
			if c.noDir {
				dir = ""
			}
			golden := filepath.Join("testdata", "step-summary", strings.ReplaceAll(c.name, " ", "-")+".md")
			got := stepSummary(t, os.Getenv("PATH"), dir, c.code)
			if *update {
				write(t, golden, got)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("step-summary.sh differs from %s:\n--- got\n%s--- want\n%s", golden, got, want)
			}
			if withoutJQ := stepSummary(t, noJQ, dir, c.code); withoutJQ != got {
				t.Errorf("without jq the summary differs:\n--- without jq\n%s--- with jq\n%s", withoutJQ, got)
			}
		})
	}
}

// stepSummary runs the script as the workflow does; it must exit 0 whatever the run did.
func stepSummary(t *testing.T, path, dir, code string) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "step-summary.sh"), dir, code)
	cmd.Env = []string{"PATH=" + path, "LC_ALL=C.UTF-8"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("step-summary.sh %s %q: %v\n%s", dir, code, err, stderr.String())
	}
	if dir == "" {
		return string(out)
	}
	// The temporary directory's path is the only thing that differs between runs.
	return strings.ReplaceAll(string(out), filepath.Dir(dir), "<tmp>")
}

// runDir copies a recorded run's summary (internal/report's golden files) into a run directory, with the
// other files a run leaves.
func runDir(report, name string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		for _, f := range []string{"summary.json", "summary.txt"} {
			b, err := os.ReadFile(filepath.Join(report, name+"."+f))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, f), string(b))
		}
		for _, f := range []string{"run.json", "logs/stack.log", "dashboard/list_certificates.html", "raw/list_certificates.json.gz"} {
			write(t, filepath.Join(dir, f), "x\n")
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pathWithout is a PATH with the script's tools but not the one named: a directory of links to them.
func pathWithout(t *testing.T, missing string) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range []string{"bash", "grep", "awk", "sed", "head", "tail", "find", "sort", "basename", "tr", "cat", "printf", "pwd", "jq"} {
		if tool == missing {
			continue
		}
		p, err := exec.LookPath(tool)
		if err != nil {
			continue // a shell builtin (printf, pwd) or absent; the script fails loudly if it needs it
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
