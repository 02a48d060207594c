package f5

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testCA issues the certificates the tests deploy and the stand-in's own
// management certificate (127.0.0.1, so that ts.Client() verifies it).
type testCA struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  []byte
}

var (
	caOnce sync.Once
	ca     *testCA
)

func getCA(t *testing.T) *testCA {
	t.Helper()
	caOnce.Do(func() {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "f5-standin test CA"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, k.Public(), k)
		if err != nil {
			panic(err)
		}
		c, _ := x509.ParseCertificate(der)
		ca = &testCA{cert: c, key: k, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	})
	return ca
}

var serial atomic.Int64

// issue returns a leaf certificate and its key as PEM. rsaBits 0 means an
// EC P-256 key (fast); otherwise RSA of that size, PKCS#1 encoded, which is
// what many CAs hand out.
func (c *testCA) issue(t *testing.T, cn string, rsaBits int) (certPEM, keyPEM []byte) {
	t.Helper()
	var k crypto.Signer
	var keyBlock *pem.Block
	if rsaBits > 0 {
		rk, err := rsa.GenerateKey(rand.Reader, rsaBits)
		if err != nil {
			t.Fatal(err)
		}
		k, keyBlock = rk, &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)}
	} else {
		ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, _ := x509.MarshalPKCS8PrivateKey(ek)
		k, keyBlock = ek, &pem.Block{Type: "PRIVATE KEY", Bytes: der}
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(100 + serial.Add(1)), Subject: pkix.Name{CommonName: cn},
		DNSNames: []string{cn}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, k.Public(), c.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(keyBlock)
}

func (c *testCA) tlsCert(t *testing.T) tls.Certificate {
	t.Helper()
	cp, kp := c.issue(t, "bigip.test", 0)
	cert, err := tls.X509KeyPair(cp, kp)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// writeCertFiles puts a management certificate where LoadCert can read it.
func writeCertFiles(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	cp, kp := getCA(t).issue(t, "bigip.test", 0)
	certFile, keyFile = filepath.Join(dir, "starter.crt"), filepath.Join(dir, "starter.key")
	if err := os.WriteFile(certFile, cp, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, kp, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// env is one stand-in behind an httptest TLS server configured exactly as
// the binary configures its own http.Server.
type env struct {
	t     *testing.T
	ts    *httptest.Server
	api   *API
	clock *fakeClock
	token string
}

func testConfig() Config {
	return Config{Listen: ":443", Username: "admin", Password: "s3cret", Profiles: []string{"/Common/clientssl", "/Common/lt-f5"}, MaxTokens: DefaultMaxTokens}
}

func newEnv(t *testing.T, mutate func(*Config)) *env {
	t.Helper()
	cfg := testConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	cert := getCA(t).tlsCert(t)
	clock := &fakeClock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	api, err := NewAPI(cfg, cert, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = NewHTTPServer(NewHandler(api, "f5-test-host"), cert, io.Discard)
	ts.TLS = TLSConfig(cert)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return &env{t: t, ts: ts, api: api, clock: clock}
}

// call sends one request. body is sent as is when it is []byte or string,
// JSON-encoded otherwise; hdr may set any header, including auth.
func (e *env) call(method, path string, hdr map[string]string, body any) (int, map[string]any, http.Header) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			e.t.Fatalf("%s %s: %d, body is not a JSON object: %q", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, m, resp.Header
}

// authed is call with the session token (logging in first if needed).
func (e *env) authed(method, path string, hdr map[string]string, body any) (int, map[string]any) {
	e.t.Helper()
	if e.token == "" {
		e.token = e.login()
	}
	h := map[string]string{"X-F5-Auth-Token": e.token}
	for k, v := range hdr {
		h[k] = v
	}
	code, m, _ := e.call(method, path, h, body)
	return code, m
}

func (e *env) login() string {
	e.t.Helper()
	code, m, _ := e.call("POST", loginPath, nil, map[string]string{"username": "admin", "password": "s3cret", "loginProviderName": "tmos"})
	if code != 200 {
		e.t.Fatalf("login: %d %v", code, m)
	}
	return m["token"].(map[string]any)["token"].(string)
}

// wholeRange is the Content-Range of n bytes sent in one chunk.
func wholeRange(n int) string { return fmt.Sprintf("0-%d/%d", n-1, n) }

// upload sends data in one chunk, as certctl does.
func (e *env) upload(name string, data []byte) {
	e.t.Helper()
	code, m := e.authed("POST", uploadsPrefix+name, map[string]string{
		"Content-Type": "application/octet-stream", "Content-Range": wholeRange(len(data)),
	}, data)
	if code != 200 {
		e.t.Fatalf("upload %s: %d %v", name, code, m)
	}
}

func (e *env) mustStatus(want int, method, path string, hdr map[string]string, body any) map[string]any {
	e.t.Helper()
	code, m := e.authed(method, path, hdr, body)
	if code != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %v", method, path, code, want, m)
	}
	return m
}

// assertErrShape checks BIG-IP's error body: code (equal to the status),
// message, errorStack and apiError.
func assertErrShape(t *testing.T, status int, m map[string]any, wantCode int) {
	t.Helper()
	if status != wantCode {
		t.Fatalf("status %d, want %d (body %v)", status, wantCode, m)
	}
	if c, _ := m["code"].(float64); int(c) != wantCode {
		t.Errorf("code = %v, want %d", m["code"], wantCode)
	}
	if msg, _ := m["message"].(string); msg == "" {
		t.Errorf("message missing: %v", m)
	}
	if es, ok := m["errorStack"].([]any); !ok || len(es) != 0 {
		t.Errorf("errorStack = %#v, want []", m["errorStack"])
	}
	if _, ok := m["apiError"].(float64); !ok {
		t.Errorf("apiError missing: %v", m)
	}
}
