package responder

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/letsencrypt/challtestsrv"
)

func TestLoadConfig(t *testing.T) {
	env := map[string]string{}
	c, err := LoadConfig(func(k string) string { return env[k] }, nil)
	if err != nil || c.HTTP01 != ":80" || c.Management != ":8055" || c.Healthcheck {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	env["RESPONDER_HTTP01"] = "80"
	if _, err := LoadConfig(func(k string) string { return env[k] }, nil); err == nil || !strings.Contains(err.Error(), "RESPONDER_HTTP01=\"80\"") {
		t.Errorf("a port without a colon: %v; want a refusal naming RESPONDER_HTTP01", err)
	}
	if _, err := LoadConfig(func(string) string { return "" }, []string{"--serve"}); err == nil {
		t.Error("an unknown argument was accepted")
	}
}

// A published token is served on the HTTP-01 path as its key authorization, a deleted one is not, and
// the request history names the host certctl asked for.
func TestPublishServeDelete(t *testing.T) {
	srv, err := challtestsrv.New(challtestsrv.Config{HTTPOneAddrs: []string{"127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	mgmt := httptest.NewServer(Management(srv))
	defer mgmt.Close()
	http01 := httptest.NewServer(srv)
	defer http01.Close()

	post := func(path, body string) int {
		t.Helper()
		r, err := http.Post(mgmt.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	fetch := func(token string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, http01.URL+"/.well-known/acme-challenge/"+token, nil)
		req.Host = "ch-3.challenge.loadtest.example.com"
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return string(b)
	}
	if code := post("/add-http01", `{"token":"tok1","content":"tok1.thumb"}`); code != http.StatusOK {
		t.Fatalf("add-http01: %d", code)
	}
	if got := fetch("tok1"); got != "tok1.thumb" {
		t.Errorf("served %q; want the published key authorization", got)
	}
	if code := post("/del-http01", `{"token":"tok1"}`); code != http.StatusOK {
		t.Fatalf("del-http01: %d", code)
	}
	if got := fetch("tok1"); got != "" {
		t.Errorf("served %q after the delete; want nothing", got)
	}
	for _, bad := range []struct{ path, body string }{{"/add-http01", `{"token":"t"}`}, {"/add-http01", `not json`}, {"/del-http01", `{}`}} {
		if code := post(bad.path, bad.body); code != http.StatusBadRequest {
			t.Errorf("%s %s: %d; want 400", bad.path, bad.body, code)
		}
	}
	r, err := http.Post(mgmt.URL+"/http-request-history", "application/json", strings.NewReader(`{"host":"ch-3.challenge.loadtest.example.com"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if n := strings.Count(string(b), `"URL":"/.well-known/acme-challenge/tok1"`); n != 2 {
		t.Errorf("history %s: %d fetches of tok1; want 2", b, n)
	}
}
