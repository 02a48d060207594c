// Package tlsprobe tells the deploy tier what a target serves: k6 can time a handshake but cannot see
// the peer's certificate, and "deployed" means a new serial on the wire, not a job marked Completed.
// One HTTP endpoint on the stack's network:
//
//	GET /served?addr=host:port[&name=SNI][&want=SERIAL&timeout=90s&interval=250ms]
//
// does a fresh TLS handshake with the target and answers its leaf (serial, names, validity) and
// whether the chain it sent verifies to the run's root CA for that name. With want, it handshakes
// every interval until the leaf's serial is want (or the timeout), and answers the first match with
// the time it was first seen: the moment the deployment became visible to clients.
package tlsprobe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"time"
)

// Result is one answer. Serial is lower-case hex without leading zeros or colons, the form Normalize
// gives; a client compares serials only in that form.
type Result struct {
	Addr        string    `json:"addr"`
	Serial      string    `json:"serial,omitempty"`
	Subject     string    `json:"subject_cn,omitempty"`
	Issuer      string    `json:"issuer_cn,omitempty"`
	DNSNames    []string  `json:"dns_names,omitempty"`
	NotAfter    time.Time `json:"not_after,omitempty"`
	ChainLen    int       `json:"chain_len"`
	Verified    bool      `json:"verified"`
	VerifyError string    `json:"verify_error,omitempty"`
	// Error: no handshake at all (refused, reset, timeout, TLS alert).
	Error       string  `json:"error,omitempty"`
	HandshakeMS float64 `json:"handshake_ms"`
	// With want: whether it was seen, when first (Unix ms), and how many handshakes it took.
	Want       string `json:"want,omitempty"`
	Matched    bool   `json:"matched"`
	SeenUnixMS int64  `json:"seen_unix_ms,omitempty"`
	Attempts   int    `json:"attempts"`
	// Failed handshakes while waiting (a target that drops connections during its reload).
	FailedHandshakes int `json:"failed_handshakes"`
}

// Normalize turns a serial in any usual spelling (hex with or without colons, any case, leading
// zeros) into the one Result uses.
func Normalize(s string) string {
	s = strings.ToLower(strings.NewReplacer(":", "", " ", "").Replace(strings.TrimSpace(s)))
	s = strings.TrimPrefix(s, "0x")
	n, ok := new(big.Int).SetString(s, 16)
	if !ok {
		return s
	}
	return n.Text(16)
}

// Prober does the handshakes. Roots is the run's CA; Now and Dial are injected for tests.
type Prober struct {
	Roots   *x509.CertPool
	Now     func() time.Time
	Timeout time.Duration // of one handshake
	Dial    func(ctx context.Context, addr string, cfg *tls.Config) (*tls.Conn, error)
}

func (p *Prober) dial(ctx context.Context, addr string, cfg *tls.Config) (*tls.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, addr, cfg)
	}
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: cfg}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return c.(*tls.Conn), nil
}

// Once is one fresh handshake. Verification is done here, not by crypto/tls, so that a certificate
// that does not verify is still described.
func (p *Prober) Once(ctx context.Context, addr, name string) Result {
	r := Result{Addr: addr}
	hctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	t0 := p.Now()
	//nolint:gosec // verified below against Roots, so that a wrong chain is reported rather than refused
	conn, err := p.dial(hctx, addr, &tls.Config{ServerName: name, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})
	r.HandshakeMS = float64(p.Now().Sub(t0).Microseconds()) / 1000
	if err != nil {
		r.Error = err.Error()
		return r
	}
	state := conn.ConnectionState()
	conn.Close()
	certs := state.PeerCertificates
	r.ChainLen = len(certs)
	if len(certs) == 0 {
		r.Error = "no certificate served"
		return r
	}
	leaf := certs[0]
	r.Serial = leaf.SerialNumber.Text(16)
	r.Subject, r.Issuer, r.DNSNames, r.NotAfter = leaf.Subject.CommonName, leaf.Issuer.CommonName, leaf.DNSNames, leaf.NotAfter
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: p.Roots, Intermediates: inter, DNSName: name, CurrentTime: p.Now()}); err != nil {
		r.VerifyError = err.Error()
	} else {
		r.Verified = true
	}
	return r
}

// Wait handshakes every interval until the leaf's serial is want or timeout passes.
func (p *Prober) Wait(ctx context.Context, addr, name, want string, timeout, interval time.Duration) Result {
	want = Normalize(want)
	deadline := p.Now().Add(timeout)
	failed, n := 0, 0
	for {
		r := p.Once(ctx, addr, name)
		n++
		if r.Error != "" {
			failed++
		}
		r.Want, r.Attempts, r.FailedHandshakes = want, n, failed
		if r.Error == "" && r.Serial == want {
			r.Matched, r.SeenUnixMS = true, p.Now().UnixMilli()
			return r
		}
		if !p.Now().Add(interval).Before(deadline) || ctx.Err() != nil {
			return r
		}
		select {
		case <-ctx.Done():
			return r
		case <-time.After(interval):
		}
	}
}

// Handler serves /served and /healthz.
func (p *Prober) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/served", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		addr := q.Get("addr")
		host, _, err := net.SplitHostPort(addr)
		if err != nil || host == "" {
			http.Error(w, fmt.Sprintf("addr=%q: want host:port", addr), http.StatusBadRequest)
			return
		}
		name := q.Get("name")
		if name == "" {
			name = host
		}
		dur := func(k string, def, max time.Duration) (time.Duration, error) {
			v := q.Get(k)
			if v == "" {
				return def, nil
			}
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > max {
				return 0, fmt.Errorf("%s=%q: want a duration up to %s", k, v, max)
			}
			return d, nil
		}
		timeout, err1 := dur("timeout", 90*time.Second, 30*time.Minute)
		interval, err2 := dur("interval", 250*time.Millisecond, time.Minute)
		if err1 != nil || err2 != nil {
			http.Error(w, fmt.Sprint(firstErr(err1, err2)), http.StatusBadRequest)
			return
		}
		var res Result
		if want := q.Get("want"); want != "" {
			res = p.Wait(r.Context(), addr, name, want, timeout, interval)
		} else {
			res = p.Once(r.Context(), addr, name)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(res)
	})
	return mux
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
