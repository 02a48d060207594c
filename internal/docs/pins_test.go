package docs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"certctl-loadtest/internal/harness"
)

// The k6 that runs in the stack (IMAGE_K6 in .env, its offline stand-in in images/offline.env) is the k6
// go.mod pins for `go tool k6` (k6 inspect, the library tests): a script the plan inspected must be the
// script the run's k6 executes.
func TestK6PinsAgree(t *testing.T) {
	root := repoRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*go\.k6\.io/k6/v\d+ v(\d+\.\d+\.\d+)\b`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod requires no go.k6.io/k6 module")
	}
	want := string(m[1])
	// The workflows' jobs install the k6 release of that version for the host's k6 inspect.
	action, err := os.ReadFile(filepath.Join(root, ".github", "actions", "loadtest", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if a := regexp.MustCompile(`(?m)^\s*k6-version: "?([^"\s]+)"?`).FindSubmatch(action); a == nil || string(a[1]) != want {
		t.Errorf(".github/actions/loadtest/action.yml: setup-k6-action's k6-version is %q, but go.mod's k6 is v%s: raise both together", a, want)
	}
	for _, f := range []string{".env", "images/offline.env"} {
		pins, err := harness.ReadEnvFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		img := pins["IMAGE_K6"]
		_, tag, _ := strings.Cut(img, ":")
		if tag = strings.TrimPrefix(tag, "v"); tag != want {
			t.Errorf("%s: IMAGE_K6=%s, but go.mod's k6 is v%s: raise both together", f, img, want)
		}
	}
}

// Every registry image .env pins is one renovate.json's manager reads, tag and digest as written, so that
// an update can raise it; our own images and certctl's release are left to us. A digest is a full sha256.
func TestImagePinsUpdatable(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "renovate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		EnabledManagers []string `json:"enabledManagers"`
		CustomManagers  []struct {
			FilePatterns []string `json:"managerFilePatterns"`
			MatchStrings []string `json:"matchStrings"`
			Datasource   string   `json:"datasourceTemplate"`
		} `json:"customManagers"`
		PackageRules []struct {
			MatchPackageNames []string `json:"matchPackageNames"`
			Enabled           *bool    `json:"enabled"`
		} `json:"packageRules"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("renovate.json: %v", err)
	}
	if len(cfg.CustomManagers) != 1 || len(cfg.CustomManagers[0].MatchStrings) != 1 || cfg.CustomManagers[0].Datasource != "docker" ||
		!slices.Equal(cfg.CustomManagers[0].FilePatterns, []string{`/^\.env$/`}) || !slices.Equal(cfg.EnabledManagers, []string{"custom.regex"}) {
		t.Fatalf("renovate.json: want one docker regex manager over .env, and no other manager: %+v", cfg)
	}
	re, err := regexp.Compile(cfg.CustomManagers[0].MatchStrings[0])
	if err != nil {
		t.Fatalf("renovate.json's matchString: %v", err)
	}
	env, err := os.ReadFile(filepath.Join(root, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(env), -1) {
		pin := m[re.SubexpIndex("depName")] + ":" + m[re.SubexpIndex("currentValue")]
		if d := m[re.SubexpIndex("currentDigest")]; d != "" {
			pin += "@" + d
		}
		read[pin] = true
	}
	disabled := func(image string) bool {
		for _, r := range cfg.PackageRules {
			for _, p := range r.MatchPackageNames {
				if r.Enabled != nil && !*r.Enabled && strings.HasPrefix(image, strings.TrimSuffix(p, "**")) {
					return true
				}
			}
		}
		return false
	}
	pins, err := harness.ReadEnvFile(filepath.Join(root, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	digest := regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	for k, v := range pins {
		if !strings.HasPrefix(k, "IMAGE_") && !strings.HasPrefix(k, "CERTCTL_") {
			continue
		}
		if strings.Contains(v, "@") && !digest.MatchString(v) {
			t.Errorf(".env: %s=%s: a digest is @sha256: and 64 hex digits", k, v)
		}
		own := strings.HasPrefix(v, "certctl-loadtest/") || strings.HasPrefix(v, "ghcr.io/certctl-io/")
		if !read[v] {
			t.Errorf(".env: %s=%s is not read by renovate.json's manager as written", k, v)
		}
		if own != disabled(v) {
			t.Errorf(".env: %s=%s: updates enabled %v; want them only for registry images not ours or certctl's", k, v, !disabled(v))
		}
	}
}
