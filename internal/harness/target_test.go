package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSegmentsKnob(t *testing.T) {
	root := fakeRepo(t, "k6/api/list_certificates.js", "k6/pki/issuance_c1.js", "k6/deploy/deploy_latency.js", "k6/external/seed.js")
	c, err := Load(root, env("TIER=api", "SEGMENTS=3"), now)
	if err != nil || c.Segments != 3 || c.Env["SEGMENTS"] != "3" {
		t.Fatalf("SEGMENTS=3: %d %v", c.Segments, err)
	}
	if c, _ := Load(root, env("TIER=api"), now); c.Segments != 1 {
		t.Errorf("default: %d segments", c.Segments)
	}
	for _, bad := range []struct{ env, want string }{
		{"SEGMENTS=0", `SEGMENTS="0": want a whole number from 1`},
		{"SEGMENTS=17", `SEGMENTS="17": want a whole number from 1`},
		{"SEGMENTS=two", `SEGMENTS="two"`},
		{"TIER=pki,SEGMENTS=2", `SEGMENTS=2: the pki tier runs as one k6 process`},
		{"TIER=deploy,SEGMENTS=2", `SEGMENTS=2: the deploy tier runs as one k6 process`},
	} {
		_, err := Load(root, env(strings.Split(bad.env, ",")...), now)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.env, err, bad.want)
		}
	}
	tiers, _ := DiscoverTiers(root)
	if _, ok := tiers[ExternalDir]; ok {
		t.Error("k6/external is taken for a tier")
	}
}

func TestSegmentArgs(t *testing.T) {
	if got := strings.Join(SegmentArgs(0, 2), " "); got != "--execution-segment 0:1/2 --execution-segment-sequence 0,1/2,1" {
		t.Errorf("first of two: %s", got)
	}
	if got := strings.Join(SegmentArgs(2, 3), " "); got != "--execution-segment 2/3:1 --execution-segment-sequence 0,1/3,2/3,1" {
		t.Errorf("last of three: %s", got)
	}
	if SegmentID(1, 4) != "2of4" {
		t.Error(SegmentID(1, 4))
	}
}

func TestExternalTargetConfig(t *testing.T) {
	root := fakeRepo(t, "k6/api/list_certificates.js", "k6/connector/nginx.js", "k6/scale/agent_storm.js")
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, []byte(testCAPEM), 0o644)
	base := []string{"TARGET=external", "CERTCTL_URL=https://127.0.0.1:8443", "CERTCTL_API_KEY=secret-key"}
	c, err := Load(root, env(base...), now)
	if err != nil {
		t.Fatal(err)
	}
	if c.External == nil || c.External.URL != "https://127.0.0.1:8443" || !c.External.Verify || c.External.Network != "host" {
		t.Fatalf("external: %+v", c.External)
	}
	if len(c.Scenarios) != 1 || c.Scenarios[0].Name != "list_certificates" || len(c.Skipped) != 1 || c.Skipped[0].Name != "nginx" {
		t.Errorf("scenarios %+v, skipped %+v", c.Scenarios, c.Skipped)
	}
	if c.Diagnosis() {
		t.Error("an external run samples a database it does not have")
	}
	if got := c.Redacted()["CLIENT_TOKEN"]; got != "[redacted]" {
		t.Errorf("the API key in run.json: %q", got)
	}
	c, err = Load(root, env(append(base, "CERTCTL_CA_BUNDLE="+ca, "CERTCTL_TLS_VERIFY=false")...), now)
	if err != nil || c.Env["LT_SSL_CERT_FILE"] != "/ca/bundle.pem" || c.Env["LT_INSECURE_SKIP_TLS_VERIFY"] != "true" {
		t.Errorf("bundle and verify: %v %v", c.Env, err)
	}
	for _, bad := range []struct {
		env  []string
		want string
	}{
		{[]string{"TARGET=elsewhere"}, `TARGET="elsewhere": use stack`},
		{[]string{"TARGET=external"}, `TARGET=external needs CERTCTL_URL`},
		{[]string{"TARGET=external", "CERTCTL_URL=https://127.0.0.1"}, `needs CERTCTL_API_KEY`},
		{[]string{"TARGET=external", "CERTCTL_URL=ftp://127.0.0.1", "CERTCTL_API_KEY=k"}, `want https://host[:port]`},
		{[]string{"TARGET=external", "CERTCTL_URL=https://127.0.0.1/api", "CERTCTL_API_KEY=k"}, `without a path`},
		{append(base, "CERTCTL_URL=https://8.8.8.8"), `resolves to a public address (8.8.8.8)`},
		{append(base, "CERTCTL_CA_BUNDLE=/nonexistent.pem"), `CERTCTL_CA_BUNDLE=/nonexistent.pem: cannot read it`},
		{append(base, "CERTCTL_CA_BUNDLE="+root+"/k6/api/list_certificates.js"), `holds no PEM certificate`},
		{append(base, "CERTCTL_TLS_VERIFY=maybe"), `CERTCTL_TLS_VERIFY="maybe"`},
		{append(base, "TIER=connector"), `none of the selected scenarios can run against a certctl the harness did not start (nginx: its targets are the harness's own TLS sidecars`},
		{append(base, "FAULT_LATENCY=1s"), `the fault proxy (FAULT_*) sits on the harness's own stack`},
	} {
		_, err := Load(root, env(bad.env...), now)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want %q", bad.env, err, bad.want)
		}
	}
	// Said so explicitly, a public address is the operator's to load.
	if c, err := Load(root, env(append(base, "CERTCTL_URL=https://8.8.8.8", "ALLOW_PUBLIC_TARGET=yes")...), now); err != nil || !c.External.Public {
		t.Errorf("ALLOW_PUBLIC_TARGET=yes: %v", err)
	}
}

// A self-signed CA, only parsed.
const testCAPEM = `-----BEGIN CERTIFICATE-----
MIIBdDCCARugAwIBAgIUQyKIfX6CDQJHgMJ52/q5hMYO6NAwCgYIKoZIzj0EAwIw
EDEOMAwGA1UEAwwFbHQtY2EwHhcNMjYxMTI2MjI1NzQzWhcNMzYxMTIzMjI1NzQz
WjAQMQ4wDAYDVQQDDAVsdC1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABPpE
jzPCuClW9YfUDej4RSjG70+GJatVBX60sbbtn/1mBh6+2dC+LAr2ibFEittjPRz4
JmmMG/q1sILGohnPelujUzBRMB0GA1UdDgQWBBR5f0O8HXV4wJrZ3jJlisAVQti+
CzAfBgNVHSMEGDAWgBR5f0O8HXV4wJrZ3jJlisAVQti+CzAPBgNVHRMBAf8EBTAD
AQH/MAoGCCqGSM49BAMCA0cAMEQCIAiYew9AFgC9VW1HzkTs7IipoQ5dTuGkKfz/
08GOyvpIAiB32hkpw9ovUt2VADu/6Uh47SY+w+g0UhhY3iJezgsG9A==
-----END CERTIFICATE-----
`
