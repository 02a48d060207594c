// Before anything starts: the engine, the compose configuration, every image (pulled, packaged from
// CERTCTL_DIST or built), and which certctl will run.

package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"certctl-loadtest/internal/results"
)

// preflight checks the engine, the compose configuration and every image before anything starts, and
// builds our own images. It returns the services of the resolved configuration.
func (r *Runner) preflight(ctx context.Context, compose *Compose, run *results.Run) (Services, int, error) {
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := r.checkEngine(pctx); err != nil {
		return nil, results.ExitEnvironment, err
	}
	if r.Cfg.Dist != "" && r.Cfg.External == nil {
		if err := r.packageDist(ctx, compose); err != nil {
			return nil, results.ExitEnvironment, err
		}
	}
	if _, err := compose.Output(pctx, "--profile", "k6", "config", "--quiet"); err != nil {
		return nil, results.ExitBadInput, fmt.Errorf("the compose configuration is invalid: %v", err)
	}
	svcs, err := compose.Services(ctx)
	if err != nil {
		return nil, results.ExitEnvironment, err
	}
	if err := r.buildOwnImages(ctx, *compose, svcs); err != nil {
		return nil, results.ExitEnvironment, err
	}
	defer r.identifyCertctl(ctx, *compose, svcs, run)
	code, err := r.checkImages(ctx, *compose, svcs, run)
	if err == nil {
		run.Postgres = r.postgresVersion(ctx, svcs)
	}
	return svcs, code, err
}

// postgresVersion is PG_VERSION of the stack's PostgreSQL image ("" when it sets none, or there is no
// such service): the figures of one major version are not another's.
func (r *Runner) postgresVersion(ctx context.Context, svcs Services) string {
	img := svcs[postgresService].Image
	if img == "" {
		return ""
	}
	var out bytes.Buffer
	c, _ := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"image", "inspect", "--format", "{{range .Config.Env}}{{println .}}{{end}}", img},
		Env: r.Env, Stdout: &out, Stderr: io.Discard})
	if c != 0 {
		return ""
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "PG_VERSION="); ok {
			return v
		}
	}
	return ""
}

// checkEngine makes sure a Docker engine answers and has the Compose v2 plugin.
func (r *Runner) checkEngine(ctx context.Context) error {
	var out, errb bytes.Buffer
	code, err := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"version", "--format", "{{.Server.Version}}"}, Env: r.Env, Stdout: &out, Stderr: &errb})
	if err != nil || code != 0 {
		return fmt.Errorf("cannot reach the Docker engine (%s): start dockerd, or set DOCKER_HOST", firstLine(errb.String(), err))
	}
	out.Reset()
	errb.Reset()
	code, err = r.Exec(ctx, Cmd{Name: "docker", Args: []string{"compose", "version", "--short"}, Env: r.Env, Stdout: &out, Stderr: &errb})
	if err != nil || code != 0 {
		return fmt.Errorf("the Docker Compose v2 plugin is missing (docker compose version: %s): install it, see README.md", firstLine(errb.String(), err))
	}
	return nil
}

// checkImages records the id of every image the run uses and pulls the missing ones, where pulling
// is allowed; an image still missing fails the run before any container starts.
func (r *Runner) checkImages(ctx context.Context, compose Compose, svcs Services, run *results.Run) (int, error) {
	// The builds before may have taken minutes: these checks get their own 30 s.
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	imgs, err := compose.Images(qctx)
	if err != nil {
		return results.ExitBadInput, err
	}
	var missing []string
	run.ImageIDs = map[string]string{}
	for _, img := range imgs {
		var id bytes.Buffer
		c, _ := r.Exec(qctx, Cmd{Name: "docker", Args: []string{"image", "inspect", "--format", "{{.Id}}", img}, Env: r.Env, Stdout: &id, Stderr: io.Discard})
		if c != 0 {
			missing = append(missing, img)
			continue
		}
		run.ImageIDs[img] = strings.TrimSpace(id.String())
	}
	// Our own names are built here and never pulled: anyone could register certctl-loadtest/* on a
	// public registry, and a pull would run their image as the stack.
	var ours, upstream []string
	for _, img := range missing {
		if strings.HasPrefix(img, OwnImagePrefix) {
			ours = append(ours, img)
		} else {
			upstream = append(upstream, img)
		}
	}
	if len(upstream) > 0 && !r.Cfg.Offline && r.pullAllowed() {
		upstream = r.pull(ctx, compose, svcs, upstream)
	}
	missing = append(ours, upstream...)
	if len(ours) > 0 {
		return results.ExitEnvironment, fmt.Errorf("image(s) not available: %s: %s* images are built on this machine, never pulled: run `make images` (the offline stand-ins), "+
			"or set CERTCTL_DIST to a certctl build to package", strings.Join(missing, ", "), OwnImagePrefix)
	}
	if len(missing) == 0 {
		return results.ExitOK, nil
	}
	hint := "pull them, or on a machine without a registry run `make images` and add IMAGES=offline"
	if r.Cfg.Offline {
		hint = "run `make images` to build the offline stand-ins"
	}
	hint += "; CERTCTL_IMAGE names the certctl server image, or CERTCTL_DIST a certctl build to package"
	return results.ExitEnvironment, fmt.Errorf("image(s) not available: %s: %s", strings.Join(missing, ", "), hint)
}

