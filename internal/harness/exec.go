package harness

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Cmd is one external command. The runner never starts processes itself: tests inject an Executor.
type Cmd struct {
	Name   string
	Args   []string
	Env    []string // full environment
	Stdout io.Writer
	Stderr io.Writer
}

// Executor runs a command and returns its exit code; err is set only when it could not run at all.
type Executor func(ctx context.Context, c Cmd) (int, error)

// OSExec runs commands for real. A cancelled context sends SIGTERM first so docker compose can stop the
// containers it started, then SIGKILL after a grace period.
func OSExec(ctx context.Context, c Cmd) (int, error) {
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.Env = c.Env
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exitErr):
		if exitErr.ExitCode() >= 0 {
			return exitErr.ExitCode(), nil
		}
		return 128 + 15, nil // killed by a signal
	case ctx.Err() != nil:
		return 130, ctx.Err()
	default:
		return -1, err
	}
}

func errSuffix(err error) string {
	if err != nil {
		return ": " + err.Error()
	}
	return ""
}

func firstLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if s == "" && err != nil {
		return err.Error()
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
