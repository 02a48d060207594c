package double

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// issuanceFixtureSQL adds a certificate profile (ACME needs one) on top
// of fixtureSQL.
const issuanceFixtureSQL = `
INSERT INTO certificate_profiles (id, name, description) VALUES ('prof1', 'profile one', 'test profile');
`

func (f *fixture) req(t *testing.T, method, target, token, body string, mod func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if mod != nil {
		mod(r)
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, r)
	return rec
}

func keysOf(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func newCSR(t *testing.T, cn string, dns ...string) (string, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn}, DNSNames: dns,
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), key
}

func csrBody(csrPEM, certID string) string {
	b, _ := json.Marshal(map[string]string{"csr_pem": csrPEM, "certificate_id": certID})
	return string(b)
}

func fixedSerial(hexDigits string) func() (*big.Int, error) {
	return func() (*big.Int, error) {
		n, ok := new(big.Int).SetString(hexDigits, 16)
		if !ok {
			return nil, fmt.Errorf("bad serial %q", hexDigits)
		}
		return n, nil
	}
}

// ariID is how an RFC 9773 client names a certificate: base64url of the
// AKI key identifier, ".", base64url of the serial's integer bytes.
func ariID(leaf *x509.Certificate) string {
	return base64.RawURLEncoding.EncodeToString(leaf.AuthorityKeyId) + "." +
		base64.RawURLEncoding.EncodeToString(leaf.SerialNumber.Bytes())
}

func parseChain(t *testing.T, chain string) []*x509.Certificate {
	t.Helper()
	var certs []*x509.Certificate
	rest := []byte(chain)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		certs = append(certs, c)
	}
	return certs
}

type versionsPage struct {
	Data    []certificateVersion `json:"data"`
	Total   int                  `json:"total"`
	Page    int                  `json:"page"`
	PerPage int                  `json:"per_page"`
}

func (f *fixture) createCert(t *testing.T, name string, extra ...string) certificate {
	t.Helper()
	rec := f.do(t, "POST", "/api/v1/certificates", adminToken, createBody(name, extra...))
	expectStatus(t, rec, 201)
	return decode[certificate](t, rec)
}

func (h *harness) issuanceServer(t *testing.T, cfg Config) *fixture {
	t.Helper()
	f := h.server(t, cfg)
	f.exec(t, issuanceFixtureSQL)
	return f
}

func expectProblem(t *testing.T, rec *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	expectStatus(t, rec, status)
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	if rec.Body.String() != body+"\n" {
		t.Errorf("problem body %q, want %s", rec.Body.String(), body)
	}
}

