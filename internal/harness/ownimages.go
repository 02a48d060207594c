package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// OwnBinDir (under the repository) holds the binaries our images copy: cmd/<name>/Dockerfile is
// `COPY bin/images/<name>` onto IMAGE_BASE. They are built here, by the host's Go toolchain with its module
// cache, so an image build needs no network, no Go image and no second copy of the build: the collector's
// third-party module (pgx) is fetched once, like every other, by `go build`.
const OwnBinDir = "bin/images"

// ownBuildFlags are the flags of every binary an image of ours carries: static (the bases differ in libc),
// and built from the source alone, so an unchanged binary is the same bytes and the image build's cache
// holds.
var ownBuildFlags = []string{"-trimpath", "-buildvcs=false"}

// ownCommand is the command under cmd/ whose binary a service's image packages (its Dockerfile is
// cmd/<name>/Dockerfile), or "" for an image built from something else (the deploy tier's).
func ownCommand(svc Service) (string, error) {
	var b struct {
		Dockerfile string `json:"dockerfile"`
	}
	if err := json.Unmarshal(svc.Build, &b); err != nil {
		return "", fmt.Errorf("reading a build section of docker compose config: %w", err)
	}
	dir, file := filepath.Split(filepath.ToSlash(b.Dockerfile))
	if file != "Dockerfile" || !strings.HasPrefix(dir, "cmd/") || strings.Count(dir, "/") != 2 {
		return "", nil
	}
	return strings.TrimSuffix(strings.TrimPrefix(dir, "cmd/"), "/"), nil
}

// buildOwnImages builds the images of ours the selected services use (a compose `build:` section): first
// the binaries they copy, for the engine's platform, then the images, by `docker compose build`. What
// both print goes to the run's build.log; the console gets one line per image (built, or up to date),
// or, when a build fails, its last lines. An image this invocation built already (r.Built) is not
// built again.
func (r *Runner) buildOwnImages(ctx context.Context, compose Compose, svcs Services) error {
	var own []string
	for name, s := range svcs {
		if len(s.Build) > 0 {
			own = append(own, name)
		}
	}
	if b := r.Built; b != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		own = slices.DeleteFunc(own, func(n string) bool { return b.built[svcs[n].Image] })
	}
	if len(own) == 0 {
		return nil
	}
	sort.Strings(own)
	var cmds []string
	for _, name := range own {
		c, err := ownCommand(svcs[name])
		if err != nil {
			return err
		}
		if c != "" {
			cmds = append(cmds, c)
		}
	}
	sort.Strings(cmds)
	// Two services may package one binary (the fault proxy and the auth tier's relay): build it once.
	cmds = slices.Compact(cmds)
	bctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	log := &r.buildLog
	if len(cmds) > 0 {
		if err := r.buildOwnBinaries(bctx, log, cmds); err != nil {
			r.buildFailed()
			return err
		}
	}
	images := ownImages(svcs, own)
	before := r.imageIDs(bctx, images)
	last := newLastLine()
	w := io.MultiWriter(log, last)
	began := time.Now()
	// A build step that compiles for minutes prints nothing meanwhile: say it still goes, and where.
	stop := Every(bctx, stackStartEvery, func(context.Context) {
		r.logf("building %s, %s so far; last step: %s", strings.Join(own, ", "), clock(time.Since(began).Seconds()), last.String())
	})
	// The classic builder: buildx is not installed here, and compose would say so on every build.
	compose.Env = append(slices.Clone(compose.Env), "COMPOSE_BAKE=false")
	fmt.Fprintf(log, "docker compose --profile k6 build %s\n", strings.Join(own, " "))
	code, err := compose.Run(bctx, w, w, append([]string{"--profile", "k6", "build"}, own...)...)
	stop()
	if err != nil || code != 0 {
		r.buildFailed()
		hint := ""
		if !r.Cfg.Offline && (strings.Contains(log.String(), "registry") || strings.Contains(log.String(), "dial tcp")) {
			// Their Dockerfiles start from an upstream base: without a registry, from the offline kit's.
			hint = "; without a container registry, run `make images` and add IMAGES=offline"
		}
		return fmt.Errorf("building %s failed (docker compose build exit %d%s): its last lines are above%s", strings.Join(own, ", "), code, errSuffix(err), hint)
	}
	after := r.imageIDs(bctx, images)
	for _, img := range slices.Sorted(maps.Keys(images)) {
		state := "up to date"
		if before[img] != after[img] {
			state = "built"
		}
		r.logf("image %s (%s): %s", img, strings.Join(images[img], ", "), state)
		if r.Built != nil {
			if r.Built.built == nil {
				r.Built.built = map[string]bool{}
			}
			r.Built.built[img] = true
		}
	}
	return nil
}

// keepBuildLog writes what building our images printed into the run directory (logs/build.log), when
// this run built any.
func (r *Runner) keepBuildLog(dir string) {
	if b := r.buildLog.String(); b != "" {
		if err := os.WriteFile(filepath.Join(dir, "logs", "build.log"), []byte(b), 0o644); err != nil {
			r.logf("cannot keep the image builds' output in the run directory: %v", err)
		}
	}
}

