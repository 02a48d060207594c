// Package testenv holds what tests share about the machine they run on.
package testenv

import (
	"os"
	"testing"
)

// SkipOrFailInCI skips a test whose machine lacks what it needs (a tool, root, a second build) on a
// developer's machine, and fails it under CI, where a skipped test would pass unjudged and
// scripts/install-deps.sh should have provided it.
func SkipOrFailInCI(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set: not skipping)", reason)
	}
	t.Skip(reason)
}
