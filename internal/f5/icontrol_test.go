package f5

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLoginAndTokenFlow(t *testing.T) {
	e := newEnv(t, nil)

	code, m, _ := e.call("POST", loginPath, nil, map[string]string{"username": "admin", "password": "wrong", "loginProviderName": "tmos"})
	assertErrShape(t, code, m, 401)
	if m["message"] != "Authentication failed." {
		t.Errorf("message %q", m["message"])
	}

	code, m, _ = e.call("POST", loginPath, nil, map[string]string{"username": "admin", "password": "s3cret", "loginProviderName": "tmos"})
	if code != 200 {
		t.Fatalf("login: %d %v", code, m)
	}
	tok := m["token"].(map[string]any)
	value, _ := tok["token"].(string)
	if len(value) != 26 || strings.ToUpper(value) != value {
		t.Errorf("token %q does not look like BIG-IP's", value)
	}
	if tok["userName"] != "admin" || tok["timeout"] != float64(1200) || m["username"] != "admin" || m["loginProviderName"] != "tmos" {
		t.Errorf("login body %v", m)
	}

	code, m, _ = e.call("GET", clientSSLPath+"/~Common~lt-f5", map[string]string{"X-F5-Auth-Token": value}, nil)
	if code != 200 || m["kind"] != "tm:ltm:profile:client-ssl:client-sslstate" {
		t.Fatalf("profile with token: %d %v", code, m)
	}
	code, m, _ = e.call("GET", clientSSLPath+"/~Common~lt-f5", map[string]string{"X-F5-Auth-Token": "NOSUCHTOKEN"}, nil)
	assertErrShape(t, code, m, 401)
	if m["message"] != "X-F5-Auth-Token does not exist." {
		t.Errorf("unknown token: message %q", m["message"])
	}
}

func TestNoTokenIs401InBIGIPShape(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []struct{ method, path string }{
		{"GET", clientSSLPath + "/~Common~clientssl"},
		{"POST", certPath},
		{"POST", uploadsPrefix + "x.pem"},
		{"POST", txnPath},
	} {
		code, m, _ := e.call(c.method, c.path, nil, "{}")
		assertErrShape(t, code, m, 401)
		msg, _ := m["message"].(string)
		if !strings.HasPrefix(msg, "Authorization failed: no user authentication header or token detected. Uri:http://localhost:8100"+c.path) {
			t.Errorf("%s %s: message %q", c.method, c.path, msg)
		}
		if m["apiError"] != float64(1) {
			t.Errorf("apiError %v", m["apiError"])
		}
	}
}

