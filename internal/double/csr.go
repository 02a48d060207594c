package double

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// issuerConn is one entry of certctl's issuer registry: an enabled issuer
// row whose type certctl's factory knows. certctl builds the registry once
// at boot, so issuers added to the database later are not loaded (a CSR
// for their certificates is "signed" by nobody, see submitCSR); the double
// does the same.
//
// Only the local CA types can sign here. certctl's other connectors
// (ACME, step-ca, Vault, …) would dial out, which the harness's isolated
// network refuses, so for them signing fails (500).
type issuerConn struct {
	id    string
	local bool

	// Local CA settings (the GenericCA issuer's config JSON).
	caCommonName string
	validityDays int
	crlURLs      []string

	mu sync.Mutex
	ca *localCA // generated on first use, in memory, like certctl's
}

type localCA struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  string
}

var localIssuerTypes = map[string]bool{"local": true, "local_ca": true, "GenericCA": true, "genericca": true}

var remoteIssuerTypes = map[string]bool{
	"ACME": true, "acme": true, "StepCA": true, "stepca": true, "OpenSSL": true, "openssl": true,
	"VaultPKI": true, "vaultpki": true, "DigiCert": true, "digicert": true, "Sectigo": true, "sectigo": true,
	"GoogleCAS": true, "googlecas": true, "AWSACMPCA": true, "awsacmpca": true, "Entrust": true, "entrust": true,
	"GlobalSign": true, "globalsign": true, "EJBCA": true, "ejbca": true,
}

