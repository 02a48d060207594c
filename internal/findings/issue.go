package findings

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Section is one finding's prose split into its labelled paragraphs ("**Symptom.** …" is
// Paragraphs["Symptom"]), each paragraph's text without its label.
type Section struct {
	ID, Title  string
	Paragraphs map[string]string
	Order      []string
}

var (
	labelRE = regexp.MustCompile(`^\*\*([A-Z][A-Za-z ]*?)(?:[.:]\*\*|\*\* \([^)]*\)\.|\*\*)\s*`)
	qualRE  = regexp.MustCompile(`\(([^)]*)\)\.`)
)

// Section is the entry's prose as its section on the page has it, split into labelled paragraphs.
func (e Entry) Section() Section {
	return parseSection(Section{ID: e.ID, Title: e.Title}, []byte(e.PageBody()))
}

func parseSection(s Section, body []byte) Section {
	s.Paragraphs = map[string]string{}
	label := ""
	for _, para := range bytes.Split(bytes.TrimSpace(body), []byte("\n\n")) {
		p := strings.TrimSpace(string(para))
		switch {
		case p == "":
			continue
		case strings.HasPrefix(p, "#"):
			// A heading ends the labelled paragraphs.
			return s
		}
		if m := labelRE.FindStringSubmatch(p); m != nil {
			label = m[1]
			// "**Cause** (read in the source, same in both)." keeps its qualifier.
			full := m[0]
			p = strings.TrimSpace(p[len(full):])
			if q := qualRE.FindStringSubmatch(full); q != nil {
				p = "(" + q[1] + ") " + p
			}
			s.Order = append(s.Order, label)
			s.Paragraphs[label] = p
			continue
		}
		if label != "" {
			s.Paragraphs[label] += "\n\n" + p
		}
	}
	return s
}

var (
	localLinkRE = regexp.MustCompile(`\[([^\]]+)\]\((?:#|\.\./|\./)[^)]*\)`)
)

// IssueBody is the entry as a GitHub issue for certctl: what happens, what it costs a fleet, where in
// the code at each build, and the reproduction script whole. It speaks of certctl only: the page's
// paragraphs on what the harness does, and its links into this repository, are left out.
func IssueBody(c Catalog, e Entry, script string) string {
	s := e.Section()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", e.Title)
	fmt.Fprintf(&b, "**Builds:** %s.\n\n", c.BuildsText(e))
	for _, label := range s.Order {
		switch label {
		case "Builds", "In the harness", "Reproduce":
			continue
		}
		fmt.Fprintf(&b, "**%s.** %s\n\n", label, unlink(s.Paragraphs[label]))
	}
	fmt.Fprintf(&b, "**Impact.** %s\n\n", strings.TrimSpace(e.Impact))
	fmt.Fprintf(&b, "**Where.**\n\n%s", Where(c, e, "", false))
	if script != "" {
		b.WriteString("**Reproduce.** Against a throwaway certctl only (it creates rows the API cannot delete). ")
		b.WriteString("Save as `repro.sh` (bash, curl, jq, openssl; psql where it says); exit 0 means the behaviour is there, 1 that it is not, 2 that the script could not judge:\n\n")
		fmt.Fprintf(&b, "```sh\n./repro.sh https://certctl.example:8443 \"$ADMIN_API_KEY\" ca.crt\n```\n\n")
		fmt.Fprintf(&b, "<details><summary>repro.sh</summary>\n\n```bash\n%s\n```\n\n</details>\n", strings.TrimRight(script, "\n"))
	}
	return b.String()
}

// Where is the entry's code at each build as Markdown: a list per build, or "the same places" for a
// build whose list is the one before it when collapse (the page; an issue links every commit, the
// newest being where a fix starts); the decisive place first. label prefixes each build's line.
func Where(c Catalog, e Entry, label string, collapse bool) string {
	var b strings.Builder
	if label == "" {
		label = "At"
	}
	var prev []Location
	for _, build := range c.Builds {
		locs := e.Code[build.Name]
		if len(locs) == 0 {
			continue
		}
		if collapse && prev != nil && slices.Equal(prev, locs) {
			fmt.Fprintf(&b, "%s %s (`%s`): the same places.\n\n", label, build.Name, build.Commit[:7])
			continue
		}
		prev = locs
		fmt.Fprintf(&b, "%s %s (`%s`):\n\n", label, build.Name, build.Commit[:7])
		for _, l := range locs {
			fn := ""
			if l.Func != "" {
				fn = fmt.Sprintf(", `%s`", l.Func)
			}
			fmt.Fprintf(&b, "- [`%s:%d`](%s)%s: %s\n", l.File, l.Line, build.Link(l), fn, l.What)
		}
		b.WriteString("\n")
	}
	return b.String()
}

var databaseRE = regexp.MustCompile(`\b(need_pg|pgq|setup_deployment_job)\b`)

// NeedsDatabase says whether a reproduction reads or writes certctl's PostgreSQL (it then needs PGURL).
func NeedsDatabase(script string) bool { return databaseRE.MatchString(script) }

// Bundle makes a reproduction script stand alone: lib.sh in place of the line that sources it.
func Bundle(lib, script string) string {
	var out []string
	for _, line := range strings.Split(script, "\n") {
		switch {
		case strings.HasPrefix(line, "# shellcheck source"):
			continue
		case strings.HasPrefix(line, ". ") && strings.HasSuffix(line, "/lib.sh\""):
			out = append(out, "# --- lib.sh: what every reproduction shares ---", strings.TrimRight(lib, "\n"), "# --- end of lib.sh ---")
		default:
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// unlink keeps a link's text where the link points into the findings page or this repository.
func unlink(s string) string { return localLinkRE.ReplaceAllString(s, "$1") }