// runIssuanceTests covers agent registration and listing, CSR signing,
// certificate versions and the ACME directory/nonce/ARI routes, on the
// cluster TestPostgres starts.
func runIssuanceTests(t *testing.T, h *harness) {
	t.Run("AgentsRegisterAndList", func(t *testing.T) {
		cfg := testConfig()
		cfg.Keys = append(cfg.Keys, APIKey{Name: "adm2", Key: "admin-two", Admin: true})
		cfg.AgentBootstrapToken = adminToken
		f := h.server(t, cfg)
		t.Parallel()

		body := `{"name":"edge-1","hostname":"edge-1.example.com","os":"linux","architecture":"amd64","ip_address":"10.0.0.7","version":"1.4.0","status":"Offline","id":"mine"}`
		rec := f.do(t, "POST", "/api/v1/agents", adminToken, body)
		expectStatus(t, rec, 201)
		got := decode[map[string]any](t, rec)
		if k := keysOf(got); k != "architecture,hostname,id,ip_address,last_heartbeat_at,name,os,registered_at,status,version" {
			t.Errorf("register keys %s", k)
		}
		id, _ := got["id"].(string)
		if !regexp.MustCompile(`^agent-\d{19}-\d+$`).MatchString(id) || got["status"] != "Online" || got["os"] != "linux" ||
			got["ip_address"] != "10.0.0.7" || got["last_heartbeat_at"] != got["registered_at"] {
			t.Errorf("registered: %s", rec.Body.String())
		}
		var hash, status string
		if err := f.db.QueryRow(context.Background(), "SELECT api_key_hash, status FROM agents WHERE id = $1", id).Scan(&hash, &status); err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(hash) || status != "Online" {
			t.Errorf("stored agent: hash %q status %q", hash, status)
		}

		expectHandlerError(t, f.do(t, "POST", "/api/v1/agents", adminToken, body), 409, "Agent with this name already exists")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/agents", adminToken, `{"hostname":"h"}`), 400, "name is required")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/agents", adminToken, `{"name":"x"}`), 400, "hostname is required")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/agents", adminToken,
			`{"name":"`+strings.Repeat("n", 129)+`","hostname":"h"}`), 400, "name must be 128 characters or fewer")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/agents", adminToken, `{`), 400, "Invalid request body")
		// Another admin key passes auth but not the bootstrap-token check.
		expectHandlerError(t, f.do(t, "POST", "/api/v1/agents", "admin-two", `{"name":"x","hostname":"h"}`), 401, "invalid_or_missing_bootstrap_token")
		expectStatus(t, f.do(t, "POST", "/api/v1/agents", viewerToken, `{"name":"x","hostname":"h"}`), 403)
		expectStatus(t, f.do(t, "POST", "/api/v1/agents", "", body), 401)

		for i := 2; i <= 3; i++ {
			expectStatus(t, f.do(t, "POST", "/api/v1/agents", adminToken, fmt.Sprintf(`{"name":"edge-%d","hostname":"h%d"}`, i, i)), 201)
		}
		type page struct {
			Data    []map[string]any `json:"data"`
			Total   int              `json:"total"`
			Page    int              `json:"page"`
			PerPage int              `json:"per_page"`
		}
		rec = f.do(t, "GET", "/api/v1/agents?per_page=2&page=1", viewerToken, "")
		expectStatus(t, rec, 200)
		p := decode[page](t, rec)
		// ag1 (fixture) + 3 registered; the retired ag-gone is hidden. Newest first.
		if p.Total != 4 || p.Page != 1 || p.PerPage != 2 || len(p.Data) != 2 || p.Data[0]["name"] != "edge-3" || p.Data[1]["name"] != "edge-2" {
			t.Errorf("agents page 1: %s", rec.Body.String())
		}
		if k := keysOf(p.Data[0]); k != "architecture,hostname,id,ip_address,last_heartbeat_at,name,os,registered_at,status,version" {
			t.Errorf("list item keys %s", k)
		}
		if p := decode[page](t, f.do(t, "GET", "/api/v1/agents?per_page=2&page=2", adminToken, "")); len(p.Data) != 2 || p.Data[1]["id"] != "ag1" {
			t.Errorf("agents page 2: %+v", p.Data)
		}
		if k := keysOf(decode[page](t, f.do(t, "GET", "/api/v1/agents?per_page=2&page=2", adminToken, "")).Data[1]); strings.Contains(k, "last_heartbeat_at") {
			t.Errorf("never-seen agent carries last_heartbeat_at: %s", k)
		}
		rec = f.do(t, "GET", "/api/v1/agents?page=9", adminToken, "")
		if strings.TrimSpace(rec.Body.String()) != `{"data":null,"total":4,"page":9,"per_page":50}` {
			t.Errorf("past the end: %s", rec.Body.String())
		}
		for _, q := range []string{"", "?per_page=0", "?per_page=501", "?per_page=x"} {
			if p := decode[page](t, f.do(t, "GET", "/api/v1/agents"+q, adminToken, "")); p.PerPage != 50 || len(p.Data) != 4 {
				t.Errorf("%q: per_page %d, %d items", q, p.PerPage, len(p.Data))
			}
		}
		f.exec(t, "INSERT INTO agents (id, name, hostname, status, api_key_hash, os) VALUES ('ag-null', 'agent-null', 'h', 'Online', 'x', NULL)")
		expectHandlerError(t, f.do(t, "GET", "/api/v1/agents?per_page=1", adminToken, ""), 500, "Failed to list agents")
	})

	t.Run("CSRSignVersionsAndARI", func(t *testing.T) {
		cfg := testConfig()
		cfg.ACME = ACMEConfig{DefaultProfileID: "prof1", NonceTTL: time.Minute, ARIEnabled: true, ARIPollInterval: 6 * time.Hour}
		f := h.issuanceServer(t, cfg)
		t.Parallel()

		rec := f.do(t, "POST", "/api/v1/agents", adminToken, `{"name":"signer","hostname":"signer.example.com"}`)
		expectStatus(t, rec, 201)
		agentID := decode[agent](t, rec).ID
		cert := f.createCert(t, "web", `"certificate_profile_id":"prof1"`, `"sans":["web.example.com","10.1.2.3"]`)

		f.srv.newSerial = fixedSerial("4c09b0ae91e06c505473985c5a6f9be8c152c876")
		csrPEM, key := newCSR(t, "web.example.com", "web.example.com", "alt.example.com")
		before := time.Now()
		rec = f.do(t, "POST", "/api/v1/agents/"+agentID+"/csr", adminToken, csrBody(csrPEM, cert.ID))
		expectStatus(t, rec, 202)
		if strings.TrimSpace(rec.Body.String()) != `{"status":"csr_signed"}` {
			t.Errorf("csr body %q", rec.Body.String())
		}

		rec = f.do(t, "GET", "/api/v1/certificates/"+cert.ID, viewerToken, "")
		expectStatus(t, rec, 200)
		got := decode[certificate](t, rec)
		if got.Status != "Active" || got.LastRenewalAt == nil || got.LastRenewalAt.Before(before.Add(-time.Second)) ||
			got.ExpiresAt.Sub(before) < 90*24*time.Hour-time.Minute || got.ExpiresAt.Sub(before) > 90*24*time.Hour+time.Minute {
			t.Errorf("certificate after signing: %s", rec.Body.String())
		}
		if k := keysOf(decode[map[string]any](t, rec)); !strings.Contains(k, "common_name") || !strings.Contains(k, "target_ids") {
			t.Errorf("GET certificate keys %s", k)
		}
		expectHandlerError(t, f.do(t, "GET", "/api/v1/certificates/no-such-cert", adminToken, ""), 404, "Certificate not found")

		rec = f.do(t, "GET", "/api/v1/certificates/"+cert.ID+"/versions", viewerToken, "")
		expectStatus(t, rec, 200)
		vp := decode[versionsPage](t, rec)
		if vp.Total != 1 || vp.Page != 1 || vp.PerPage != 50 || len(vp.Data) != 1 {
			t.Fatalf("versions: %s", rec.Body.String())
		}
		var raw struct{ Data []map[string]any }
		_ = json.Unmarshal(rec.Body.Bytes(), &raw)
		if k := keysOf(raw.Data[0]); k != "certificate_id,created_at,csr_pem,fingerprint_sha256,id,key_algorithm,key_size,not_after,not_before,pem_chain,serial_number" {
			t.Errorf("version keys %s", k)
		}
		v := vp.Data[0]
		if !regexp.MustCompile(`^certver-\d{19}-\d+$`).MatchString(v.ID) || v.CertificateID != cert.ID ||
			v.SerialNumber != "4c09b0ae91e06c505473985c5a6f9be8c152c876" || v.CSRPEM != csrPEM ||
			v.KeyAlgorithm != "ECDSA" || v.KeySize != 256 || v.NotAfter.Sub(v.NotBefore) != 90*24*time.Hour ||
			!v.NotAfter.Equal(got.ExpiresAt) {
			t.Errorf("version: %+v", v)
		}
		if strings.Count(v.PEMChain, "-----END CERTIFICATE-----\n\n-----BEGIN CERTIFICATE-----") != 1 {
			t.Errorf("pem_chain is not leaf + \"\\n\" + CA: %q", v.PEMChain)
		}
		chain := parseChain(t, v.PEMChain)
		if len(chain) != 2 {
			t.Fatalf("pem_chain has %d certificates", len(chain))
		}
		leaf, ca := chain[0], chain[1]
		if fp := sha256.Sum256(leaf.Raw); hex.EncodeToString(fp[:]) != v.FingerprintSHA256 {
			t.Errorf("fingerprint %s is not SHA-256 of the leaf DER", v.FingerprintSHA256)
		}
		if !ca.IsCA || ca.Subject.CommonName != "CertCtl Local CA" || ca.SerialNumber.Int64() != 1 ||
			len(ca.SubjectKeyId) == 0 || string(leaf.AuthorityKeyId) != string(ca.SubjectKeyId) || len(leaf.SubjectKeyId) != 4 {
			t.Errorf("CA %q serial %v SKI %x; leaf AKI %x SKI %x", ca.Subject.CommonName, ca.SerialNumber, ca.SubjectKeyId, leaf.AuthorityKeyId, leaf.SubjectKeyId)
		}
		roots := x509.NewCertPool()
		roots.AddCert(ca)
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "alt.example.com"}); err != nil {
			t.Errorf("leaf does not verify against the CA: %v", err)
		}
		if !leaf.PublicKey.(*ecdsa.PublicKey).Equal(&key.PublicKey) || leaf.Subject.CommonName != "web.example.com" ||
			strings.Join(leaf.DNSNames, ",") != "alt.example.com,web.example.com" || len(leaf.IPAddresses) != 1 ||
			len(leaf.ExtKeyUsage) != 1 || leaf.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
			t.Errorf("leaf: CN %q DNS %v IPs %v EKU %v", leaf.Subject.CommonName, leaf.DNSNames, leaf.IPAddresses, leaf.ExtKeyUsage)
		}

		// ARI: the id a client computes from the leaf finds the version.
		rec = f.do(t, "GET", "/acme/profile/prof1/renewal-info/"+ariID(leaf), viewerToken, "")
		expectStatus(t, rec, 200)
		if rec.Header().Get("Retry-After") != "21600" || rec.Header().Get("Cache-Control") != "no-store" ||
			rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("ARI headers %v", rec.Header())
		}
		var ari struct {
			SuggestedWindow struct{ Start, End time.Time } `json:"suggestedWindow"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &ari); err != nil || keysOf(decode[map[string]any](t, rec)) != "suggestedWindow" {
			t.Fatalf("ARI body %s (%v)", rec.Body.String(), err)
		}
		// rp-default's 30-day window: start = expiry − 30 d, end = expiry − 15 d.
		if !ari.SuggestedWindow.Start.Equal(got.ExpiresAt.Add(-30*24*time.Hour)) || !ari.SuggestedWindow.End.Equal(got.ExpiresAt.Add(-15*24*time.Hour)) {
			t.Errorf("window %v … %v for expiry %v", ari.SuggestedWindow.Start, ari.SuggestedWindow.End, got.ExpiresAt)
		}
		expectStatus(t, f.do(t, "GET", "/acme/renewal-info/"+ariID(leaf), adminToken, ""), 200) // default-profile shorthand

		// 151107c's bug: a serial stored with a leading 0 is never found.
		f.srv.newSerial = fixedSerial("0c09b0ae91e06c505473985c5a6f9be8c152c876")
		cert2 := f.createCert(t, "web-zero", `"certificate_profile_id":"prof1"`)
		csr2, _ := newCSR(t, "web-zero.example.com")
		expectStatus(t, f.do(t, "POST", "/api/v1/agents/"+agentID+"/csr", adminToken, csrBody(csr2, cert2.ID)), 202)
		v2 := decode[versionsPage](t, f.do(t, "GET", "/api/v1/certificates/"+cert2.ID+"/versions", adminToken, "")).Data[0]
		if v2.SerialNumber != "0c09b0ae91e06c505473985c5a6f9be8c152c876" {
			t.Fatalf("stored serial %q, want 40 digits with the leading 0", v2.SerialNumber)
		}
		leaf2 := parseChain(t, v2.PEMChain)[0]
		notFound := `{"type":"urn:ietf:params:acme:error:malformed","detail":"resource not found","status":404}`
		expectProblem(t, f.do(t, "GET", "/acme/profile/prof1/renewal-info/"+ariID(leaf2), adminToken, ""), 404, notFound)
		// The same version found under the unpadded hex proves it is the
		// stored-vs-ARI conversion, not the certificate, that misses.
		f.exec(t, "UPDATE certificate_versions SET serial_number = ltrim(serial_number, '0') WHERE id = $1", v2.ID)
		expectStatus(t, f.do(t, "GET", "/acme/profile/prof1/renewal-info/"+ariID(leaf2), adminToken, ""), 200)

		// Unknown, malformed, unauthenticated, unknown profile.
		unknown := base64.RawURLEncoding.EncodeToString([]byte("no-such-aki")) + "." + base64.RawURLEncoding.EncodeToString([]byte{0x01, 0x02})
		expectProblem(t, f.do(t, "GET", "/acme/profile/prof1/renewal-info/"+unknown, adminToken, ""), 404, notFound)
		for _, bad := range []string{"abc", "a.b.c", ".AQ", "AQ.", "!!.AQ", "AQ.%3D%3D", "AQ==.AQ"} {
			expectProblem(t, f.do(t, "GET", "/acme/profile/prof1/renewal-info/"+bad, adminToken, ""), 400,
				`{"type":"urn:ietf:params:acme:error:malformed","detail":"ARI cert-id is malformed","status":400}`)
		}
		rec = f.do(t, "GET", "/acme/profile/prof1/renewal-info/"+ariID(leaf), "", "")
		expectStatus(t, rec, 401)
		if rec.Body.String() != "{\"error\":\"Authorization header required\"}\n" || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("ARI without Bearer: %q %v", rec.Body.String(), rec.Header())
		}
		expectProblem(t, f.do(t, "GET", "/acme/profile/no-such-profile/renewal-info/"+ariID(leaf), adminToken, ""), 500,
			`{"type":"urn:ietf:params:acme:error:serverInternal","detail":"ACME server error","status":500}`)

		// The AKI is decoded but never compared, as in certctl.
		otherAKI := base64.RawURLEncoding.EncodeToString([]byte{1, 2, 3}) + "." + strings.SplitN(ariID(leaf), ".", 2)[1]
		expectStatus(t, f.do(t, "GET", "/acme/profile/prof1/renewal-info/"+otherAKI, adminToken, ""), 200)
		if n := f.scalar(t, "SELECT count(*) FROM certificate_versions"); n != int64(2) {
			t.Errorf("%v versions", n)
		}
	})

	t.Run("BulkRevoke", func(t *testing.T) {
		f := h.issuanceServer(t, testConfig())
		t.Parallel()

		rec := f.do(t, "POST", "/api/v1/agents", adminToken, `{"name":"revoker","hostname":"revoker.example.com"}`)
		expectStatus(t, rec, 201)
		agentID := decode[agent](t, rec).ID
		issued := f.createCert(t, "issued")
		csrPEM, _ := newCSR(t, issued.CommonName, issued.CommonName)
		expectStatus(t, f.do(t, "POST", "/api/v1/agents/"+agentID+"/csr", adminToken, csrBody(csrPEM, issued.ID)), 202)
		never := f.createCert(t, "never-issued")

		body := `{"reason":"superseded","certificate_ids":["` + issued.ID + `","` + never.ID + `","no-such-cert"]}`
		expectStatus(t, f.do(t, "POST", "/api/v1/certificates/bulk-revoke", viewerToken, body), 403)
		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates/bulk-revoke", adminToken, `{"reason":"because","certificate_ids":["x"]}`), 400, "invalid revocation reason")
		expectHandlerError(t, f.do(t, "POST", "/api/v1/certificates/bulk-revoke", adminToken, `{"reason":"superseded"}`), 400, "filter criterion")

		rec = f.do(t, "POST", "/api/v1/certificates/bulk-revoke", adminToken, body)
		expectStatus(t, rec, 200)
		got := decode[map[string]any](t, rec)
		// Unknown ids drop out; a certificate never issued fails (no version to revoke).
		if got["total_matched"] != 2.0 || got["total_revoked"] != 1.0 || got["total_failed"] != 1.0 || got["total_skipped"] != 0.0 {
			t.Errorf("first revoke: %s", rec.Body.String())
		}
		if st := f.scalar(t, "SELECT status FROM managed_certificates WHERE id = $1", issued.ID); st != "Revoked" {
			t.Errorf("status after revoke: %v", st)
		}
		if n := f.scalar(t, "SELECT count(*) FROM certificate_revocations WHERE certificate_id = $1 AND reason = 'superseded'", issued.ID); n != int64(1) {
			t.Errorf("revocation rows: %v", n)
		}
		rec = f.do(t, "POST", "/api/v1/certificates/bulk-revoke", adminToken, body)
		if got := decode[map[string]any](t, rec); got["total_skipped"] != 1.0 || got["total_revoked"] != 0.0 {
			t.Errorf("second revoke: %s", rec.Body.String())
		}
	})

	t.Run("CSRFailuresAndPaths", func(t *testing.T) {
		f := h.issuanceServer(t, testConfig())
		t.Parallel()
		csrPEM, _ := newCSR(t, "x.example.com")
		cert := f.createCert(t, "plain")
		post := func(agentID, body string) *httptest.ResponseRecorder {
			return f.do(t, "POST", "/api/v1/agents/"+agentID+"/csr", adminToken, body)
		}

		expectHandlerError(t, post("no-such-agent", csrBody(csrPEM, cert.ID)), 500, "Failed to submit CSR")
		expectHandlerError(t, post("ag1", csrBody(csrPEM, "no-such-cert")), 500, "Failed to submit CSR")
		expectHandlerError(t, post("ag1", `{"certificate_id":"`+cert.ID+`"}`), 400, "csr_pem is required")
		expectHandlerError(t, post("ag1", csrBody("hello", cert.ID)), 400, "csr_pem must be a valid PEM-encoded certificate request")
		expectHandlerError(t, post("ag1", csrBody("-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n", cert.ID)), 400, "valid PEM")
		expectHandlerError(t, post("ag1", `[`), 400, "Invalid request body")
		expectHandlerError(t, post("ag1", csrBody("-----BEGIN CERTIFICATE REQUEST-----\nnot base64\n-----END CERTIFICATE REQUEST-----\n", cert.ID)), 500, "Failed to submit CSR")
		// A CSR whose signature does not verify.
		block, _ := pem.Decode([]byte(csrPEM))
		der := append([]byte(nil), block.Bytes...)
		der[len(der)-3] ^= 0xff
		tampered := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
		expectHandlerError(t, post("ag1", csrBody(tampered, cert.ID)), 500, "Failed to submit CSR")
		expectStatus(t, f.do(t, "POST", "/api/v1/agents/ag1/csr", viewerToken, csrBody(csrPEM, cert.ID)), 403)
		if n := f.scalar(t, "SELECT count(*) FROM certificate_versions"); n != int64(0) {
			t.Fatalf("%v versions after failures", n)
		}

		// No certificate_id: accepted, nothing signed.
		rec := post("ag1", `{"csr_pem":`+mustJSON(csrPEM)+`}`)
		expectStatus(t, rec, 202)
		if strings.TrimSpace(rec.Body.String()) != `{"status":"csr_accepted"}` {
			t.Errorf("no certificate_id: %s", rec.Body.String())
		}

		// A profile that only takes RSA keys refuses the ECDSA CSR.
		f.exec(t, `INSERT INTO certificate_profiles (id, name, description, allowed_key_algorithms)
			VALUES ('rsa-only', 'rsa only', '', '[{"algorithm":"RSA","min_size":2048}]')`)
		rsaOnly := f.createCert(t, "rsa-only", `"certificate_profile_id":"rsa-only"`)
		expectHandlerError(t, post("ag1", csrBody(csrPEM, rsaOnly.ID)), 500, "Failed to submit CSR")

		// An issuer added after startup is not in the registry: 202 and
		// nothing signed, as certctl does.
		f.exec(t, `INSERT INTO issuers (id, name, type, config, enabled) VALUES ('iss-late', 'late', 'GenericCA', '{}', true)`)
		late := f.createCert(t, "late", `"issuer_id":"iss-late"`)
		expectStatus(t, post("ag1", csrBody(csrPEM, late.ID)), 202)
		if s := f.scalar(t, "SELECT status FROM managed_certificates WHERE id = $1", late.ID); s != "Pending" {
			t.Errorf("unloaded issuer: certificate %v", s)
		}

		// Bulk-renew in agent mode parks an AwaitingCSR job; the CSR
		// completes it and queues a deployment to the certificate's target.
		f.exec(t, `INSERT INTO deployment_targets (id, name, type, agent_id) VALUES ('tgt1', 'target one', 'NGINX', 'ag1')`)
		f.exec(t, `INSERT INTO certificate_target_mappings (certificate_id, target_id) VALUES ($1, 'tgt1')`, cert.ID)
		res := decode[bulkRenewResult](t, f.do(t, "POST", "/api/v1/certificates/bulk-renew", adminToken, `{"certificate_ids":["`+cert.ID+`"]}`))
		if res.TotalEnqueued != 1 {
			t.Fatalf("bulk-renew: %+v", res)
		}
		jobID := res.EnqueuedJobs[0].JobID
		expectHandlerError(t, post("ag1", csrBody(tampered, cert.ID)), 500, "Failed to submit CSR")
		var status string
		var lastErr *string
		_ = f.db.QueryRow(context.Background(), "SELECT status, last_error FROM jobs WHERE id = $1", jobID).Scan(&status, &lastErr)
		if status != "Failed" || lastErr == nil || !strings.Contains(*lastErr, "CSR validation failed") {
			t.Errorf("job after a bad CSR: %s %v", status, lastErr)
		}
		f.exec(t, "UPDATE jobs SET status = 'AwaitingCSR', last_error = NULL WHERE id = $1", jobID)
		expectStatus(t, post("ag1", csrBody(csrPEM, cert.ID)), 202)
		if s := f.scalar(t, "SELECT status FROM jobs WHERE id = $1", jobID); s != "Completed" {
			t.Errorf("renewal job %v, want Completed", s)
		}
		if s := f.scalar(t, "SELECT status FROM managed_certificates WHERE id = $1", cert.ID); s != "Active" {
			t.Errorf("certificate %v after the job path", s)
		}
		if n := f.scalar(t, `SELECT count(*) FROM jobs WHERE certificate_id = $1 AND type = 'Deployment'
			AND status = 'Pending' AND target_id = 'tgt1' AND agent_id = 'ag1'`, cert.ID); n != int64(1) {
			t.Errorf("%v deployment jobs", n)
		}

		// Versions of an unknown certificate: 200 with null data.
		rec = f.do(t, "GET", "/api/v1/certificates/no-such-cert/versions", adminToken, "")
		expectStatus(t, rec, 200)
		if strings.TrimSpace(rec.Body.String()) != `{"data":null,"total":0,"page":1,"per_page":50}` {
			t.Errorf("versions of unknown cert: %s", rec.Body.String())
		}
	})

	t.Run("ACMEDirectoryAndNonce", func(t *testing.T) {
		cfg := testConfig()
		cfg.ACME = ACMEConfig{NonceTTL: 5 * time.Minute, ARIEnabled: true, ARIPollInterval: 6 * time.Hour}
		f := h.issuanceServer(t, cfg)
		t.Parallel()
		onTLS := func(r *http.Request) {
			r.Host = "certctl.example:8443"
			r.TLS = &tls.ConnectionState{}
		}
		nonceRE := regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

		rec := f.req(t, "GET", "/acme/profile/prof1/directory", viewerToken, "", onTLS)
		expectStatus(t, rec, 200)
		base := "https://certctl.example:8443/acme/profile/prof1"
		want := fmt.Sprintf(`{"newNonce":"%[1]s/new-nonce","newAccount":"%[1]s/new-account","newOrder":"%[1]s/new-order","revokeCert":"%[1]s/revoke-cert","keyChange":"%[1]s/key-change","renewalInfo":"%[1]s/renewal-info"}`, base)
		if strings.TrimSpace(rec.Body.String()) != want {
			t.Errorf("directory\n got %s\nwant %s", rec.Body.String(), want)
		}
		if rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != "public, max-age=0, no-cache" ||
			!nonceRE.MatchString(rec.Header().Get("Replay-Nonce")) {
			t.Errorf("directory headers %v", rec.Header())
		}
		nonce := rec.Header().Get("Replay-Nonce")
		if n := f.scalar(t, "SELECT count(*) FROM acme_nonces WHERE nonce = $1 AND NOT used AND expires_at > now() + interval '4 minutes'", nonce); n != int64(1) {
			t.Errorf("nonce not stored: %v", n)
		}

		for method, status := range map[string]int{"HEAD": 200, "GET": 204} {
			rec := f.req(t, method, "/acme/profile/prof1/new-nonce", adminToken, "", nil)
			expectStatus(t, rec, status)
			if !nonceRE.MatchString(rec.Header().Get("Replay-Nonce")) || rec.Header().Get("Cache-Control") != "no-store" || rec.Body.Len() != 0 {
				t.Errorf("%s new-nonce: %v %q", method, rec.Header(), rec.Body.String())
			}
		}

		// json.Encoder escapes < and >, in certctl as here.
		expectProblem(t, f.do(t, "GET", "/acme/directory", adminToken, ""), 403,
			`{"type":"urn:ietf:params:acme:error:userActionRequired","detail":"this server requires the per-profile path /acme/profile/\u003cid\u003e/* — set CERTCTL_ACME_SERVER_DEFAULT_PROFILE_ID for /acme/* shorthand","status":403}`)
		serverInternal := `{"type":"urn:ietf:params:acme:error:serverInternal","detail":"ACME server error","status":500}`
		expectProblem(t, f.do(t, "GET", "/acme/profile/nope/directory", adminToken, ""), 500, serverInternal)
		expectProblem(t, f.do(t, "HEAD", "/acme/profile/nope/new-nonce", adminToken, ""), 500, serverInternal)
		rec = f.do(t, "GET", "/acme/profile/prof1/directory", "", "")
		expectStatus(t, rec, 401)
		if rec.Header().Get("WWW-Authenticate") != `Bearer realm="certctl"` || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("no-key 401 headers %v", rec.Header())
		}
		expectStatus(t, f.do(t, "GET", "/acme/profile/prof1/directory", "wrong", ""), 401)
		expectStatus(t, f.do(t, "POST", "/acme/profile/prof1/new-account", adminToken, "{}"), 404) // not reproduced

		// Default profile and ARI switched off.
		cfg.ACME.DefaultProfileID, cfg.ACME.ARIEnabled = "prof1", false
		f2 := h.issuanceServer(t, cfg)
		rec = f2.req(t, "GET", "/acme/directory", adminToken, "", onTLS)
		expectStatus(t, rec, 200)
		if strings.TrimSpace(rec.Body.String()) != `{"newNonce":"https://certctl.example:8443/acme/new-nonce","newAccount":"https://certctl.example:8443/acme/new-account","newOrder":"https://certctl.example:8443/acme/new-order","revokeCert":"https://certctl.example:8443/acme/revoke-cert","keyChange":"https://certctl.example:8443/acme/key-change"}` {
			t.Errorf("shorthand directory without ARI: %s", rec.Body.String())
		}
		expectStatus(t, f2.do(t, "GET", "/acme/new-nonce", adminToken, ""), 204)
		expectProblem(t, f2.do(t, "GET", "/acme/profile/prof1/renewal-info/AQ.AQ", adminToken, ""), 404,
			`{"type":"urn:ietf:params:acme:error:malformed","detail":"ACME Renewal Information is disabled on this server","status":404}`)
	})

	t.Run("ACMERateLimitAndFaults", func(t *testing.T) {
		cfg := testConfig()
		cfg.RateLimitEnabled, cfg.RateLimitRPS, cfg.RateLimitBurst = true, 0.001, 2
		cfg.Faults = Faults{ErrorRate: 1, Route: "GET /acme/profile/prof1/renewal-info"}
		cfg.ACME = ACMEConfig{ARIEnabled: true, NonceTTL: time.Minute}
		f := h.issuanceServer(t, cfg)
		t.Parallel()
		expectHandlerError(t, f.do(t, "GET", "/acme/profile/prof1/renewal-info/AQ.AQ", adminToken, ""), 500, "Injected fault")
		expectStatus(t, f.do(t, "GET", "/acme/profile/prof1/directory", adminToken, ""), 200)
		rec := f.do(t, "GET", "/acme/profile/prof1/directory", adminToken, "")
		expectStatus(t, rec, 429)
		assertRateLimited(t, rec.Header(), rec.Body.String())
	})
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestRandomSerialShape(t *testing.T) {
	limit := new(big.Int).Lsh(big.NewInt(1), 159)
	zeros := 0
	const n = 4000
	for i := 0; i < n; i++ {
		s, err := randomSerial()
		if err != nil {
			t.Fatal(err)
		}
		if s.Sign() < 0 || s.Cmp(limit) >= 0 {
			t.Fatalf("serial %x outside [0, 2^159)", s)
		}
		hexs := storedSerialHex(s)
		if len(hexs) != 40 {
			t.Fatalf("stored serial %q is not 40 digits", hexs)
		}
		if hexs[0] == '0' {
			zeros++
			if serialHexARI(s.Bytes()) == hexs {
				t.Fatalf("ARI conversion of %s matches the stored form", hexs)
			}
		} else if serialHexARI(s.Bytes()) != hexs {
			t.Fatalf("ARI conversion of %s is %s", hexs, serialHexARI(s.Bytes()))
		}
	}
	// One in eight (the top hex digit of a 159-bit number is 0–7).
	if frac := float64(zeros) / n; frac < 0.09 || frac > 0.165 {
		t.Errorf("%.3f of serials start with 0, want about 1/8", frac)
	}
}

func TestRenewalWindow(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	nb := now.Add(-time.Hour)
	na := nb.Add(90 * 24 * time.Hour)
	day := 24 * time.Hour
	for _, c := range []struct {
		name       string
		na, nb     time.Time
		window     int
		start, end time.Time
	}{
		{"policy 30d", na, nb, 30, na.Add(-30 * day), na.Add(-15 * day)},
		{"no policy: last third", na, nb, 0, na.Add(-30 * day), na.Add(-10 * day)},
		// start clamps to now; end (expiry − 15 d) is before it, so end = start.
		{"policy window reaches into the past", now.Add(10 * day), nb, 30, now, now},
		{"expired", now.Add(-time.Minute), nb, 30, now, now.Add(day)},
	} {
		start, end := renewalWindowFor(c.na, c.nb, c.window, now)
		if !start.Equal(c.start) || !end.Equal(c.end) {
			t.Errorf("%s: %v … %v, want %v … %v", c.name, start, end, c.start, c.end)
		}
	}
}

func TestLoadACMEAndBootstrapConfig(t *testing.T) {
	base := map[string]string{
		"CERTCTL_AUTH_SECRET": "s", "CERTCTL_SERVER_TLS_CERT_PATH": "c", "CERTCTL_SERVER_TLS_KEY_PATH": "k",
	}
	load := func(extra map[string]string) Config {
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		for k, v := range extra {
			env[k] = v
		}
		cfg, err := LoadConfig(func(k string) string { return env[k] }, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	c := load(nil)
	if c.ACME != (ACMEConfig{NonceTTL: 5 * time.Minute, ARIEnabled: true, ARIPollInterval: 6 * time.Hour}) || c.AgentBootstrapToken != "" {
		t.Errorf("defaults: %+v %q", c.ACME, c.AgentBootstrapToken)
	}
	c = load(map[string]string{
		"CERTCTL_ACME_SERVER_DEFAULT_PROFILE_ID": "p", "CERTCTL_ACME_SERVER_NONCE_TTL": "1m",
		"CERTCTL_ACME_SERVER_ARI_ENABLED": "off", "CERTCTL_ACME_SERVER_ARI_POLL_INTERVAL": "bogus",
		"CERTCTL_AGENT_BOOTSTRAP_TOKEN": "tok", "CERTCTL_ACME_SERVER_ENABLED": "false",
	})
	if c.ACME != (ACMEConfig{DefaultProfileID: "p", NonceTTL: time.Minute, ARIEnabled: false, ARIPollInterval: 6 * time.Hour}) || c.AgentBootstrapToken != "tok" {
		t.Errorf("overrides: %+v %q", c.ACME, c.AgentBootstrapToken)
	}
}
