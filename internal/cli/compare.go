package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"certctl-loadtest/internal/capacity"
	"certctl-loadtest/internal/compare"
	"certctl-loadtest/internal/fleet"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// ExitRegressed is compare's code for a significant regression beyond the tolerance.
const ExitRegressed = 1

// ExitNotComparable is compare's code when the sides ran on different testbeds (their calibrations
// differ beyond testbed.Tolerances): neither a pass nor a regression.
const ExitNotComparable = 7

// compareCmd: loadtest compare [flags] OLD NEW, each side [label=]dir[,dir...].
func compareCmd(e Env, args []string) int {
	flags := flag.NewFlagSet("compare", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	format := flags.String("format", "text", "")
	noise := flags.Float64("noise", 0.10, "")
	tolerance := flags.Float64("tolerance", 0, "")
	confidence := flags.Float64("confidence", 0.95, "")
	out := flags.String("out", "", "")
	pos, err := parseInterleaved(flags, args)
	if err != nil {
		return badArgs(e, "compare", "%v", err)
	}
	if len(pos) != 2 {
		return badArgs(e, "compare", "takes two sides, OLD and NEW, each [label=]run-dir[,run-dir...]; got %d (%s)", len(pos), strings.Join(pos, " "))
	}
	if *noise < 0 || *noise >= 1 || *tolerance < 0 {
		fmt.Fprintf(e.Stderr, "loadtest: compare: --noise is a fraction in [0, 1) and --tolerance a fraction ≥ 0 (0.1 = 10 %%); got %g and %g\n", *noise, *tolerance)
		return results.ExitBadInput
	}
	if *confidence < 0.5 || *confidence >= 1 {
		fmt.Fprintf(e.Stderr, "loadtest: compare: --confidence is the intervals' level, in [0.5, 1) (0.95 = 95 %%); got %g\n", *confidence)
		return results.ExitBadInput
	}
	render := map[string]func(compare.Result) string{"text": compare.Text, "markdown": compare.Markdown, "json": func(r compare.Result) string {
		b, _ := output.Marshal(r)
		return string(b)
	}}[*format]
	if render == nil {
		fmt.Fprintf(e.Stderr, "loadtest: compare --format %q: use text, markdown or json\n", *format)
		return results.ExitBadInput
	}
	if code, ok := compareKnees(e, pos, *format, *tolerance, *out); ok {
		return code
	}
	if code, ok := compareFleets(e, pos, *format); ok {
		return code
	}
	var sides [2]compare.Side
	for i := range sides {
		s, err := parseSide(pos[i])
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: compare: %v\n", err)
			return results.ExitBadInput
		}
		sides[i] = s
	}
	res, err := compare.Compare(sides[0], sides[1], compare.Options{Noise: *noise, Tolerance: *tolerance, Confidence: *confidence})
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: compare: %v\n", err)
		return results.ExitBadInput
	}
	if *out != "" {
		if err := writeComparison(*out, res); err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: compare: %v\n", err)
			return results.ExitEnvironment
		}
	}
	fmt.Fprint(e.Stdout, render(res))
	switch res.Verdict {
	case compare.VerdictNotComparable:
		return ExitNotComparable
	case "regressed":
		return ExitRegressed
	}
	return results.ExitOK
}

// splitLabel reads [label=]rest; a label holds no slash, so a path with "=" in it still reads.
func splitLabel(arg string) (label, rest string) {
	if l, r, ok := strings.Cut(arg, "="); ok && !strings.Contains(l, "/") {
		return l, r
	}
	return "", arg
}

// parseSide reads [label=]dir[,dir...].
func parseSide(arg string) (compare.Side, error) {
	var s compare.Side
	s.Label, arg = splitLabel(arg)
	for _, d := range strings.Split(arg, ",") {
		if d == "" {
			continue
		}
		if resolved, err := filepath.EvalSymlinks(d); err == nil {
			d = resolved
		}
		if strings.HasSuffix(d, ".json") {
			if _, err := os.Stat(d); err != nil {
				return s, fmt.Errorf("%s: %w", d, err)
			}
			s.Dirs = append(s.Dirs, d)
			continue
		}
		_, errRun := os.Stat(filepath.Join(d, "run.json"))
		_, errSum := os.Stat(filepath.Join(d, "summary.json"))
		if errRun != nil && errSum != nil {
			return s, fmt.Errorf("%s is not a run directory (no summary.json, no run.json)", d)
		}
		s.Dirs = append(s.Dirs, d)
	}
	if len(s.Dirs) == 0 {
		return s, fmt.Errorf("%q names no run directory", arg)
	}
	return s, nil
}

