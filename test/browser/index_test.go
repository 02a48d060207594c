// Package browser_test opens the index.html that report.Write renders in headless Chromium, from
// file:// as a reader of a downloaded artifact does, and checks what the browser made of it: every
// scenario and the verdict are on the page, every link leads to a file of the run, and the page
// requested nothing from the network. diagnosis_test.go drives it over the DevTools protocol too
// (devtools_test.go), to see that every diagnosis chart drew and that they share one cursor.
//
// Without a chromium binary the tests skip, saying how to install it; with CI set they fail instead
// (scripts/install-deps.sh installs it).
//
//	go test -count=1 ./test/browser/
//
// SCREENSHOT_DIR=dir keeps each page's screenshot there, and of a page with a diagnosis its Diagnosis
// section and the whole page (<test>-diagnosis.png, <test>-page.png).
package browser_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/report"
	"certctl-loadtest/internal/results"

	"certctl-loadtest/internal/testenv"
)

const testdata = "../../internal/report/testdata"

// The window the page is drawn in, and where its verdict banner is: right of the headline, which is
// no longer than about 700 px, inside the banner that spans the page.
const (
	width, height = 1400, 1000
	bannerX       = width - 60
	bannerY       = 30
)

func TestIndexInChromium(t *testing.T) {
	chromium := findChromium(t)
	cases := []struct {
		name, run string
		// missing are the files k6 or the stack left none of, by scenario ("" for the run's own).
		missing map[string][]string
		passed  bool
		banner  color.RGBA // the verdict banner's background (index.html.tmpl's .verdict.passed/.failed)
	}{
		{name: "passed", run: "run-default", passed: true, banner: color.RGBA{0xda, 0xfb, 0xe1, 0xff}},
		// ghost wrote no record (and so no dashboard, no samples); issuance_acceptance's samples are
		// lost; the stack never got to logs/up.log.
		{name: "failed", run: "run-failed", banner: color.RGBA{0xff, 0xeb, 0xe9, 0xff}, missing: map[string][]string{
			"ghost": {"dashboard", "raw"}, "issuance_acceptance": {"raw"}, "": {"logs/up.log"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, linked := runDir(t, c.run, c.missing)
			s, err := results.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if s.Passed != c.passed {
				t.Fatalf("%s passed=%v, want %v", c.run, s.Passed, c.passed)
			}
			if err := report.Write(dir, s); err != nil {
				t.Fatal(err)
			}
			page := open(t, chromium, filepath.Join(dir, "index.html"))

			verdict := "PASSED"
			if !c.passed {
				verdict = "FAILED"
			}
			meaning, _ := results.ExitMeaning(s.ExitCode)
			for _, want := range []string{
				fmt.Sprintf(`<h1 id="verdict" data-verdict="%s">certctl-loadtest run %s: %s (exit %d)</h1>`, verdict, s.RunID, verdict, s.ExitCode),
				fmt.Sprintf(`<p id="exit">Exit %d: %s.</p>`, s.ExitCode, text(meaning)),
			} {
				if !strings.Contains(page.DOM, want) {
					t.Errorf("the page lacks %s", want)
				}
			}
			for _, sc := range s.Scenarios {
				row := fmt.Sprintf(`<tr data-scenario="%s" data-status="%s"><td>%s</td><td class="mono">%s</td><td class="status-%s">%s</td>`,
					sc.Name, sc.Status, sc.Tier, sc.Name, sc.Status, sc.Status)
				if !strings.Contains(page.DOM, row) {
					t.Errorf("the page has no row for %s (%s)", sc.Name, sc.Status)
				}
				if sc.Record == nil {
					continue
				}
				for _, th := range sc.Record.Thresholds {
					if th.OK {
						continue
					}
					want := fmt.Sprintf(`<td class="mono">%s</td><td class="mono">%s</td><td class="mono mark-FAIL">%s</td>`, text(th.Metric), text(th.Expression), text(th.Measured()))
					if !strings.Contains(section(page.DOM, `<table id="failed-thresholds">`, `</table>`), want) {
						t.Errorf("failed thresholds lack %s %s (measured %s)", th.Metric, th.Expression, th.Measured())
					}
				}
			}

			// Every link leads to a file of the run, and every file of the run the page is about is linked.
			got := map[string]bool{}
			for _, ref := range attrs(page.DOM, "href") {
				rel, err := resolve(page.URL, dir, ref)
				if err != nil {
					t.Errorf("link %q: %v", ref, err)
					continue
				}
				got[rel] = true
			}
			for _, rel := range linked {
				if !got[rel] {
					t.Errorf("%s is in the run directory and not linked", rel)
				}
				delete(got, rel)
			}
			for rel := range got {
				t.Errorf("%s is linked, but is none of the files the page links", rel)
			}

			page.loadedNothing(t)
			page.drawn(t, c.banner)
		})
	}
}

// The check that the page requested nothing sees a page that does: a page of the run that loads a
// stylesheet and an image from elsewhere fails it.
func TestExternalRequestsAreSeen(t *testing.T) {
	chromium := findChromium(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "index.html")
	os.WriteFile(bad, []byte(`<!DOCTYPE html><html><head><link rel="stylesheet" href="https://fonts.example.com/a.css"></head>`+
		`<body><img src="http://example.invalid/b.png"></body></html>`), 0o644)
	page := open(t, chromium, bad)
	got := strings.Join(page.Requested, " ")
	for _, want := range []string{"https://fonts.example.com/a.css", "http://example.invalid/b.png"} {
		if !strings.Contains(got, want) {
			t.Errorf("the page's request of %s went unseen (seen: %q)", want, page.Requested)
		}
	}
	if abs := absoluteURLs(page.DOM); len(abs) != 2 {
		t.Errorf("absolute URLs in the DOM: %q, want the stylesheet's and the image's", abs)
	}
}

// findChromium is the chromium binary, or skips the test (fails it in CI).
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	reason := "chromium is not installed: the run's index.html is not checked in a browser (apt-get install chromium, or scripts/install-deps.sh)"
	testenv.SkipOrFailInCI(t, reason)
	return ""
}

