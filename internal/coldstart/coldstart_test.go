package coldstart

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A restart's answers in the order sent: before, drained by the old process, the outage, back.
func TestPhases(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	restart := at.Add(10 * time.Second)
	var as []answer
	// At tenths of a second.
	add := func(tenth int, ms float64, ok bool) {
		as = append(as, answer{at.Add(time.Duration(tenth) * 100 * time.Millisecond), ms, ok})
	}
	for i := 0; i < 100; i++ {
		add(i, 5, true)
	}
	add(100, 6, true) // the old process still answers
	add(101, 7, true)
	for i := 102; i < 120; i++ {
		add(i, 1, false)
	}
	add(120, 300, true) // the first answer, 300 ms after it was sent
	add(121, 1, false)  // a failure once back
	for i := 122; i < 250; i++ {
		add(i, 8, true)
	}
	u := phases(as, restart, 10)
	if u.Before.N != 100 || u.Drained != 2 || u.Failed != 18 || u.FailedAfter != 1 || u.After.N != Requests || u.After.FirstMS != 300 {
		t.Fatalf("%+v", u)
	}
	if u.ToFirstOKS != 2.3 {
		t.Errorf("to first answer %g s; want 2.3 (sent at 12.0 s, answered 300 ms later, restart at 10 s)", u.ToFirstOKS)
	}
}

// fakeCertctl is a certctl that a compose stand-in stops and starts: down, it refuses with 503; a start
// takes boot before /health answers, and the first listings after it are slow.
type fakeCertctl struct {
	down     atomic.Bool
	upAt     atomic.Int64
	listings atomic.Int64
	boot     time.Duration
}

func (f *fakeCertctl) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.down.Load() || time.Now().UnixNano() < f.upAt.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get("Authorization") != "Bearer key" && r.URL.Path != "/health" {
		http.Error(w, "no", http.StatusUnauthorized)
		return
	}
	if r.URL.Path == "/api/v1/certificates" && f.listings.Add(1) <= 5 {
		time.Sleep(20 * time.Millisecond)
	}
	w.Write([]byte(`{"data":[],"total":0}`))
}

func (f *fakeCertctl) compose(_ context.Context, args ...string) error {
	switch args[0] {
	case "stop":
		f.down.Store(true)
	case "restart":
		f.down.Store(true)
		go func() {
			time.Sleep(100 * time.Millisecond)
			f.listings.Store(0)
			f.upAt.Store(time.Now().Add(f.boot).UnixNano())
			f.down.Store(false)
		}()
	}
	return nil
}

func TestMeasureAFakeRestart(t *testing.T) {
	f := &fakeCertctl{boot: 300 * time.Millisecond}
	srv := httptest.NewTLSServer(f)
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	// certctl's name as the stack gives it, reached at the test server's address (ConnectTo).
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	tg := Target{URL: "https://example.com:" + port, Key: "key", CAFile: ca, ConnectTo: "example.com:" + port + ":127.0.0.1:" + port}
	s := Measure(context.Background(), tg, f.compose, Config{Server: "certctl-server", StartTimeout: 10 * time.Second, LoadRate: 50, Before: 2 * time.Second}, t.Logf)
	if s.Problem != "" {
		t.Fatal(s.Problem)
	}
	if s.ToHealthyS < 0.4 || s.ToHealthyS > 3 {
		t.Errorf("to healthy %g s; want about 0.4 (start 100 ms, boot 300 ms)", s.ToHealthyS)
	}
	if s.First.N != Requests || s.First.FirstMS < 20 || s.First.Max < 20 || s.Warm.N != Requests || s.Warm.Max >= 20 {
		t.Errorf("first %+v warm %+v", s.First, s.Warm)
	}
	u := s.UnderLoad
	if u == nil || u.Failed == 0 || u.After.N != Requests || u.Before.N < 90 || u.ToFirstOKS < 0.4 {
		t.Errorf("under load %+v", u)
	}
	r := Result{Schema: Schema, Build: "fake", Sizes: []Size{s}}
	if txt := Text(r); !strings.Contains(txt, "cold start of fake") {
		t.Errorf("text:\n%s", txt)
	}
}

// Without the CA the client has nothing to trust, and says which file.
func TestClientNeedsTheCA(t *testing.T) {
	if _, err := Client(Target{CAFile: filepath.Join(t.TempDir(), "none.crt")}); err == nil || !strings.Contains(err.Error(), "none.crt") {
		t.Errorf("err %v", err)
	}
}
