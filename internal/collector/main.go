package collector

import (
	"context"
	"fmt"
	"io"
)

// Main is the collector command, returning its exit status: 0 ok, 1 runtime or healthcheck failure,
// 2 bad arguments or configuration. A source that cannot be sampled is not a failure: it is reported.
func Main(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	healthcheck := false
	for _, a := range args {
		if a != "--healthcheck" {
			fmt.Fprintf(stderr, "collector: unexpected argument %q: the only flag is --healthcheck, settings come from COLLECT_* variables\n", a)
			return 2
		}
		healthcheck = true
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "collector: refusing to start:", err)
		return 2
	}
	if healthcheck {
		if err := Healthcheck(cfg); err != nil {
			fmt.Fprintln(stderr, "collector: unhealthy:", err)
			return 1
		}
		return 0
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "collector: "+format+"\n", a...) }
	if err := Run(ctx, cfg, logf); err != nil {
		logf("%v", err)
		return 1
	}
	return 0
}