// The stand-in answers only certctl's calls: a path certctl never calls is
// not registered, a method it never uses on a path it calls is not allowed,
// and only its own credentials and transaction header count.
func TestRemovedRoutes(t *testing.T) {
	e := newEnv(t, nil)
	txn := e.mustStatus(200, "POST", txnPath, nil, map[string]any{})
	id := fmt.Sprintf("%.0f", txn["transId"].(float64))
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/mgmt/shared/authz/tokens", 404},
		{"DELETE", "/mgmt/shared/authz/tokens/" + e.token, 404},
		{"PATCH", "/mgmt/shared/authz/tokens/" + e.token, 404},
		{"GET", "/mgmt/tm/sys/version", 404},
		{"GET", clientSSLPath, 404},
		{"POST", clientSSLPath, 404},
		{"GET", txnPath + "/" + id + "/commands", 404},
		{"DELETE", txnPath + "/" + id + "/commands/1", 404},
		{"GET", certPath, 405},
		{"GET", certPath + "/~Common~default.crt", 405},
		{"GET", keyPath + "/~Common~default.key", 405},
		{"PUT", clientSSLPath + "/~Common~lt-f5", 405},
		{"DELETE", clientSSLPath + "/~Common~lt-f5", 405},
		{"GET", txnPath, 405},
		{"GET", txnPath + "/" + id, 405},
		{"DELETE", txnPath + "/" + id, 405},
	} {
		code, m := e.authed(c.method, c.path, nil, "{}")
		assertErrShape(t, code, m, c.want)
		msg, _ := m["message"].(string)
		if want := map[int]string{404: "URI path " + c.path + " not registered.", 405: "Method " + c.method + " is not supported on " + c.path}[c.want]; !strings.HasPrefix(msg, want) {
			t.Errorf("%s %s: message %q, want it to start with %q", c.method, c.path, msg, want)
		}
	}
	// Nor can a transaction take what the route refuses.
	code, m := e.authed("DELETE", clientSSLPath+"/~Common~lt-f5", map[string]string{"X-F5-REST-Overriding-Collection": txnPath + "/" + id}, nil)
	assertErrShape(t, code, m, 405)

	// The profile survived the DELETEs above, and the transaction the GET.
	e.mustStatus(200, "GET", clientSSLPath+"/~Common~lt-f5", nil, nil)
	e.mustStatus(200, "PATCH", txnPath+"/"+id, nil, map[string]string{"state": "VALIDATING"})

	// HTTP basic auth is no credential.
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:s3cret"))
	code, m, _ = e.call("GET", clientSSLPath+"/~Common~lt-f5", map[string]string{"Authorization": basic}, nil)
	assertErrShape(t, code, m, 401)
	if msg, _ := m["message"].(string); !strings.HasPrefix(msg, "Authorization failed: no user authentication header or token detected.") {
		t.Errorf("basic auth: message %q", msg)
	}
	code, m, _ = e.call("POST", loginPath, map[string]string{"Authorization": basic}, nil)
	assertErrShape(t, code, m, 401)

	// BIG-IP's own transaction header queues nothing: the change is made
	// at once, as it would be without any header.
	id = fmt.Sprintf("%.0f", e.mustStatus(200, "POST", txnPath, nil, map[string]any{})["transId"].(float64))
	p := e.mustStatus(200, "PATCH", clientSSLPath+"/~Common~lt-f5", map[string]string{"X-F5-REST-Coordination-Id": id}, map[string]string{"ciphers": "DEFAULT:!RC4"})
	if p["kind"] != "tm:ltm:profile:client-ssl:client-sslstate" || p["ciphers"] != "DEFAULT:!RC4" {
		t.Errorf("PATCH with X-F5-REST-Coordination-Id: %v", p)
	}
}

func TestTokenExpiry(t *testing.T) {
	e := newEnv(t, nil)
	path := clientSSLPath + "/~Common~lt-f5"
	e.mustStatus(200, "GET", path, nil, nil)
	e.clock.advance(1199 * time.Second)
	e.mustStatus(200, "GET", path, nil, nil)
	e.clock.advance(2 * time.Second)
	code, m := e.authed("GET", path, nil, nil)
	assertErrShape(t, code, m, 401)
}

func TestTokenLimit(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxTokens = 3 })
	for range 3 {
		e.login()
	}
	code, m, _ := e.call("POST", loginPath, nil, map[string]string{"username": "admin", "password": "s3cret"})
	assertErrShape(t, code, m, 400)
	// BIG-IP names the user by its UUID: MD5 of the name as a v3 UUID.
	if want := "user " + userUUID("admin") + " has reached maximum active login tokens"; m["message"] != want {
		t.Errorf("message %q, want %q", m["message"], want)
	}
	if userUUID("admin") != "21232f29-7a57-35a7-8389-4a0e4a801fc3" {
		t.Errorf("userUUID(admin) = %s", userUUID("admin"))
	}

	// Only expiry frees a slot: certctl never deletes its token.
	e.clock.advance(1201 * time.Second)
	e.login()

	u := newEnv(t, func(c *Config) { c.MaxTokens = 0 })
	for range 150 {
		u.login()
	}
}

