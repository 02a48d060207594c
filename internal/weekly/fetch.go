// Package weekly is the weekly workflow's memory: it fetches the previous scheduled runs' artifacts through
// GitHub's REST API, compares this week's runs with last week's and with the committed baselines
// (internal/compare), and draws each scenario's figures over the weeks.
package weekly

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"certctl-loadtest/internal/output"
)

// Fetcher lists a workflow's previous runs and downloads their loadtest-* artifacts.
type Fetcher struct {
	API      string // https://api.github.com, or GitHub Enterprise's …/api/v3
	Token    string
	Repo     string // owner/name
	Workflow string // the workflow's file name: loadtest.yml
	Branch   string
	Event    string // schedule
	Exclude  int64  // this run: its artifacts are the current week
	Weeks    int
	MaxBytes int64 // what one artifact may unpack to
	HTTP     *http.Client
	Log      io.Writer
}

// Index is history/index.json: which runs were fetched, and why any was left out.
type Index struct {
	Repo     string   `json:"repo"`
	Workflow string   `json:"workflow"`
	Branch   string   `json:"branch"`
	Runs     []RunRef `json:"runs"` // newest first
}

type RunRef struct {
	ID         int64     `json:"id"`
	Number     int       `json:"run_number"`
	CreatedAt  time.Time `json:"created_at"`
	HeadSHA    string    `json:"head_sha"`
	Conclusion string    `json:"conclusion"`
	URL        string    `json:"html_url"`
	Dir        string    `json:"dir,omitempty"` // relative to the index
	Artifacts  []string  `json:"artifacts,omitempty"`
	Skipped    string    `json:"skipped,omitempty"`
}

// Artifacts of a load-test run are loadtest-<label>-<run id>-<attempt>.
var artifactRE = regexp.MustCompile(`^loadtest-([a-z0-9][a-z0-9-]*?)-\d+-\d+$`)

