package tlsprobe

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

type pki struct {
	root, inter       *x509.Certificate
	rootKey, interKey *ecdsa.PrivateKey
}

func mk(t *testing.T, tmpl, parent *x509.Certificate, pub, signer any) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c
}

func newPKI(t *testing.T) *pki {
	p := &pki{}
	p.rootKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p.interKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	ca := func(cn string, serial int64) *x509.Certificate {
		return &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	}
	p.root = mk(t, ca("root", 1), ca("root", 1), &p.rootKey.PublicKey, p.rootKey)
	p.inter = mk(t, ca("issuing", 2), p.root, &p.interKey.PublicKey, p.rootKey)
	return p
}

// leaf issues a certificate for name with serial; withChain puts the intermediate in the pair.
func (p *pki) leaf(t *testing.T, name string, serial int64, withChain bool) tls.Certificate {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	c := mk(t, &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, p.inter, &k.PublicKey, p.interKey)
	out := tls.Certificate{Certificate: [][]byte{c.Raw}, PrivateKey: k}
	if withChain {
		out.Certificate = append(out.Certificate, p.inter.Raw)
	}
	return out
}

// serve listens on loopback with the pair current() gives at each handshake.
func serve(t *testing.T, current func() *tls.Certificate) string {
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return current(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func prober(p *pki) *Prober {
	roots := x509.NewCertPool()
	roots.AddCert(p.root)
	return &Prober{Roots: roots, Now: time.Now, Timeout: 2 * time.Second,
		// The certificates name "target"; the listener is on loopback.
		Dial: func(ctx context.Context, addr string, cfg *tls.Config) (*tls.Conn, error) {
			_, port, _ := net.SplitHostPort(addr)
			c, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", "127.0.0.1:"+port)
			if err != nil {
				return nil, err
			}
			return c.(*tls.Conn), nil
		}}
}

func TestOnceReportsLeafAndVerification(t *testing.T) {
	p := newPKI(t)
	full := p.leaf(t, "target", 0x0abc, true)
	leafOnly := p.leaf(t, "target", 0x0def, false)
	withChain := serve(t, func() *tls.Certificate { return &full })
	withoutChain := serve(t, func() *tls.Certificate { return &leafOnly })
	pr := prober(p)

	r := pr.Once(context.Background(), withChain, "target")
	if r.Error != "" || !r.Verified || r.Serial != "abc" || r.ChainLen != 2 || r.Issuer != "issuing" {
		t.Errorf("full chain: %+v", r)
	}
	// A leaf without its intermediate is still described, and does not verify: what a client sees
	// from a server that was given the certificate but not the chain.
	r = pr.Once(context.Background(), withoutChain, "target")
	if r.Error != "" || r.Verified || r.VerifyError == "" || r.Serial != "def" || r.ChainLen != 1 {
		t.Errorf("leaf only: %+v", r)
	}
	r = pr.Once(context.Background(), withChain, "other-name")
	if r.Verified {
		t.Errorf("a certificate for another name verified: %+v", r)
	}
}

func TestWaitSeesTheRotation(t *testing.T) {
	p := newPKI(t)
	old, next := p.leaf(t, "target", 1, true), p.leaf(t, "target", 2, true)
	var rotated atomic.Bool
	addr := serve(t, func() *tls.Certificate {
		if rotated.Load() {
			return &next
		}
		return &old
	})
	ts := httptest.NewServer(prober(p).Handler())
	defer ts.Close()
	time.AfterFunc(300*time.Millisecond, func() { rotated.Store(true) })
	t0 := time.Now()
	resp, err := http.Get(ts.URL + "/served?addr=" + addr + "&name=target&want=0x02&interval=50ms&timeout=5s")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r Result
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if !r.Matched || r.Serial != "2" || r.Attempts < 2 || r.SeenUnixMS < t0.Add(300*time.Millisecond).UnixMilli() {
		t.Errorf("wait: %+v", r)
	}

	// Never rotated to 3: answers unmatched once the timeout has passed.
	resp2, err := http.Get(ts.URL + "/served?addr=" + addr + "&want=3&interval=50ms&timeout=300ms&name=target")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	r = Result{}
	_ = json.NewDecoder(resp2.Body).Decode(&r)
	if r.Matched || r.Serial != "2" || r.Want != "3" {
		t.Errorf("unmatched wait: %+v", r)
	}
}

func TestBadRequests(t *testing.T) {
	ts := httptest.NewServer(prober(newPKI(t)).Handler())
	defer ts.Close()
	for _, q := range []string{"", "addr=nohost", "addr=a:1&timeout=forever", "addr=a:1&interval=-1s"} {
		resp, err := http.Get(ts.URL + "/served?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%q: status %d, want 400", q, resp.StatusCode)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"0A:BC": "abc", "00abc": "abc", " ABC ": "abc", "0x02": "2", "zz": "zz"} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
