package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// A new measurement is one value in the registry and its own code (issue 52): this one, registered as
// commands() would list it, is in the overview, answers help, refuses arguments, and writes its files
// through output into a measurement directory of its own. Nothing else of cli knows of it.
func TestAMeasurementIsOneValue(t *testing.T) {
	probe := command{
		name: "probe", usage: []string{"probe"}, summary: "a measurement that measures nothing",
		about: "Writes probe.json and probe.txt into results/<RUN_ID>/.", knobs: []string{"RUN_ID", "DURATION"}, example: "loadtest probe",
		run: measurement("RUN_ID", "docs/configuration.md", func(ctx context.Context, m measure) int {
			dir, err := measurementDir(m.Env, m.Getenv("RUN_ID"))
			if err != nil {
				return m.fail("%v", err)
			}
			if !m.makeDir(dir) {
				return results.ExitEnvironment
			}
			err = output.Files(dir, output.File{Name: "probe.json", JSON: map[string]string{"duration": m.knob("DURATION")}}, output.File{Name: "probe.txt", Text: "probed\n"})
			if err != nil {
				m.say("writing %s: %v", dir, err)
				return results.ExitEnvironment
			}
			m.say("results in %s", dir)
			return results.ExitOK
		}),
	}
	reg := append(commands(), probe)
	resultsDir := t.TempDir()
	run := func(args ...string) outcome {
		t.Helper()
		env := map[string]string{"RUN_ID": "probe-1", "RESULTS_DIR": resultsDir}
		var stdout, stderr bytes.Buffer
		code := reg.main(context.Background(), Env{
			Args: args, Getenv: func(k string) string { return env[k] }, Environ: []string{"RUN_ID=probe-1", "RESULTS_DIR=" + resultsDir},
			Stdout: &stdout, Stderr: &stderr, Root: root, Now: time.Now,
		})
		return outcome{code: code, stdout: stdout.String(), stderr: stderr.String()}
	}

	if o := run("help"); !strings.Contains(o.stdout, "\n  probe          a measurement that measures nothing\n") {
		t.Errorf("the overview does not list it:\n%s", o.stdout)
	}
	for _, args := range [][]string{{"help", "probe"}, {"probe", "--help"}} {
		if o := run(args...); o.code != results.ExitOK || o.stdout != probe.page() || !strings.Contains(o.stdout, "\nknobs (environment") {
			t.Errorf("%v: exit %d:\n%s", args, o.code, o.stdout)
		}
	}
	if o := run("probe", "now"); o.code != results.ExitBadInput || !strings.HasPrefix(o.stderr, `loadtest: probe: takes no arguments (got "now"): set RUN_ID in the environment`) {
		t.Errorf("an argument: exit %d, %s", o.code, o.stderr)
	}
	o := run("probe")
	dir := filepath.Join(resultsDir, "probe-1")
	if o.code != results.ExitOK || o.stderr != "loadtest: probe: results in "+dir+"\n" {
		t.Fatalf("exit %d, %s", o.code, o.stderr)
	}
	for name, want := range map[string]string{"probe.json": "{\n  \"duration\": \"" + harness.KnobDefault("DURATION") + "\"\n}\n", "probe.txt": "probed\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", name, b, err, want)
		}
	}
	// A measurement's results are never overwritten: a second run of one RUN_ID is refused.
	if o := run("probe"); o.code != results.ExitBadInput || !strings.Contains(o.stderr, "already exists") {
		t.Errorf("again: exit %d, %s", o.code, o.stderr)
	}
}
