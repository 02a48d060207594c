package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"certctl-loadtest/internal/harness"
)

// k6Cmd is a k6 command on the host (k6 inspect, k6 archive): the binary K6_BIN names, which must be the
// k6 go.mod pins (checked once, by k6Ready), else `go tool k6`, which compiles that very k6.
func k6Cmd(e Env, args []string, stdout, stderr *strings.Builder) harness.Cmd {
	c := harness.Cmd{Name: "go", Args: append([]string{"tool", "k6"}, args...), Env: harness.CleanEnv(e.Environ), Stdout: stdout, Stderr: stderr}
	if bin := e.Getenv("K6_BIN"); bin != "" {
		c.Name, c.Args = bin, args
	}
	return c
}

var k6VersionRE = regexp.MustCompile(`\bk6 v(\d+\.\d+\.\d+)\b`)

// k6Ready refuses a K6_BIN that is not go.mod's k6: a plan inspected by another k6 is not the plan the
// run's k6 (the image of the same version) executes.
func k6Ready(ctx context.Context, e Env) error {
	bin := e.Getenv("K6_BIN")
	if bin == "" {
		return nil
	}
	mod, err := os.ReadFile(filepath.Join(e.Root, "go.mod"))
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`(?m)^\s*go\.k6\.io/k6/v\d+ v(\d+\.\d+\.\d+)\b`).FindSubmatch(mod)
	if m == nil {
		return fmt.Errorf("go.mod requires no go.k6.io/k6 module")
	}
	var out, errb strings.Builder
	c := k6Cmd(e, []string{"version"}, &out, &errb)
	code, err := e.Exec(ctx, c)
	if err != nil || code != 0 {
		return fmt.Errorf("K6_BIN=%s: `%s version` failed (exit %d, %v): %s; unset K6_BIN to use go tool k6", bin, bin, code, err, strings.TrimSpace(errb.String()))
	}
	v := k6VersionRE.FindStringSubmatch(out.String())
	if v == nil || v[1] != string(m[1]) {
		return fmt.Errorf("K6_BIN=%s is %q, but go.mod pins k6 v%s: install that version (or unset K6_BIN to use go tool k6)", bin, strings.TrimSpace(out.String()), m[1])
	}
	return nil
}
