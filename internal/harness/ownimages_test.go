package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Our images' binaries are built for the engine's platform into a private directory, then moved into
// bin/images where their Dockerfiles copy them from, before compose builds the images; an image built
// from something else (the deploy tier's) needs no binary.
func TestOwnImagesBuildTheirBinariesFirst(t *testing.T) {
	root := t.TempDir()
	var built string
	var inspected []string
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
		{prefix: "image inspect --format {{.Id}} certctl-loadtest/collector:dev", do: func(_ context.Context, c Cmd) int {
			// Rebuilt: another id after the build than before it.
			fmt.Fprintf(c.Stdout, "sha256:collector-%d\n", len(inspected))
			inspected = append(inspected, "collector")
			return 0
		}},
		{prefix: "image inspect --format {{.Id}} ", out: "sha256:unchanged\n"},
		{prefix: "compose build collector deploy-nginx f5", do: func(_ context.Context, c Cmd) int {
			if !slices.Contains(c.Env, "COMPOSE_BAKE=false") {
				t.Errorf("compose builds without COMPOSE_BAKE=false: it would warn that buildx is missing")
			}
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
	r := &Runner{Cfg: Config{Root: root}, Exec: f.Exec, Env: []string{"PATH=/usr/bin"}, Stderr: &stderr, Built: &OwnBuilds{}}
	svcs := Services{
		"collector": {Image: "certctl-loadtest/collector:dev", Build: json.RawMessage(`{"context": "/r", "dockerfile": "cmd/collector/Dockerfile"}`)},
		"f5":        {Image: "certctl-loadtest/f5-standin:dev", Build: json.RawMessage(`{"context": "/r", "dockerfile": "cmd/f5-standin/Dockerfile"}`)},
		// A second service of the same binary (as the auth tier's relay is the fault proxy's): built once.
		"f5-again":     {Image: "certctl-loadtest/f5-standin:dev", Build: json.RawMessage(`{"context": "/r", "dockerfile": "cmd/f5-standin/Dockerfile"}`)},
		"deploy-nginx": {Image: "certctl-loadtest/deploy-nginx:dev", Build: json.RawMessage(`{"context": "/r", "dockerfile": "images/deploy/Dockerfile"}`)},
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
	// The console: a line an image, nothing of what the builds printed; that is the run's build.log.
	want := "loadtest: image certctl-loadtest/collector:dev (collector): built\n" +
		"loadtest: image certctl-loadtest/deploy-nginx:dev (deploy-nginx): up to date\n" +
		"loadtest: image certctl-loadtest/f5-standin:dev (f5, f5-again): up to date\n"
	if stderr.String() != want {
		t.Errorf("console:\n%s\nwant:\n%s", stderr.String(), want)
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "logs"), 0o755)
	r.keepBuildLog(dir)
	log, _ := os.ReadFile(filepath.Join(dir, "logs", "build.log"))
	for _, want := range []string{
		"CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -buildvcs=false -o bin/images/ ./cmd/collector ./cmd/f5-standin\n",
		"docker compose --profile k6 build collector deploy-nginx f5 f5-again\n",
		"Successfully tagged certctl-loadtest/collector:dev\n",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("build.log lacks %q:\n%s", want, log)
		}
	}
	// The next stack of the same invocation builds nothing, and says nothing.
	calls := len(f.calls)
	stderr.Reset()
	next := &Runner{Cfg: r.Cfg, Exec: f.Exec, Env: r.Env, Stderr: &stderr, Built: r.Built}
	if err := next.buildOwnImages(context.Background(), Compose{Cfg: r.Cfg, Exec: f.Exec}, svcs); err != nil {
		t.Fatal(err)
	}
	if len(f.calls) != calls || stderr.Len() != 0 {
		t.Errorf("a second stack of one invocation ran %q and printed %q", f.calls[calls:], stderr.String())
	}
	next.keepBuildLog(dir)
	if again, _ := os.ReadFile(filepath.Join(dir, "logs", "build.log")); string(again) != string(log) {
		t.Errorf("a run that built nothing wrote a build.log")
	}
}

// A failed image build stops the run with its last lines on the console, and no image is taken as
// built: the next stack of the invocation tries again.
func TestOwnImagesThatFailToBuildShowTheirLastLines(t *testing.T) {
	f := &fakeEngine{t: t, answers: []answer{
		{prefix: "image inspect --format {{.Id}} ", out: "sha256:old\n"},
		{prefix: "compose build deploy-nginx", do: func(_ context.Context, c Cmd) int {
			for i := 1; i <= 30; i++ {
				fmt.Fprintf(c.Stdout, "Step %d/30\n", i)
			}
			c.Stderr.Write([]byte("E: Unable to locate package nginx-extras\n"))
			return 1
		}},
	}}
	var stderr bytes.Buffer
	built := &OwnBuilds{}
	r := &Runner{Cfg: Config{Root: t.TempDir(), Offline: true}, Exec: f.Exec, Stderr: &stderr, Built: built}
	svcs := Services{"deploy-nginx": {Image: "certctl-loadtest/deploy-nginx:dev", Build: json.RawMessage(`{"dockerfile": "images/deploy/Dockerfile"}`)}}
	err := r.buildOwnImages(context.Background(), Compose{Cfg: r.Cfg, Exec: f.Exec}, svcs)
	if err == nil || !strings.Contains(err.Error(), "docker compose build exit 1") {
		t.Fatalf("err %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != buildTail || lines[0] != "loadtest: [build] Step 17/30" || lines[len(lines)-1] != "loadtest: [build] E: Unable to locate package nginx-extras" {
		t.Errorf("console:\n%s", stderr.String())
	}
	if len(built.built) != 0 {
		t.Errorf("a failed build is taken as built: %v", built.built)
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

// A certctl build is packaged once an invocation: the next stack gets the same images without the
// packaging's lines on the console; another build is packaged on its own.
func TestCertctlBuildPackagedOnceAnInvocation(t *testing.T) {
	root := t.TempDir()
	var packaged []string
	f := &fakeEngine{t: t, answers: []answer{
		{prefix: filepath.Join(root, "images", "certctl", "build.sh") + " ", do: func(_ context.Context, c Cmd) int {
			packaged = append(packaged, c.Args[0])
			fmt.Fprintf(c.Stdout, "CERTCTL_IMAGE=certctl-loadtest/certctl-server:%s\nCERTCTL_AGENT_IMAGE=certctl-loadtest/certctl-agent:%s\n", filepath.Base(c.Args[0]), filepath.Base(c.Args[0]))
			return 0
		}},
	}}
	built := &OwnBuilds{}
	run := func(dist string) (Compose, string) {
		var stderr bytes.Buffer
		r := &Runner{Cfg: Config{Root: root, Dist: dist}, Exec: f.Exec, Stderr: &stderr, Built: built}
		compose := Compose{Cfg: r.Cfg, Exec: f.Exec}
		if err := r.packageDist(context.Background(), &compose); err != nil {
			t.Fatal(err)
		}
		return compose, stderr.String()
	}
	first, said := run("/builds/v2.1.7")
	if !strings.Contains(said, "packaging the certctl build /builds/v2.1.7") {
		t.Errorf("first: %q", said)
	}
	again, said := run("/builds/v2.1.7")
	if said != "" || !slices.Equal(first.Env, again.Env) || !slices.Contains(again.Env, "CERTCTL_IMAGE=certctl-loadtest/certctl-server:v2.1.7") {
		t.Errorf("again: said %q, env %q (first %q)", said, again.Env, first.Env)
	}
	if next, _ := run("/builds/main-151107c"); !slices.Contains(next.Env, "CERTCTL_IMAGE=certctl-loadtest/certctl-server:main-151107c") {
		t.Errorf("another build: %q", next.Env)
	}
	if len(packaged) != 2 {
		t.Errorf("packaged %q: each build once", packaged)
	}
}
