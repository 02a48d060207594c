package faultproxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"certctl-loadtest/internal/syncbuf"
)

// testCA issues the upstream's and the proxy's certificates, as the
// stack's tls-init does with one CA.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fault-proxy test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pool}
}

// leaf returns PEM certificate and key for names (DNS names or IPs).
func (ca *testCA) leaf(t *testing.T, names ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// pkiEnv returns FAULT_CA, FAULT_TLS_CERT and FAULT_TLS_KEY for a proxy
// certificate from ca with the SANs the stack's certificate has.
func pkiEnv(t *testing.T, ca *testCA) map[string]string {
	cert, key := ca.leaf(t, "certctl-server", "certctl-faults", "localhost", "127.0.0.1")
	dir := t.TempDir()
	env := map[string]string{
		"FAULT_CA":       filepath.Join(dir, "ca.crt"),
		"FAULT_TLS_CERT": filepath.Join(dir, "server.crt"),
		"FAULT_TLS_KEY":  filepath.Join(dir, "server.key"),
	}
	for name, data := range map[string][]byte{"FAULT_CA": ca.pem, "FAULT_TLS_CERT": cert, "FAULT_TLS_KEY": key} {
		if err := os.WriteFile(env[name], data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func getenvFrom(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// echoUpstream answers every request with what it saw, plus the headers
// certctl's ACME server sends, and the status asked for in ?status=.
func echoUpstream(hits *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		if r.URL.Query().Has("hang") {
			<-r.Context().Done()
			return
		}
		h := w.Header()
		h.Set("X-Upstream-Method", r.Method)
		h.Set("X-Upstream-Proto", r.Proto)
		h.Set("X-Upstream-Host", r.Host)
		h.Set("X-Upstream-Query", r.URL.RawQuery)
		h.Set("X-Upstream-XFF", r.Header.Get("X-Forwarded-For")+r.Header.Get("Forwarded"))
		h.Set("X-Upstream-Auth", r.Header.Get("Authorization"))
		h.Set("X-Upstream-Accept-Encoding", r.Header.Get("Accept-Encoding"))
		h.Set("X-Upstream-Content-Type", r.Header.Get("Content-Type"))
		h.Set("X-Upstream-Saw-Untimed", r.Header.Get(UntimedHeader))
		h.Set("Replay-Nonce", "nonce-"+strconv.FormatInt(n, 10))
		h.Set("Cache-Control", "no-store")
		h.Set("Retry-After", "7")
		h.Set("Location", "https://certctl.example/acme/order/"+strconv.FormatInt(n, 10))
		h.Set("Content-Type", "application/problem+json")
		status := http.StatusOK
		if s := r.URL.Query().Get("status"); s != "" {
			status, _ = strconv.Atoi(s)
		}
		w.WriteHeader(status)
		_, _ = io.Copy(w, r.Body)
	})
}

type setup struct {
	ca         *testCA // nil: a new one
	env        map[string]string
	opts       Options
	upstreamCA *testCA // nil: the proxy's CA
}

type harness struct {
	t      *testing.T
	ca     *testCA
	env    map[string]string
	base   string // the proxy, https://127.0.0.1:port
	hits   atomic.Int64
	logs   *syncbuf.Buffer
	client *http.Client
	stop   func() error
}

// start runs an upstream and the proxy in front of it, stopped at cleanup.
func start(t *testing.T, s setup) *harness {
	t.Helper()
	h := &harness{t: t, ca: s.ca, logs: &syncbuf.Buffer{}}
	if h.ca == nil {
		h.ca = newTestCA(t)
	}
	upCA := s.upstreamCA
	if upCA == nil {
		upCA = h.ca
	}
	certPEM, keyPEM := upCA.leaf(t, "certctl-server", "localhost", "127.0.0.1")
	upCert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewUnstartedServer(echoUpstream(&h.hits))
	up.TLS = &tls.Config{Certificates: []tls.Certificate{upCert}}
	up.EnableHTTP2 = true
	up.Config.ErrorLog = log.New(io.Discard, "", 0)
	up.StartTLS()
	t.Cleanup(up.Close)

	h.env = pkiEnv(t, h.ca)
	h.env["FAULT_UPSTREAM"] = up.URL
	for k, v := range s.env {
		h.env[k] = v
	}
	cfg, err := LoadConfig(getenvFrom(h.env))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.base = "https://" + ln.Addr().String()
	opts := s.opts
	opts.Listener = ln
	opts.Logger = log.New(h.logs, "", 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, opts) }()
	var once sync.Once
	var runErr error
	h.stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() {
		if err := h.stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	waitFor(t, "the proxy to listen", func() bool { return strings.Contains(h.logs.String(), "listening on") })
	h.client = h.newClient(true)
	return h
}

func (h *harness) newClient(h2 bool) *http.Client {
	tr := &http.Transport{
		TLSClientConfig:    &tls.Config{RootCAs: h.ca.pool},
		ForceAttemptHTTP2:  h2,
		DisableCompression: true,
	}
	h.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

type response struct {
	*http.Response
	body string
}

func (h *harness) do(method, path string, body io.Reader) response {
	h.t.Helper()
	return h.doWith(method, path, body, nil)
}

// doWith is do with request headers.
func (h *harness) doWith(method, path string, body io.Reader, header http.Header) response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.base+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return response{resp, string(b)}
}

// stats reads the stats endpoint, refusing unknown or missing keys.
func (h *harness) stats() Stats {
	h.t.Helper()
	r := h.do(http.MethodGet, StatsPath, nil)
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "application/json" {
		h.t.Fatalf("stats: %d %q %s", r.StatusCode, r.Header.Get("Content-Type"), r.body)
	}
	var keys map[string]int64
	if err := json.Unmarshal([]byte(r.body), &keys); err != nil || len(keys) != 5 {
		h.t.Fatalf("stats body %s: %v", r.body, err)
	}
	var s Stats
	dec := json.NewDecoder(strings.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		h.t.Fatalf("stats body %s: %v", r.body, err)
	}
	return s
}