func TestUploadChecks(t *testing.T) {
	e := newEnv(t, nil)
	data := []byte("0123456789")

	code, m := e.authed("POST", uploadsPrefix+"a.pem", map[string]string{"Content-Type": "application/octet-stream"}, data)
	assertErrShape(t, code, m, 400)
	if !strings.Contains(m["message"].(string), "Content-Range") {
		t.Errorf("message %q", m["message"])
	}
	code, m = e.authed("POST", uploadsPrefix+"a.pem", map[string]string{"Content-Range": "0-4/10"}, data)
	assertErrShape(t, code, m, 400)
	code, m = e.authed("POST", uploadsPrefix+"a.pem", map[string]string{"Content-Range": "0-10/10"}, data)
	assertErrShape(t, code, m, 400)
	code, m = e.authed("GET", uploadsPrefix+"a.pem", nil, nil)
	assertErrShape(t, code, m, 405)

	// Two chunks, the way large files go up.
	m = e.mustStatus(200, "POST", uploadsPrefix+"a.pem", map[string]string{"Content-Range": "0-5/10"}, data[:6])
	if m["remainingByteCount"] != float64(4) || m["totalByteCount"] != float64(10) || m["localFilePath"] != "/var/config/rest/downloads/a.pem" {
		t.Errorf("first chunk: %v", m)
	}
	m = e.mustStatus(200, "POST", uploadsPrefix+"a.pem", map[string]string{"Content-Range": "6-9/10"}, data[6:])
	if m["remainingByteCount"] != float64(0) {
		t.Errorf("second chunk: %v", m)
	}
	e.api.mu.Lock()
	u, _ := e.api.uploads.get("a.pem")
	e.api.mu.Unlock()
	if string(u.data) != string(data) {
		t.Errorf("assembled %q", u.data)
	}
}