// OwnImagePrefix names the images this repository builds (offline stand-ins, packaged certctl builds,
// the harness's own services).
const OwnImagePrefix = "certctl-loadtest/"

// pull pulls the missing images with `docker compose pull` of the services that use them, its progress
// on the console (a first pull takes minutes), and returns the images still missing afterwards.
func (r *Runner) pull(ctx context.Context, compose Compose, svcs Services, imgs []string) []string {
	var names []string
	for name, s := range svcs {
		if slices.Contains(imgs, s.Image) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	r.logf("pulling %s (for %s)", strings.Join(imgs, ", "), strings.Join(names, ", "))
	lctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	pw := newPrefixWriter("[pull] ", r.Stderr, &r.console)
	compose.Run(lctx, pw, pw, append([]string{"--profile", "k6", "pull", "--ignore-pull-failures"}, names...)...)
	pw.Flush()
	var still []string
	for _, img := range imgs {
		if c, _ := r.Exec(ctx, Cmd{Name: "docker", Args: []string{"image", "inspect", "--format", "{{.Id}}", img}, Env: r.Env, Stdout: io.Discard, Stderr: io.Discard}); c != 0 {
			still = append(still, img)
		}
	}
	return still
}

// packageDist turns the certctl build in CERTCTL_DIST into the images the stack runs
// (images/certctl/build.sh; cached, so seconds when nothing changed) and points CERTCTL_IMAGE at them;
// once an invocation (r.Built): the next stacks reuse what it said.
func (r *Runner) packageDist(ctx context.Context, compose *Compose) error {
	if b := r.Built; b != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		if env, ok := b.dists[r.Cfg.Dist]; ok {
			// Packaged for an earlier stack of this invocation: its images stand.
			compose.Env = append(compose.Env, env...)
			r.Env = append(r.Env, env...)
			return nil
		}
	}
	r.logf("packaging the certctl build %s into images", r.Cfg.Dist)
	bctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	began := time.Now()
	stop := Every(bctx, stackStartEvery, func(context.Context) {
		r.logf("packaging %s, %s so far", r.Cfg.Dist, clock(time.Since(began).Seconds()))
	})
	code, err := r.Exec(bctx, Cmd{Name: filepath.Join(r.Cfg.Root, "images", "certctl", "build.sh"), Args: []string{r.Cfg.Dist},
		Env: compose.Env, Stdout: &out, Stderr: r.Stderr})
	stop()
	if err != nil || code != 0 {
		return fmt.Errorf("could not package the certctl build in CERTCTL_DIST=%s into images (exit %d%s): see the lines above", r.Cfg.Dist, code, errSuffix(err))
	}
	var env []string
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.HasPrefix(k, "CERTCTL_") {
			env = append(env, k+"="+v)
		}
	}
	compose.Env = append(compose.Env, env...)
	r.Env = append(r.Env, env...)
	if b := r.Built; b != nil {
		if b.dists == nil {
			b.dists = map[string][]string{}
		}
		b.dists[r.Cfg.Dist] = env
	}
	return nil
}

// identifyCertctl records which certctl ran by image reference and id: certctl's official images stamp no
// version (docs/certctl-findings.md#no-version), so what the server reports is not enough.
func (r *Runner) identifyCertctl(ctx context.Context, compose Compose, svcs Services, run *results.Run) {
	if ext := r.Cfg.External; ext != nil {
		// Not ours: its URL is all the harness knows; the version it reports is the summary's.
		run.Certctl = results.Certctl{URL: ext.URL}
		for _, s := range r.Cfg.Skipped {
			run.Unavailable = append(run.Unavailable, results.Unavailable{Scenario: s.Name, Reason: Unavailable(s)})
		}
		run.Unavailable = append(run.Unavailable, results.Unavailable{Scenario: "diagnosis", Reason: ExternalNoDiagnosis})
		return
	}
	for _, kv := range compose.Env {
		if v, ok := strings.CutPrefix(kv, "CERTCTL_IMAGE="); ok {
			run.Certctl.Image = v
		}
	}
	if img := svcs[serverService].Image; img != "" {
		run.Certctl.Image = img
	}
	run.Certctl.ImageID = run.ImageIDs[run.Certctl.Image]
	run.Certctl.Build = r.Cfg.Dist
	if r.Cfg.Faults {
		var f []string
		for _, k := range FaultKnobs {
			if v := r.Cfg.Env[k]; v != "" {
				f = append(f, k+"="+v)
			}
		}
		run.Certctl.Faults = strings.Join(f, " ")
	}
	var out bytes.Buffer
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if c, _ := r.Exec(ictx, Cmd{Name: "docker", Args: []string{"image", "inspect", "--format", `{{ index .Config.Labels "org.certctl-loadtest.certctl-server-sha256" }}`, run.Certctl.Image},
		Env: compose.Env, Stdout: &out, Stderr: io.Discard}); c == 0 {
		if v := strings.TrimSpace(out.String()); v != "" && v != "<no value>" {
			run.Certctl.ServerSHA256 = v
		}
	}
}

func (r *Runner) pullAllowed() bool {
	for _, kv := range r.Env {
		if kv == "PULL_POLICY=never" {
			return false
		}
	}
	return true
}

func (r *Runner) k6Version(ctx context.Context, compose Compose) string {
	vctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := compose.Output(vctx, "run", "--rm", "--no-deps", "-T", r.k6Service(), "version")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(firstLine(out, nil))
}
