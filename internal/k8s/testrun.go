// Package k8s renders the Kubernetes manifests that run a load-test scenario on a cluster with the
// k6-operator (github.com/grafana/k6-operator): one TestRun per scenario, its load split into
// execution segments over N runner pods, each writing its raw samples to a shared results volume.
//
// The manifest follows the operator's TestRun CRD (apiVersion k6.io/v1alpha1); testdata/ holds a
// copy of that CRD, and the tests validate what Render produces against its schema.
package k8s

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

const (
	// APIVersion and Kind of the k6-operator's TestRun resource.
	APIVersion = "k6.io/v1alpha1"
	Kind       = "TestRun"

	// ResultsDir is where every runner mounts the results volume.
	ResultsDir = "/results"

	// CADir is where a runner mounts Options.CABundle; CAFile is the bundle in it, which k6 trusts
	// (SSL_CERT_FILE) instead of the image's roots.
	CADir  = "/ca"
	CAKey  = "bundle.pem"
	CAFile = CADir + "/" + CAKey

	// MaxParallelism bounds Options.Parallelism: the operator creates a Job and a Service per runner,
	// so a typo such as 10000 would flood the namespace rather than fail.
	MaxParallelism = 1000
)

// K6GID is the group grafana/k6 runs as: the results volume is given to it (fsGroup).
const K6GID = 12345

// ResultDirs are the directories on the results volume each runner writes into: its record, raw
// samples and dashboard, as a segment (the layout `loadtest judge` reads).
var ResultDirs = []string{ResultsDir + "/scenarios/segments", ResultsDir + "/raw/segments", ResultsDir + "/dashboard/segments"}

// EnvVar is a plain environment variable given to k6 (and so to the script's __ENV).
type EnvVar struct {
	Name  string
	Value string
}

// SecretEnvVar is an environment variable read from a key of a Secret in the TestRun's namespace,
// so that a credential never appears in the manifest.
type SecretEnvVar struct {
	Name       string
	SecretName string
	Key        string
}

// Options for one scenario's TestRun.
type Options struct {
	Name         string         // metadata.name, e.g. "lt-<runid>-list-certificates"
	Namespace    string         // optional
	Parallelism  int            // runners = execution segments
	Archive      string         // ConfigMap name holding the k6 archive
	ArchiveFile  string         // key in the ConfigMap, e.g. "list_certificates.tar"
	Image        string         // runner image: .env's IMAGE_K6
	ResultsClaim string         // PVC name mounted at /results in every runner (ReadWriteMany); see Render
	Scenario     string         // scenario name, e.g. "list_certificates"
	RunID        string         // the run's id: a label, and the testid tag of every sample
	Env          []EnvVar       // plain name/value pairs given to k6, in the order given
	SecretEnv    []SecretEnvVar // rendered as valueFrom.secretKeyRef
	// CABundle, optional: a ConfigMap whose key CAKey holds the PEM CA bundle that verifies certctl's
	// certificate, mounted at CADir in every runner.
	CABundle string
}

// The env entries Render sets itself, in this order, ahead of Options.Env and Options.SecretEnv.
var reservedEnv = []string{"POD_NAME", "LT_SEGMENT", "RESULTS_DIR", "RUN_ID", "K6_NO_USAGE_REPORT", "SSL_CERT_FILE"}

