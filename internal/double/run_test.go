package double

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeSelfSigned writes a throwaway P-256 certificate for 127.0.0.1 and
// returns the cert and key paths.
func writeSelfSigned(t *testing.T) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "certctl-double test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certPath, keyPath = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

// testRunHTTPS boots the whole program on a loopback port: TLS 1.3 only,
// HTTP/2 negotiated, graceful stop on context cancel, and the
// DOUBLE_EXIT_AFTER timer wired to the injected exit function.
func testRunHTTPS(t *testing.T, dbURL string) {
	certPath, keyPath := writeSelfSigned(t)
	cfg := testConfig()
	cfg.DatabaseURL, cfg.TLSCertPath, cfg.TLSKeyPath = dbURL, certPath, keyPath
	cfg.Host, cfg.Port = "127.0.0.1", 0
	cfg.Faults.ExitAfter = 300 * time.Millisecond

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan net.Addr, 1)
	exits := make(chan int, 1)
	var stdout strings.Builder
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- Run(ctx, cfg, RunOptions{
			Stdout:   &stdout,
			Stderr:   testLogWriter{t},
			Exit:     func(code int) { exits <- code },
			OnListen: func(a net.Addr) { addrs <- a },
		})
	}()
	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("Run returned before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not start listening")
	}

	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		ForceAttemptHTTP2: true,
	}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://" + addr.String() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 || resp.TLS.Version != tls.VersionTLS13 {
		t.Errorf("/health over %s, TLS %x: %d; want HTTP/2 over TLS 1.3", resp.Proto, resp.TLS.Version, resp.StatusCode)
	}

	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}}}
	if _, err := old.Get("https://" + addr.String() + "/health"); err == nil {
		t.Error("a TLS 1.2 client was served; certctl requires TLS 1.3")
	}
	plain := &http.Client{Timeout: 2 * time.Second}
	if resp, err := plain.Get("http://" + addr.String() + "/health"); err == nil && resp.StatusCode == 200 {
		t.Error("plain HTTP served /health; the double is HTTPS only")
	}

	select {
	case code := <-exits:
		if code != 1 {
			t.Errorf("DOUBLE_EXIT_AFTER exit status %d, want 1", code)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("exit after %s, before DOUBLE_EXIT_AFTER=300ms", d)
		}
	case <-time.After(5 * time.Second):
		t.Error("DOUBLE_EXIT_AFTER=300ms never called exit")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not stop after cancel")
	}
	if !strings.Contains(stdout.String(), "listening on https://"+addr.String()) || !strings.Contains(stdout.String(), "exit_after=300ms") {
		t.Errorf("startup line: %q", stdout.String())
	}
}
