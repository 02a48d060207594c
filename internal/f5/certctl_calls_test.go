package f5

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// certctlWire puts on the wire exactly what certctl's F5 connector does,
// call by call, as listed in README.md ("Calls certctl makes", C1-C11).
// This module cannot import certctl, so the list is the contract: every
// row is exercised here with the same method, path, headers and body, and
// the response is read the way certctl reads it.
type certctlWire struct {
	t      *testing.T
	base   string
	client *http.Client
	user   string
	pass   string
	token  string
	logins int
}

func newWire(e *env) *certctlWire {
	return &certctlWire{t: e.t, base: e.ts.URL, client: e.ts.Client(), user: "admin", pass: "s3cret"}
}

// C1: POST /mgmt/shared/authn/login, JSON credentials, 200, token.token.
func (c *certctlWire) authenticate() error {
	body, _ := json.Marshal(map[string]string{"username": c.user, "password": c.pass, "loginProviderName": "tmos"})
	req, _ := http.NewRequest(http.MethodPost, c.base+"/mgmt/shared/authn/login", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	c.logins++
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("F5 auth failed with status %d: %s", resp.StatusCode, b)
	}
	var login struct {
		Token struct {
			Value string `json:"token"`
		} `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&login); err != nil {
		return err
	}
	if login.Token.Value == "" {
		return fmt.Errorf("the login answered no token.token")
	}
	c.token = login.Token.Value
	return nil
}

// C2: every other call carries X-F5-Auth-Token and Content-Type JSON
// (per-call headers override), and is retried once after a re-login on 401.
func (c *certctlWire) do(method, path string, body []byte, extra map[string]string) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(body))
		req.Header.Set("X-F5-Auth-Token", c.token)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range extra {
			req.Header.Set(k, v)
		}
		resp, err := c.client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 {
			if err := c.authenticate(); err != nil {
				return 0, nil, err
			}
			continue
		}
		return resp.StatusCode, b, nil
	}
}

func (c *certctlWire) expect(what string, code int, body []byte, err error, ok ...int) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for _, o := range ok {
		if code == o {
			return nil
		}
	}
	return fmt.Errorf("%s failed with status %d: %s", what, code, body)
}

// C3
func (c *certctlWire) uploadFile(name string, data []byte) error {
	code, b, err := c.do(http.MethodPost, "/mgmt/shared/file-transfer/uploads/"+name, data, map[string]string{
		"Content-Type": "application/octet-stream", "Content-Range": wholeRange(len(data)),
	})
	return c.expect("upload "+name, code, b, err, 200)
}

// C4 (kind "cert") and C5 (kind "key")
func (c *certctlWire) install(kind, name, localFile string) error {
	body, _ := json.Marshal(map[string]string{"command": "install", "name": name, "from-local-file": localFile})
	code, b, err := c.do(http.MethodPost, "/mgmt/tm/sys/crypto/"+kind, body, nil)
	return c.expect("install "+kind+" "+name, code, b, err, 200)
}

// C6: transId is read as a json.Number, so a number or a string will do.
func (c *certctlWire) createTransaction() (string, error) {
	code, b, err := c.do(http.MethodPost, "/mgmt/tm/transaction", []byte("{}"), nil)
	if err := c.expect("create transaction", code, b, err, 200); err != nil {
		return "", err
	}
	var tx struct {
		ID json.Number `json:"transId"`
	}
	if err := json.Unmarshal(b, &tx); err != nil {
		return "", err
	}
	if tx.ID.String() == "" {
		return "", fmt.Errorf("the transaction answered no transId")
	}
	return tx.ID.String(), nil
}

// C7: tilde path in the URL, slash paths in the body, and certctl's own
// transaction header.
func (c *certctlWire) updateSSLProfile(partition, profile, cert, key, chain, transID string) error {
	body := map[string]string{"cert": "/" + partition + "/" + cert, "key": "/" + partition + "/" + key}
	if chain != "" {
		body["chain"] = "/" + partition + "/" + chain
	}
	j, _ := json.Marshal(body)
	hdr := map[string]string{}
	if transID != "" {
		hdr["X-F5-REST-Overriding-Collection"] = "/mgmt/tm/transaction/" + transID
	}
	code, b, err := c.do(http.MethodPatch, "/mgmt/tm/ltm/profile/client-ssl/~"+partition+"~"+profile, j, hdr)
	return c.expect("update SSL profile", code, b, err, 200)
}

// C8
func (c *certctlWire) commitTransaction(transID string) error {
	code, b, err := c.do(http.MethodPatch, "/mgmt/tm/transaction/"+transID, []byte(`{"state":"VALIDATING"}`), nil)
	return c.expect("commit transaction "+transID, code, b, err, 200)
}

type sslProfileInfo struct {
	Name  string `json:"name"`
	Cert  string `json:"cert"`
	Key   string `json:"key"`
	Chain string `json:"chain"`
}

// C9
func (c *certctlWire) getSSLProfile(partition, profile string) (*sslProfileInfo, error) {
	code, b, err := c.do(http.MethodGet, "/mgmt/tm/ltm/profile/client-ssl/~"+partition+"~"+profile, nil, nil)
	if err := c.expect("get SSL profile", code, b, err, 200); err != nil {
		return nil, err
	}
	var info sslProfileInfo
	return &info, json.Unmarshal(b, &info)
}

// C10 (kind "cert") and C11 (kind "key"): 200 or 204.
func (c *certctlWire) deleteObject(kind, partition, name string) error {
	code, b, err := c.do(http.MethodDelete, "/mgmt/tm/sys/crypto/"+kind+"/~"+partition+"~"+name, nil, nil)
	return c.expect("delete "+kind+" "+name, code, b, err, 200, 204)
}

type deployment struct{ cert, key, chain string }

// deploy is DeployCertificate's sequence: C1, C3 x2-3, C4, C5, [C4 chain],
// C6, C7, C8, and C10/C11 for what was installed when a later step fails.
func (c *certctlWire) deploy(partition, profile string, certPEM, keyPEM, chainPEM []byte) (deployment, error) {
	if err := c.authenticate(); err != nil {
		return deployment{}, err
	}
	n := time.Now().UnixNano()
	d := deployment{cert: fmt.Sprintf("certctl-cert-%d", n), key: fmt.Sprintf("certctl-key-%d", n+1)}
	hasChain := strings.TrimSpace(string(chainPEM)) != ""
	if hasChain {
		d.chain = fmt.Sprintf("certctl-chain-%d", n+2)
	}
	if err := c.uploadFile(d.cert+".pem", certPEM); err != nil {
		return d, err
	}
	if err := c.uploadFile(d.key+".pem", keyPEM); err != nil {
		return d, err
	}
	if hasChain {
		if err := c.uploadFile(d.chain+".pem", chainPEM); err != nil {
			return d, err
		}
	}
	var certs, keys []string
	cleanup := func() {
		for _, name := range certs {
			if err := c.deleteObject("cert", partition, name); err != nil {
				c.t.Errorf("cleanup: %v", err)
			}
		}
		for _, name := range keys {
			if err := c.deleteObject("key", partition, name); err != nil {
				c.t.Errorf("cleanup: %v", err)
			}
		}
	}
	if err := c.install("cert", d.cert, downloadsDir+d.cert+".pem"); err != nil {
		return d, err
	}
	certs = append(certs, d.cert)
	if err := c.install("key", d.key, downloadsDir+d.key+".pem"); err != nil {
		cleanup()
		return d, err
	}
	keys = append(keys, d.key)
	if hasChain {
		if err := c.install("cert", d.chain, downloadsDir+d.chain+".pem"); err != nil {
			cleanup()
			return d, err
		}
		certs = append(certs, d.chain)
	}
	transID, err := c.createTransaction()
	if err != nil {
		cleanup()
		return d, err
	}
	if err := c.updateSSLProfile(partition, profile, d.cert, d.key, d.chain, transID); err != nil {
		cleanup()
		return d, err
	}
	if err := c.commitTransaction(transID); err != nil {
		cleanup()
		return d, err
	}
	return d, nil
}

// validate is ValidateDeployment's sequence: C1, C9, and a non-empty cert.
func (c *certctlWire) validate(partition, profile string) (*sslProfileInfo, error) {
	if err := c.authenticate(); err != nil {
		return nil, err
	}
	p, err := c.getSSLProfile(partition, profile)
	if err != nil {
		return nil, err
	}
	if p.Cert == "" {
		return nil, fmt.Errorf("SSL profile %q has no certificate configured", profile)
	}
	return p, nil
}

func TestCertctlEachCall(t *testing.T) {
	e := newEnv(t, nil)
	c := newWire(e)
	certPEM, keyPEM := getCA(t).issue(t, "calls.example.test", 0)

	if err := c.authenticate(); err != nil { // C1
		t.Fatal(err)
	}
	if err := c.uploadFile("certctl-cert-1.pem", certPEM); err != nil { // C3
		t.Fatalf("C3: %v", err)
	}
	if err := c.uploadFile("certctl-key-1.pem", keyPEM); err != nil {
		t.Fatalf("C3: %v", err)
	}
	if err := c.install("cert", "certctl-cert-1", downloadsDir+"certctl-cert-1.pem"); err != nil { // C4
		t.Fatalf("C4: %v", err)
	}
	if err := c.install("key", "certctl-key-1", downloadsDir+"certctl-key-1.pem"); err != nil { // C5
		t.Fatalf("C5: %v", err)
	}
	id, err := c.createTransaction() // C6
	if err != nil {
		t.Fatalf("C6: %v", err)
	}
	if err := c.updateSSLProfile("Common", "lt-f5", "certctl-cert-1", "certctl-key-1", "", id); err != nil { // C7
		t.Fatalf("C7: %v", err)
	}
	if p, _ := c.getSSLProfile("Common", "lt-f5"); p.Cert != "/Common/default.crt" {
		t.Errorf("C7 applied before the commit: %+v", p)
	}
	if err := c.commitTransaction(id); err != nil { // C8
		t.Fatalf("C8: %v", err)
	}
	p, err := c.getSSLProfile("Common", "lt-f5") // C9
	if err != nil || *p != (sslProfileInfo{Name: "lt-f5", Cert: "/Common/certctl-cert-1", Key: "/Common/certctl-key-1", Chain: "none"}) {
		t.Fatalf("C9: %+v %v", p, err)
	}
	// C10/C11 on objects no profile uses.
	if err := c.uploadFile("certctl-cert-2.pem", certPEM); err != nil {
		t.Fatal(err)
	}
	if err := c.uploadFile("certctl-key-2.pem", keyPEM); err != nil {
		t.Fatal(err)
	}
	if err := c.install("cert", "certctl-cert-2", downloadsDir+"certctl-cert-2.pem"); err != nil {
		t.Fatal(err)
	}
	if err := c.install("key", "certctl-key-2", downloadsDir+"certctl-key-2.pem"); err != nil {
		t.Fatal(err)
	}
	if err := c.deleteObject("cert", "Common", "certctl-cert-2"); err != nil { // C10
		t.Fatalf("C10: %v", err)
	}
	if err := c.deleteObject("key", "Common", "certctl-key-2"); err != nil { // C11
		t.Fatalf("C11: %v", err)
	}
	if c.logins != 1 {
		t.Errorf("%d logins, want 1", c.logins)
	}
}

func TestCertctlDeployAndValidate(t *testing.T) {
	e := newEnv(t, nil)
	c := newWire(e)
	ca := getCA(t)

	for _, withChain := range []bool{false, true} {
		certPEM, keyPEM := ca.issue(t, "deploy.example.test", 0)
		var chain []byte
		if withChain {
			chain = ca.pem
		}
		d, err := c.deploy("Common", "lt-f5", certPEM, keyPEM, chain)
		if err != nil {
			t.Fatalf("deploy (chain %v): %v", withChain, err)
		}
		p, err := c.validate("Common", "lt-f5")
		if err != nil {
			t.Fatal(err)
		}
		wantChain := "none"
		if withChain {
			wantChain = "/Common/" + d.chain
		}
		if p.Cert != "/Common/"+d.cert || p.Key != "/Common/"+d.key || p.Chain != wantChain {
			t.Errorf("validate sees %+v after deploying %+v", p, d)
		}
	}

	// A key that is not the certificate's: the commit fails, certctl's
	// cleanup deletes what it installed, and the profile keeps its pair.
	before, _ := c.validate("Common", "lt-f5")
	certPEM, _ := ca.issue(t, "deploy.example.test", 0)
	_, wrongKey := ca.issue(t, "other.example.test", 0)
	d, err := c.deploy("Common", "lt-f5", certPEM, wrongKey, nil)
	if err == nil || !strings.Contains(err.Error(), "commit transaction") || !strings.Contains(err.Error(), "status 400") {
		t.Fatalf("mismatched deploy: %v", err)
	}
	after, _ := c.validate("Common", "lt-f5")
	if *after != *before {
		t.Errorf("failed deploy changed the profile: %+v -> %+v", before, after)
	}
	// No route reads a crypto object (certctl never does), so the test
	// looks in the stores.
	e.api.mu.Lock()
	_, certLeft := e.api.certs.get("/Common/" + d.cert)
	_, keyLeft := e.api.keys.get("/Common/" + d.key)
	e.api.mu.Unlock()
	if certLeft || keyLeft {
		t.Errorf("after cleanup: certificate left %v, key left %v, want neither", certLeft, keyLeft)
	}

	// A profile that does not exist: C7 is queued, the commit answers 404's
	// message inside a 400, as BIG-IP does for a failed transaction.
	certPEM, keyPEM := ca.issue(t, "deploy.example.test", 0)
	if _, err := c.deploy("Common", "no-such-profile", certPEM, keyPEM, nil); err == nil || !strings.Contains(err.Error(), "was not found") {
		t.Errorf("deploy to a missing profile: %v", err)
	}
}

// C2's retry: a token that stops working mid-session (expired, deleted)
// costs one 401, one login and one repeat of the request.
func TestCertctlReauthOn401(t *testing.T) {
	e := newEnv(t, nil)
	c := newWire(e)
	if err := c.authenticate(); err != nil {
		t.Fatal(err)
	}
	// No route deletes a token (certctl never does), so the test does it.
	e.api.mu.Lock()
	delete(e.api.tokens, c.token)
	e.api.mu.Unlock()
	p, err := c.getSSLProfile("Common", "lt-f5")
	if err != nil || p.Cert == "" {
		t.Fatalf("after re-auth: %+v %v", p, err)
	}
	if c.logins != 2 {
		t.Errorf("%d logins, want 2", c.logins)
	}

	e.clock.advance(tokenTimeout * time.Second)
	if _, err := c.getSSLProfile("Common", "lt-f5"); err != nil || c.logins != 3 {
		t.Errorf("after expiry: %v, %d logins", err, c.logins)
	}
}

// certctl's agent builds a new connector per job and never deletes its
// token, so the 101st job inside a token lifetime meets BIG-IP's limit.
func TestCertctlMeetsTokenLimit(t *testing.T) {
	e := newEnv(t, nil)
	var err error
	n := 0
	for ; n < DefaultMaxTokens+1 && err == nil; n++ {
		err = newWire(e).authenticate()
	}
	if err == nil || n != DefaultMaxTokens+1 || !strings.Contains(err.Error(), "status 400") || !strings.Contains(err.Error(), "maximum active login tokens") {
		t.Fatalf("after %d logins: %v", n, err)
	}
	e.clock.advance(tokenTimeout * time.Second)
	if err := newWire(e).authenticate(); err != nil {
		t.Errorf("after the tokens expired: %v", err)
	}
}
