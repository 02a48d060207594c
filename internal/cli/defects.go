package cli

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"certctl-loadtest/internal/defects"
	"certctl-loadtest/internal/results"

	"gopkg.in/yaml.v3"
)

// defectsCmd: loadtest defects record --id ID [--date D] [--command C] run-dir... prints the registry's
// recording of what the runs measured of the latencies the entry explains, for the `registry: recorded:`
// of the finding's record (docs/findings/<id>.md). Every run must be of one build and one testbed.
func defectsCmd(e Env, args []string) int {
	if len(args) == 0 || args[0] != "record" {
		return badArgs(e, "defects", "the one subcommand is record")
	}
	flags := flag.NewFlagSet("defects record", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	id := flags.String("id", "", "")
	date := flags.String("date", "", "")
	command := flags.String("command", "", "")
	dirs, err := parseInterleaved(flags, args[1:])
	if err != nil {
		return badArgs(e, "defects", "%v", err)
	}
	if *id == "" || len(dirs) == 0 {
		return badArgs(e, "defects", "record takes --id and at least one run directory")
	}
	reg, err := defects.Registry()
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: defects: %v\n", err)
		return results.ExitBadInput
	}
	var entry *defects.Entry
	for i := range reg {
		if reg[i].ID == *id {
			entry = &reg[i]
		}
	}
	if entry == nil {
		return badArgs(e, "defects", "no registry entry %q", *id)
	}
	var runs []defects.RecordedRun
	build := ""
	for _, dir := range dirs {
		s, err := results.Load(dir)
		if err != nil {
			fmt.Fprintf(e.Stderr, "loadtest: defects: %s: %v\n", dir, err)
			return results.ExitBadInput
		}
		b := results.BuildName(s.Run.Certctl)
		if build != "" && b != build {
			return badArgs(e, "defects", "%s ran %s, the runs before it %s: one build a recording", dir, b, build)
		}
		build = b
		if *date == "" {
			*date = s.Run.StartedAt.UTC().Format("2006-01-02")
		}
		runs = append(runs, defects.RecordedRun{Name: filepath.Base(dir), Testbed: s.Run.Testbed, Scenarios: results.DefectScenarios(s.Scenarios)})
	}
	if build == "" {
		return badArgs(e, "defects", "the runs do not say which certctl build they ran (CERTCTL_DIST or an image tag)")
	}
	rec, err := entry.Record(build, *date, *command, runs)
	if err != nil {
		fmt.Fprintf(e.Stderr, "loadtest: defects: %v\n", err)
		return results.ExitBadInput
	}
	b, _ := yaml.Marshal([]defects.Recording{rec})
	fmt.Fprintf(e.Stdout, "# %s on %s, from %s: under registry: recorded: in docs/findings/%s.md\n%s", *id, build, strings.Join(dirs, " "), *id, b)
	return results.ExitOK
}
