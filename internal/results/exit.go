package results

import (
	"fmt"
	"strings"
)

// Exit codes of `loadtest run` and `loadtest spotcheck`; ExitCodes says what each means. k6's own codes
// pass through unchanged.
const (
	ExitOK           = 0
	ExitBadInput     = 2
	ExitEnvironment  = 3
	ExitNoResults    = 4
	ExitStackFault   = 5
	ExitInconclusive = 6
	ExitThresholds   = 99  // k6's
	ExitScriptError  = 107 // k6's
	ExitAborted      = 108 // k6's: the script called test.abort(), as a failed setup probe does
	ExitInterrupted  = 130 // cancelled by SIGINT or SIGTERM: 128 + SIGINT, as shells report it
	ExitK6Failed     = 255 // k6's own generic failure, passed through when k6 still wrote its record
)

// ExitCode is one exit code and what it means.
type ExitCode struct {
	Code    int
	Meaning string
}

// ExitCodes is the one table of exit codes: README.md's is rendered from it (`make docs`), and so are
// the usage text, index.html and the CI step summary.
var ExitCodes = []ExitCode{
	{ExitOK, "every threshold held, or broke only by certctl's registered defects, each within what its own signature accounts for (KNOWN_DEFECTS=pass), and every k6 process exited 0"},
	{ExitThresholds, "thresholds were breached"},
	{ExitBadInput, "bad input: unknown tier or target, malformed duration or rate, a RUN_ID already used"},
	{ExitEnvironment, "the environment was wrong: no Docker engine, a missing image, or the stack did not come up"},
	{ExitNoResults, "k6 wrote no results, or they could not be written (a full disk: k6 exits 255 then); the summary on stdout says which"},
	{ExitStackFault, "the stack failed during the load: a service exited, restarted or was paused, or a k6 process was killed (137); the summary names it and when, and keeps the figures up to then"},
	{ExitInconclusive, "inconclusive: every breach was a timing budget, and the machine decided them: work outside the run (or k6 itself) took enough of it to move the figures, or the run's own stack saturated its CPUs or a slow disk; the summary says which, when and at what load (MACHINE_CHECK); or every breach was a registered defect's, and one's latency was recorded on another testbed or at another rate, so its size could not be judged"},
	{ExitScriptError, "a scenario's script failed (k6 107)"},
	{ExitAborted, "a scenario's setup() aborted before any load: certctl unreachable, the token rejected, or too little disk space for the results (k6 108)"},
	{ExitInterrupted, "the run was interrupted (SIGINT or SIGTERM, as on a cancelled CI job); k6 was stopped, and its figures up to then are kept"},
	{ExitK6Failed, "k6 failed on its own (k6 255) yet wrote its record; any other code is k6's, passed through"},
}

// ExitMeaning is what code means, and false for a code the harness never returns.
func ExitMeaning(code int) (string, bool) {
	for _, e := range ExitCodes {
		if e.Code == code {
			return e.Meaning, true
		}
	}
	return "", false
}

// ExitCodeText is ExitCodes as lines for a usage message: "  99   thresholds were breached".
func ExitCodeText() string {
	var b strings.Builder
	for _, e := range ExitCodes {
		fmt.Fprintf(&b, "  %-4d %s\n", e.Code, e.Meaning)
	}
	return b.String()
}

// Verdict is the one rule that combines exit codes, a run's k6 processes or a sequence's runs: a pass
// only if every one passed; an inconclusive one only if nothing else went wrong; a breach beats it; and
// anything else (an error) beats a breach, the first one met.
func Verdict(codes ...int) int {
	rank := func(c int) int {
		switch c {
		case ExitOK:
			return 0
		case ExitInconclusive:
			return 1
		case ExitThresholds:
			return 2
		}
		return 3
	}
	worst := ExitOK
	for _, c := range codes {
		if rank(c) > rank(worst) {
			worst = c
		}
	}
	return worst
}