// writeComparison writes compare.json, compare.txt and compare.md into dir.
func writeComparison(dir string, r compare.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return compare.Write(dir, r)
}

// compareKnees compares two capacity searches (make capacity: a directory with capacity.json each side,
// [label=]dir) by their knees; ok is false when the sides are not both searches. It fails (exit 1) when
// the knee moved down by more than the tolerance.
func compareKnees(e Env, pos []string, format string, tolerance float64, out string) (int, bool) {
	var labels, dirs [2]string
	var res [2]capacity.Result
	for i, arg := range pos {
		labels[i], arg = splitLabel(arg)
		if _, err := os.Stat(filepath.Join(arg, "capacity.json")); err != nil {
			return 0, false
		}
		r, err := capacity.ReadResult(arg)
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: compare: %v\n", err)
			return results.ExitBadInput, true
		}
		if labels[i] == "" {
			labels[i] = filepath.Base(filepath.Clean(arg))
		}
		dirs[i], res[i] = arg, r
	}
	c, err := capacity.CompareKnees(labels[0], dirs[0], res[0], labels[1], dirs[1], res[1])
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: compare: %v\n", err)
		return results.ExitBadInput, true
	}
	b, _ := output.Marshal(c)
	text := c.Text + "\n"
	if out != "" {
		if err = os.MkdirAll(out, 0o755); err == nil {
			err = output.Files(out, output.File{Name: "knees.json", Text: string(b)}, output.File{Name: "knees.txt", Text: text}, output.File{Name: "knees.md", Text: capacity.KneeMarkdown(c)})
		}
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: compare: %v\n", err)
			return results.ExitEnvironment, true
		}
	}
	switch format {
	case "markdown":
		fmt.Fprint(e.Stdout, capacity.KneeMarkdown(c))
	case "json":
		fmt.Fprint(e.Stdout, string(b))
	default:
		fmt.Fprint(e.Stdout, text)
	}
	if c.Verdict == "lower" && (c.Change == 0 || 1/c.Change-1 > tolerance) {
		return ExitRegressed, true
	}
	return results.ExitOK, true
}

// compareFleets: two fleet answers (directories holding fleet.json, or a recorded answer such as
// docs/fleet/v2.1.7.json), side by side; not judged across testbeds or fleets (exit 7), a smaller fleet
// is a regression (exit 1). ok is false when either side is no fleet answer.
func compareFleets(e Env, pos []string, format string) (int, bool) {
	var labels [2]string
	var res [2]fleet.Result
	for i, arg := range pos {
		labels[i], arg = splitLabel(arg)
		path, label := filepath.Join(arg, "fleet.json"), filepath.Base(filepath.Clean(arg))
		if st, err := os.Stat(arg); err == nil && !st.IsDir() {
			path, label = arg, strings.TrimSuffix(label, ".json")
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, false
		}
		var head struct{ Schema string }
		if path == arg && (json.Unmarshal(b, &head) != nil || head.Schema != fleet.Schema) {
			return 0, false // another kind of record: the other comparisons read it
		}
		if err := json.Unmarshal(b, &res[i]); err != nil || res[i].Schema != fleet.Schema {
			fmt.Fprintf(e.Stderr, "loadtest: compare: %s: not a fleet answer (%s): %v\n", path, fleet.Schema, err)
			return results.ExitBadInput, true
		}
		if labels[i] == "" {
			labels[i] = label
		}
	}
	c := fleet.Compare(labels[0], res[0], labels[1], res[1])
	if format == "json" {
		b, _ := output.Marshal(c)
		fmt.Fprint(e.Stdout, string(b))
	} else {
		fmt.Fprint(e.Stdout, c.Text)
	}
	switch c.Verdict {
	case "not comparable":
		return ExitNotComparable, true
	case "smaller":
		return ExitRegressed, true
	}
	return results.ExitOK, true
}
