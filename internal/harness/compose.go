package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Compose builds and runs `docker compose` commands for one run's project.
type Compose struct {
	Cfg  Config
	Exec Executor
	Env  []string // environment of every docker command
}

func (c Compose) base() []string {
	file := "docker-compose.yml"
	if c.Cfg.External != nil {
		file = ExternalComposeFile
	}
	args := []string{"compose", "--project-name", c.Cfg.Project, "--project-directory", c.Cfg.Root,
		"-f", filepath.Join(c.Cfg.Root, file)}
	if c.Cfg.External != nil {
		// Only k6: the tiers' services, the collector and the fault proxy are the stack's.
		args = append(args, "--env-file", filepath.Join(c.Cfg.Root, ".env"))
		if c.Cfg.Offline {
			args = append(args, "--env-file", filepath.Join(c.Cfg.Root, "images", "offline.env"))
		}
		return args
	}
	if c.Cfg.Observability {
		args = append(args, "-f", filepath.Join(c.Cfg.Root, "compose.observability.yml"), "--profile", "observability")
		if !c.Cfg.Offline {
			// The offline kit has no Grafana: offline, the live view is Prometheus alone.
			args = append(args, "--profile", "grafana")
		}
	}
	// Later env files override earlier ones; the caller's environment overrides both.
	args = append(args, "--env-file", filepath.Join(c.Cfg.Root, ".env"))
	if c.Cfg.Offline {
		args = append(args, "--env-file", filepath.Join(c.Cfg.Root, "images", "offline.env"))
	}
	// A tier's services (the connector sidecars, the scale seeder) carry the tier's profiles (Tiers).
	var profiles []string
	for _, name := range c.Cfg.Tiers {
		t, _ := LookupTier(name)
		profiles = append(profiles, t.Profiles...)
	}
	for _, p := range append(profiles, c.Cfg.Profiles...) {
		args = append(args, "--profile", p)
	}
	if c.Cfg.Faults {
		args = append(args, "--profile", "faults")
	}
	if c.Cfg.Collector {
		args = append(args, "--profile", collectorService)
	}
	return args
}

// Run runs `docker compose <args>` and returns its exit code.
func (c Compose) Run(ctx context.Context, out, errw io.Writer, args ...string) (int, error) {
	return c.Exec(ctx, Cmd{Name: "docker", Args: append(c.base(), args...), Env: c.Env, Stdout: out, Stderr: errw})
}

// Output runs a compose command and returns its stdout, with stderr in the error when it fails.
func (c Compose) Output(ctx context.Context, args ...string) (string, error) {
	var out, errb bytes.Buffer
	code, err := c.Run(ctx, &out, &errb, args...)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return out.String(), fmt.Errorf("docker compose %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Images lists every image the run's services use, k6 included, as compose resolves them.
func (c Compose) Images(ctx context.Context) ([]string, error) {
	out, err := c.Output(ctx, "--profile", "k6", "config", "--images")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var imgs []string
	for _, l := range strings.Fields(out) {
		if !seen[l] {
			seen[l] = true
			imgs = append(imgs, l)
		}
	}
	sort.Strings(imgs)
	return imgs, nil
}

// Service is a service of the resolved compose configuration.
type Service struct {
	Image     string                     `json:"image"`
	Labels    map[string]string          `json:"labels"`
	Build     json.RawMessage            `json:"build,omitempty"` // set for the images of ours compose builds
	DependsOn map[string]json.RawMessage `json:"depends_on,omitempty"`
}

// RequiredLabel marks a tier service whose failure stops the run (a seeder), unlike a sidecar's.
const RequiredLabel = "certctl-loadtest.required"

// The services the harness names: the server under test, which `up` waits for, the load generator,
// which `run` starts once per scenario, and the database, whose version a run records. Every other
// service is the compose file's business.
const (
	serverService   = "certctl-server"
	k6Service       = "k6"
	postgresService = "postgres"
	// k6 against a certctl the harness did not start (TARGET=external): no stack network.
	k6ExternalService = "k6-external"
)

// ExternalComposeFile holds the one service of a TARGET=external run: k6, on the network that reaches
// the external certctl.
const ExternalComposeFile = "compose.external.yml"

// Services is the resolved configuration's services, by name.
type Services map[string]Service

// Services resolves the configuration: every service of the selected tiers, k6 included.
func (c Compose) Services(ctx context.Context) (Services, error) {
	out, err := c.Output(ctx, "--profile", "k6", "config", "--format", "json")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Services Services `json:"services"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return nil, fmt.Errorf("reading docker compose config: %w", err)
	}
	return doc.Services, nil
}

// Images maps each service to its image, for run.json.
func (s Services) Images() map[string]string {
	m := map[string]string{}
	for name, svc := range s {
		m[name] = svc.Image
	}
	return m
}

// StartOrder is name and everything it depends on, dependencies first (ties by name): what
// `docker compose up name` starts, in the order it starts them.
func (s Services) StartOrder(name string) []string {
	var order []string
	seen := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		deps := make([]string, 0, len(s[n].DependsOn))
		for d := range s[n].DependsOn {
			deps = append(deps, d)
		}
		sort.Strings(deps)
		for _, d := range deps {
			visit(d)
		}
		order = append(order, n)
	}
	visit(name)
	return order
}

// ServiceState is one line of `docker compose ps --all --format json`.
type ServiceState struct {
	Service  string `json:"Service"`
	State    string `json:"State"`
	Health   string `json:"Health"`
	ExitCode int    `json:"ExitCode"`
}

// States reports every container of the project, stopped ones included.
func (c Compose) States(ctx context.Context) ([]ServiceState, error) {
	out, err := c.Output(ctx, "ps", "--all", "--format", "json")
	if err != nil {
		return nil, err
	}
	var states []ServiceState
	out = strings.TrimSpace(out)
	if strings.HasPrefix(out, "[") { // older compose prints one array
		err := json.Unmarshal([]byte(out), &states)
		return states, err
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var s ServiceState
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, err
		}
		states = append(states, s)
	}
	return states, nil
}

// Down removes the project's containers, networks and volumes. It gets its own context: it must run
// even when the run was cancelled.
func (c Compose) Down(out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, err := c.Run(ctx, out, out, "--profile", "k6", "down", "--volumes", "--remove-orphans", "--timeout", "10")
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("docker compose down exited %d", code)
	}
	return nil
}

// collectorService samples certctl's database and metrics beside the load (cmd/collector); profile
// "collector", started only here.
const collectorService = "collector"
