package e2e

import (
	"certctl-loadtest/internal/results"
	"certctl-loadtest/internal/samples"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

// wantMerged checks a two-segment run's merged record and files, and returns the record: both k6
// processes ran their share, the merged record counts every iteration, its latency is every request's,
// and each segment's files are kept beside the merged ones. The gate's two-segment run is TestNoRouteOut's.
func wantMerged(t *testing.T, two result) *results.Record {
	t.Helper()
	b := two.summary.Scenarios[0].Record
	if b == nil || len(b.Segments) != 2 || b.Segments[0].Segment != "0:1/2" || b.Segments[1].Segment != "1/2:1" {
		t.Fatalf("segments: %+v", b)
	}
	if b.Segments[0].Iterations+b.Segments[1].Iterations != b.Iterations || b.Segments[0].Iterations == 0 || b.Segments[1].Iterations == 0 {
		t.Errorf("segments' iterations %+v against the merged %v", b.Segments, b.Iterations)
	}
	if b.DroppedIterations != 0 || b.LatencySamples == nil || *b.LatencySamples != b.Requests {
		t.Errorf("merged record: dropped %v, latency samples %v of %v requests", b.DroppedIterations, b.LatencySamples, b.Requests)
	}
	wantOutput(t, two, `scenario list_certificates: merged 2 segments \(1of2 0:1/2 \d+ iterations; 2of2 1/2:1 \d+ iterations\): thresholds held on the pooled samples`)
	for _, f := range []string{"raw/list_certificates.json.gz", "raw/segments/list_certificates@1of2.json.gz", "scenarios/segments/list_certificates@2of2.json", "dashboard/segments/list_certificates@1of2.html"} {
		if _, err := os.Stat(filepath.Join(two.dir, f)); err != nil {
			t.Errorf("the split run has no %s: %v", f, err)
		}
	}
	return b
}

// The same load as one k6 process and as two execution segments, against the real certctl: the split
// must send as many requests at the same rate, and its merged percentiles must be those of both
// segments' samples pooled, recomputed here from the segments' own raw files. Whether the split's
// latency equals one process's is a measurement (docs/distributed.md), not this test: the second k6
// process costs something on 2 CPUs, and two 2-minute runs differ by more than 25 % at p50 and p95 on
// some sittings with the machine to themselves (the full suite of 2026-12-07).
func TestSegments(t *testing.T) {
	e2e(t)
	t.Parallel()
	alone(t) // the two loads must be sent the same way: no other run takes the CPUs k6 needs
	env := func(extra ...string) []string {
		return stackEnv(t, append([]string{"SCENARIOS=list_certificates", "DURATION=2m", "RATE_LIST_CERTIFICATES=40"}, extra...)...)
	}
	one := loadtestRun(t, env())
	wantCode(t, one, 0)
	two := run(t, env(), loadtest, "run", "--segments", "2")
	wantCode(t, two, 0)
	a, b := one.summary.Scenarios[0].Record, wantMerged(t, two)
	// An arrival-rate load: 40/s for 120 s is 4800 iterations, whoever sends them (1 % and two iterations
	// of margin for the last in flight).
	for _, r := range []struct {
		what string
		a, b float64
	}{{"iterations", a.Iterations, b.Iterations}, {"requests", a.Requests, b.Requests}, {"achieved rate", a.AchievedRatePerS, b.AchievedRatePerS}} {
		if math.Abs(r.a-r.b) > 0.01*r.a+2 {
			t.Errorf("%s: one process %v, two segments %v", r.what, r.a, r.b)
		}
	}
	wantPooled(t, two.dir, "list_certificates", b)
}

// wantPooled checks that a merged record's latency is its segments' samples pooled: the count, and
// p50, p95 and p99 as the record rounds them. An averaged merge (the mean of the segments' p95s) or a
// partial one (one segment's samples) misses at least one of them.
func wantPooled(t *testing.T, dir, scenario string, merged *results.Record) {
	t.Helper()
	var rec struct {
		Sources struct {
			Latency string `json:"latency"`
		} `json:"sources"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "scenarios", scenario+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Sources.Latency == "" {
		t.Fatalf("%s's merged record names no latency source (%v)", scenario, err)
	}
	sel := samples.Parse(rec.Sources.Latency)
	var pooled []float64
	perSegment := map[string]int{}
	for _, id := range []string{"1of2", "2of2"} {
		path := filepath.Join(dir, "raw", results.SegmentsDir, scenario+"@"+id+".json.gz")
		if _, err := samples.Read(path, []string{sel.Name}, func(p samples.Point) {
			if p.Metric == sel.Name && sel.Matches(p.Tags) {
				pooled = append(pooled, p.Value)
				perSegment[id]++
			}
		}); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if perSegment["1of2"] == 0 || perSegment["2of2"] == 0 {
		t.Fatalf("the segments' raw files hold %v samples of %s", perSegment, rec.Sources.Latency)
	}
	if merged.LatencySamples == nil || int(*merged.LatencySamples) != len(pooled) {
		t.Errorf("merged latency samples %v, the segments' raw files hold %d (%v)", merged.LatencySamples, len(pooled), perSegment)
	}
	sort.Float64s(pooled)
	round := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	for _, q := range []struct {
		name     string
		p, field float64
	}{{"p50", 0.5, merged.LatencyMS.P50}, {"p95", 0.95, merged.LatencyMS.P95}, {"p99", 0.99, merged.LatencyMS.P99}} {
		if want := round(samples.Percentile(pooled, q.p)); math.Abs(q.field-want) > 0.0015 {
			t.Errorf("merged %s %.3f ms, the pooled samples' %.3f ms", q.name, q.field, want)
		}
	}
	t.Logf("%s: %d + %d samples pooled; p50 %.3f, p95 %.3f, p99 %.3f ms", scenario, perSegment["1of2"], perSegment["2of2"], merged.LatencyMS.P50, merged.LatencyMS.P95, merged.LatencyMS.P99)
}

// externalCertctl starts the real certctl on a compose project of its own, as an operator's would be:
// migrated, without the harness's seed, reachable on that project's internal network only. It returns
// the project, its network, the CA that verifies the server and a psql function on its database.
func externalCertctl(t *testing.T) (project, network, ca string, psql func(string) string) {
	t.Helper()
	// Held until the stack is down: cleanups run last-registered first, so this one runs after compose's.
	standing.RLock()
	t.Cleanup(standing.RUnlock)
	project = "lt-external-" + newRunID()
	env := append(cleanEnv(), "CERTCTL_IMAGE="+certctlImage, "CERTCTL_TOKEN=lt-external-key", "CERTCTL_CONFIG_ENCRYPTION_KEY=0123456789abcdef0123456789abcdef")
	compose := func(args ...string) string {
		t.Helper()
		base := []string{"compose", "-p", project, "--project-directory", root, "-f", filepath.Join(root, "docker-compose.yml"),
			"--env-file", filepath.Join(root, ".env"), "--env-file", filepath.Join(root, "images", "offline.env")}
		cmd := exec.Command("docker", append(base, args...)...)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("docker compose %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { compose("down", "--volumes", "--remove-orphans", "--timeout", "5") })
	// Migrations (and what they need: the guarded network, postgres, the TLS files), then the server
	// alone: no seed-base, so the base rows are seed-external's to write.
	compose("run", "--rm", "certctl-migrate")
	compose("up", "--detach", "--wait", "--wait-timeout", "120", "--no-deps", "certctl-server")
	ca = filepath.Join(t.TempDir(), "ca.crt")
	compose("cp", "certctl-server:/tls/ca.crt", ca)
	psql = func(q string) string {
		return strings.TrimSpace(compose("exec", "-T", "postgres", "psql", "-X", "-A", "-t", "-U", "certctl", "-d", "certctl", "-c", q))
	}
	return project, project + "_loadnet", ca, psql
}

// TARGET=external against a certctl the harness did not start: seeding is an explicit, confirmed step,
// the run starts no stack and leaves out what needs one, and cleaning up leaves nothing of the harness's
// but rows certctl keeps by design (archived certificates).
func TestExternalTarget(t *testing.T) {
	e2e(t)
	t.Parallel()
	_, network, ca, psql := externalCertctl(t)
	extEnv := func(extra ...string) []string {
		return append([]string{"IMAGES=offline", "RESULTS_DIR=" + t.TempDir(), "TARGET=external", "CERTCTL_URL=https://certctl-server:8443",
			"CERTCTL_API_KEY=lt-external-key", "CERTCTL_CA_BUNDLE=" + ca, "EXTERNAL_NETWORK=" + network, "CERTCTL_DIST=" + dist}, extra...)
	}
	before := psql("SELECT count(*) FROM managed_certificates")

	// Unconfirmed: nothing is written.
	r := run(t, extEnv(), loadtest, "seed-external")
	wantCode(t, r, 2)
	wantOutput(t, r, `say CONFIRM=yes`)
	if n := psql("SELECT count(*) FROM teams WHERE id = 'lt-team'"); n != "0" {
		t.Fatalf("an unconfirmed seed wrote the team: %s", n)
	}
	r = run(t, extEnv("CONFIRM=yes"), loadtest, "seed-external")
	wantCode(t, r, 0)
	wantOutput(t, r, `seed-external: team lt-team created`)
	// Again: idempotent, and says so.
	r = run(t, extEnv("CONFIRM=yes"), loadtest, "seed-external")
	wantCode(t, r, 0)
	wantOutput(t, r, `seed-external: issuer lt-issuer-local exists, left as it is`)

	// The default tiers and ACME: the API tier and acme_flow run (its renewal-info certificates issued
	// from requests k6 makes itself), the connector tier is said to be unavailable.
	r = loadtestRun(t, extEnv("TIER=api,connector,acme", "DURATION=30s", "RATE_ISSUANCE_ACCEPTANCE=5", "RATE_LIST_CERTIFICATES=10", "RATE_ACME_FLOW=5"))
	wantCode(t, r, 0)
	wantOutput(t, r, `against the external certctl at https://certctl-server:8443, 30s per scenario; no stack is started`)
	wantOutput(t, r, `unavailable against an external certctl: nginx \(its targets are the harness's own TLS sidecars, not certctl\)`)
	wantOutput(t, r, `certctl at https://certctl-server:8443 \(external: not started by the harness\)`)
	if got := len(r.summary.Scenarios); got != 3 {
		t.Fatalf("%d scenarios ran, want the API tier's 2 and acme_flow", got)
	}
	for _, sc := range r.summary.Scenarios {
		if sc.Record == nil || sc.Record.Requests < 100 {
			t.Errorf("%s: %+v", sc.Name, sc.Record)
		}
		// certctl on an empty database seeds three issuers and seed-external adds one: renewal-info looks
		// a serial up under an arbitrary one, so some answers for the certificates it issued are 404s,
		// counted apart and named (docs/certctl-findings.md#ari-any-issuer).
		if sc.Name == "acme_flow" && (sc.Record == nil || sc.Record.Counters["ari_other_issuer_404"] == 0) {
			t.Errorf("acme_flow counted no renewal-info 404 under another of certctl's issuers: %+v", sc.Record)
		}
	}
	wantOutput(t, r, `ari_other_issuer_404: renewal-info answered 404 for a certificate it issued because certctl looks the serial up under an arbitrary one of its 4 issuers`)
	if r.summary.Run.Config["CERTCTL_API_KEY"] != "" || strings.Contains(mustRead(t, filepath.Join(r.dir, "run.json")), "lt-external-key") {
		t.Error("run.json holds the API key")
	}
	if n := psql("SELECT count(*) FROM managed_certificates WHERE id NOT LIKE 'lt-%' AND name NOT LIKE 'lt-%'"); n != "0" {
		t.Errorf("%s certificates the run created are not named lt-…", n)
	}
	if psql("SELECT count(*) FROM managed_certificates") == before {
		t.Error("the run issued nothing on the external certctl")
	}

	// What the k6-operator's runners do with `make k8s`'s archive, done here by two k6 containers: each
	// its segment, with the TestRun's env, arguments and mounts (the CA bundle's ConfigMap too), its files
	// named by its pod, the same results volume; `loadtest judge` merges them.
	k8sDir, resultsDir := t.TempDir(), t.TempDir()
	r = run(t, []string{"TIER=api", "SCENARIOS=list_certificates", "SEGMENTS=2", "DURATION=20s", "RATE_LIST_CERTIFICATES=10",
		"CERTCTL_URL=https://certctl-server:8443", "CERTCTL_CA_BUNDLE=" + ca, "RUN_ID=k8s-sim"}, loadtest, "k8s", "--out", k8sDir)
	wantCode(t, r, 0)
	tr := readTestRun(t, filepath.Join(k8sDir, "testrun-list_certificates.yaml"))
	if tr.Spec.Parallelism != 2 {
		t.Fatalf("TestRun parallelism %d", tr.Spec.Parallelism)
	}
	// ConfigMap volumes, as the kubelet would fill them from kustomization.yaml's generators.
	configMaps := kustomizeConfigMaps(t, k8sDir)
	var mounts []string
	for _, vm := range tr.Spec.Runner.VolumeMounts {
		for _, v := range tr.Spec.Runner.Volumes {
			if v.Name != vm.Name || v.ConfigMap == nil {
				continue
			}
			files, ok := configMaps[v.ConfigMap.Name]
			if !ok {
				t.Fatalf("volume %s: ConfigMap %s is not generated by kustomization.yaml", v.Name, v.ConfigMap.Name)
			}
			for key, file := range files {
				mounts = append(mounts, "-v", filepath.Join(k8sDir, file)+":"+vm.MountPath+"/"+key+":ro")
			}
		}
	}
	if len(mounts) == 0 {
		t.Fatalf("the TestRun mounts no CA bundle:\n%s", mustRead(t, filepath.Join(k8sDir, "testrun-list_certificates.yaml")))
	}
	for _, d := range []string{"scenarios/segments", "raw/segments"} { // the runners' init container
		os.MkdirAll(filepath.Join(resultsDir, d), 0o777)
	}
	os.Chmod(resultsDir, 0o777)
	k6Image := ""
	for _, l := range strings.Split(mustRead(t, filepath.Join(root, "images", "offline.env")), "\n") {
		if v, ok := strings.CutPrefix(l, "IMAGE_K6="); ok {
			k6Image = v
		}
	}
	var wg sync.WaitGroup
	for i, seg := range []string{"0:1/2", "1/2:1"} {
		pod := fmt.Sprintf("lt-k8s-sim-list-certificates-%d-abcde", i+1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"run", "--rm", "--network", network, "--user", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
				"-v", k8sDir + ":/archive:ro", "-v", resultsDir + ":/results"}
			args = append(append(args, mounts...), runnerEnv(t, tr, pod, map[string]string{"CERTCTL_TOKEN": "lt-external-key"})...)
			// The operator adds the segment flags; the arguments are the TestRun's, as the kubelet expands them.
			args = append(append(append(args, k6Image, "run", "--quiet", "--execution-segment", seg, "--execution-segment-sequence", "0,1/2,1"),
				strings.Fields(strings.ReplaceAll(tr.Spec.Arguments, "$(POD_NAME)", pod))...), "/archive/list_certificates.tar")
			out, err := exec.Command("docker", args...).CombinedOutput()
			if err != nil {
				t.Errorf("runner %s: %v\n%s", pod, err, out)
			}
		}()
	}
	wg.Wait()
	r = run(t, nil, loadtest, "judge", resultsDir)
	wantCode(t, r, 0)
	wantOutput(t, r, `list_certificates: lt-k8s-sim-list-certificates-1-abcde 0:1/2: \d+ iterations, \d+ requests, 0 dropped; lt-k8s-sim-list-certificates-2-abcde 1/2:1`)
	var collected results.Summary
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(resultsDir, "summary.json"))), &collected); err != nil {
		t.Fatal(err)
	}
	// The archive's options are the configuration's: 10/s for 20 s.
	if sc := collected.Scenarios; len(sc) != 1 || sc[0].Record == nil || math.Abs(sc[0].Record.Iterations-200) > 4 || len(sc[0].Record.Segments) != 2 {
		t.Errorf("collected: %+v", sc)
	}

	r = run(t, extEnv("CONFIRM=yes"), loadtest, "clean-external")
	wantCode(t, r, 0)
	wantOutput(t, r, `clean-external: \d+ certificates archived, \d+ agents? deleted, 1 team deleted, 1 owner deleted, 1 profile deleted, 1 policy deleted, 1 issuer deleted`)
	// What certctl keeps of the run: archived certificates, unless a cascade took them with the team.
	t.Logf("after clean-external: %s lt- certificates (archived) and %s audit events left on the external certctl",
		psql("SELECT count(*) FROM managed_certificates WHERE id LIKE 'lt-%' OR name LIKE 'lt-%'"), psql("SELECT count(*) FROM audit_events"))
	for table, q := range map[string]string{
		"certificates not archived": "SELECT count(*) FROM managed_certificates WHERE (id LIKE 'lt-%' OR name LIKE 'lt-%') AND status <> 'Archived'",
		// certctl retires an agent on DELETE: the row stays, with retired_at set.
		"agents not retired":   "SELECT count(*) FROM agents WHERE (id LIKE 'lt-%' OR name LIKE 'lt-%') AND retired_at IS NULL",
		"teams":                "SELECT count(*) FROM teams WHERE id LIKE 'lt-%'",
		"owners":               "SELECT count(*) FROM owners WHERE id LIKE 'lt-%'",
		"certificate profiles": "SELECT count(*) FROM certificate_profiles WHERE id LIKE 'lt-%'",
		"issuers":              "SELECT count(*) FROM issuers WHERE id LIKE 'lt-%'",
		"renewal policies":     "SELECT count(*) FROM renewal_policies WHERE id LIKE 'lt-%'",
	} {
		if n := psql(q); n != "0" {
			t.Errorf("after clean-external, %s: %s of the harness's rows left", table, n)
		}
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testRun is what the simulated runners read of a rendered TestRun.
type testRun struct {
	Spec struct {
		Parallelism int
		Arguments   string
		Runner      struct {
			Env []struct {
				Name      string
				Value     *string
				ValueFrom map[string]any `yaml:"valueFrom"`
			}
			Volumes []struct {
				Name      string
				ConfigMap *struct{ Name string } `yaml:"configMap"`
			}
			VolumeMounts []struct {
				Name      string
				MountPath string `yaml:"mountPath"`
			} `yaml:"volumeMounts"`
		}
	}
}

func readTestRun(t *testing.T, path string) testRun {
	t.Helper()
	var tr testRun
	if err := yaml.Unmarshal([]byte(mustRead(t, path)), &tr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tr
}

// kustomizeConfigMaps reads kustomization.yaml's configMapGenerator: ConfigMap name → key → file.
func kustomizeConfigMaps(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	var k struct {
		ConfigMapGenerator []struct {
			Name  string
			Files []string
		} `yaml:"configMapGenerator"`
	}
	if err := yaml.Unmarshal([]byte(mustRead(t, filepath.Join(dir, "kustomization.yaml"))), &k); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, g := range k.ConfigMapGenerator {
		out[g.Name] = map[string]string{}
		for _, f := range g.Files {
			key, file, ok := strings.Cut(f, "=")
			if !ok {
				key, file = filepath.Base(f), f
			}
			out[g.Name][key] = file
		}
	}
	return out
}

// runnerEnv is the TestRun's runner env as docker run -e flags, as the kubelet gives it to the pod:
// $(POD_NAME) expanded, $$ made $, fieldRef POD_NAME the pod's name and each secretKeyRef from secrets.
func runnerEnv(t *testing.T, tr testRun, pod string, secrets map[string]string) []string {
	t.Helper()
	var out []string
	for _, e := range tr.Spec.Runner.Env {
		var v string
		switch {
		case e.Value != nil:
			v = strings.ReplaceAll(strings.ReplaceAll(*e.Value, "$(POD_NAME)", pod), "$$", "$")
		case e.ValueFrom["fieldRef"] != nil:
			v = pod
		case e.ValueFrom["secretKeyRef"] != nil:
			s, ok := secrets[e.Name]
			if !ok {
				t.Fatalf("env %s from a Secret the test does not hold", e.Name)
			}
			v = s
		default:
			t.Fatalf("env %s: %+v", e.Name, e)
		}
		out = append(out, "-e", e.Name+"="+v)
	}
	return out
}