// runDir is a run directory made of a recorded run in internal/report/testdata (run.json and the
// scenario records) and the files k6 and the stack leave beside them, less the missing ones. It
// returns the directory and the files index.html must link.
func runDir(t *testing.T, run string, missing map[string][]string) (string, []string) {
	t.Helper()
	src := filepath.Join(testdata, run)
	b, err := os.ReadFile(filepath.Join(src, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r results.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	// A run's own name, as results/<RUN_ID> has it: the page must not depend on where it lies.
	dir := filepath.Join(t.TempDir(), "results dir", r.RunID)
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	gone := func(scenario, what string) bool {
		for _, m := range missing[scenario] {
			if m == what {
				return true
			}
		}
		return false
	}
	var linked []string
	put := func(rel string, content []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), content, 0o644); err != nil {
			t.Fatal(err)
		}
		linked = append(linked, rel)
	}
	for _, sr := range r.Scenarios {
		put(sr.Log, []byte("time=\"2026-11-22T15:00:00Z\" level=info msg=\"k6 of "+sr.Name+"\"\n"))
		record := filepath.Join("scenarios", sr.Name+".json")
		if _, err := os.Stat(filepath.Join(dir, record)); err == nil {
			linked = append(linked, record)
		}
		if !gone(sr.Name, "dashboard") {
			put("dashboard/"+sr.Name+".html", []byte("<!DOCTYPE html><title>k6 dashboard of "+sr.Name+"</title>\n"))
		}
		if !gone(sr.Name, "raw") {
			put("raw/"+sr.Name+".json.gz", gzipped(`{"type":"Point","metric":"iterations","data":{"value":1}}`+"\n"))
		}
	}
	for _, rel := range []string{"logs/stack.log", "logs/up.log"} {
		if !gone("", rel) {
			put(rel, []byte("log of the stack\n"))
		}
	}
	// A file of the run the page has no link for.
	if err := os.WriteFile(filepath.Join(dir, "logs", "down.log"), []byte("down\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Write renders these three; the page links the two summaries, and run.json.
	linked = append(linked, "run.json", "summary.json", "summary.txt")
	return dir, linked
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

// page is what Chromium made of a file: its DOM once loaded, its screenshot, the URLs it requested
// over the network and what it said on its console.
type page struct {
	URL        *url.URL
	DOM        string
	Screenshot string
	Requested  []string
	Console    []string
}

func open(t *testing.T, chromium, file string) page {
	t.Helper()
	tmp := t.TempDir()
	p := page{URL: &url.URL{Scheme: "file", Path: file}, Screenshot: filepath.Join(tmp, "screenshot.png")}
	netlog := filepath.Join(tmp, "netlog.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless=new", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+filepath.Join(tmp, "profile"), "--no-first-run",
		// Fewer requests of the browser's own, and none of them leaves the machine: every name resolves
		// to nothing. The browser's requests are told apart from the page's all the same (pageRequests).
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--log-net-log="+netlog, "--enable-logging=stderr", "--log-level=0",
		fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+p.Screenshot,
		"--dump-dom", p.URL.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, tail(stderr.String(), 40))
	}
	p.DOM = stdout.String()
	if !strings.Contains(p.DOM, "</html>") {
		t.Fatalf("chromium printed no DOM of %s\n%s", file, tail(stderr.String(), 40))
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		// A blocked load (Content-Security-Policy) or a script error is said on the console.
		if strings.Contains(line, ":CONSOLE") {
			p.Console = append(p.Console, line)
		}
	}
	var err error
	if p.Requested, err = pageRequests(netlog); err != nil {
		t.Fatalf("chromium's network log: %v", err)
	}
	if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
		b, _ := os.ReadFile(p.Screenshot)
		name := strings.ReplaceAll(t.Name(), "/", "-") + ".png"
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Errorf("keeping the screenshot: %v", err)
		}
	}
	return p
}

