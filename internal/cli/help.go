package cli

import (
	"flag"
	"fmt"
	"strings"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/results"
)

// suggestNear is " (did you mean X?)" when a name is within a typo of X, or a prefix of it.
func suggestNear(got string, names []string) string {
	if n := harness.Near(got, names); n != "" {
		return fmt.Sprintf(" (did you mean %s?)", n)
	}
	for _, n := range names {
		if len(got) >= 3 && strings.HasPrefix(n, got) {
			return fmt.Sprintf(" (did you mean %s?)", n)
		}
	}
	return ""
}

// overview is `loadtest help`: one line a command, then the exit codes.
func (r registry) overview() string {
	var b strings.Builder
	b.WriteString("usage: loadtest <command> [arguments]\n\n")
	b.WriteString("The configuration of a run is the environment's (TIER=api DURATION=1m loadtest run): docs/configuration.md.\n\ncommands:\n")
	for _, c := range r {
		fmt.Fprintf(&b, "  %-14s %s\n", c.name, c.summary)
	}
	b.WriteString("\nloadtest help <command>, or loadtest <command> --help: its flags, knobs and an example.\n\n")
	b.WriteString("exit codes of run and spotcheck:\n")
	b.WriteString(results.ExitCodeText())
	return b.String()
}

// page is `loadtest help <name>`.
func (c command) page() string {
	var b strings.Builder
	b.WriteString(c.usageLines())
	if c.about != "" {
		fmt.Fprintf(&b, "\n%s\n", wrap(c.about, 100, ""))
	}
	if len(c.flags) > 0 {
		b.WriteString("\nflags:\n")
		w := 0
		for _, f := range c.flags {
			w = max(w, len(f[0]))
		}
		for _, f := range c.flags {
			fmt.Fprintf(&b, "  %-*s  %s\n", w, f[0], f[1])
		}
	}
	if len(c.knobs) > 0 {
		b.WriteString("\nknobs (environment; all of them: docs/configuration.md):\n")
		w := 0
		for _, k := range c.knobs {
			w = max(w, len(k))
		}
		for _, name := range c.knobs {
			k, _ := harness.LookupKnob(name)
			def := k.Default
			if k.Note != "" {
				def = k.Note
			}
			fmt.Fprintf(&b, "  %-*s  %s (default: %s)\n", w, name, clip(firstSentence(k.Doc), 80), strings.ReplaceAll(def, "`", ""))
		}
	}
	if c.example != "" {
		fmt.Fprintf(&b, "\nexample:\n  %s\n", c.example)
	}
	return b.String()
}

// shortUsage is what follows an error: the command's synopsis and where its help is.
func shortUsage(name string) string {
	c, ok := commands().lookup(name)
	if !ok {
		return "usage: loadtest <command> [arguments]; loadtest help lists the commands\n"
	}
	return c.usageLines() + fmt.Sprintf("loadtest help %s: its flags, knobs and an example\n", c.name)
}

// usageLines are the command's synopses, the first after "usage: ", the others beneath it.
func (c command) usageLines() string {
	var b strings.Builder
	for i, u := range c.usage {
		lead := "usage: "
		if i > 0 {
			lead = "       "
		}
		fmt.Fprintf(&b, "%sloadtest %s\n", lead, u)
	}
	return b.String()
}

// firstSentence is a knob's documentation up to its first full stop ("e.g." is none).
func firstSentence(s string) string {
	s = strings.ReplaceAll(s, "`", "")
	masked := strings.NewReplacer("e.g. ", "e_g_ ", "i.e. ", "i_e_ ").Replace(s)
	if i := strings.Index(masked, ". "); i >= 0 {
		return s[:i]
	}
	return strings.TrimSuffix(s, ".")
}

// clip shortens s to at most n characters at a word boundary, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndex(s[:n], " ")
	if cut <= 0 {
		cut = n
	}
	return strings.TrimRight(s[:cut], ",;:(") + " …"
}

// wrap breaks s into lines of at most width characters, each after indent.
func wrap(s string, width int, indent string) string {
	var lines []string
	line := indent
	for _, w := range strings.Fields(s) {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// parseInterleaved parses flags wherever they stand among the positional arguments (flag.Parse stops at
// the first positional): `compare A B --format markdown` is `compare --format markdown A B`. After
// "--" everything is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
