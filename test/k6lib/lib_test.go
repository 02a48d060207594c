// Package k6lib runs k6/lib's tests under k6 itself (k6/test/lib.test.js) and shows the thresholds that
// judge them failing.
package k6lib

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// k6 runs lib.test.js with the pinned k6 (go tool k6) from the module's root.
func k6(t *testing.T, env ...string) (int, string) {
	t.Helper()
	args := []string{"tool", "k6", "run", "--quiet", "--no-color"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	cmd := exec.Command("go", append(args, "k6/test/lib.test.js")...)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatalf("go tool k6: %v\n%s", err, out)
	return 0, ""
}

// Every assertion of k6/lib's tests holds, and every test function made all of its assertions.
func TestLibrary(t *testing.T) {
	code, out := k6(t)
	if code != 0 || !strings.Contains(out, "k6/lib tests: ") || !strings.Contains(out, " passed, 0 failed\n") || strings.Contains(out, "assertions made") {
		t.Fatalf("exit %d, want 0 with every assertion passed and counted:\n%s", code, out)
	}
}

// A test function that made fewer assertions than it should, with none of them failed, fails the run by
// the assertions count alone: k6 ends an iteration on an exception and exits 0 (grafana/k6#6480), and a
// loop can lose its cases, so the checks threshold cannot see either.
func TestLibraryCountsItsAssertions(t *testing.T) {
	code, out := k6(t, "LIB_TEST_SKIP=testConfig")
	if code != 99 || !strings.Contains(out, " passed, 0 failed; ") || !strings.Contains(out, " assertions made, ") {
		t.Fatalf("exit %d, want 99 with no assertion failed and the count short:\n%s", code, out)
	}
}
