package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

var (
	fenceRE  = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```[^\\n]*$")
	codeRE   = regexp.MustCompile("`[^`\\n]*`")
	linkRE   = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refRE    = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s+(\S+)`)
	headRE   = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	anchorRE = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	inlineRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// Every relative link of README.md and docs/ leads to a file of the repository, and every #anchor to a
// heading (or an <a id>) of its page, as GitHub renders them: a renamed heading or a moved file breaks
// the test, not a reader's click.
func TestLinksResolve(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pages := []string{filepath.Join(root, "README.md")}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string][]string{}
	anchorsOf := func(page string) ([]string, error) {
		if a, ok := anchors[page]; ok {
			return a, nil
		}
		b, err := os.ReadFile(page)
		if err != nil {
			return nil, err
		}
		anchors[page] = pageAnchors(string(b))
		return anchors[page], nil
	}
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, target := range pageLinks(string(b)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, frag, _ := strings.Cut(target, "#")
			dest := page
			if path != "" {
				dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
				if strings.HasPrefix(path, "/") { // from the repository's root, as GitHub resolves it
					dest = filepath.Join(root, filepath.FromSlash(path))
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no such file", rel, target)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				t.Errorf("%s: link %q: %v", rel, target, err)
				continue
			}
			if !slices.Contains(a, frag) {
				t.Errorf("%s: link %q: no heading or anchor %q in %s", rel, target, frag, filepath.Base(dest))
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found in %d pages: the link reader is broken", checked, len(pages))
	}
}

// The checker itself: what it must find and must not.
func TestLinkReader(t *testing.T) {
	page := "# Exit codes\n## Your certctl, and more than one load generator\n## `make capacity` (the knee)\n## Exit codes\n" +
		"<a id=\"custom\"></a>\nsee [a](docs/x.md#y \"t\") and [b](#exit-codes-1)\n```\n[not](a/link.md)\n```\n" +
		"and `[no](b.md)` [ref]: c.md\n[ref2]: d.md\n"
	if got, want := pageLinks(page), []string{"docs/x.md#y", "#exit-codes-1", "d.md"}; !slices.Equal(got, want) {
		t.Errorf("links %q, want %q", got, want)
	}
	want := []string{"exit-codes", "your-certctl-and-more-than-one-load-generator", "make-capacity-the-knee", "exit-codes-1", "custom"}
	if got := pageAnchors(page); !slices.Equal(got, want) {
		t.Errorf("anchors %q, want %q", got, want)
	}
}

// pageLinks is every link target of a Markdown page, outside code.
func pageLinks(md string) []string {
	md = codeRE.ReplaceAllString(fenceRE.ReplaceAllString(md, ""), "")
	var out []string
	for _, m := range linkRE.FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	for _, m := range refRE.FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// pageAnchors is every anchor of a page as GitHub makes them: each heading's slug (lower case, spaces to
// hyphens, punctuation dropped, -1, -2 … on repeats) and each <a id> or <a name>.
func pageAnchors(md string) []string {
	md = fenceRE.ReplaceAllString(md, "")
	seen := map[string]int{}
	var out []string
	for _, m := range headRE.FindAllStringSubmatch(md, -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			seen[s] = n + 1
			s = fmt.Sprintf("%s-%d", s, n)
		} else {
			seen[s] = 1
		}
		out = append(out, s)
	}
	for _, m := range anchorRE.FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

func slug(heading string) string {
	heading = inlineRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}
