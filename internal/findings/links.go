package findings

import (
	"path"
	"regexp"
	"strings"
)

// A record's links are relative to the record, so that it reads as a page of its own (and TestLinksResolve
// checks it as one); its section on the findings page, a folder up, has them relative to the page.
var (
	linkTargetRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// Code is left alone: a fenced block, or an inline span.
	codeSpanRE = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```[^\\n]*$|`[^`\\n]*`")
)

// PageBody is the body with its links as the page resolves them: another record (x.md) is its section
// (#x), the page's own anchors are the page's, and every other path is a folder up.
func (e Entry) PageBody() string { return mapLinks(e.Body, toPage) }

// recordsFromPage is the records' folder as the page names it.
const recordsFromPage = "findings"

func toPage(target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "/") || strings.HasPrefix(target, "#") {
		return target
	}
	p, frag, hasFrag := strings.Cut(target, "#")
	if id, ok := strings.CutSuffix(p, ".md"); ok && !strings.Contains(id, "/") && !hasFrag {
		return "#" + id
	}
	if p == "../"+path.Base(Page) {
		return "#" + frag
	}
	out := path.Join(recordsFromPage, p)
	if strings.HasSuffix(p, "/") {
		out += "/"
	}
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// links is every link target of md outside code.
func links(md string) []string {
	var out []string
	mapLinks(md, func(t string) string { out = append(out, t); return t })
	return out
}

// mapLinks replaces every link target of md outside code by f's.
func mapLinks(md string, f func(string) string) string {
	code := codeSpanRE.FindAllStringIndex(md, -1)
	inCode := func(at int) bool {
		for _, c := range code {
			if at >= c[0] && at < c[1] {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	last := 0
	for _, m := range linkTargetRE.FindAllStringSubmatchIndex(md, -1) {
		if inCode(m[0]) {
			continue
		}
		b.WriteString(md[last:m[2]])
		b.WriteString(f(md[m[2]:m[3]]))
		last = m[3]
	}
	b.WriteString(md[last:])
	return b.String()
}
