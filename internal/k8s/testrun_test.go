package k8s

import (
	"bytes"
	"certctl-loadtest/internal/golden"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

func options() Options {
	return Options{
		Name:         "lt-20260821-1200-list-certificates",
		Namespace:    "loadtest",
		Parallelism:  4,
		Archive:      "lt-20260821-1200-archives",
		ArchiveFile:  "list_certificates.tar",
		Image:        "grafana/k6:pinned-in-env",
		ResultsClaim: "lt-results",
		Scenario:     "list_certificates",
		RunID:        "20260821-1200",
		Env: []EnvVar{
			{Name: "CERTCTL_URL", Value: "https://certctl.certctl.svc:8443"},
			{Name: "DURATION", Value: "5m"},
			{Name: "RATE_LIST_CERTIFICATES", Value: "40"},
			{Name: "LT_NOTE", Value: "costs $5, not $(HOME)"},
		},
		SecretEnv: []SecretEnvVar{{Name: "CERTCTL_TOKEN", SecretName: "certctl-loadtest", Key: "token"}},
		CABundle:  "lt-20260821-1200-ca",
	}
}

func render(t *testing.T, o Options) []byte {
	t.Helper()
	out, err := Render(o)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return out
}

func TestRenderGolden(t *testing.T) {
	got := render(t, options())
	golden.Check(t, "testrun.golden.yaml", string(got))
}

// The golden file shows the text; these pin the parts whose meaning depends on how the operator and
// the kubelet read them, so that a reformatted golden file cannot quietly drop them.
func TestRenderSemantics(t *testing.T) {
	var m struct {
		Spec struct {
			Arguments string
			Runner    struct {
				Env []struct {
					Name      string
					Value     *string
					ValueFrom map[string]any `yaml:"valueFrom"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(render(t, options()), &m); err != nil {
		t.Fatal(err)
	}

	// The operator splits .spec.arguments with strings.Fields and drops "--out <value>" from its
	// initializer's `k6 archive` only when they are two words.
	argv := strings.Fields(m.Spec.Arguments)
	want := []string{"--out", "json=/results/raw/segments/list_certificates@$(POD_NAME).json.gz", "--tag", "testid=20260821-1200"}
	if strings.Join(argv, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("arguments split into %q, want %q", argv, want)
	}

	var names []string
	values := map[string]string{}
	for _, e := range m.Spec.Runner.Env {
		names = append(names, e.Name)
		if e.Value != nil {
			values[e.Name] = *e.Value
		}
	}
	wantNames := "POD_NAME LT_SEGMENT RESULTS_DIR RUN_ID K6_NO_USAGE_REPORT CERTCTL_URL DURATION RATE_LIST_CERTIFICATES LT_NOTE CERTCTL_TOKEN SSL_CERT_FILE"
	if got := strings.Join(names, " "); got != wantNames {
		t.Errorf("env order %q, want %q", got, wantNames)
	}
	// POD_NAME must come before the entries that refer to it: the kubelet expands only earlier ones.
	if e := m.Spec.Runner.Env[0]; e.Name != "POD_NAME" || e.ValueFrom["fieldRef"].(map[string]any)["fieldPath"] != "metadata.name" {
		t.Errorf("first env entry is %+v, want POD_NAME from fieldRef metadata.name", e)
	}
	if values["LT_SEGMENT"] != "$(POD_NAME)" {
		t.Errorf("LT_SEGMENT = %q, want $(POD_NAME)", values["LT_SEGMENT"])
	}
	// After the kubelet's expansion ($$ -> $) k6 sees the value given.
	if got := values["LT_NOTE"]; got != "costs $$5, not $$(HOME)" {
		t.Errorf("LT_NOTE rendered as %q, want every $ doubled", got)
	}
	if _, isSet := values["CERTCTL_TOKEN"]; isSet {
		t.Error("CERTCTL_TOKEN has a plain value; it must come from the Secret only")
	}
	// k6 trusts the mounted bundle: the file SSL_CERT_FILE names is the ConfigMap's key, where it is mounted.
	if values["SSL_CERT_FILE"] != CAFile || !strings.HasPrefix(CAFile, CADir+"/") || path.Base(CAFile) != CAKey {
		t.Errorf("SSL_CERT_FILE = %q, the bundle is mounted at %s/%s", values["SSL_CERT_FILE"], CADir, CAKey)
	}
}

// The CA bundle's ConfigMap is mounted where SSL_CERT_FILE points; without one, neither is there and
// k6 trusts its image's roots.
func TestRenderCABundle(t *testing.T) {
	var m struct {
		Spec struct {
			Runner struct {
				Env     []struct{ Name string }
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
	if err := yaml.Unmarshal(render(t, options()), &m); err != nil {
		t.Fatal(err)
	}
	r := m.Spec.Runner
	if len(r.Volumes) != 2 || r.Volumes[1].Name != "ca" || r.Volumes[1].ConfigMap == nil || r.Volumes[1].ConfigMap.Name != "lt-20260821-1200-ca" {
		t.Errorf("volumes %+v, want results and the ca ConfigMap", r.Volumes)
	}
	if len(r.VolumeMounts) != 2 || r.VolumeMounts[1] != (struct {
		Name      string
		MountPath string `yaml:"mountPath"`
	}{"ca", CADir}) {
		t.Errorf("mounts %+v, want ca at %s", r.VolumeMounts, CADir)
	}

	o := options()
	o.CABundle = ""
	out := render(t, o)
	m.Spec.Runner.Volumes, m.Spec.Runner.VolumeMounts = nil, nil
	if err := yaml.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("SSL_CERT_FILE")) || len(m.Spec.Runner.Volumes) != 1 || len(m.Spec.Runner.VolumeMounts) != 1 {
		t.Errorf("no CA bundle, yet:\n%s", out)
	}
	o.CABundle = "Not_A_Name"
	if _, err := Render(o); err == nil || !strings.Contains(err.Error(), "CABundle") {
		t.Errorf("CABundle %q: %v", o.CABundle, err)
	}
}

func TestRenderOmitsEmptyNamespace(t *testing.T) {
	o := options()
	o.Namespace = ""
	if out := render(t, o); bytes.Contains(out, []byte("namespace:")) {
		t.Errorf("an empty Namespace is rendered:\n%s", out)
	}
}

// crdSchema compiles the openAPIV3Schema of the CRD's v1alpha1 version (testdata/k6.io_testruns.yaml,
// copied verbatim from the k6-operator).
//
// A CRD schema is OpenAPI v3.0's subset of JSON Schema draft 4 (structural schemas), so draft 4 is
// the dialect. The validator ignores what it does not know, which is what the API server's own
// keywords need here: the x-kubernetes-* extensions (x-kubernetes-int-or-string fields also carry an
// anyOf integer/string, which is validated) and the formats int32, int64 (date-time appears only
// under status).
//
// The API server prunes unknown fields, or, with strict field validation (kubectl's default), rejects
// them; a bare JSON-schema validator accepts them. So, with strict, every object schema that lists
// its properties and does not say otherwise (additionalProperties, x-kubernetes-preserve-unknown-fields)
// is closed with additionalProperties: false: a misspelt field fails here instead of vanishing there.
func crdSchema(t *testing.T, strict bool) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "k6.io_testruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Names struct {
				Kind string
			}
			Versions []struct {
				Name   string
				Schema struct {
					OpenAPIV3Schema any `yaml:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Names.Kind != Kind {
		t.Fatalf("testdata CRD is for kind %q, want %q", crd.Spec.Names.Kind, Kind)
	}
	var schema any
	for _, v := range crd.Spec.Versions {
		if "k6.io/"+v.Name == APIVersion {
			schema = v.Schema.OpenAPIV3Schema
		}
	}
	if schema == nil {
		t.Fatalf("testdata CRD has no version for %s", APIVersion)
	}
	if strict {
		closeObjects(schema)
	}
	doc := jsonValue(t, schema)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	if err := c.AddResource("k6.io_testruns.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("k6.io_testruns.json")
	if err != nil {
		t.Fatalf("compiling the CRD schema: %v", err)
	}
	return s
}

// closeObjects walks a schema; see crdSchema.
func closeObjects(v any) {
	switch v := v.(type) {
	case map[string]any:
		_, hasProps := v["properties"]
		_, hasAP := v["additionalProperties"]
		_, preserve := v["x-kubernetes-preserve-unknown-fields"]
		if hasProps && !hasAP && !preserve {
			v["additionalProperties"] = false
		}
		for _, sub := range v {
			closeObjects(sub)
		}
	case []any:
		for _, sub := range v {
			closeObjects(sub)
		}
	}
}

// jsonValue turns a decoded YAML document into the JSON value the validator expects (numbers as
// json.Number), the same conversion kubectl makes before sending a manifest.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func manifestValue(t *testing.T, y []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(y, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRenderMatchesCRD(t *testing.T) {
	loose, strict := crdSchema(t, false), crdSchema(t, true)
	rendered := render(t, options())

	m := manifestValue(t, rendered)
	if m["apiVersion"] != APIVersion || m["kind"] != Kind {
		t.Fatalf("rendered apiVersion/kind %v/%v, want %s/%s", m["apiVersion"], m["kind"], APIVersion, Kind)
	}
	for name, s := range map[string]*jsonschema.Schema{"CRD schema": loose, "CRD schema, strict fields": strict} {
		if err := s.Validate(jsonValue(t, m)); err != nil {
			t.Errorf("rendered TestRun fails the %s:\n%v\n%s", name, err, rendered)
		}
	}

	// Each case breaks the rendered manifest in one way the API server would refuse; the validator
	// must refuse it too, or the test above proves nothing.
	broken := []struct {
		name   string
		mutate func(m map[string]any)
		at     string // where the validator must point
		strict bool   // only strict field validation rejects it
	}{
		{"parallelism as a string", func(m map[string]any) { specOf(m)["parallelism"] = "4" }, "/spec/parallelism", false},
		{"separate as a string", func(m map[string]any) { specOf(m)["separate"] = "false" }, "/spec/separate", false},
		{"no script", func(m map[string]any) { delete(specOf(m), "script") }, "/spec", false},
		{"env entry without a name", func(m map[string]any) {
			env := runnerOf(m)["env"].([]any)
			delete(env[1].(map[string]any), "name")
		}, "/spec/runner/env/1", false},
		{"volume claim name as a number", func(m map[string]any) {
			vol := runnerOf(m)["volumes"].([]any)[0].(map[string]any)
			vol["persistentVolumeClaim"].(map[string]any)["claimName"] = 7
		}, "/spec/runner/volumes/0/persistentVolumeClaim/claimName", false},
		{"unknown field under spec.runner", func(m map[string]any) {
			runnerOf(m)["volumeMount"] = runnerOf(m)["volumeMounts"]
		}, "/spec/runner", true},
		{"unknown field under spec", func(m map[string]any) { specOf(m)["parallelsim"] = 4 }, "/spec", true},
	}
	for _, c := range broken {
		t.Run(c.name, func(t *testing.T) {
			m := manifestValue(t, rendered)
			c.mutate(m)
			err := strict.Validate(jsonValue(t, m))
			if err == nil {
				t.Fatalf("the broken manifest passes the strict CRD schema")
			}
			var ve *jsonschema.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("validation failed with %T, not a schema violation: %v", err, err)
			}
			if at := violations(ve); !slices.Contains(at, c.at) {
				t.Errorf("rejected at %q, want at %s:\n%v", at, c.at, err)
			}
			if err := loose.Validate(jsonValue(t, m)); (err == nil) != c.strict {
				t.Errorf("without strict field validation, rejected = %v, want %v", err != nil, !c.strict)
			}
		})
	}
}

// violations lists the instance locations of the leaf errors: where the schema was broken.
func violations(e *jsonschema.ValidationError) []string {
	if len(e.Causes) == 0 {
		return []string{"/" + strings.Join(e.InstanceLocation, "/")}
	}
	var out []string
	for _, c := range e.Causes {
		out = append(out, violations(c)...)
	}
	return out
}

func specOf(m map[string]any) map[string]any   { return m["spec"].(map[string]any) }
func runnerOf(m map[string]any) map[string]any { return specOf(m)["runner"].(map[string]any) }

func TestValidate(t *testing.T) {
	if err := options().Validate(); err != nil {
		t.Fatalf("the representative options are invalid: %v", err)
	}
	cases := []struct {
		name   string
		change func(o *Options)
		want   string // in the error
	}{
		{"no name", func(o *Options) { o.Name = "" }, "Name is empty"},
		{"upper-case name", func(o *Options) { o.Name = "LT-run" }, "not a DNS-1123 label"},
		{"underscore in name", func(o *Options) { o.Name = "lt-list_certificates" }, "not a DNS-1123 label"},
		{"name ending in -", func(o *Options) { o.Name = "lt-run-" }, "not a DNS-1123 label"},
		{"name of 64", func(o *Options) { o.Name = strings.Repeat("a", 64) }, "not a DNS-1123 label"},
		{"name starting with a digit", func(o *Options) { o.Name = "1lt" }, "must start with a letter"},
		{"name too long for the Services", func(o *Options) { o.Name = "a" + strings.Repeat("b", 50); o.Parallelism = 1000 }, "at most 50"},
		{"bad namespace", func(o *Options) { o.Namespace = "Load_Test" }, "Namespace"},
		{"zero parallelism", func(o *Options) { o.Parallelism = 0 }, "Parallelism 0 is out of range"},
		{"negative parallelism", func(o *Options) { o.Parallelism = -2 }, "Parallelism -2 is out of range"},
		{"parallelism over the bound", func(o *Options) { o.Parallelism = 1001 }, "Parallelism 1001 is out of range"},
		{"no archive", func(o *Options) { o.Archive = "" }, "Archive is empty"},
		{"bad archive", func(o *Options) { o.Archive = "Archives" }, "Archive \"Archives\" is not a valid ConfigMap name"},
		{"no archive file", func(o *Options) { o.ArchiveFile = "" }, "ArchiveFile is empty"},
		{"archive file with a path", func(o *Options) { o.ArchiveFile = "k6/list.tar" }, "not a valid ConfigMap key"},
		{"no image", func(o *Options) { o.Image = "" }, "Image is empty"},
		{"image with a space", func(o *Options) { o.Image = "grafana/k6 2.2.0" }, "white space"},
		{"no results claim", func(o *Options) { o.ResultsClaim = "" }, "ResultsClaim is empty"},
		{"no scenario", func(o *Options) { o.Scenario = "" }, "Scenario is empty"},
		{"scenario with @", func(o *Options) { o.Scenario = "a@b" }, "Scenario \"a@b\" must be a Kubernetes label value"},
		{"scenario with a space", func(o *Options) { o.Scenario = "list certificates" }, "Scenario"},
		{"no run id", func(o *Options) { o.RunID = "" }, "RunID is empty"},
		{"run id with $", func(o *Options) { o.RunID = "$(whoami)" }, "RunID"},
		{"env without name", func(o *Options) { o.Env[0].Name = "" }, "Env[0] has no name"},
		{"env with a bad name", func(o *Options) { o.Env[1].Name = "RATE-X" }, "Env[1] name \"RATE-X\" is not a valid"},
		{"env overriding a reserved one", func(o *Options) { o.Env[0].Name = "POD_NAME" }, "Env[0] POD_NAME is already set by Render"},
		{"env given twice", func(o *Options) { o.Env[2].Name = "DURATION" }, "Env[2] DURATION is already Env[1]"},
		{"secret env given as plain too", func(o *Options) { o.SecretEnv[0].Name = "CERTCTL_URL" }, "SecretEnv[0] CERTCTL_URL is already Env[0]"},
		{"secret env without secret", func(o *Options) { o.SecretEnv[0].SecretName = "" }, "has no SecretName"},
		{"secret env without key", func(o *Options) { o.SecretEnv[0].Key = "" }, "has no Key"},
		{"secret env with a bad key", func(o *Options) { o.SecretEnv[0].Key = "a/b" }, "not a valid Secret key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := options()
			c.change(&o)
			out, err := Render(o)
			if err == nil {
				t.Fatalf("Render accepted the options and returned:\n%s", out)
			}
			if out != nil {
				t.Errorf("Render returned a manifest with its error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}

	t.Run("every problem at once", func(t *testing.T) {
		err := Options{Parallelism: 0}.Validate()
		if err == nil {
			t.Fatal("empty options accepted")
		}
		for _, want := range []string{"Name is empty", "Parallelism 0", "Archive is empty", "ArchiveFile is empty", "Image is empty", "ResultsClaim is empty", "Scenario is empty", "RunID is empty"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not say %q:\n%v", want, err)
			}
		}
	})
}