// TestDeployFlow: upload, install, modify a profile and see the change on
// GET; then the checks BIG-IP makes along the way.
func TestDeployFlow(t *testing.T) {
	e := newEnv(t, nil)
	ca := getCA(t)
	certPEM, keyPEM := ca.issue(t, "www.example.test", 2048)
	otherCert, otherKey := ca.issue(t, "other.example.test", 0)

	e.upload("web.crt", certPEM)
	e.upload("web.key", keyPEM)
	e.upload("other.crt", otherCert)
	e.upload("other.key", otherKey)
	e.upload("chain.pem", ca.pem)

	m := e.mustStatus(200, "POST", certPath, nil, map[string]string{"command": "install", "name": "web", "from-local-file": "/var/config/rest/downloads/web.crt"})
	if m["kind"] != "tm:sys:crypto:cert:installstate" || m["name"] != "web" {
		t.Errorf("install cert answer %v", m)
	}
	e.mustStatus(200, "POST", keyPath, nil, map[string]string{"command": "install", "name": "web", "from-local-file": "/var/config/rest/downloads/web.key"})
	e.mustStatus(200, "POST", certPath, nil, map[string]string{"command": "install", "name": "/Common/other", "from-local-file": "/var/config/rest/downloads/other.crt"})
	e.mustStatus(200, "POST", keyPath, nil, map[string]string{"command": "install", "name": "other", "from-local-file": "/var/config/rest/downloads/other.key"})
	e.mustStatus(200, "POST", certPath, nil, map[string]string{"command": "install", "name": "chain", "from-local-file": "/var/config/rest/downloads/chain.pem"})

	const lt = clientSSLPath + "/~Common~lt-f5"
	p := e.mustStatus(200, "GET", lt, nil, nil)
	if p["cert"] != "/Common/default.crt" || p["chain"] != "none" || p["fullPath"] != "/Common/lt-f5" || p["defaultsFrom"] != "/Common/clientssl" {
		t.Errorf("configured profile %v", p)
	}

	e.mustStatus(200, "PATCH", lt, nil, map[string]string{"cert": "/Common/web", "key": "/Common/web", "chain": "/Common/chain", "ciphers": "ECDHE+AES-GCM"})
	p = e.mustStatus(200, "GET", lt, nil, nil)
	if p["cert"] != "/Common/web" || p["key"] != "/Common/web" || p["chain"] != "/Common/chain" || p["ciphers"] != "ECDHE+AES-GCM" {
		t.Errorf("after PATCH: %v", p)
	}
	ckc := p["certKeyChain"].([]any)[0].(map[string]any)
	if ckc["cert"] != "/Common/web" || ckc["chain"] != "/Common/chain" {
		t.Errorf("certKeyChain %v", ckc)
	}
	// The bare name resolves in /Common; certKeyChain is accepted as well.
	e.mustStatus(200, "PATCH", clientSSLPath+"/lt-f5", nil, map[string]any{"certKeyChain": []map[string]string{{"name": "default", "cert": "other", "key": "other", "chain": "none"}}})
	p = e.mustStatus(200, "GET", lt, nil, nil)
	if p["cert"] != "/Common/other" || p["chain"] != "none" {
		t.Errorf("after certKeyChain PATCH: %v", p)
	}

	// BIG-IP's checks: a pair that does not match, an object that is not there.
	code, m := e.authed("PATCH", lt, nil, map[string]string{"cert": "/Common/web", "key": "/Common/other"})
	assertErrShape(t, code, m, 400)
	if !strings.Contains(m["message"].(string), "key values mismatch") {
		t.Errorf("mismatch message %q", m["message"])
	}
	code, m = e.authed("PATCH", lt, nil, map[string]string{"cert": "/Common/missing", "key": "/Common/other"})
	assertErrShape(t, code, m, 400)
	code, m = e.authed("PATCH", clientSSLPath+"/~Common~nope", nil, map[string]string{"cert": "/Common/web"})
	assertErrShape(t, code, m, 404)
	code, m = e.authed("POST", certPath, nil, map[string]string{"command": "install", "name": "x", "from-local-file": "/var/config/rest/downloads/never-uploaded.pem"})
	assertErrShape(t, code, m, 400)
	code, m = e.authed("POST", certPath, nil, map[string]string{"command": "install", "name": "x", "from-local-file": "/var/config/rest/downloads/web.key"})
	assertErrShape(t, code, m, 400) // a key is not a certificate
	code, m = e.authed("POST", certPath, nil, map[string]string{"command": "install", "name": "/NoSuchPartition/x", "from-local-file": "/var/config/rest/downloads/web.crt"})
	assertErrShape(t, code, m, 400)
	code, m = e.authed("POST", certPath, nil, map[string]string{"name": "x", "from-local-file": "/var/config/rest/downloads/web.crt"})
	assertErrShape(t, code, m, 400) // no command

	// The profile still has the last good pair after the failures.
	p = e.mustStatus(200, "GET", lt, nil, nil)
	if p["cert"] != "/Common/other" || p["key"] != "/Common/other" {
		t.Errorf("failed PATCHes changed the profile: %v", p)
	}

	// Objects in use cannot be deleted; unused ones can, and are gone.
	code, m = e.authed("DELETE", certPath+"/~Common~other", nil, nil)
	assertErrShape(t, code, m, 400)
	code, m = e.authed("DELETE", keyPath+"/~Common~other", nil, nil)
	assertErrShape(t, code, m, 400)
	if code, m = e.authed("DELETE", certPath+"/~Common~web", nil, nil); code != 200 || m != nil {
		t.Errorf("DELETE cert: %d %v (want 200, empty body)", code, m)
	}
	code, m = e.authed("DELETE", certPath+"/~Common~web", nil, nil)
	assertErrShape(t, code, m, 404)
	if want := "01020036:3: The requested Certificate File (/Common/web) was not found."; m["message"] != want {
		t.Errorf("message %q, want %q", m["message"], want)
	}
	e.mustStatus(200, "DELETE", keyPath+"/web", nil, nil)
	code, m = e.authed("DELETE", keyPath+"/~Common~web", nil, nil)
	assertErrShape(t, code, m, 404)
}

