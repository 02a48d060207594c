package harness

import (
	"strings"
	"testing"
)

func TestCheckScenarioVars(t *testing.T) {
	root := fakeRepo(t, "k6/api/list_certificates.js", "k6/api/issuance_acceptance.js", "k6/acme/acme_flow.js")
	cases := []struct {
		name    string
		environ []string
		want    string // "" for no error
	}{
		{"none", []string{"PATH=/bin"}, ""},
		{"a rate of a scenario", []string{"RATE_LIST_CERTIFICATES=20"}, ""},
		{"a rate of a scenario of another tier", []string{"RATE_ACME_FLOW=20"}, ""},
		{"an empty one", []string{"RATE_LIST_CERTIFICATE="}, ""},
		{"a typo", []string{"RATE_LIST_CERTIFICATE=20"}, "RATE_LIST_CERTIFICATE: no scenario is called list_certificate; did you mean RATE_LIST_CERTIFICATES?"},
		{"VUs of a typo", []string{"VUS_ACME_FLWO=5"}, "did you mean VUS_ACME_FLOW?"},
	}
	for _, c := range cases {
		err := CheckScenarioVars(root, c.environ)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"issuance_acceptance", "list_certificates", "acme_flow"}
	for in, want := range map[string]string{"list_certs": "list_certificates", "acme-flow": "acme_flow", "issuance": "issuance_acceptance"} {
		if got := Closest(in, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}
