package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"certctl-loadtest/internal/harness"
	"certctl-loadtest/internal/k8s"
	"certctl-loadtest/internal/output"
	"certctl-loadtest/internal/results"
)

// k8sCmd writes what runs the selected scenarios on a Kubernetes cluster with the k6-operator: per
// scenario a k6 archive (script, k6/lib and the options this configuration resolves, DURATION and
// RATE_* included: an archive's options are fixed when it is made) and a TestRun of SEGMENTS runners;
// a ConfigMap of the archives and the results volume (kustomization.yaml). The certctl is the cluster's
// (CERTCTL_URL as the runners reach it); its API key comes from a Secret, never from these files.
func k8sCmd(ctx context.Context, e Env, args []string) int {
	flags := flag.NewFlagSet("k8s", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	out := flags.String("out", "", "")
	namespace := flags.String("namespace", "", "")
	pos, err := parseInterleaved(flags, args)
	if err == nil && *out == "" {
		err = fmt.Errorf("--out DIR is needed: where to write the manifests")
	}
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("takes no arguments but its flags (got %q): the configuration (TIER, SCENARIOS, DURATION, RATE_*, SEGMENTS, CERTCTL_URL) comes from the environment", strings.Join(pos, " "))
	}
	if err != nil {
		return badArgs(e, "k8s", "%v", err)
	}
	fail := measure{e, "k8s"}.fail
	raw := strings.TrimRight(e.Getenv("CERTCTL_URL"), "/")
	if u, err := url.Parse(raw); raw == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fail("CERTCTL_URL=%q: want certctl's base URL as the runner pods reach it (https://certctl.certctl.svc:8443)", raw)
	}
	// The stack's configuration gives the scenarios and their knobs; the target is the cluster's.
	getenv := func(k string) string {
		if k == "TARGET" || k == "CERTCTL_URL" {
			return ""
		}
		return e.Getenv(k)
	}
	cfg, err := harness.Load(e.Root, getenv, e.Now())
	if err != nil {
		return fail("%v", err)
	}
	var scenarios []harness.Scenario
	for _, s := range cfg.Scenarios {
		if why := harness.Unavailable(s); why != "" {
			fmt.Fprintf(e.Stderr, "loadtest: k8s: %s left out: %s\n", s.Name, why)
			continue
		}
		scenarios = append(scenarios, s)
	}
	if len(scenarios) == 0 {
		return fail("none of the selected scenarios can run against a certctl the harness does not start")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fail("%v", err)
	}
	pins, err := harness.ReadEnvFile(filepath.Join(e.Root, ".env"))
	if err != nil {
		return fail("%v", err)
	}
	image := pins["IMAGE_K6"]
	secret := envOr(e, "K8S_SECRET", "certctl-loadtest")
	claim := envOr(e, "K8S_RESULTS_CLAIM", "certctl-loadtest-results")
	archives := "lt-" + cfg.RunID + "-archives"

	// What every runner's k6 reads besides the archive's frozen options: the target, the rows.
	plain := []k8s.EnvVar{{Name: "CERTCTL_URL", Value: raw}, {Name: "LT_TARGET", Value: "external"}}
	for _, k := range []string{"LT_TEAM_ID", "LT_OWNER_ID", "LT_POLICY_ID", "LT_ISSUER_ID", "LT_PROFILE_ID"} {
		plain = append(plain, k8s.EnvVar{Name: k, Value: envOr(e, k, harness.KnobDefault(k))})
	}
	// The CA bundle travels as a ConfigMap of its own, mounted in every runner (k8s.CAFile).
	caBundle, caMap := "", ""
	if v := strings.TrimSpace(e.Getenv("CERTCTL_CA_BUNDLE")); v != "" {
		if caBundle, err = harness.CABundle(v); err != nil {
			return fail("%v", err)
		}
		caMap = "lt-" + cfg.RunID + "-ca"
	}
	if e.Getenv("CERTCTL_TLS_VERIFY") == "false" {
		plain = append(plain, k8s.EnvVar{Name: "K6_INSECURE_SKIP_TLS_VERIFY", Value: "true"})
	}
	// The archive's -e: the knobs k6 reads (DURATION among them), so its options are this configuration's.
	var archiveEnv []string
	keys := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		if harness.K6Env(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		archiveEnv = append(archiveEnv, "-e", k+"="+cfg.Env[k])
	}
	resources := []string{"results-pvc.yaml"}
	var files []string
	for _, s := range scenarios {
		tar := s.Name + ".tar"
		var errb strings.Builder
		code, err := e.Exec(ctx, harness.Cmd{Name: "go", Args: append(append([]string{"tool", "k6", "archive", "--quiet"}, archiveEnv...), "-O", filepath.Join(*out, tar), filepath.Join(e.Root, s.Path)),
			Env: harness.CleanEnv(e.Environ), Stdout: io.Discard, Stderr: &errb})
		if err != nil || code != 0 {
			return fail("k6 archive %s: exit %d %v %s", s.Path, code, err, strings.TrimSpace(errb.String()))
		}
		m, err := k8s.Render(k8s.Options{
			Name: "lt-" + cfg.RunID + "-" + strings.ReplaceAll(s.Name, "_", "-"), Namespace: *namespace, Parallelism: cfg.Segments,
			Archive: archives, ArchiveFile: tar, Image: image, ResultsClaim: claim, Scenario: s.Name, RunID: cfg.RunID,
			Env: plain, SecretEnv: []k8s.SecretEnvVar{{Name: "CERTCTL_TOKEN", SecretName: secret, Key: "api-key"}},
			CABundle: caMap,
		})
		if err != nil {
			return fail("%v", err)
		}
		name := "testrun-" + s.Name + ".yaml"
		if err := output.Write(filepath.Join(*out, name), m); err != nil {
			return fail("%v", err)
		}
		resources = append(resources, name)
		files = append(files, tar)
	}
	caGen := ""
	if caMap != "" {
		b, err := os.ReadFile(caBundle)
		if err == nil {
			err = output.Write(filepath.Join(*out, "ca-bundle.pem"), b)
		}
		if err != nil {
			return fail("%v", err)
		}
		caGen = fmt.Sprintf("  - name: %s\n    files:\n      - %s=ca-bundle.pem\n", caMap, k8s.CAKey)
	}
	ns := ""
	if *namespace != "" {
		ns = "namespace: " + *namespace + "\n"
	}
	pvc := fmt.Sprintf(`# Every runner writes its record and raw samples here (ReadWriteMany: runners on several nodes).
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s
%sspec:
  accessModes: [ReadWriteMany]
  resources:
    requests:
      storage: 2Gi
`, claim, strings.ReplaceAll(ns, "namespace:", "  namespace:"))
	kust := fmt.Sprintf(`# kubectl apply -k . (the certctl API key first: kubectl create secret generic %s --from-literal=api-key=...)
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
%sresources:
%sconfigMapGenerator:
  - name: %s
    files:
%s%sgeneratorOptions:
  disableNameSuffixHash: true
`, secret, ns, listYAML(resources, "  "), archives, listYAML(files, "      "), caGen)
	if err := output.Files(*out, output.File{Name: "results-pvc.yaml", Text: pvc}, output.File{Name: "kustomization.yaml", Text: kust}); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(e.Stdout, "wrote %s: %d TestRun(s) of %d runner(s) each (%s), their k6 archives, the results volume and kustomization.yaml\n",
		*out, len(scenarios), cfg.Segments, strings.Join(names(scenarios), ", "))
	fmt.Fprintf(e.Stdout, "next: kubectl create secret generic %s --from-literal=api-key=<certctl admin key>; kubectl apply -k %s;\n"+
		"      when the TestRuns are finished, copy the volume's scenarios/ and raw/ into a directory and run: loadtest judge <dir>  (docs/distributed.md)\n", secret, *out)
	return results.ExitOK
}

func envOr(e Env, k, def string) string {
	if v := strings.TrimSpace(e.Getenv(k)); v != "" {
		return v
	}
	return def
}

func listYAML(items []string, indent string) string {
	var b strings.Builder
	for _, i := range items {
		b.WriteString(indent + "- " + strconv.Quote(i)[1:len(strconv.Quote(i))-1] + "\n")
	}
	return b.String()
}

func names(scs []harness.Scenario) []string {
	var out []string
	for _, s := range scs {
		out = append(out, s.Name)
	}
	return out
}