func TestTransactions(t *testing.T) {
	e := newEnv(t, nil)
	ca := getCA(t)
	certPEM, keyPEM := ca.issue(t, "tx.example.test", 0)
	e.upload("tx.crt", certPEM)
	e.upload("tx.key", keyPEM)
	e.mustStatus(200, "POST", certPath, nil, map[string]string{"command": "install", "name": "tx", "from-local-file": downloadsDir + "tx.crt"})
	e.mustStatus(200, "POST", keyPath, nil, map[string]string{"command": "install", "name": "tx", "from-local-file": downloadsDir + "tx.key"})

	newTxn := func() string {
		m := e.mustStatus(200, "POST", txnPath, nil, map[string]any{})
		if m["state"] != "STARTED" || m["kind"] != "tm:transactionstate" {
			t.Fatalf("create transaction: %v", m)
		}
		return fmt.Sprintf("%.0f", m["transId"].(float64))
	}
	in := func(id string) map[string]string {
		return map[string]string{"X-F5-REST-Overriding-Collection": txnPath + "/" + id}
	}

	// certctl's header. Queued changes are invisible until the commit.
	id := newTxn()
	q := e.mustStatus(200, "PATCH", clientSSLPath+"/~Common~lt-f5", in(id), map[string]string{"cert": "/Common/tx", "key": "/Common/tx"})
	if q["kind"] != "tm:transaction:commandsstate" || q["commandId"] != float64(1) || q["method"] != "PATCH" {
		t.Errorf("queued command: %v", q)
	}
	if p := e.mustStatus(200, "GET", clientSSLPath+"/~Common~lt-f5", nil, nil); p["cert"] != "/Common/default.crt" {
		t.Errorf("queued change visible before commit: %v", p["cert"])
	}
	m := e.mustStatus(200, "PATCH", txnPath+"/"+id, nil, map[string]string{"state": "VALIDATING"})
	if m["state"] != "COMPLETED" {
		t.Errorf("commit: %v", m)
	}
	if p := e.mustStatus(200, "GET", clientSSLPath+"/~Common~lt-f5", nil, nil); p["cert"] != "/Common/tx" {
		t.Errorf("after commit: %v", p["cert"])
	}
	code, m := e.authed("PATCH", txnPath+"/"+id, nil, map[string]string{"state": "VALIDATING"})
	assertErrShape(t, code, m, 400)

	// All or nothing: the second command fails, the first is undone.
	id = newTxn()
	e.mustStatus(200, "PATCH", clientSSLPath+"/~Common~clientssl", in(id), map[string]string{"cert": "/Common/tx", "key": "/Common/tx"})
	e.mustStatus(200, "PATCH", clientSSLPath+"/~Common~lt-f5", in(id), map[string]string{"cert": "/Common/absent"})
	code, m = e.authed("PATCH", txnPath+"/"+id, nil, map[string]string{"state": "VALIDATING"})
	assertErrShape(t, code, m, 400)
	if !strings.HasPrefix(m["message"].(string), "transaction failed:01020036:3: The requested Certificate File (/Common/absent)") {
		t.Errorf("message %q", m["message"])
	}
	if p := e.mustStatus(200, "GET", clientSSLPath+"/~Common~clientssl", nil, nil); p["cert"] != "/Common/default.crt" {
		t.Errorf("first command not rolled back: %v", p["cert"])
	}
	code, m = e.authed("PATCH", txnPath+"/"+id, nil, map[string]string{"state": "VALIDATING"})
	assertErrShape(t, code, m, 400)
	if !strings.Contains(m["message"].(string), "is FAILED") {
		t.Errorf("commit of a failed transaction: %q", m["message"])
	}

	// Unknown and expired transactions.
	code, m = e.authed("PATCH", clientSSLPath+"/~Common~lt-f5", in("42"), map[string]string{"cert": "/Common/tx"})
	assertErrShape(t, code, m, 404)
	id = newTxn()
	e.clock.advance((txnTimeout + 1) * time.Second)
	e.token = "" // the session's token is still valid, but keep the test independent of it
	code, m = e.authed("PATCH", txnPath+"/"+id, nil, map[string]string{"state": "VALIDATING"})
	assertErrShape(t, code, m, 404)

	// validateOnly runs the commands and keeps nothing.
	id = newTxn()
	e.mustStatus(200, "PATCH", clientSSLPath+"/~Common~clientssl", in(id), map[string]string{"cert": "/Common/tx", "key": "/Common/tx"})
	e.mustStatus(200, "PATCH", txnPath+"/"+id, nil, map[string]any{"state": "VALIDATING", "validateOnly": true})
	if p := e.mustStatus(200, "GET", clientSSLPath+"/~Common~clientssl", nil, nil); p["cert"] != "/Common/default.crt" {
		t.Errorf("validateOnly kept the change: %v", p["cert"])
	}
}

