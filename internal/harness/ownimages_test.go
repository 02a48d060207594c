package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Our images' binaries are built for the engine's platform into a private directory, then moved into
// bin/images where their Dockerfiles copy them from, before compose builds the images; an image built
// from something else (the deploy tier's) needs no binary.
func TestOwnImagesBuildTheirBinariesFirst(t *testing.T) {
	root := t.TempDir()
	var built string
	f := &fakeEngine{t: t, answers: []answer{
		{prefix: "version --format {{.Server.Os}}/{{.Server.Arch}}", out: "linux/arm64\n"},
		{prefix: "go -C " + root + " build -trimpath -buildvcs=false -o ", do: func(_ context.Context, c Cmd) int {
			if c.Env[len(c.Env)-1] != "GOARCH=arm64" || c.Env[len(c.Env)-2] != "GOOS=linux" || c.Env[len(c.Env)-3] != "CGO_ENABLED=0" {
				t.Errorf("go build's environment ends %q", c.Env[len(c.Env)-3:])
			}
			out := c.Args[len(c.Args)-3]
			for _, p := range c.Args[len(c.Args)-2:] {
				os.WriteFile(filepath.Join(out, filepath.Base(p)), []byte("new "+p), 0o755)
			}
			built = strings.Join(c.Args[len(c.Args)-2:], " ")
			return 0
		}},
		{prefix: "compose build collector deploy-nginx f5", do: func(_ context.Context, c Cmd) int {
			// By now the binaries are in place, and nothing half-built is left beside them.
			entries, _ := os.ReadDir(filepath.Join(root, OwnBinDir))
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if strings.Join(names, " ") != "collector f5-standin" {
				t.Errorf("bin/images holds %q when compose builds", names)
			}
			c.Stdout.Write([]byte("Successfully tagged certctl-loadtest/collector:dev\n"))
			return 0
		}},
	}}
	// An old collector binary is replaced, not written over.
	if err := os.MkdirAll(filepath.Join(root, OwnBinDir), 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(root, OwnBinDir, "collector")
	os.WriteFile(old, []byte("old"), 0o755)
	held, _ := os.Open(old)
	defer held.Close()

	var stderr bytes.Buffer
	r := &Runner{Cfg: Config{Root: root}, Exec: f.Exec, Env: []string{"PATH=/usr/bin"}, Stderr: &stderr}
	svcs := Services{
		"collector": {Build: json.RawMessage(`{"context": "/r", "dockerfile": "cmd/collector/Dockerfile"}`)},
		"f5":        {Build: json.RawMessage(`{"context": "/r", "dockerfile": "cmd/f5-standin/Dockerfile"}`)},
		// A second service of the same binary (as the auth tier's relay is the fault proxy's): built once.
		"f5-again":     {Build: json.RawMessage(`{"context": "/r", "dockerfile": "cmd/f5-standin/Dockerfile"}`)},
		"deploy-nginx": {Build: json.RawMessage(`{"context": "/r", "dockerfile": "images/deploy/Dockerfile"}`)},
		"postgres":     {Image: "postgres:16-alpine"},
	}
	if err := r.buildOwnImages(context.Background(), Compose{Cfg: r.Cfg, Exec: f.Exec}, svcs); err != nil {
		t.Fatal(err)
	}
	if built != "./cmd/collector ./cmd/f5-standin" {
		t.Errorf("go build built %q", built)
	}
	if b, _ := os.ReadFile(old); string(b) != "new ./cmd/collector" {
		t.Errorf("bin/images/collector holds %q", b)
	}
	if b := make([]byte, 3); func() bool { n, _ := held.ReadAt(b, 0); return string(b[:n]) != "old" }() {
		t.Errorf("the binary an image build had open was written over")
	}
	for _, want := range []string{
		"loadtest: building our own images: collector, deploy-nginx, f5, f5-again\n",
		"[build] CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -buildvcs=false -o bin/images/ ./cmd/collector ./cmd/f5-standin\n",
		"[build] Successfully tagged certctl-loadtest/collector:dev\n",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, stderr.String())
		}
	}
}

// A failed compile stops the run before any image is built, and says where its output is.
func TestOwnBinariesThatDoNotCompileStopTheRun(t *testing.T) {
	root := t.TempDir()
	f := &fakeEngine{t: t, answers: []answer{
		{prefix: "version", out: "linux/amd64\n"},
		{prefix: "go -C", do: func(_ context.Context, c Cmd) int {
			c.Stderr.Write([]byte("cmd/collector/main.go:1: syntax error\n"))
			return 1
		}},
	}}
	var stderr bytes.Buffer
	r := &Runner{Cfg: Config{Root: root}, Exec: f.Exec, Stderr: &stderr}
	svcs := Services{"collector": {Build: json.RawMessage(`{"dockerfile": "cmd/collector/Dockerfile"}`)}}
	err := r.buildOwnImages(context.Background(), Compose{Cfg: r.Cfg, Exec: f.Exec}, svcs)
	if err == nil || !strings.Contains(err.Error(), "go build exit 1") || !strings.Contains(stderr.String(), "[build] cmd/collector/main.go:1: syntax error") {
		t.Errorf("err %v, console:\n%s", err, stderr.String())
	}
	if f.ran("compose") {
		t.Error("compose built the images all the same")
	}
	if entries, _ := os.ReadDir(filepath.Join(root, OwnBinDir)); len(entries) != 0 {
		t.Errorf("left behind in bin/images: %v", entries)
	}
}
