package findings

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"certctl-loadtest/internal/output"
)

// Outcomes of a reproduction: its exit status 0, 1, 2 (or anything else, which is "could not run").
const (
	Reproduces     = "reproduces"
	DoesNot        = "does not"
	CouldNotRun    = "could not run"
	ReproDir       = "docs/findings/repro"
	CostDir        = "docs/findings/cost" // measurements of what a finding costs as the inventory grows
	MeasureTimeout = 30 * time.Minute
	ResultFile     = "findings.json"
	scriptTimeout  = 3 * time.Minute
	maxReasonBytes = 300
)

// Target is the certctl the reproductions are pointed at, as their arguments and environment carry it.
type Target struct {
	URL   string // certctl's base URL
	Key   string // an admin API key
	CA    string // the file of the CA that signed certctl's certificate
	PGURL string // certctl's database, for the reproductions that read it; empty: they cannot run
	// ConnectTo reaches URL's host at another address (curl's --connect-to host:port:addr:port): the
	// harness's certctl is named certctl-server in its certificate and reached from the host by address.
	ConnectTo string
	Build     string   // the build it runs, as the catalogue names builds; empty when not known
	Env       []string // more for every script (VIEWER_KEY, RENEWAL_WAIT): what the stack was started with
}

// Result is one reproduction's outcome.
type Result struct {
	ID      string  `json:"id"`
	Outcome string  `json:"outcome"`
	Exit    int     `json:"exit"`
	Says    string  `json:"says"`
	Seconds float64 `json:"seconds"`
	// Expected is what the catalogue says for this build (reproduces or does not); empty when the build
	// is not one of the catalogue's.
	Expected string `json:"expected,omitempty"`
}

// Report is a findings run: where, on what, and each reproduction's result.
type Report struct {
	Build     string    `json:"build,omitempty"`
	URL       string    `json:"url"`
	StartedAt time.Time `json:"started_at"`
	Seconds   float64   `json:"seconds"`
	Results   []Result  `json:"results"`
}

// Exec runs one script with its arguments and extra environment, and returns its exit status with
// what it printed; err only when it could not be started.
type Exec func(ctx context.Context, script string, args, env []string) (code int, stdout, stderr []byte, err error)

// Run runs the reproductions of ids (in that order), one after another, each bounded in time.
func Run(ctx context.Context, c Catalog, root string, ids []string, t Target, exec Exec, now func() time.Time, progress io.Writer) Report {
	rep := Report{Build: t.Build, URL: t.URL, StartedAt: now().UTC()}
	env := append([]string{"PGURL=" + t.PGURL, "CERTCTL_CONNECT_TO=" + t.ConnectTo}, t.Env...)
	for _, id := range ids {
		script := filepath.Join(root, ReproDir, id+".sh")
		r := Result{ID: id}
		if e, ok := c.Find(id); ok && t.Build != "" {
			r.Expected = DoesNot
			for _, b := range e.Reproduces {
				if b == t.Build {
					r.Expected = Reproduces
				}
			}
		}
		start := now()
		sctx, cancel := context.WithTimeout(ctx, scriptTimeout)
		code, out, errb, err := exec(sctx, script, []string{t.URL, t.Key, t.CA}, env)
		timedOut := sctx.Err() != nil && ctx.Err() == nil
		cancel()
		r.Seconds = now().Sub(start).Seconds()
		r.Exit = code
		switch {
		case err != nil:
			r.Outcome, r.Exit, r.Says = CouldNotRun, -1, err.Error()
		case timedOut:
			r.Outcome, r.Says = CouldNotRun, fmt.Sprintf("stopped after %s", scriptTimeout)
		case code == 0:
			r.Outcome, r.Says = Reproduces, lastLine(out, "reproduces: ")
		case code == 1:
			r.Outcome, r.Says = DoesNot, lastLine(out, "does not reproduce: ")
		default:
			r.Outcome, r.Says = CouldNotRun, lastLine(errb, "could not run: ")
		}
		if progress != nil {
			fmt.Fprintf(progress, "loadtest: findings: %-26s %-14s %5.1fs  %s\n", id, r.Outcome, r.Seconds, r.Says)
		}
		rep.Results = append(rep.Results, r)
		if ctx.Err() != nil {
			break
		}
	}
	rep.Seconds = now().Sub(rep.StartedAt).Seconds()
	return rep
}

// lastLine is the last line of out that starts with prefix, without it; or else its last line.
func lastLine(out []byte, prefix string) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	pick := lines[len(lines)-1]
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], prefix) {
			pick = lines[i]
			break
		}
	}
	pick = strings.TrimSpace(strings.TrimPrefix(pick, prefix))
	if len(pick) > maxReasonBytes {
		pick = pick[:maxReasonBytes] + "…"
	}
	return pick
}

// Unexpected lists the results that contradict the catalogue for the build: a defect fixed (or a
// reproduction that no longer judges it), or one appearing where it had not. A reproduction that could
// not run contradicts nothing; the table says why it could not.
func (r Report) Unexpected() []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Expected != "" && x.Outcome != CouldNotRun && x.Outcome != x.Expected {
			out = append(out, x)
		}
	}
	return out
}

// Text is the table: id, outcome, seconds, what the script said.
func (r Report) Text() string {
	var b bytes.Buffer
	what := r.URL
	if r.Build != "" {
		what = r.Build + " at " + r.URL
	}
	fmt.Fprintf(&b, "findings: %d reproductions against %s, %.0f s\n\n", len(r.Results), what, r.Seconds)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\toutcome\tseconds\texpected\twhat it saw")
	for _, x := range r.Results {
		exp := x.Expected
		switch {
		case exp == "":
			exp = "—"
		case x.Outcome == CouldNotRun:
			exp = "not judged (" + exp + " before)"
		case exp == x.Outcome:
			exp = "as expected"
		default:
			exp = "expected: " + exp
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\t%s\n", x.ID, x.Outcome, x.Seconds, exp, x.Says)
	}
	tw.Flush()
	counts := map[string]int{}
	for _, x := range r.Results {
		counts[x.Outcome]++
	}
	fmt.Fprintf(&b, "\n%d reproduce, %d do not, %d could not run", counts[Reproduces], counts[DoesNot], counts[CouldNotRun])
	if u := r.Unexpected(); len(u) > 0 {
		ids := make([]string, len(u))
		for i, x := range u {
			ids[i] = x.ID
		}
		fmt.Fprintf(&b, "; unlike the catalogue for %s: %s", r.Build, strings.Join(ids, ", "))
	}
	b.WriteString("\n")
	return b.String()
}

// Write saves the report as findings.json and findings.txt in dir.
func (r Report) Write(dir string) error {
	return output.Files(dir, output.File{Name: ResultFile, JSON: r}, output.File{Name: "findings.txt", Text: r.Text()})
}

// NeedsResponders says which of ids' scripts order ACME challenges at the PKI tier's responders (they
// read CHALLENGE_MGMT): a findings run starts the responders only for those.
func NeedsResponders(root string, ids []string) ([]string, error) {
	var need []string
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(root, ReproDir, id+".sh"))
		if err != nil {
			return nil, err
		}
		if bytes.Contains(b, []byte("CHALLENGE_MGMT")) {
			need = append(need, id)
		}
	}
	return need, nil
}
