// Package observability_test checks compose.observability.yml, the optional Prometheus + Grafana view
// of a run, through compose's own reading of it (docker compose config): that it adds its two services
// and changes nothing else, that none of certctl's stack gets a way out or a port through it, and that
// Grafana's provisioning (fixtures/observability) parses and points k6's dashboard at the provisioned
// Prometheus. It starts no container, so it needs the compose plugin but no engine; without the plugin
// it skips, except under CI.
package observability_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const override = "compose.observability.yml"

// The services the override adds; everything else must come out of compose as docker-compose.yml alone has it.
var added = []string{"grafana", "prometheus"}

type project struct {
	Services map[string]json.RawMessage `json:"services"`
	Networks map[string]json.RawMessage `json:"networks"`
}

// internal reports whether the project has network name and whether it is internal.
func (p project) internal(t *testing.T, name string) (has, internal bool) {
	t.Helper()
	raw, ok := p.Networks[name]
	if !ok {
		return false, false
	}
	var n struct {
		Internal bool `json:"internal"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		t.Fatalf("network %s: %v", name, err)
	}
	return true, n.Internal
}

type service struct {
	Image       string                     `json:"image"`
	Profiles    []string                   `json:"profiles"`
	Command     []string                   `json:"command"`
	Networks    map[string]json.RawMessage `json:"networks"`
	NetworkMode string                     `json:"network_mode"`
	Ports       []struct {
		HostIP    string `json:"host_ip"`
		Target    int    `json:"target"`
		Published string `json:"published"`
	} `json:"ports"`
	Environment map[string]*string `json:"environment"`
	Volumes     []struct {
		Type     string `json:"type"`
		Source   string `json:"source"`
		Target   string `json:"target"`
		ReadOnly bool   `json:"read_only"`
	} `json:"volumes"`
}

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// config is `docker compose config --format json` over files, as the harness would call it.
func config(t *testing.T, files []string, profiles ...string) project {
	t.Helper()
	if err := exec.Command("docker", "compose", "version").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("docker compose is unavailable (%v): CI must check the compose files, not skip them", err)
		}
		t.Skipf("skipped: docker compose is unavailable (%v); install the Compose v2 plugin (scripts/install-deps.sh) to check %s", err, override)
	}
	args := []string{"compose"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	args = append(args, "--env-file", ".env")
	for _, p := range profiles {
		args = append(args, "--profile", p)
	}
	args = append(args, "config", "--format", "json")
	cmd := exec.Command("docker", args...)
	cmd.Dir = root(t)
	// The caller's COMPOSE_* (a project, more files, profiles) would change what compose reads; the two
	// secrets and the auth tier's two client secrets are generated per run, and compose refuses to
	// interpolate without them.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COMPOSE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "CERTCTL_TOKEN=observability-test", "CERTCTL_CONFIG_ENCRYPTION_KEY="+strings.Repeat("k", 32),
		"AUTH_CLIENT_SECRET=observability-test", "AUTH_ADMIN_SECRET=observability-test")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var p project
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("docker compose config: %v", err)
	}
	return p
}

func svc(t *testing.T, p project, name string) service {
	t.Helper()
	raw, ok := p.Services[name]
	if !ok {
		t.Fatalf("no service %s in the config", name)
	}
	var s service
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

func networks(s service) []string {
	var n []string
	for k := range s.Networks {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// envFile reads .env's KEY=VALUE lines.
func envFile(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), ".env"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && !strings.HasPrefix(l, "#") {
			env[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return env
}

func TestOverride(t *testing.T) {
	p := config(t, []string{"docker-compose.yml", override}, "observability", "grafana", "k6")
	env := envFile(t)

	prom, graf := svc(t, p, "prometheus"), svc(t, p, "grafana")
	// Grafana's own profile: the harness adds it only with upstream images (the offline kit has none).
	for name, want := range map[string][]string{"prometheus": {"observability"}, "grafana": {"grafana"}} {
		if s := svc(t, p, name); !reflect.DeepEqual(s.Profiles, want) {
			t.Errorf("%s: profiles %v, want %v: without a profile it would start with every stack", name, s.Profiles, want)
		}
	}
	// Pinned in .env, like every image: a fallback here would let a run use an image nobody chose.
	if want := env["IMAGE_PROMETHEUS"]; want == "" || prom.Image != want {
		t.Errorf("prometheus: image %q; .env pins IMAGE_PROMETHEUS=%q", prom.Image, want)
	}
	if want := env["IMAGE_GRAFANA"]; want == "" || graf.Image != want {
		t.Errorf("grafana: image %q; .env pins IMAGE_GRAFANA=%q", graf.Image, want)
	}

	// k6 has loadnet only, so Prometheus must be there to be pushed to; a published port needs a network
	// with a gateway, which loadnet must never become.
	if got := networks(prom); !reflect.DeepEqual(got, []string{"loadnet", "observability"}) {
		t.Errorf("prometheus: networks %v, want [loadnet observability]", got)
	}
	if got := networks(graf); !reflect.DeepEqual(got, []string{"observability"}) {
		t.Errorf("grafana: networks %v, want [observability] only: nothing in the stack needs to reach it", got)
	}
	if has, internal := p.internal(t, "loadnet"); !has || !internal {
		t.Errorf("loadnet: present %v, internal %v; want an internal network", has, internal)
	}
	if has, internal := p.internal(t, "observability"); !has || internal {
		t.Errorf("observability: present %v, internal %v; want a network that is not internal (its ports are published)", has, internal)
	}

	if !slices.Contains(prom.Command, "--web.enable-remote-write-receiver") {
		t.Errorf("prometheus: command %q does not enable the remote-write receiver k6 pushes to", prom.Command)
	}

	// Published on the loopback only, whatever the port; and nothing else publishes anything.
	for name, raw := range p.Services {
		var s service
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		for _, port := range s.Ports {
			if port.HostIP != "127.0.0.1" {
				t.Errorf("%s publishes %s->%d on %q, want 127.0.0.1 only", name, port.Published, port.Target, port.HostIP)
			}
		}
		if len(s.Ports) > 0 && !slices.Contains(added, name) {
			t.Errorf("%s publishes ports; the stack publishes none but the observability view's", name)
		}
	}
	for name, target := range map[string]int{"prometheus": 9090, "grafana": 3000} {
		s := svc(t, p, name)
		if len(s.Ports) != 1 || s.Ports[0].Target != target {
			t.Errorf("%s: ports %+v, want its %d published once", name, s.Ports, target)
		}
	}
}

// The override adds its two services and its network, and leaves every other service exactly as
// docker-compose.yml alone defines it; docker-compose.yml alone has neither service.
func TestDefaultUnchanged(t *testing.T) {
	files := []string{"docker-compose.yml"}
	base := config(t, files, "*")
	with := config(t, append(files, override), "*")
	for _, name := range added {
		if _, ok := base.Services[name]; ok {
			t.Errorf("docker-compose.yml alone has a %s service: the view must stay optional", name)
		}
		if _, ok := with.Services[name]; !ok {
			t.Errorf("with %s: no %s service", override, name)
		}
	}
	if _, ok := base.Networks["observability"]; ok {
		t.Error("docker-compose.yml alone has the observability network")
	}
	for name, raw := range with.Services {
		if slices.Contains(added, name) {
			continue
		}
		was, ok := base.Services[name]
		if !ok {
			t.Errorf("with %s: a service %s that docker-compose.yml does not have", override, name)
			continue
		}
		var a, b any
		if err := json.Unmarshal(was, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s changes service %s:\n without: %s\n with:    %s", override, name, was, raw)
		}
	}
	for name := range base.Services {
		if _, ok := with.Services[name]; !ok {
			t.Errorf("with %s: service %s is gone", override, name)
		}
	}
	for name, n := range base.Networks {
		if !bytes.Equal(with.Networks[name], n) {
			t.Errorf("%s changes network %s: %s -> %s", override, name, n, with.Networks[name])
		}
	}
}

type datasources struct {
	APIVersion  int `yaml:"apiVersion"`
	Datasources []struct {
		Name      string         `yaml:"name"`
		UID       string         `yaml:"uid"`
		Type      string         `yaml:"type"`
		Access    string         `yaml:"access"`
		URL       string         `yaml:"url"`
		IsDefault bool           `yaml:"isDefault"`
		Editable  bool           `yaml:"editable"`
		JSONData  map[string]any `yaml:"jsonData"`
	} `yaml:"datasources"`
}

type providers struct {
	APIVersion int `yaml:"apiVersion"`
	Providers  []struct {
		Name            string `yaml:"name"`
		Type            string `yaml:"type"`
		AllowUIUpdates  bool   `yaml:"allowUiUpdates"`
		DisableDeletion bool   `yaml:"disableDeletion"`
		Options         struct {
			Path string `yaml:"path"`
		} `yaml:"options"`
	} `yaml:"providers"`
}

// decodeYAML reads a provisioning file strictly: a misspelt key is an error here, where Grafana would
// ignore it and provision something else.
func decodeYAML(t *testing.T, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// Grafana's provisioning, found through the grafana service's mounts: the datasource k6's dashboard
// needs, with the uid the dashboard names, and the dashboard folder the provider reads.
func TestGrafanaProvisioning(t *testing.T) {
	p := config(t, []string{"docker-compose.yml", override}, "observability", "grafana")
	graf := svc(t, p, "grafana")
	mounts := map[string]string{} // container path → host path
	for _, v := range graf.Volumes {
		if v.Type != "bind" || !v.ReadOnly {
			t.Errorf("grafana: mount %s → %s: want a read-only bind of the repository's files", v.Source, v.Target)
		}
		if _, err := os.Stat(v.Source); err != nil {
			t.Errorf("grafana: mount source %s: %v (compose would create an empty directory there)", v.Source, err)
		}
		mounts[v.Target] = v.Source
	}
	var dsFiles, providerFiles []string
	for target, src := range mounts {
		switch filepath.Dir(target) {
		case "/etc/grafana/provisioning/datasources":
			dsFiles = append(dsFiles, src)
		case "/etc/grafana/provisioning/dashboards":
			providerFiles = append(providerFiles, src)
		}
	}
	if len(dsFiles) != 1 || len(providerFiles) != 1 {
		t.Fatalf("grafana: want one datasource and one dashboard provisioning file mounted, got %v and %v", dsFiles, providerFiles)
	}

	var ds datasources
	decodeYAML(t, dsFiles[0], &ds)
	if ds.APIVersion != 1 || len(ds.Datasources) != 1 {
		t.Fatalf("%s: want apiVersion 1 and one datasource: %+v", dsFiles[0], ds)
	}
	d := ds.Datasources[0]
	if d.UID == "" || d.Type != "prometheus" || !d.IsDefault {
		t.Errorf("%s: want the default datasource, of type prometheus, with a fixed uid: %+v", dsFiles[0], d)
	}
	// Grafana reaches Prometheus by its service name, so they must share a network.
	u, err := url.Parse(d.URL)
	if err != nil || u.Hostname() == "" {
		t.Fatalf("%s: url %q: %v", dsFiles[0], d.URL, err)
	}
	if _, ok := p.Services[u.Hostname()]; !ok {
		t.Errorf("%s: url %s names no service", dsFiles[0], d.URL)
	} else if shared := sharedNetworks(graf, svc(t, p, u.Hostname())); len(shared) == 0 {
		t.Errorf("%s: grafana and %s share no network", dsFiles[0], u.Hostname())
	}

	var pr providers
	decodeYAML(t, providerFiles[0], &pr)
	if pr.APIVersion != 1 || len(pr.Providers) != 1 || pr.Providers[0].Type != "file" {
		t.Fatalf("%s: want apiVersion 1 and one file provider: %+v", providerFiles[0], pr)
	}
	dashDir, ok := mounts[pr.Providers[0].Options.Path]
	if !ok {
		t.Fatalf("%s: the provider reads %s, which is not mounted", providerFiles[0], pr.Providers[0].Options.Path)
	}
	dashboards, _ := filepath.Glob(filepath.Join(dashDir, "*.json"))
	if len(dashboards) == 0 {
		t.Fatalf("no dashboard in %s", dashDir)
	}
	notice, err := os.ReadFile(filepath.Join(dashDir, "NOTICE.md"))
	if err != nil {
		t.Errorf("the dashboards' attribution note: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dashDir, "LICENSE")); err != nil {
		t.Errorf("the dashboards' licence text: %v", err)
	}
	for _, f := range dashboards {
		if !strings.Contains(string(notice), filepath.Base(f)) {
			t.Errorf("NOTICE.md does not say where %s comes from", filepath.Base(f))
		}
		checkDashboard(t, f, d.UID)
	}

	if home := graf.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home != nil {
		rel, err := filepath.Rel(pr.Providers[0].Options.Path, *home)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("grafana: home dashboard %s is outside the provisioned folder", *home)
		} else if _, err := os.Stat(filepath.Join(dashDir, rel)); err != nil {
			t.Errorf("grafana: home dashboard %s: %v", *home, err)
		}
	}
}

// The same files read where they are, so that they are checked even where compose is missing.
func TestFixtures(t *testing.T) {
	dir := filepath.Join(root(t), "fixtures", "observability")
	var ds datasources
	decodeYAML(t, filepath.Join(dir, "grafana-datasources.yaml"), &ds)
	var pr providers
	decodeYAML(t, filepath.Join(dir, "grafana-dashboards.yaml"), &pr)
	if len(ds.Datasources) != 1 || ds.Datasources[0].UID == "" {
		t.Fatalf("grafana-datasources.yaml: want one datasource with a fixed uid: %+v", ds)
	}
	dashboards, _ := filepath.Glob(filepath.Join(dir, "dashboards", "*.json"))
	if len(dashboards) == 0 {
		t.Fatal("no dashboard in fixtures/observability/dashboards")
	}
	for _, f := range dashboards {
		checkDashboard(t, f, ds.Datasources[0].UID)
	}
}

func sharedNetworks(a, b service) []string {
	var n []string
	for k := range a.Networks {
		if _, ok := b.Networks[k]; ok {
			n = append(n, k)
		}
	}
	return n
}

// checkDashboard parses a dashboard and checks that every datasource it names is uid, directly or
// through a datasource variable whose value is uid. Grafana's built-in annotation source is allowed.
func checkDashboard(t *testing.T, path, uid string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	name := filepath.Base(path)
	if _, ok := dash["__inputs"]; ok {
		t.Errorf("%s: has __inputs: an export for import, whose placeholders provisioning never fills", name)
	}
	// Datasource variables: $NAME and ${NAME} resolve to their current value.
	vars := map[string]string{}
	if tpl, ok := dash["templating"].(map[string]any); ok {
		list, _ := tpl["list"].([]any)
		for _, v := range list {
			m, _ := v.(map[string]any)
			if m["type"] != "datasource" {
				continue
			}
			cur, _ := m["current"].(map[string]any)
			value, _ := cur["value"].(string)
			vars[fmt.Sprint(m["name"])] = value
			if q, _ := m["query"].(string); q != "prometheus" {
				t.Errorf("%s: datasource variable %v lists %q datasources, want prometheus", name, m["name"], q)
			}
		}
	}
	resolve := func(ref string) string {
		v := strings.TrimPrefix(ref, "$")
		v = strings.TrimSuffix(strings.TrimPrefix(v, "{"), "}")
		if val, ok := vars[v]; ok && strings.HasPrefix(ref, "$") {
			return val
		}
		return ref
	}
	refs := 0
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if k == "datasource" {
					refs++
					switch ds := c.(type) {
					case map[string]any:
						ref, _ := ds["uid"].(string)
						if ds["type"] == "datasource" && ref == "grafana" || ref == "-- Grafana --" {
							continue // Grafana's own annotations, not a datasource of ours
						}
						if got := resolve(ref); got != uid {
							t.Errorf("%s: %s.datasource uid %q resolves to %q, want the provisioned %q", name, at, ref, got, uid)
						}
					case nil:
						// no datasource: the panel's default, which is the provisioned one (isDefault)
					default:
						t.Errorf("%s: %s.datasource is %v: a name, not a uid (want {\"uid\": %q})", name, at, c, uid)
					}
					continue
				}
				walk(at+"."+k, c)
			}
		case []any:
			for i, c := range v {
				walk(fmt.Sprintf("%s[%d]", at, i), c)
			}
		}
	}
	walk("", dash)
	if refs == 0 {
		t.Errorf("%s: names no datasource: not a Prometheus dashboard?", name)
	}
}