// loadedNothing: the page made no network request, tried none (a load the page's policy blocked is
// said on the console), and names no address elsewhere that a reader's browser might load.
func (p page) loadedNothing(t *testing.T) {
	t.Helper()
	if len(p.Requested) > 0 {
		t.Errorf("the page requested %q", p.Requested)
	}
	if len(p.Console) > 0 {
		t.Errorf("the page's console:\n%s", strings.Join(p.Console, "\n"))
	}
	if abs := absoluteURLs(p.DOM); len(abs) > 0 {
		t.Errorf("the page names addresses elsewhere: %q", abs)
	}
}

// drawn: the screenshot is the page, styled: its verdict banner has the verdict's colour, which the
// page's own stylesheet gives it.
func (p page) drawn(t *testing.T, banner color.RGBA) {
	t.Helper()
	f, err := os.Open(p.Screenshot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != width || b.Dy() != height {
		t.Errorf("screenshot is %v, want %dx%d", b, width, height)
	}
	if got := color.RGBAModel.Convert(img.At(bannerX, bannerY)).(color.RGBA); !near(got, banner) {
		t.Errorf("the verdict banner at (%d,%d) is %v, want %v: the page's style did not apply", bannerX, bannerY, got, banner)
	}
	if colours(img) < 8 {
		t.Errorf("the screenshot is all but blank")
	}
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return x-y < 4 || y-x < 4 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B)
}

func colours(img image.Image) int {
	seen := map[color.Color]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			seen[img.At(x, y)] = true
		}
	}
	return len(seen)
}

// pageRequests are the URLs a page asked the network for, from Chromium's net log (--log-net-log): a
// request a file:// document made has that document's opaque origin ("null") as its initiator and
// file:// in its network isolation key; the browser's own (component updates, its clock) have neither.
func pageRequests(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int `json:"type"`
			Params struct {
				URL       string `json:"url"`
				Initiator string `json:"initiator"`
				NIK       string `json:"network_isolation_key"`
			} `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(b, &log); err != nil {
		// A browser that did not shut down cleanly leaves the log's closing brackets off.
		if err2 := json.Unmarshal(append(bytes.TrimRight(bytes.TrimSpace(b), ","), "]}"...), &log); err2 != nil {
			return nil, err
		}
	}
	start, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		return nil, errors.New("no URL_REQUEST_START_JOB event type: is it a net log?")
	}
	var urls []string
	for _, e := range log.Events {
		if e.Type != start || e.Params.URL == "" {
			continue
		}
		if e.Params.Initiator == "null" || strings.HasPrefix(e.Params.Initiator, "file:") || strings.Contains(e.Params.NIK, "file:") {
			urls = append(urls, e.Params.URL)
		}
	}
	return urls, nil
}

// attrRE is an attribute as Chromium serialises it: name="value", with & " < > escaped.
var attrRE = regexp.MustCompile(`\s([a-zA-Z-]+)="([^"]*)"`)

// attrs are the values of every attribute called name in the DOM, unescaped.
func attrs(dom, name string) []string {
	var out []string
	for _, m := range attrRE.FindAllStringSubmatch(dom, -1) {
		if strings.EqualFold(m[1], name) {
			out = append(out, html.UnescapeString(m[2]))
		}
	}
	return out
}

// absoluteURLs are the addresses in the DOM a browser could load from elsewhere: any attribute that
// takes a URL with a scheme or a host, and any url() or @import of a stylesheet.
func absoluteURLs(dom string) []string {
	var out []string
	for _, name := range []string{"href", "src", "srcset", "action", "formaction", "poster", "data", "background", "content"} {
		for _, v := range attrs(dom, name) {
			if name == "content" && !strings.Contains(v, "url=") { // <meta http-equiv="refresh">
				continue
			}
			if u, err := url.Parse(strings.TrimSpace(v)); err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(strings.TrimSpace(v), "//") {
				out = append(out, v)
			}
		}
	}
	for _, m := range regexp.MustCompile(`(?i)(url\(|@import)[^;)]*`).FindAllString(dom, -1) {
		out = append(out, m)
	}
	return out
}

// resolve follows a link of the page as the browser does, to the file of the run it names (relative,
// slash-separated), or says why it names none.
func resolve(base *url.URL, dir, ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	if u.Scheme != "" || u.Host != "" || strings.HasPrefix(ref, "/") {
		return "", errors.New("not relative to the page")
	}
	target := base.ResolveReference(u)
	rel, err := filepath.Rel(dir, filepath.FromSlash(target.Path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s is outside the run directory", target.Path)
	}
	st, err := os.Lstat(target.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s does not exist", target.Path)
	case err != nil:
		return "", err
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("%s is no regular file", target.Path)
	}
	return filepath.ToSlash(rel), nil
}

// text is s as Chromium serialises a text node: & < > escaped, quotes not.
func text(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;").Replace(s)
}

// section is the part of s from the first start to the end after it.
func section(s, start, end string) string {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	in, _, _ := strings.Cut(after, end)
	return in
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