// buildTail is how many of a failed build's last lines the console shows.
const buildTail = 15

// buildFailed puts the last lines of what the build printed on the console: the run directory, where
// build.log would keep the rest, does not exist yet.
func (r *Runner) buildFailed() {
	lines := strings.Split(strings.TrimRight(r.buildLog.String(), "\n"), "\n")
	for _, l := range lines[max(0, len(lines)-buildTail):] {
		r.logf("[build] %s", l)
	}
}

// ownImages are the images the services build, each with the services that use it.
func ownImages(svcs Services, own []string) map[string][]string {
	m := map[string][]string{}
	for _, n := range own {
		m[svcs[n].Image] = append(m[svcs[n].Image], n)
	}
	return m
}

// imageIDs are the images' ids ("" for one not there): an id that changed across a build is an image
// built, one that did not was up to date.
func (r *Runner) imageIDs(ctx context.Context, images map[string][]string) map[string]string {
	ids := map[string]string{}
	for img := range images {
		var out bytes.Buffer
		if c, _ := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"image", "inspect", "--format", "{{.Id}}", img}, Env: r.Env, Stdout: &out, Stderr: io.Discard}); c == 0 {
			ids[img] = strings.TrimSpace(out.String())
		}
	}
	return ids
}

// buildOwnBinaries compiles cmd/<name> for each name into OwnBinDir, for the platform of the Docker
// engine (a Mac's engine runs Linux). Runs started side by side share the directory: each builds in a
// directory of its own, then renames every binary into place, so an image build reading the directory
// never sees a binary half written. The private directory starts with copies of the binaries already
// there, which go build leaves alone when they are up to date: an unchanged binary is not linked again.
func (r *Runner) buildOwnBinaries(ctx context.Context, pw io.Writer, cmds []string) error {
	var plat bytes.Buffer
	code, err := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"version", "--format", "{{.Server.Os}}/{{.Server.Arch}}"}, Env: r.Env, Stdout: &plat, Stderr: pw})
	goos, goarch, ok := strings.Cut(strings.TrimSpace(plat.String()), "/")
	if err != nil || code != 0 || !ok {
		return fmt.Errorf("cannot ask the Docker engine for its platform (docker version exit %d%s)", code, errSuffix(err))
	}
	bin := filepath.Join(r.Cfg.Root, OwnBinDir)
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(bin, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, c := range cmds {
		copyFile(filepath.Join(bin, c), filepath.Join(tmp, c)) // none yet: go build writes it
	}
	env := []string{"CGO_ENABLED=0", "GOOS=" + goos, "GOARCH=" + goarch}
	args := append([]string{"-C", r.Cfg.Root, "build"}, ownBuildFlags...)
	args = append(args, "-o", tmp+string(filepath.Separator))
	for _, c := range cmds {
		args = append(args, "./cmd/"+c)
	}
	// The command as one would type it in the repository.
	fmt.Fprintf(pw, "%s go build %s -o %s/ ./cmd/%s\n", strings.Join(env, " "), strings.Join(ownBuildFlags, " "), OwnBinDir, strings.Join(cmds, " ./cmd/"))
	began := time.Now()
	stop := Every(ctx, stackStartEvery, func(context.Context) {
		r.logf("compiling %s for the images, %s so far (with a cold Go cache the first build takes minutes; later runs reuse it)", strings.Join(cmds, ", "), clock(time.Since(began).Seconds()))
	})
	code, err = r.Exec(ctx, Cmd{Name: "go", Args: args, Env: append(append([]string(nil), r.Env...), env...), Stdout: pw, Stderr: pw})
	stop()
	if err != nil || code != 0 {
		return fmt.Errorf("building the binaries of our images failed (go build exit %d%s): its last lines are above (go, the toolchain go.mod names, must be on PATH)", code, errSuffix(err))
	}
	for _, c := range cmds {
		if err := os.Rename(filepath.Join(tmp, c), filepath.Join(bin, c)); err != nil {
			return err
		}
	}
	if os.Geteuid() == 0 {
		// Run through sudo: the checkout's bin/ stays its user's, as the results do (make clean removes it).
		for _, p := range append([]string{filepath.Dir(bin), bin}, cmds...) {
			if !filepath.IsAbs(p) {
				p = filepath.Join(bin, p)
			}
			os.Lchown(p, r.Owner.UID, r.Owner.GID)
		}
	}
	return nil
}

// copyFile copies src to a new file dst with src's mode; it does nothing when src cannot be read.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// lastLine keeps the last non-empty line written to it, for a heartbeat to quote while the build
// writes on.
type lastLine struct {
	lineWriter
	mu   sync.Mutex
	line string
}

func newLastLine() *lastLine {
	l := &lastLine{}
	l.emit = func(b []byte) {
		if t := strings.TrimSpace(string(b)); t != "" {
			l.mu.Lock()
			l.line = t
			l.mu.Unlock()
		}
	}
	return l
}

func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.line == "" {
		return "none yet"
	}
	if len(l.line) > 120 {
		return l.line[:120] + "…"
	}
	return l.line
}