// The manifest's shape, in the field order a reader expects. Only the fields Render sets exist here:
// the CRD has many more, and an unset one must stay absent (not null, not "") for the operator's
// defaults to apply.
type (
	testRun struct {
		APIVersion string   `yaml:"apiVersion"`
		Kind       string   `yaml:"kind"`
		Metadata   metadata `yaml:"metadata"`
		Spec       spec     `yaml:"spec"`
	}
	metadata struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace,omitempty"`
		Labels    map[string]string `yaml:"labels"`
	}
	spec struct {
		Parallelism int    `yaml:"parallelism"`
		Separate    bool   `yaml:"separate"`
		Script      script `yaml:"script"`
		Arguments   string `yaml:"arguments"`
		Runner      runner `yaml:"runner"`
	}
	script struct {
		ConfigMap configMapRef `yaml:"configMap"`
	}
	configMapRef struct {
		Name string `yaml:"name"`
		File string `yaml:"file"`
	}
	runner struct {
		Image          string          `yaml:"image"`
		InitContainers []initContainer `yaml:"initContainers"`
		// fsGroup: a fresh volume is root's; grafana/k6 runs as uid and gid 12345.
		SecurityContext podSecurity   `yaml:"securityContext"`
		Env             []envVar      `yaml:"env"`
		Volumes         []volume      `yaml:"volumes"`
		VolumeMounts    []volumeMount `yaml:"volumeMounts"`
	}
	podSecurity struct {
		FSGroup int `yaml:"fsGroup"`
	}
	initContainer struct {
		Name         string        `yaml:"name"`
		Image        string        `yaml:"image"`
		Command      []string      `yaml:"command"`
		VolumeMounts []volumeMount `yaml:"volumeMounts"`
	}
	envVar struct {
		Name      string        `yaml:"name"`
		Value     *string       `yaml:"value,omitempty"`
		ValueFrom *envVarSource `yaml:"valueFrom,omitempty"`
	}
	envVarSource struct {
		FieldRef     *fieldRef     `yaml:"fieldRef,omitempty"`
		SecretKeyRef *secretKeyRef `yaml:"secretKeyRef,omitempty"`
	}
	fieldRef struct {
		FieldPath string `yaml:"fieldPath"`
	}
	secretKeyRef struct {
		Name string `yaml:"name"`
		Key  string `yaml:"key"`
	}
	volume struct {
		Name                  string           `yaml:"name"`
		PersistentVolumeClaim *claimRef        `yaml:"persistentVolumeClaim,omitempty"`
		ConfigMap             *configMapVolume `yaml:"configMap,omitempty"`
	}
	configMapVolume struct {
		Name string `yaml:"name"`
	}
	claimRef struct {
		ClaimName string `yaml:"claimName"`
	}
	volumeMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	}
)

// Render returns the TestRun manifest (YAML) for o, or an error naming every option that is wrong.
//
// k6's JSON output and handleSummary create their files but not the directories above them, so an
// init container of the runner image makes them on the results volume before k6 starts.
func Render(o Options) ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}

	// How the runner's k6 gets its arguments, in k6-operator v1.6.0 (see testdata/README.md):
	// .spec.arguments is split on whitespace (api/v1alpha1/testrun_types.go, TestRunSpec.Argv:
	// strings.Fields) and appended to the runner container's `command` (pkg/resources/jobs/runner.go,
	// NewRunnerJob: command = append(command, Argv()...), then Containers[0].Command = command). For a
	// ConfigMap script no shell is involved: pkg/types/script.go (Script.UpdateCommand) wraps the
	// command in `sh -c` only for a LocalFile script. A container's command is expanded by the kubelet,
	// which replaces $(VAR) with the container's env var VAR (fieldRef ones included) whether or not a
	// shell comes later; POD_NAME is in the runner's env, so $(POD_NAME) below becomes each runner's own
	// pod name. So the --out path is per runner; no K6_OUT env trick is needed. Releases up to v1.5.0
	// split on single spaces (strings.Split) but otherwise the same way, hence single spaces here.
	//
	// The operator also runs the arguments through its initializer (`k6 archive` + `k6 inspect`, in
	// `sh -c`, with the runner's env since we set no .spec.initializer): there pkg/types/k6cli.go
	// (ParseCLI) drops `--out <value>`, so the $(POD_NAME) path never reaches that shell. `--out` must
	// therefore stay two words: `--out=json=...` would be passed on to `k6 archive`.
	//
	// Whitespace splitting and the initializer's shell are why Scenario and RunID are held to label
	// characters (Validate): no space, quote or $ can reach either.
	args := fmt.Sprintf("--out json=%s/raw/segments/%s@$(POD_NAME).json.gz --tag testid=%s", ResultsDir, o.Scenario, o.RunID)

	env := []envVar{
		{Name: "POD_NAME", ValueFrom: &envVarSource{FieldRef: &fieldRef{FieldPath: "metadata.name"}}},
		// An env value may refer to an env entry defined before it: the kubelet expands it too.
		{Name: "LT_SEGMENT", Value: ptr("$(POD_NAME)")},
		{Name: "RESULTS_DIR", Value: ptr(ResultsDir)},
		{Name: "RUN_ID", Value: ptr(o.RunID)},
		{Name: "K6_NO_USAGE_REPORT", Value: ptr("true")},
	}
	for _, e := range o.Env {
		// The kubelet would expand $(VAR) in a value and turn $$ into $; doubling every $ makes it
		// hand k6 exactly the value given.
		env = append(env, envVar{Name: e.Name, Value: ptr(strings.ReplaceAll(e.Value, "$", "$$"))})
	}
	for _, e := range o.SecretEnv {
		env = append(env, envVar{Name: e.Name, ValueFrom: &envVarSource{SecretKeyRef: &secretKeyRef{Name: e.SecretName, Key: e.Key}}})
	}
	volumes := []volume{{Name: "results", PersistentVolumeClaim: &claimRef{ClaimName: o.ResultsClaim}}}
	mounts := []volumeMount{{Name: "results", MountPath: ResultsDir}}
	if o.CABundle != "" {
		// Go's TLS in k6 reads SSL_CERT_FILE in place of the system roots: the bundle alone is trusted.
		env = append(env, envVar{Name: "SSL_CERT_FILE", Value: ptr(CAFile)})
		volumes = append(volumes, volume{Name: "ca", ConfigMap: &configMapVolume{Name: o.CABundle}})
		mounts = append(mounts, volumeMount{Name: "ca", MountPath: CADir})
	}

	m := testRun{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata: metadata{
			Name:      o.Name,
			Namespace: o.Namespace,
			Labels: map[string]string{
				"app.kubernetes.io/part-of": "certctl-loadtest",
				"certctl-loadtest/run-id":   o.RunID,
				"certctl-loadtest/scenario": o.Scenario,
			},
		},
		Spec: spec{
			Parallelism: o.Parallelism,
			// Runners may share a node: the load generator's limit is CPU, which requests/limits
			// govern, not host count; separate: true would leave runners Pending on a small cluster.
			Separate:  false,
			Script:    script{ConfigMap: configMapRef{Name: o.Archive, File: o.ArchiveFile}},
			Arguments: args,
			Runner: runner{
				Image: o.Image,
				InitContainers: []initContainer{{
					Name: "results-dirs", Image: o.Image,
					Command:      []string{"sh", "-c", "mkdir -p " + strings.Join(ResultDirs, " ")},
					VolumeMounts: []volumeMount{{Name: "results", MountPath: ResultsDir}},
				}},
				SecurityContext: podSecurity{FSGroup: K6GID},
				Env:             env,
				Volumes:         volumes,
				VolumeMounts:    mounts,
			},
		},
	}

	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2) // kubectl's and most manifests' indentation; yaml.v3 defaults to 4
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("k8s: encoding TestRun %s: %w", o.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("k8s: encoding TestRun %s: %w", o.Name, err)
	}
	return b.Bytes(), nil
}

