package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/results"
)

// Everything rendered from the knob registry (harness.Knobs) and the exit-code table (results.ExitCodes):
// the configuration page, README.md's short tables, `make help`, the defaults k6 reads and the seeds'
// psql variables. pins is .env, whose image pins the registry names but does not copy.

// defaultCell is a knob's default as the tables show it.
func defaultCell(k harness.Knob, pins map[string]string) string {
	switch {
	case k.Note == harness.PinnedInEnv && pins[k.Name] != "":
		return "`" + pins[k.Name] + "` (`.env`)"
	case k.Default != "" && k.Note != "":
		return "`" + k.Default + "` (" + k.Note + ")"
	case k.Default != "":
		return "`" + k.Default + "`"
	}
	return k.Note
}

// ConfigTable renders every knob as a Markdown table (docs/configuration.md).
func ConfigTable(knobs []harness.Knob, pins map[string]string) string {
	var b strings.Builder
	b.WriteString("| variable | type | default | read by | meaning |\n|---|---|---|---|---|\n")
	for _, k := range knobs {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Name, k.Type, defaultCell(k, pins), k.Read, k.Doc)
	}
	return b.String()
}

// CommonKnobTable renders the knobs marked Common (README.md).
func CommonKnobTable(knobs []harness.Knob, pins map[string]string) string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for _, k := range knobs {
		if k.Common {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, defaultCell(k, pins), k.Doc)
		}
	}
	return b.String()
}

// MakeKnobs renders the common knobs as `#: ` comment lines of the Makefile, which `make help` prints.
// The block ends inside the comment that carries the end marker, hence the trailing "# ".
func MakeKnobs(knobs []harness.Knob, pins map[string]string) string {
	plain := strings.NewReplacer("`", "", `\|`, "|")
	var b strings.Builder
	for _, k := range knobs {
		if !k.Common {
			continue
		}
		setting := k.Name + "=" + k.Default
		switch {
		case k.Note == harness.PinnedInEnv:
			setting = k.Name + "=" + pins[k.Name]
		case k.Default == "":
			setting = k.Name + " (" + plain.Replace(k.Note) + ")"
		case k.Note != "":
			setting += " (" + plain.Replace(k.Note) + ")"
		}
		fmt.Fprintf(&b, "#:   %-34s %s\n", setting, plain.Replace(k.Doc))
	}
	b.WriteString("# ")
	return b.String()
}

// K6Defaults renders the literal defaults of the knobs k6 reads as a JavaScript module body
// (k6/lib/knobs.js); k6/lib/config.js's knob() falls back to them. The block ends inside the `//`
// comment that carries the end marker, hence the trailing "// ".
func K6Defaults(knobs []harness.Knob) string {
	var b strings.Builder
	b.WriteString("export const DEFAULTS = Object.freeze({\n")
	for _, k := range knobs {
		if k.ReadBy("k6") && k.Default != "" {
			// strconv.Quote: a Go string literal is a JavaScript one for these (ASCII, no control characters).
			fmt.Fprintf(&b, "  %s: %s,\n", strconv.Quote(k.Name), strconv.Quote(k.Default))
		}
	}
	b.WriteString("});\n// ")
	return b.String()
}

// ExitCodeTable renders the exit codes (README.md).
func ExitCodeTable(codes []results.ExitCode) string {
	var b strings.Builder
	b.WriteString("| exit | meaning |\n|---|---|\n")
	for _, c := range codes {
		fmt.Fprintf(&b, "| %d | %s |\n", c.Code, c.Meaning)
	}
	return b.String()
}

// seedVarRE is how docker-compose.yml hands a knob to the seeders: -v team_id="$$LT_TEAM_ID".
var seedVarRE = regexp.MustCompile(`-v (\w+)="\$\$([A-Z][A-Z0-9_]*)"`)

// SeedVariable is one psql variable the seeders get, and the knob it comes from.
type SeedVariable struct {
	Psql string
	Knob harness.Knob
}

// SeedVariables reads docker-compose.yml's seeder commands: every psql variable and its knob, in order.
func SeedVariables(root string) ([]SeedVariable, error) {
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		return nil, err
	}
	var out []SeedVariable
	seen := map[string]bool{}
	for _, m := range seedVarRE.FindAllStringSubmatch(string(raw), -1) {
		if seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		k, ok := harness.LookupKnob(m[2])
		if !ok {
			return nil, fmt.Errorf("docker-compose.yml passes %s to the seeders, which harness.Knobs does not list", m[2])
		}
		out = append(out, SeedVariable{Psql: m[1], Knob: k})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("docker-compose.yml passes no -v name=\"$$VARIABLE\" to the seeders")
	}
	return out, nil
}

// SeedVariableTable renders the seeders' psql variables with their knobs and defaults (seed/README.md).
func SeedVariableTable(root string) (string, error) {
	vars, err := SeedVariables(root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| psql variable | set from | default |\n|---|---|---|\n")
	for _, v := range vars {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", v.Psql, v.Knob.Name, defaultCell(v.Knob, nil))
	}
	return b.String(), nil
}