func TestPartitions(t *testing.T) {
	// A profile outside /Common exists only if configured; objects installed
	// under a bare name land in /Common, as on BIG-IP.
	e := newEnv(t, func(c *Config) { c.Profiles = append(c.Profiles, "/Tenant/app") })
	certPEM, keyPEM := getCA(t).issue(t, "tenant.example.test", 0)
	e.upload("t.crt", certPEM)
	e.upload("t.key", keyPEM)
	e.mustStatus(200, "POST", certPath, nil, map[string]string{"command": "install", "name": "t", "from-local-file": downloadsDir + "t.crt"})
	e.mustStatus(200, "POST", keyPath, nil, map[string]string{"command": "install", "name": "t", "from-local-file": downloadsDir + "t.key"})
	code, m := e.authed("PATCH", clientSSLPath+"/~Tenant~app", nil, map[string]string{"cert": "/Tenant/t", "key": "/Tenant/t"})
	assertErrShape(t, code, m, 400)
	e.mustStatus(200, "PATCH", clientSSLPath+"/~Tenant~app", nil, map[string]string{"cert": "/Common/t", "key": "/Common/t"})
	e.mustStatus(200, "POST", certPath, nil, map[string]string{"command": "install", "name": "t", "partition": "Tenant", "from-local-file": downloadsDir + "t.crt"})
	e.mustStatus(200, "DELETE", certPath+"/~Tenant~t", nil, nil)
}

func TestBoundedMap(t *testing.T) {
	pinned := map[string]bool{"keep": true}
	b := newBoundedMap[int](3, 0, nil, func(k string) bool { return pinned[k] })
	b.put("keep", 0)
	for i := range 10 {
		b.put(fmt.Sprint(i), i)
	}
	if b.len() != 3 {
		t.Fatalf("len %d", b.len())
	}
	for _, k := range []string{"keep", "8", "9"} {
		if _, ok := b.get(k); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	old, had := b.put("9", 99)
	if !had || old != 9 {
		t.Errorf("put returned %v %v", old, had)
	}
	b.restore("9", old, had)
	if v, _ := b.get("9"); v != 9 {
		t.Errorf("restore: %v", v)
	}

	// Create/delete cycles below the budget must not grow the order list.
	c := newBoundedMap[int](1000, 0, nil, nil)
	for i := range 10000 {
		c.put("k", i)
		c.del("k")
	}
	if len(c.order) > 100 {
		t.Errorf("order list grew to %d", len(c.order))
	}

	bytesMap := newBoundedMap[[]byte](100, 10, func(v []byte) int { return len(v) }, nil)
	bytesMap.put("a", make([]byte, 6))
	bytesMap.put("b", make([]byte, 6))
	if _, ok := bytesMap.get("a"); ok || bytesMap.bytes != 6 {
		t.Errorf("byte budget: a still there or bytes=%d", bytesMap.bytes)
	}
}
