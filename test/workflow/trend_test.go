package workflow

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// recorded are internal/compare's recorded API + ACME runs (two of v2.1.7, one of main-151107c): the
// weeks the trend job is given.
func recorded(name string) string {
	return filepath.Join(root, "internal", "compare", "testdata", name)
}

// zipDir packs a run directory as GitHub serves an artifact.
func zipDir(t *testing.T, dir string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = w.Write(body)
		return err
	})
	if err != nil || zw.Close() != nil {
		t.Fatalf("zipping %s: %v", dir, err)
	}
	return b.Bytes()
}

// githubAPI plays the REST API the trend job reads: the workflow's scheduled runs, newest first, each with
// one artifact of label "all" holding a recorded run.
func githubAPI(t *testing.T, weeks ...string) *httptest.Server {
	t.Helper()
	zips := map[int][]byte{}
	for i, w := range weeks {
		zips[100+i] = zipDir(t, recorded(w))
	}
	// Any repository: act names it after the checkout's remote, which in a clone of a local repository is
	// a path, not owner/name.
	runsRE := regexp.MustCompile(`^/repos/.+/actions/workflows/loadtest\.yml/runs$`)
	artifactsRE := regexp.MustCompile(`^/repos/.+/actions/runs/(\d+)/artifacts$`)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			http.Error(w, `{"message":"Requires authentication"}`, http.StatusUnauthorized)
			return
		}
		var id int
		switch {
		case runsRE.MatchString(r.URL.Path):
			var runs []map[string]any
			for i := len(weeks) - 1; i >= 0; i-- {
				runs = append(runs, map[string]any{"id": 100 + i, "run_number": 40 + i, "created_at": fmt.Sprintf("2026-11-%02dT05:17:00Z", 9+7*i), "head_sha": "abc", "conclusion": "success"})
			}
			json.NewEncoder(w).Encode(map[string]any{"workflow_runs": runs})
		case artifactsRE.MatchString(r.URL.Path):
			fmt.Sscanf(artifactsRE.FindStringSubmatch(r.URL.Path)[1], "%d", &id)
			json.NewEncoder(w).Encode(map[string]any{"artifacts": []map[string]any{{"name": fmt.Sprintf("loadtest-all-%d-1", id), "expired": false, "archive_download_url": fmt.Sprintf("%s/zip/%d", srv.URL, id)}}})
		case strings.HasPrefix(r.URL.Path, "/zip/"):
			fmt.Sscanf(r.URL.Path, "/zip/%d", &id)
			w.Write(zips[id])
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The trend job (testdata/trend.yml: the workflow's trend job without the load-test jobs it needs, which
// act would run first) on recorded artifacts, offline: this run's artifact is in the sink as the tiers' job left
// it, the previous weeks come from the API stand-in. A week like the last passes; the week main-151107c's
// audit chain landed fails the job, after the comparison is in the job summary and the artifact.
func TestTrendJob(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, current string
		history       []string
		wantCode      bool // act exits non-zero
		verdict       string
	}{
		{"a week like the last", "v217-b", []string{"v217-a"}, false, "no regression"},
		{"certctl got slower", "main-a", []string{"v217-a", "v217-b"}, true, "regressed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sink := t.TempDir()
			api := githubAPI(t, c.history...)
			// The run id act gives this workflow run is chosen inside runAct: any loadtest-all-<id>-<attempt>
			// is this run's to the job.
			if out, err := exec.Command("cp", "-r", recorded(c.current), filepath.Join(sink, "loadtest-all-999-1")).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			// The history branch's repository: empty, so this week starts the history.
			store := filepath.Join(t.TempDir(), "history.git")
			if out, err := exec.Command("git", "init", "-q", "--bare", store).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			env := []string{"ACT_ARTIFACT_SINK=" + sink, "LOADTEST_GITHUB_API_URL=" + api.URL}
			if p := os.Getenv("OTAVA_PYTHON"); p != "" {
				env = append(env, "OTAVA_PYTHON="+p) // make's: the job need not install Otava again
			}
			r := runActOn(t, filepath.Join("test", "workflow", "testdata", "trend.yml"), "schedule", `{}`,
				env, "-s", "GITHUB_TOKEN=test-token", "--var", "LOADTEST_HISTORY_REMOTE="+store)
			if (r.code != 0) != c.wantCode {
				t.Fatalf("act exited %d:\n%s", r.code, r.output)
			}
			wantOutput(t, r, fmt.Sprintf(`fetched %d previous runs of loadtest.yml`, len(c.history)))
			wantOutput(t, r, `✅  Success - Main Upload the trend`)
			wantOutput(t, r, `Weekly trend: `+c.verdict)
			dir := filepath.Join(sink, "trend-"+r.runID+"-1")
			var out struct {
				Verdict     string `json:"verdict"`
				Comparisons []struct {
					Against string `json:"against"`
					Verdict string `json:"verdict"`
				} `json:"comparisons"`
				Trend struct {
					Weeks []string `json:"weeks"`
				} `json:"trend"`
			}
			b, err := os.ReadFile(filepath.Join(dir, "trend.json"))
			if err != nil {
				t.Fatalf("no trend artifact: %v\n%s", err, r.output)
			}
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			if out.Verdict != c.verdict || len(out.Trend.Weeks) != len(c.history)+1 || len(out.Comparisons) == 0 || !strings.HasPrefix(out.Comparisons[0].Against, "last week (#") {
				t.Errorf("trend.json: %s", b)
			}
			for _, f := range []string{"trend.md", "trend-p95.svg", "trend-rate.svg"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			if c.wantCode {
				wantOutput(t, r, `❌  Failure - Main Verdict`)
			}
			// This week started the history, whatever its verdict: a line of its runs, with their testbed.
			wantOutput(t, r, `no loadtest-history branch in .* yet: the history starts this week`)
			b, err = exec.Command("git", "-C", store, "show", "loadtest-history:history.jsonl").Output()
			var e struct {
				Label     string         `json:"label"`
				Week      string         `json:"week"`
				Scenarios map[string]any `json:"scenarios"`
			}
			if err != nil || strings.Count(string(b), "\n") != 1 || json.Unmarshal(b, &e) != nil || e.Label != "all" || !strings.HasPrefix(e.Week, "#") || len(e.Scenarios) != 3 {
				t.Errorf("the history branch after the job: %v: %s", err, b)
			}
		})
	}
}