// loadIssuers is certctl's IssuerRegistry.Rebuild: enabled rows of a known
// type whose config parses. A local CA's config may set ca_common_name
// (default "CertCtl Local CA"), validity_days (default 90) and
// crl_distribution_point_urls; ca_cert_path/ca_key_path (sub-CA mode) are
// ignored: the double always generates its CA.
func loadIssuers(ctx context.Context, db *pgxpool.Pool) (map[string]*issuerConn, error) {
	rows, err := db.Query(ctx, `SELECT id, type, config FROM issuers WHERE enabled ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("load issuers: %w", err)
	}
	defer rows.Close()
	issuers := map[string]*issuerConn{}
	for rows.Next() {
		var id, typ string
		var config []byte
		if err := rows.Scan(&id, &typ, &config); err != nil {
			return nil, fmt.Errorf("load issuers: %w", err)
		}
		if len(config) == 0 {
			config = []byte("{}")
		}
		switch {
		case localIssuerTypes[typ]:
			var cfg struct {
				CACommonName string   `json:"ca_common_name"`
				ValidityDays int      `json:"validity_days"`
				CRLURLs      []string `json:"crl_distribution_point_urls"`
			}
			if err := json.Unmarshal(config, &cfg); err != nil {
				continue // certctl: factory error, issuer not loaded
			}
			if cfg.CACommonName == "" {
				cfg.CACommonName = "CertCtl Local CA"
			}
			if cfg.ValidityDays == 0 {
				cfg.ValidityDays = 90
			}
			issuers[id] = &issuerConn{id: id, local: true, caCommonName: cfg.CACommonName,
				validityDays: cfg.ValidityDays, crlURLs: cfg.CRLURLs}
		case remoteIssuerTypes[typ]:
			var obj map[string]any
			if json.Unmarshal(config, &obj) != nil {
				continue
			}
			issuers[id] = &issuerConn{id: id}
		}
	}
	return issuers, rows.Err()
}

// firstIssuer is certctl's ACMEService.firstAvailableIssuer: whichever
// registry entry Go's map iteration yields first. With one issuer loaded
// (the harness's seed) that is deterministic; with several, ARI looks
// serials up under a random one on every request, as certctl does.
func (s *Server) firstIssuer() (*issuerConn, bool) {
	for _, ic := range s.issuers {
		return ic, true
	}
	return nil, false
}

// ensureCA is certctl's generateSelfSignedCA, run on first use: RSA-2048,
// serial 1, the configured CN, ten years, CertSign|CRLSign. Go fills in the
// Subject Key Identifier, which becomes every leaf's Authority Key
// Identifier.
func (ic *issuerConn) ensureCA() (*localCA, error) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.ca != nil {
		return ic.ca, nil
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("failed to generate CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: ic.caCommonName},
		NotBefore:             now,
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("failed to create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ic.ca = &localCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
	return ic.ca, nil
}

// randomSerial is certctl's local-CA serial: uniform below 2^159, so
// positive and at most 20 bytes. Stored as %040x, one serial in eight
// starts with a 0 hex digit, and those are exactly the certificates
// 151107c's ARI cannot find (see serialHexARI).
func randomSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 159))
}

// storedSerialHex is how certctl's local CA writes a serial into
// certificate_versions.serial_number: zero-padded to 40 hex digits.
func storedSerialHex(n *big.Int) string { return fmt.Sprintf("%040x", n) }

// signRequest is what certctl's IssuerConnector hands the local CA.
type signRequest struct {
	csr        *x509.CertificateRequest
	sans       []string // the managed certificate's SANs, merged with the CSR's
	ekus       []string // profile's allowed_ekus; empty → serverAuth+clientAuth
	maxTTL     int      // profile's max_ttl_seconds; 0 = issuer default
	mustStaple bool
}

type issued struct {
	certPEM, chainPEM, serial string
	der                       []byte
	notBefore, notAfter       time.Time
}

var (
	oidMustStaple            = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 1, 24}
	mustStapleExtensionValue = []byte{0x30, 0x03, 0x02, 0x01, 0x05}
	ekuByName                = map[string]x509.ExtKeyUsage{
		"serverAuth": x509.ExtKeyUsageServerAuth, "clientAuth": x509.ExtKeyUsageClientAuth,
		"codeSigning": x509.ExtKeyUsageCodeSigning, "emailProtection": x509.ExtKeyUsageEmailProtection,
		"timeStamping": x509.ExtKeyUsageTimeStamping,
	}
)

// sign is certctl's local Connector.generateCertificate.
func (s *Server) sign(ic *issuerConn, req signRequest) (*issued, error) {
	if !ic.local {
		return nil, fmt.Errorf("issuer signing failed: issuer %s is not a local CA and the double cannot reach anything else", ic.id)
	}
	ca, err := ic.ensureCA()
	if err != nil {
		return nil, fmt.Errorf("CA initialization failed: %w", err)
	}
	serial, err := s.newSerial()
	if err != nil {
		return nil, fmt.Errorf("failed to generate serial number: %w", err)
	}

	set := map[string]bool{}
	for _, n := range req.csr.DNSNames {
		set[n] = true
	}
	for _, ip := range req.csr.IPAddresses {
		set[ip.String()] = true
	}
	for _, e := range req.csr.EmailAddresses {
		set[e] = true
	}
	for _, n := range req.sans {
		set[n] = true
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names) // certctl's order is map order; any order is as good
	var dns, emails []string
	var ips []net.IP
	for _, n := range names {
		switch {
		case n == "localhost": // certctl's parseIP quirk: localhost becomes 127.0.0.1
			ips = append(ips, net.IPv4(127, 0, 0, 1))
		case net.ParseIP(n) != nil:
			ips = append(ips, net.ParseIP(n))
		case strings.Contains(n, "@"):
			emails = append(emails, n)
		default:
			dns = append(dns, n)
		}
	}

	ekus, keyUsage := resolveEKUs(req.ekus)
	now := time.Now()
	notAfter := now.AddDate(0, 0, ic.validityDays)
	if req.maxTTL > 0 {
		if max := now.Add(time.Duration(req.maxTTL) * time.Second); max.Before(notAfter) {
			notAfter = max
		}
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               req.csr.Subject,
		NotBefore:             now,
		NotAfter:              notAfter,
		KeyUsage:              keyUsage,
		ExtKeyUsage:           ekus,
		DNSNames:              dns,
		EmailAddresses:        emails,
		IPAddresses:           ips,
		SubjectKeyId:          leafKeyID(req.csr.PublicKey),
		AuthorityKeyId:        ca.cert.SubjectKeyId,
		CRLDistributionPoints: ic.crlURLs,
	}
	if req.mustStaple {
		tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, pkix.Extension{Id: oidMustStaple, Value: mustStapleExtensionValue})
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, req.csr.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("certificate generation failed: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &issued{
		certPEM:   string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		chainPEM:  ca.pem,
		serial:    storedSerialHex(serial),
		der:       der,
		notBefore: leaf.NotBefore,
		notAfter:  leaf.NotAfter,
	}, nil
}

// resolveEKUs is certctl's resolveEKUsAndKeyUsage.
func resolveEKUs(names []string) ([]x509.ExtKeyUsage, x509.KeyUsage) {
	var out []x509.ExtKeyUsage
	tls, email := false, false
	for _, n := range names {
		if e, ok := ekuByName[n]; ok {
			out = append(out, e)
			tls = tls || n == "serverAuth" || n == "clientAuth"
			email = email || n == "emailProtection"
		}
	}
	if len(out) == 0 {
		return []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	}
	ku := x509.KeyUsageDigitalSignature
	if tls {
		ku |= x509.KeyUsageKeyEncipherment
	}
	if email {
		ku |= x509.KeyUsageContentCommitment
	}
	return out, ku
}

// leafKeyID is certctl's hashPublicKey: the first 4 bytes of SHA-256 over
// the RSA modulus or the uncompressed EC point (nothing for Ed25519).
func leafKeyID(pub any) []byte {
	h := sha256.New()
	switch k := pub.(type) {
	case *rsa.PublicKey:
		h.Write(k.N.Bytes())
	case *ecdsa.PublicKey:
		if e, err := k.ECDH(); err == nil {
			h.Write(e.Bytes())
		} else {
			h.Write(k.X.Bytes())
			h.Write(k.Y.Bytes())
		}
	}
	return h.Sum(nil)[:4]
}

// csrKeyInfo is certctl's extractCSRKeyInfo: decode, parse, verify the
// signature, classify the key.
func csrKeyInfo(csrPEM string) (*x509.CertificateRequest, string, int, error) {
	block, _ := pem.Decode([]byte(csrPEM))
	if block == nil {
		return nil, "", 0, errors.New("failed to decode CSR PEM")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, "", 0, fmt.Errorf("failed to parse CSR: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, "", 0, fmt.Errorf("CSR signature verification failed: %w", err)
	}
	switch k := csr.PublicKey.(type) {
	case *rsa.PublicKey:
		return csr, "RSA", k.N.BitLen(), nil
	case *ecdsa.PublicKey:
		return csr, "ECDSA", k.Curve.Params().BitSize, nil
	case ed25519.PublicKey:
		return csr, "Ed25519", 256, nil
	default:
		return nil, "", 0, fmt.Errorf("unsupported key type in CSR: %T", csr.PublicKey)
	}
}

// certProfile is the part of certctl's CertificateProfile issuance reads.
type certProfile struct {
	name       string
	keyRules   []keyRule
	maxTTL     int
	ekus       []string
	mustStaple bool
}

// keyRule is one entry of certificate_profiles.allowed_key_algorithms.
type keyRule struct {
	Algorithm string `json:"algorithm"`
	MinSize   int    `json:"min_size"`
}

// loadProfile is certctl's ProfileRepository.Get as issuance uses it. A
// row certctl cannot scan (NULL description or spiffe_uri_pattern) or
// whose JSON does not parse is an error.
func (s *Server) loadProfile(ctx context.Context, id string) (*certProfile, error) {
	var p certProfile
	var algs, ekus []byte
	var scannable bool
	err := s.db.QueryRow(ctx, `
		SELECT name, allowed_key_algorithms, max_ttl_seconds, allowed_ekus, must_staple,
			description IS NOT NULL AND spiffe_uri_pattern IS NOT NULL
		FROM certificate_profiles WHERE id = $1`, id).Scan(&p.name, &algs, &p.maxTTL, &ekus, &p.mustStaple, &scannable)
	if err != nil {
		return nil, err
	}
	if !scannable {
		return nil, fmt.Errorf("profile %s has a NULL description or spiffe_uri_pattern", id)
	}
	if err := json.Unmarshal(algs, &p.keyRules); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(ekus, &p.ekus); err != nil {
		return nil, err
	}
	return &p, nil
}

// checkProfile is certctl's ValidateCSRAgainstProfile after the key has
// been classified: no profile or no rules allows anything.
func checkProfile(p *certProfile, alg string, size int) error {
	if p == nil || len(p.keyRules) == 0 {
		return nil
	}
	for _, rule := range p.keyRules {
		if rule.Algorithm == alg && size >= rule.MinSize {
			return nil
		}
	}
	return fmt.Errorf("CSR key (%s %d-bit) does not match any allowed algorithm in profile %q", alg, size, p.name)
}

// expectedError marks a failure certctl answers with a 500 on purpose
// (unknown agent or certificate, a CSR it rejects), which is not worth a
// log line.
type expectedError struct{ error }

func (e expectedError) Unwrap() error { return e.error }

// submitCSR is POST /api/v1/agents/{id}/csr. The handler only checks that
// csr_pem is present and starts with the PEM header (400); everything
// after that fails with 500 "Failed to submit CSR", as in certctl:
// unknown agent, unknown certificate, a CSR that does not parse or verify,
// a key the certificate's profile forbids.
//
// With a certificate_id the answer is 202 {"status":"csr_signed"}, and the
// work depends on the certificate, as in certctl's AgentService.SubmitCSR:
//   - it has an AwaitingCSR job (bulk-renew in agent keygen mode): the
//     newest one runs (Running → Completed, or Failed with last_error) and
//     deployment jobs are created for the certificate's targets;
//   - otherwise, if its issuer is loaded, the CSR is signed directly;
//   - otherwise nothing is signed and the answer is still 202 — check the
//     certificate's status, not the response.
//
// Signed means: a certificate_versions row (certver-<unixnano>-<n>, serial
// as 40 hex digits, SHA-256 fingerprint of the DER, pem_chain = leaf PEM +
// "\n" + CA PEM, the CSR, key algorithm and size) and the certificate
// Active with expires_at = not_after and last_renewal_at = now.
//
// Without a certificate_id the CSR is accepted unread: 202
// {"status":"csr_accepted"}.
func (s *Server) submitCSR(w http.ResponseWriter, r *http.Request) {
	var req struct {
		CSRPEM        string `json:"csr_pem"`
		CertificateID string `json:"certificate_id,omitempty"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		handlerError(w, r, http.StatusBadRequest, "Invalid request body")
		return
	}
	if req.CSRPEM == "" {
		handlerError(w, r, http.StatusBadRequest, "csr_pem is required")
		return
	}
	if !strings.HasPrefix(strings.TrimSpace(req.CSRPEM), "-----BEGIN CERTIFICATE REQUEST-----") {
		handlerError(w, r, http.StatusBadRequest, "csr_pem must be a valid PEM-encoded certificate request")
		return
	}
	if err := s.processCSR(r.Context(), r.PathValue("id"), req.CertificateID, req.CSRPEM); err != nil {
		var quiet expectedError
		if errors.As(err, &quiet) {
			handlerError(w, r, http.StatusInternalServerError, "Failed to submit CSR")
			return
		}
		s.internalError(w, r, "Failed to submit CSR", err)
		return
	}
	status := "csr_accepted"
	if req.CertificateID != "" {
		status = "csr_signed"
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": status})
}

func (s *Server) processCSR(ctx context.Context, agentID, certID, csrPEM string) error {
	// certctl's agentRepo.Get: unknown → error; NULL text columns fail
	// the scan.
	var hostname, osName, arch, ip, version *string
	err := s.db.QueryRow(ctx, `SELECT hostname, os, architecture, ip_address, version FROM agents WHERE id = $1`, agentID).
		Scan(&hostname, &osName, &arch, &ip, &version)
	if errors.Is(err, pgx.ErrNoRows) {
		return expectedError{fmt.Errorf("failed to fetch agent: agent %s not found", agentID)}
	}
	if err != nil {
		return fmt.Errorf("failed to fetch agent: %w", err)
	}
	if hostname == nil || osName == nil || arch == nil || ip == nil || version == nil {
		return fmt.Errorf("failed to fetch agent %s: NULL hostname/os/architecture/ip_address/version, which certctl cannot scan", agentID)
	}
	if certID == "" {
		return nil
	}

	cert, err := s.getCertificateRow(ctx, certID)
	if err != nil {
		return fmt.Errorf("failed to fetch certificate: %w", err)
	}
	if cert == nil {
		return expectedError{fmt.Errorf("failed to fetch certificate %s: not found", certID)}
	}

	var jobID string
	err = s.db.QueryRow(ctx, `SELECT id FROM jobs WHERE certificate_id = $1 AND status = 'AwaitingCSR'
		ORDER BY created_at DESC LIMIT 1`, certID).Scan(&jobID)
	if err == nil {
		return s.completeAgentCSRRenewal(ctx, jobID, cert, csrPEM)
	}

	// No AwaitingCSR job: direct signing, if the issuer is loaded.
	ic, ok := s.issuers[cert.IssuerID]
	if !ok {
		return nil
	}
	var profile *certProfile
	if cert.CertificateProfileID != "" {
		profile, _ = s.loadProfile(ctx, cert.CertificateProfileID) // certctl ignores a failed lookup
	}
	csr, alg, size, err := csrKeyInfo(csrPEM)
	if err == nil {
		err = checkProfile(profile, alg, size)
	}
	if err != nil {
		return expectedError{fmt.Errorf("CSR validation failed: %w", err)}
	}
	res, err := s.sign(ic, newSignRequest(csr, cert, profile))
	if err != nil {
		return expectedError{err}
	}
	if err := s.storeVersion(ctx, cert.ID, res, csrPEM, alg, size); err != nil {
		return err
	}
	// certctl only logs a failed certificate update on this path.
	if err := s.markIssued(ctx, cert.ID, res.notAfter); err != nil {
		s.errLog.Printf("csr: failed to update certificate %s: %v", cert.ID, err)
	}
	return nil
}

func newSignRequest(csr *x509.CertificateRequest, cert *certificate, p *certProfile) signRequest {
	req := signRequest{csr: csr, sans: cert.SANs}
	if p != nil {
		req.ekus, req.maxTTL, req.mustStaple = p.ekus, p.maxTTL, p.mustStaple
	}
	return req
}

// completeAgentCSRRenewal is certctl's RenewalService.CompleteAgentCSRRenewal.
func (s *Server) completeAgentCSRRenewal(ctx context.Context, jobID string, cert *certificate, csrPEM string) error {
	ic, ok := s.issuers[cert.IssuerID]
	if !ok {
		msg := "issuer connector not found for " + cert.IssuerID
		s.setJobStatus(ctx, jobID, "Failed", msg)
		return expectedError{errors.New(msg)}
	}
	var profile *certProfile
	if cert.CertificateProfileID != "" {
		profile, _ = s.loadProfile(ctx, cert.CertificateProfileID) // certctl warns and skips the checks
	}
	csr, alg, size, err := csrKeyInfo(csrPEM)
	if err == nil {
		err = checkProfile(profile, alg, size)
	}
	if err != nil {
		s.setJobStatus(ctx, jobID, "Failed", "CSR validation failed: "+err.Error())
		return expectedError{fmt.Errorf("CSR validation failed: %w", err)}
	}
	if err := s.setJobStatus(ctx, jobID, "Running", ""); err != nil {
		return fmt.Errorf("failed to update job status: %w", err)
	}
	res, err := s.sign(ic, newSignRequest(csr, cert, profile))
	if err != nil {
		s.setJobStatus(ctx, jobID, "Failed", "issuer signing failed: "+err.Error())
		return expectedError{err}
	}
	if err := s.storeVersion(ctx, cert.ID, res, csrPEM, alg, size); err != nil {
		s.setJobStatus(ctx, jobID, "Failed", "version creation failed: "+err.Error())
		return err
	}
	if err := s.markIssued(ctx, cert.ID, res.notAfter); err != nil {
		s.setJobStatus(ctx, jobID, "Failed", "cert update failed: "+err.Error())
		return err
	}
	if err := s.setJobStatus(ctx, jobID, "Completed", ""); err != nil {
		return fmt.Errorf("failed to update job status: %w", err)
	}
	s.createDeploymentJobs(ctx, cert)
	return nil
}

// setJobStatus is certctl's JobRepository.UpdateStatus (status and
// last_error only).
func (s *Server) setJobStatus(ctx context.Context, jobID, status, errMsg string) error {
	var lastError *string
	if errMsg != "" {
		lastError = &errMsg
	}
	_, err := s.db.Exec(ctx, `UPDATE jobs SET status = $1, last_error = $2 WHERE id = $3`, status, lastError, jobID)
	if err != nil {
		s.errLog.Printf("csr: job %s → %s: %v", jobID, status, err)
	}
	return err
}

func (s *Server) storeVersion(ctx context.Context, certID string, res *issued, csrPEM, alg string, size int) error {
	fp := sha256.Sum256(res.der)
	_, err := s.db.Exec(ctx, `
		INSERT INTO certificate_versions (id, certificate_id, serial_number, not_before, not_after,
			fingerprint_sha256, pem_chain, csr_pem, key_algorithm, key_size, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		generateID("certver"), certID, res.serial, res.notBefore, res.notAfter,
		hex.EncodeToString(fp[:]), res.certPEM+"\n"+res.chainPEM, csrPEM, alg, size, s.now())
	if err != nil {
		return fmt.Errorf("failed to store certificate version: %w", err)
	}
	return nil
}

func (s *Server) markIssued(ctx context.Context, certID string, notAfter time.Time) error {
	now := s.now()
	_, err := s.db.Exec(ctx, `UPDATE managed_certificates SET status = 'Active', expires_at = $2,
		last_renewal_at = $3, updated_at = $3 WHERE id = $1`, certID, notAfter, now)
	return err
}

// createDeploymentJobs is certctl's: one Pending Deployment job per target
// of the certificate, with the target's agent. Failures are only logged.
func (s *Server) createDeploymentJobs(ctx context.Context, cert *certificate) {
	if len(cert.TargetIDs) == 0 {
		return
	}
	agents := map[string]string{}
	rows, err := s.db.Query(ctx, `SELECT id, coalesce(agent_id, '') FROM deployment_targets WHERE id = ANY($1)`, cert.TargetIDs)
	if err == nil {
		for rows.Next() {
			var tid, aid string
			if rows.Scan(&tid, &aid) == nil {
				agents[tid] = aid
			}
		}
		rows.Close()
	}
	for _, tid := range cert.TargetIDs {
		var agentID *string
		if a := agents[tid]; a != "" {
			agentID = &a
		}
		if _, err := s.db.Exec(ctx, `
			INSERT INTO jobs (id, type, certificate_id, status, target_id, agent_id, attempts, max_attempts, scheduled_at, created_at)
			VALUES ($1, 'Deployment', $2, 'Pending', $3, $4, 0, 3, now(), now())`,
			generateID("job"), cert.ID, tid, agentID); err != nil {
			s.errLog.Printf("csr: deployment job for target %s of %s: %v", tid, cert.ID, err)
		}
	}
}