func ptr(s string) *string { return &s }

var (
	// DNS-1123 label: names of namespaces, and the TestRun's own.
	dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// DNS-1123 subdomain: names of ConfigMaps, Secrets and PersistentVolumeClaims.
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// Label value (<= 63 characters, checked apart).
	labelValue = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	// ConfigMap and Secret keys.
	dataKey = regexp.MustCompile(`^[-._A-Za-z0-9]+$`)
	// Env names k6's -e, the script's __ENV and the operator's initializer shell (-e NAME="${NAME}")
	// all handle: a C identifier.
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Validate reports every option that would make a manifest the API server or the operator rejects,
// or one that runs but writes its results where the merge does not look.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("k8s: "+format, a...)) }

	switch {
	case o.Name == "":
		bad("Name is empty: the TestRun needs a metadata.name")
	case len(o.Name) > 63 || !dns1123Label.MatchString(o.Name):
		bad("Name %q is not a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)", o.Name)
	case o.Name[0] < 'a' || o.Name[0] > 'z':
		// The operator names a Service after the TestRun (pkg/resources/jobs/runner.go,
		// NewRunnerService), and a Service name must be a DNS-1035 label, which starts with a letter.
		bad("Name %q must start with a letter: the operator names each runner's Service after it", o.Name)
	default:
		// The operator derives "<name>-initializer" (a Job) and "<name>-service-<i>" (a Service, i from 1
		// to Parallelism) from the name; both must fit 63 characters, or the TestRun is accepted and
		// then fails at the runners.
		longest := max(len("-initializer"), len("-service-")+len(strconv.Itoa(max(o.Parallelism, 1))))
		if len(o.Name)+longest > 63 {
			bad("Name %q is %d characters; with parallelism %d it must be at most %d, as the operator appends up to %d characters to it for its Jobs and Services", o.Name, len(o.Name), o.Parallelism, 63-longest, longest)
		}
	}
	if o.Namespace != "" && (len(o.Namespace) > 63 || !dns1123Label.MatchString(o.Namespace)) {
		bad("Namespace %q is not a DNS-1123 label (lower-case letters, digits and '-', at most 63 characters)", o.Namespace)
	}
	if o.Parallelism < 1 || o.Parallelism > MaxParallelism {
		bad("Parallelism %d is out of range: it must be 1 to %d (runners, one execution segment each)", o.Parallelism, MaxParallelism)
	}
	subdomain(&errs, "Archive", "ConfigMap", o.Archive)
	switch {
	case o.ArchiveFile == "":
		bad("ArchiveFile is empty: the key of the k6 archive in ConfigMap %q is needed", o.Archive)
	case len(o.ArchiveFile) > 253 || !dataKey.MatchString(o.ArchiveFile) || o.ArchiveFile == "." || o.ArchiveFile == "..":
		bad("ArchiveFile %q is not a valid ConfigMap key (letters, digits, '-', '_', '.')", o.ArchiveFile)
	}
	if o.Image == "" {
		bad("Image is empty: the runner image (e.g. grafana/k6:<version>) is needed")
	} else if strings.ContainsFunc(o.Image, isSpace) {
		bad("Image %q contains white space", o.Image)
	}
	subdomain(&errs, "ResultsClaim", "PersistentVolumeClaim", o.ResultsClaim)
	if o.CABundle != "" {
		subdomain(&errs, "CABundle", "ConfigMap", o.CABundle)
	}
	// Scenario and RunID go into label values, into the file name the segment merge parses
	// ("<scenario>@<segment>": no '@', no '/') and into the arguments (see Render): label-value
	// characters are safe in all three.
	labelLike(&errs, "Scenario", o.Scenario)
	labelLike(&errs, "RunID", o.RunID)

	seen := map[string]string{}
	for _, n := range reservedEnv {
		seen[n] = "set by Render"
	}
	name := func(kind string, i int, n string) {
		switch {
		case n == "":
			bad("%s[%d] has no name", kind, i)
		case !envName.MatchString(n):
			bad("%s[%d] name %q is not a valid environment variable name (letters, digits, '_', not starting with a digit)", kind, i, n)
		case seen[n] != "":
			// Kubernetes keeps the last of duplicate env entries: one would silently win.
			bad("%s[%d] %s is already %s", kind, i, n, seen[n])
		default:
			seen[n] = fmt.Sprintf("%s[%d]", kind, i)
		}
	}
	for i, e := range o.Env {
		name("Env", i, e.Name)
	}
	for i, e := range o.SecretEnv {
		name("SecretEnv", i, e.Name)
		if e.SecretName == "" {
			bad("SecretEnv[%d] %s has no SecretName", i, e.Name)
		} else if len(e.SecretName) > 253 || !dns1123Subdomain.MatchString(e.SecretName) {
			bad("SecretEnv[%d] %s: SecretName %q is not a valid Secret name (DNS-1123 subdomain)", i, e.Name, e.SecretName)
		}
		if e.Key == "" {
			bad("SecretEnv[%d] %s has no Key", i, e.Name)
		} else if len(e.Key) > 253 || !dataKey.MatchString(e.Key) {
			bad("SecretEnv[%d] %s: Key %q is not a valid Secret key (letters, digits, '-', '_', '.')", i, e.Name, e.Key)
		}
	}
	return errors.Join(errs...)
}

func subdomain(errs *[]error, field, kind, v string) {
	switch {
	case v == "":
		*errs = append(*errs, fmt.Errorf("k8s: %s is empty: the %s name is needed", field, kind))
	case len(v) > 253 || !dns1123Subdomain.MatchString(v):
		*errs = append(*errs, fmt.Errorf("k8s: %s %q is not a valid %s name (DNS-1123 subdomain: lower-case letters, digits, '-' and '.')", field, v, kind))
	}
}

func labelLike(errs *[]error, field, v string) {
	switch {
	case v == "":
		*errs = append(*errs, fmt.Errorf("k8s: %s is empty", field))
	case len(v) > 63 || !labelValue.MatchString(v):
		*errs = append(*errs, fmt.Errorf("k8s: %s %q must be a Kubernetes label value (letters, digits, '-', '_', '.', starting and ending with a letter or digit, at most 63 characters)", field, v))
	}
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
