package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/results"
)

// measure is a measurement as it runs (capacity, growth, soak, coldstart, overhead): the process's Env
// and the command's name, which every line it prints starts with.
type measure struct {
	Env
	cmd string
}

// measurement is the run of a measurement configured by the environment alone (what names its knobs,
// doc where they are told): it refuses arguments, and names the harness does not know, before fn.
func measurement(what, doc string, fn func(context.Context, measure) int) runFunc {
	return func(ctx context.Context, e Env, cmd string, args []string) int {
		if len(args) > 0 {
			return badArgs(e, cmd, "takes no arguments (got %q): set %s in the environment; see %s", strings.Join(args, " "), what, doc)
		}
		if err := harness.CheckEnvironment(e.Root, e.Environ); err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: %v\n", err)
			return results.ExitBadInput
		}
		return fn(ctx, measure{e, cmd})
	}
}

func (m measure) say(format string, a ...any) {
	fmt.Fprintf(m.Stderr, "loadtest: "+m.cmd+": "+format+"\n", a...)
}

// fail says what is wrong with the input; it is the exit code for that.
func (m measure) fail(format string, a ...any) int {
	m.say(format, a...)
	return results.ExitBadInput
}

// knob is the environment's value of a knob, else the knob's default.
func (m measure) knob(name string) string {
	if v := m.Getenv(name); v != "" {
		return v
	}
	return harness.KnobDefault(name)
}

// envOr is the environment's value of a knob, else the command's own default for it (the gate's load
// is not a run's).
func (m measure) envOr(name, def string) string {
	if v := m.Getenv(name); v != "" {
		return v
	}
	return def
}

// makeDir creates the measurement's directory, or says why it could not.
func (m measure) makeDir(dir string) bool {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		m.say("%v", err)
		return false
	}
	return true
}
