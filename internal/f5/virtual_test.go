package f5

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
)

// The virtual server serves what the profile holds at each handshake: the
// factory pair before a deployment, certctl's certificate and chain after.
func TestVirtualServerServesTheDeployedPair(t *testing.T) {
	e := newEnv(t, nil)
	// Not httptest: its own certificate would win over GetCertificate.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	vs := NewVirtualServer(e.api, "/Common/lt-f5", "test")
	go func() { _ = vs.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { vs.Close() })

	served := func() []*x509.Certificate {
		t.Helper()
		conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test reads what is served
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates
	}
	before := served()
	if len(before) != 1 {
		t.Fatalf("before any deployment: %d certificates served, want the factory one", len(before))
	}

	ca := getCA(t)
	certPEM, keyPEM := ca.issue(t, "f5", 0)
	if _, err := newWire(e).deploy("Common", "lt-f5", certPEM, keyPEM, ca.pem); err != nil {
		t.Fatal(err)
	}
	after := served()
	b, _ := pem.Decode(certPEM)
	if len(after) != 2 || string(after[0].Raw) != string(b.Bytes) {
		t.Fatalf("after the deployment: %d certificates, leaf %v; want the deployed leaf and its chain", len(after), after[0].Subject)
	}
	if after[1].Subject.String() != ca.cert.Subject.String() {
		t.Errorf("chain served: %v, want the CA %v", after[1].Subject, ca.cert.Subject)
	}
}

func TestVirtualProfileMustExist(t *testing.T) {
	env := map[string]string{"F5_VIRTUAL_LISTEN": ":8443", "F5_VIRTUAL_PROFILE": "lt-f5", "F5_SSL_PROFILES": "other"}
	if _, err := LoadConfig(func(k string) string { return env[k] }, nil); err == nil {
		t.Fatal("a virtual server on a profile that does not exist was accepted")
	}
	env["F5_SSL_PROFILES"] = "lt-f5"
	cfg, err := LoadConfig(func(k string) string { return env[k] }, nil)
	if err != nil || cfg.VirtualProfile != "/Common/lt-f5" || cfg.VirtualListen != ":8443" {
		t.Fatalf("cfg %+v, err %v", cfg, err)
	}
}

func TestCallRoute(t *testing.T) {
	for path, want := range map[string]string{
		"/mgmt/shared/authn/login":                               "/mgmt/shared/authn/login",
		"/mgmt/shared/file-transfer/uploads/certctl-cert-17.pem": "/mgmt/shared/file-transfer/uploads/{file}",
		"/mgmt/tm/sys/crypto/cert":                               "/mgmt/tm/sys/crypto/cert",
		"/mgmt/tm/sys/crypto/key/~Common~certctl-key-17":         "/mgmt/tm/sys/crypto/key/{name}",
		"/mgmt/tm/ltm/profile/client-ssl/~Common~lt-f5":          "/mgmt/tm/ltm/profile/client-ssl/{name}",
		"/mgmt/tm/transaction/1795692682042571":                  "/mgmt/tm/transaction/{id}",
		"/mgmt/tm/transaction/1795692682042571/commands/2":       "/mgmt/tm/transaction/{id}/commands",
		"/mgmt/shared/authz/tokens/ABCDEFGHIJKLMNOPQRSTUVWXYZ":   "/mgmt/shared/authz/tokens/{token}",
	} {
		if got := callRoute(path); got != want {
			t.Errorf("callRoute(%s) = %s, want %s", path, got, want)
		}
	}
}