// Label is the run's label from its artifact or directory name (all, scale-bulk-renewal), or "".
func Label(name string) string {
	if m := artifactRE.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

// Fetch writes each run's artifacts to out/<run number>/<artifact>/ and out/index.json.
func (f Fetcher) Fetch(ctx context.Context, out string) (Index, error) {
	idx := Index{Repo: f.Repo, Workflow: f.Workflow, Branch: f.Branch, Runs: []RunRef{}}
	switch {
	case f.Token == "":
		return idx, errors.New("GITHUB_TOKEN is empty: the previous runs' artifacts are read through the REST API with the job's token (permissions: actions: read)")
	case f.Repo == "" || f.Workflow == "":
		return idx, errors.New("no repository or workflow to read (GITHUB_REPOSITORY, --workflow)")
	}
	if f.HTTP == nil {
		f.HTTP = &http.Client{Timeout: 5 * time.Minute}
	}
	// The artifact's download answers with a redirect to a signed storage URL: the token stays with the
	// API's host and port (Go's own rule compares host names only).
	c := *f.HTTP
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if req.URL.Host != via[0].URL.Host {
			req.Header.Del("Authorization")
		}
		return nil
	}
	f.HTTP = &c
	if f.Log == nil {
		f.Log = io.Discard
	}
	if f.MaxBytes == 0 {
		f.MaxBytes = 2 << 30
	}
	q := url.Values{"status": {"completed"}, "per_page": {"50"}}
	if f.Branch != "" {
		q.Set("branch", f.Branch)
	}
	if f.Event != "" {
		q.Set("event", f.Event)
	}
	next := fmt.Sprintf("%s/repos/%s/actions/workflows/%s/runs?%s", strings.TrimSuffix(f.API, "/"), f.Repo, url.PathEscape(f.Workflow), q.Encode())
	fetched := 0
	for next != "" && fetched < f.Weeks {
		// GitHub's runs carry RunRef's fields under the same names; what the fetch adds is not in them.
		var page struct {
			Runs []RunRef `json:"workflow_runs"`
		}
		link, err := f.getJSON(ctx, next, &page)
		if err != nil {
			return idx, fmt.Errorf("listing the runs of %s: %w", f.Workflow, err)
		}
		next = link
		for _, r := range page.Runs {
			if r.ID == f.Exclude || fetched >= f.Weeks {
				continue
			}
			ref := r
			if err := f.fetchRun(ctx, out, &ref); err != nil {
				ref.Skipped = err.Error()
				fmt.Fprintf(f.Log, "weekly: run #%d (%s) left out: %v\n", r.Number, r.CreatedAt.Format("2006-01-02"), err)
			} else {
				fetched++
				fmt.Fprintf(f.Log, "weekly: run #%d (%s): %s\n", r.Number, r.CreatedAt.Format("2006-01-02"), strings.Join(ref.Artifacts, ", "))
			}
			idx.Runs = append(idx.Runs, ref)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return idx, err
	}
	return idx, output.JSON(filepath.Join(out, "index.json"), idx)
}

func (f Fetcher) fetchRun(ctx context.Context, out string, ref *RunRef) error {
	var list struct {
		Artifacts []struct {
			Name    string `json:"name"`
			Expired bool   `json:"expired"`
			URL     string `json:"archive_download_url"`
		} `json:"artifacts"`
	}
	if _, err := f.getJSON(ctx, fmt.Sprintf("%s/repos/%s/actions/runs/%d/artifacts?per_page=100", strings.TrimSuffix(f.API, "/"), f.Repo, ref.ID), &list); err != nil {
		return err
	}
	ref.Dir = strconv.Itoa(ref.Number)
	sort.Slice(list.Artifacts, func(i, j int) bool { return list.Artifacts[i].Name < list.Artifacts[j].Name })
	expired := 0
	for _, a := range list.Artifacts {
		if Label(a.Name) == "" {
			continue
		}
		if a.Expired {
			expired++
			continue
		}
		if err := f.download(ctx, a.URL, filepath.Join(out, ref.Dir, a.Name)); err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
		ref.Artifacts = append(ref.Artifacts, a.Name)
	}
	if len(ref.Artifacts) == 0 {
		if expired > 0 {
			return fmt.Errorf("its %d artifacts expired", expired)
		}
		return errors.New("no loadtest artifact")
	}
	return nil
}

func (f Fetcher) request(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	// Go drops the header when a redirect leaves the host: the artifact's blob URL is signed itself.
	req.Header.Set("Authorization", "Bearer "+f.Token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	resp, err := f.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.Header.Get("X-RateLimit-Remaining") == "0":
		return nil, fmt.Errorf("GitHub's API rate limit is used up (resets at %s)", resp.Header.Get("X-RateLimit-Reset"))
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%s: the token may not read Actions (the job needs permissions: actions: read): %s", resp.Status, strings.TrimSpace(string(body)))
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s for %s: check the repository and the workflow file name", resp.Status, u)
	}
	return nil, fmt.Errorf("%s from %s: %s", resp.Status, u, strings.TrimSpace(string(body)))
}

var nextRE = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

func (f Fetcher) getJSON(ctx context.Context, u string, v any) (next string, err error) {
	resp, err := f.request(ctx, u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return "", fmt.Errorf("%s answered something that is not JSON: %w", u, err)
	}
	if m := nextRE.FindStringSubmatch(resp.Header.Get("Link")); m != nil {
		next = m[1]
	}
	return next, nil
}

// download unpacks one artifact's zip into dir, refusing what would land outside it.
func (f Fetcher) download(ctx context.Context, u, dir string) error {
	resp, err := f.request(ctx, u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	tmp, err := os.CreateTemp("", "artifact-*.zip")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, io.LimitReader(resp.Body, f.MaxBytes+1))
	if err != nil {
		return err
	}
	if n > f.MaxBytes {
		return fmt.Errorf("larger than %d bytes", f.MaxBytes)
	}
	zr, err := zip.NewReader(tmp, n)
	if err != nil {
		return fmt.Errorf("not a zip: %w", err)
	}
	var total int64
	for _, zf := range zr.File {
		name := filepath.FromSlash(zf.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("refused: entry %q would land outside the artifact's folder", zf.Name)
		}
		if zf.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("refused: entry %q is a symbolic link", zf.Name)
		}
		total += int64(zf.UncompressedSize64)
		if total > f.MaxBytes {
			return fmt.Errorf("refused: unpacks to more than %d bytes", f.MaxBytes)
		}
		dst := filepath.Join(dir, name)
		if zf.FileInfo().IsDir() {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := unzipFile(zf, dst, f.MaxBytes); err != nil {
			return err
		}
	}
	return nil
}

func unzipFile(zf *zip.File, dst string, limit int64) error {
	r, err := zf.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, io.LimitReader(r, limit)); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
