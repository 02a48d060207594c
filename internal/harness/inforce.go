package harness

import (
	"slices"
	"sort"
	"strings"
)

// secretKnobs are written down as [redacted]: run.json and the repeat command are shared.
var secretKnobs = []string{"CERTCTL_API_KEY", "CERTCTL_TOKEN", "CERTCTL_CONFIG_ENCRYPTION_KEY", "AUTH_CLIENT_SECRET", "AUTH_ADMIN_SECRET"}

// Setting is one knob in force: set in the environment to something other than its default.
type Setting struct{ Name, Value string }

// InForce are the knobs environ sets to other than their defaults, in the registry's order (a family's
// members by name), secrets redacted. Two runs with the same settings and the same certctl are the
// same experiment; a setting apart is a difference between them.
func InForce(environ []string) []Setting {
	set := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			set[k] = strings.TrimSpace(v)
		}
	}
	var out []Setting
	for _, k := range Knobs {
		var names []string
		for name, v := range set {
			if v == "" || v == k.Default {
				continue
			}
			if name == k.Name || (strings.Contains(k.Name, "<") && k.pattern().MatchString(name)) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			v := set[name]
			if slices.Contains(secretKnobs, name) {
				v = "[redacted]"
			}
			out = append(out, Setting{name, v})
			delete(set, name) // a variable belongs to the first knob that names it
		}
	}
	return out
}

// notRepeated are knobs a repeat of a run leaves out: its own name and where its results went.
var notRepeated = []string{"RUN_ID", "RESULTS_DIR"}

// RepeatCommand is the command that runs the experiment again: `sub` with every knob in force, but
// the run's own id and results directory. A secret stands as [redacted], for its owner to fill in.
func RepeatCommand(sub string, environ []string) string {
	parts := []string{"loadtest", sub}
	for _, s := range InForce(environ) {
		if !slices.Contains(notRepeated, s.Name) {
			parts = append(parts, s.Name+"="+s.Value)
		}
	}
	return strings.Join(parts, " ")
}

// SettingsMap is the settings as run.json keeps them.
func SettingsMap(ss []Setting) map[string]string {
	m := make(map[string]string, len(ss))
	for _, s := range ss {
		m[s.Name] = s.Value
	}
	return m
}
