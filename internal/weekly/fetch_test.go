package weekly

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// zipOf packs files (name → content) as an artifact.
func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type run struct {
	id, number int
	artifacts  map[string][]byte // name → zip; nil zip: expired
}

// api plays GitHub's REST API for the runs, two to a page, with downloads redirected to a blob host
// that must never see the token.
func api(t *testing.T, runs []run, status int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var leaked atomic.Int32
	blob := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		var id int
		var name string
		fmt.Sscanf(r.URL.Path, "/blob/%d/", &id)
		name = filepath.Base(r.URL.Path)
		for _, x := range runs {
			if x.id == id {
				w.Write(x.artifacts[name])
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(blob.Close)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != 0 {
			http.Error(w, `{"message":"Resource not accessible by integration"}`, status)
			return
		}
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/actions/workflows/loadtest.yml/runs"):
			if q := r.URL.Query(); q.Get("event") != "schedule" || q.Get("branch") != "main" || q.Get("status") != "completed" {
				t.Errorf("runs listed with %v", q)
			}
			page := 0
			fmt.Sscanf(r.URL.Query().Get("page"), "%d", &page)
			var out []map[string]any
			for i := page * 2; i < len(runs) && i < page*2+2; i++ {
				out = append(out, map[string]any{"id": runs[i].id, "run_number": runs[i].number, "created_at": fmt.Sprintf("2026-11-%02dT05:17:00Z", runs[i].number-20), "head_sha": "abc", "conclusion": "success"})
			}
			if (page+1)*2 < len(runs) {
				w.Header().Set("Link", fmt.Sprintf(`<%s%s?page=%d&branch=main&event=schedule&status=completed>; rel="next"`, srv.URL, r.URL.Path, page+1))
			}
			json.NewEncoder(w).Encode(map[string]any{"workflow_runs": out})
		case strings.Contains(r.URL.Path, "/actions/runs/"):
			var id int
			fmt.Sscanf(r.URL.Path[strings.Index(r.URL.Path, "/runs/"):], "/runs/%d/artifacts", &id)
			var out []map[string]any
			for _, x := range runs {
				if x.id != id {
					continue
				}
				for name, z := range x.artifacts {
					out = append(out, map[string]any{"name": name, "expired": z == nil, "archive_download_url": fmt.Sprintf("%s/dl/%d/%s", srv.URL, id, name)})
				}
			}
			json.NewEncoder(w).Encode(map[string]any{"artifacts": out})
		case strings.HasPrefix(r.URL.Path, "/dl/"):
			http.Redirect(w, r, blob.URL+"/blob/"+strings.TrimPrefix(r.URL.Path, "/dl/"), http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &leaked
}

func fetcher(url string) Fetcher {
	return Fetcher{API: url, Token: "tok", Repo: "o/r", Workflow: "loadtest.yml", Branch: "main", Event: "schedule", Exclude: 300, Weeks: 2}
}

func TestFetchTakesTheNewestWeeksWithArtifacts(t *testing.T) {
	summary := `{"schema":"certctl-loadtest/summary@1","run_id":"all-299-1"}`
	good := func(label string) []byte {
		return zipOf(t, map[string]string{"summary.json": summary, "raw/x.json.gz": "", "server/y.jsonl": "{}"})
	}
	runs := []run{
		{id: 300, number: 42, artifacts: map[string][]byte{"loadtest-all-300-1": good("all")}}, // this run
		{id: 299, number: 41, artifacts: map[string][]byte{"loadtest-all-299-1": good("all"), "loadtest-scale-bulk-renewal-299-1": good("s"), "trend-299-1": good("t")}},
		{id: 298, number: 40, artifacts: map[string][]byte{"loadtest-all-298-1": nil}},
		{id: 297, number: 39, artifacts: map[string][]byte{"loadtest-all-297-1": good("all")}},
		{id: 296, number: 38, artifacts: map[string][]byte{"loadtest-all-296-1": good("all")}},
	}
	srv, leaked := api(t, runs, 0)
	out := t.TempDir()
	idx, err := fetcher(srv.URL).Fetch(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range idx.Runs {
		got = append(got, fmt.Sprintf("#%d %q %v", r.Number, r.Skipped, r.Artifacts))
	}
	want := []string{`#41 "" [loadtest-all-299-1 loadtest-scale-bulk-renewal-299-1]`, `#40 "its 1 artifacts expired" []`, `#39 "" [loadtest-all-297-1]`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("runs %q\nwant %q", got, want)
	}
	if leaked.Load() != 0 {
		t.Errorf("the token reached the blob host %d times", leaked.Load())
	}
	if _, err := os.Stat(filepath.Join(out, "41", "loadtest-all-299-1", "server", "y.jsonl")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(out, "41", "trend-299-1")); err == nil {
		t.Error("the trend's own artifact was fetched as a week's run")
	}
	weeks, err := LoadHistory(out)
	if err != nil || len(weeks) != 2 || weeks[0].Label != "#39 2026-11-19" || weeks[1].Runs["scale-bulk-renewal"] == "" {
		t.Errorf("history %+v, %v", weeks, err)
	}
}

func TestFetchRefusesAZipThatLeavesItsFolder(t *testing.T) {
	runs := []run{{id: 299, number: 41, artifacts: map[string][]byte{"loadtest-all-299-1": zipOf(t, map[string]string{"../../evil": "x"})}}}
	srv, _ := api(t, runs, 0)
	out := t.TempDir()
	idx, err := fetcher(srv.URL).Fetch(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Runs) != 1 || !strings.Contains(idx.Runs[0].Skipped, "would land outside") {
		t.Errorf("%+v", idx.Runs)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "evil")); err == nil {
		t.Error("the entry was written outside")
	}
}

func TestFetchSaysWhatTheTokenLacks(t *testing.T) {
	srv, _ := api(t, nil, http.StatusForbidden)
	_, err := fetcher(srv.URL).Fetch(context.Background(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "actions: read") {
		t.Errorf("err %v", err)
	}
	f := fetcher(srv.URL)
	f.Token = ""
	if _, err := f.Fetch(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "GITHUB_TOKEN is empty") {
		t.Errorf("err %v", err)
	}
}

func TestLabel(t *testing.T) {
	for name, want := range map[string]string{"loadtest-all-123-1": "all", "loadtest-scale-bulk-renewal-9-2": "scale-bulk-renewal", "trend-1-1": "", "loadtest-x": ""} {
		if got := Label(name); got != want {
			t.Errorf("Label(%q) = %q, want %q", name, got, want)
		}
	}
}
