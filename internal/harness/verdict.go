// The verdict: how the scenarios' k6 processes ended and what they left, made into the run's exit
// code and its summary.

package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/report"
	"certctl-loadtest/internal/results"
)

// collect judges the scenarios by how their k6 processes ended and by the records they left. k6's
// codes the harness does not document become its own: a killed k6 (137) is a stack fault, and any
// other code without a record (255 on a full disk) is no results.
func collect(dir string, runs []results.ScenarioRun) int {
	for i, sc := range runs {
		// k6 exits 0 even when handleSummary cannot write its file, and a full disk leaves it empty:
		// no results is not a pass.
		rec := filepath.Join(dir, "scenarios", sc.Name+".json")
		ok := recordWritten(rec)
		switch c := sc.ExitCode; {
		case c == 0 && ok && !thresholdsHeld(rec):
			// k6 held a threshold over no sample; the record (summary.js) does not.
			runs[i].ExitCode = results.ExitThresholds
		case c == 137:
			runs[i].ExitCode = results.ExitStackFault
		case c == results.ExitThresholds || c == results.ExitScriptError || c == results.ExitAborted, c > 128 && c < 160:
			// k6's own verdicts, and a docker compose run stopped by the harness's signal (an interrupted run)
		case !ok:
			runs[i].ExitCode = results.ExitNoResults
		}
	}
	codes := make([]int, len(runs))
	for i, sc := range runs {
		codes[i] = sc.ExitCode
	}
	return results.Verdict(codes...)
}

// thresholdsHeld is the record's own verdict on its thresholds.
func thresholdsHeld(path string) bool {
	var r struct {
		OK bool `json:"thresholds_ok"`
	}
	b, err := os.ReadFile(path)
	return err == nil && json.Unmarshal(b, &r) == nil && r.OK
}

// recordWritten reports whether a scenario record is there and whole (a full disk leaves 0 bytes).
func recordWritten(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && json.Valid(b)
}

// writeSummary finishes run.json with the verdict, renders summary.json and summary.txt from the run
// directory, prints the text and points results/latest at the run. It returns code. The verdict is
// printed whatever can be written: on a full disk the text on stdout is all that is left.
func (r *Runner) writeSummary(dir string, run *results.Run, code int, problem string) int {
	run.EndedAt = r.Now().UTC()
	run.DurationS = run.EndedAt.Sub(run.StartedAt).Round(time.Millisecond).Seconds()
	run.ExitCode = code
	run.Error = problem
	// The summary may judge the verdict further (the machine decided a timing breach: inconclusive);
	// run.json keeps the code the run exits with.
	s := results.Assemble(dir, *run)
	if s.ExitCode != code {
		code, run.ExitCode, s.Run.ExitCode = s.ExitCode, s.ExitCode, s.ExitCode
		why := s.Inconclusive
		if code == results.ExitOK {
			var ids []string
			for _, k := range s.Breaches.Known {
				for _, id := range k.Defects {
					if !slices.Contains(ids, id) {
						ids = append(ids, id)
					}
				}
			}
			why = "every breach is a known defect of certctl (" + strings.Join(ids, ", ") + ": docs/certctl-findings.md); KNOWN_DEFECTS=fail fails on them"
		}
		r.logf("exit %d, not %d: %s", code, results.ExitThresholds, why)
	}
	var failed []string
	if err := output.JSON(filepath.Join(dir, "run.json"), run); err != nil {
		failed = append(failed, fmt.Sprintf("run.json (%v)", err))
	}
	if err := report.Write(dir, s); err != nil {
		failed = append(failed, fmt.Sprintf("the summary (%v)", err))
	}
	if len(failed) > 0 {
		// The verdict stands; what is lost is the record of it.
		msg := fmt.Sprintf("the results could not be written to %s: %s; the summary below is the only copy", dir, strings.Join(failed, "; "))
		r.logf("%s", msg)
		s.FailedChecks = append(s.FailedChecks, msg)
		if s.ExitCode == results.ExitOK {
			s.ExitCode, code = results.ExitNoResults, results.ExitNoResults
		}
		s.Passed = false
	}
	fmt.Fprint(r.Stdout, "\n"+report.Text(s))
	updateLatest(r.Cfg.ResultsDir, r.Cfg.RunID)
	r.logf("results in %s", dir)
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err == nil {
		r.logf("open %s: every scenario's figures, dashboard, record and log", filepath.Join(dir, "index.html"))
	}
	return code
}
