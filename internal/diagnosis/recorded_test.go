package diagnosis

import (
	"certctl-loadtest/internal/golden"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Recorded runs against the real certctl builds (testdata/recorded/<run>: the run's server/ samples,
// gzipped, and input.json with its windows as summary.json had them). Their findings are the golden
// files: the rules must keep telling the three cases apart that they were built on (docs/diagnosis.md).
func TestRecordedRuns(t *testing.T) {
	runs, _ := filepath.Glob(filepath.Join("testdata", "recorded", "*"))
	if len(runs) == 0 {
		t.Fatal("no recorded runs under testdata/recorded")
	}
	for _, rec := range runs {
		name := filepath.Base(rec)
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			server := filepath.Join(dir, "server")
			os.MkdirAll(server, 0o755)
			files, _ := filepath.Glob(filepath.Join(rec, "server", "*"))
			for _, f := range files {
				in, err := os.Open(f)
				if err != nil {
					t.Fatal(err)
				}
				var r io.Reader = in
				if strings.HasSuffix(f, ".gz") {
					if r, err = gzip.NewReader(in); err != nil {
						t.Fatal(err)
					}
				}
				out, _ := os.Create(filepath.Join(server, strings.TrimSuffix(filepath.Base(f), ".gz")))
				if _, err := io.Copy(out, r); err != nil {
					t.Fatal(err)
				}
				out.Close()
				in.Close()
			}
			var in Input
			b, err := os.ReadFile(filepath.Join(rec, "input.json"))
			if err != nil || json.Unmarshal(b, &in) != nil {
				t.Fatalf("input.json: %v", err)
			}
			in.Dir = dir
			d := Analyze(in)
			golden.Check(t, "recorded-"+name+".txt", sentences(d))
		})
	}
}
