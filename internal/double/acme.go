package double

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ACMEConfig is the part of certctl's CERTCTL_ACME_SERVER_* configuration
// the double's ACME routes read.
//
// CERTCTL_ACME_SERVER_ENABLED is deliberately not among them: certctl
// 151107c registers every /acme route whatever its value (the flag only
// starts the ACME garbage collector), so the double serves them always too.
type ACMEConfig struct {
	// DefaultProfileID (CERTCTL_ACME_SERVER_DEFAULT_PROFILE_ID) backs the
	// /acme/* shorthand; empty makes it answer 403 userActionRequired.
	DefaultProfileID string
	// NonceTTL (CERTCTL_ACME_SERVER_NONCE_TTL, default 5m) is the
	// expires_at of the acme_nonces rows.
	NonceTTL time.Duration
	// ARIEnabled (CERTCTL_ACME_SERVER_ARI_ENABLED, default true).
	ARIEnabled bool
	// ARIPollInterval (CERTCTL_ACME_SERVER_ARI_POLL_INTERVAL, default 6h)
	// is the Retry-After of a renewal-info answer.
	ARIPollInterval time.Duration
}

// loadACMEConfig parses like certctl: an unparsable duration silently
// keeps the default, booleans are certctl's lax ones.
func loadACMEConfig(getenv func(string) string) ACMEConfig {
	c := ACMEConfig{
		DefaultProfileID: getenv("CERTCTL_ACME_SERVER_DEFAULT_PROFILE_ID"),
		NonceTTL:         5 * time.Minute,
		ARIEnabled:       certctlBool(getenv("CERTCTL_ACME_SERVER_ARI_ENABLED"), true),
		ARIPollInterval:  6 * time.Hour,
	}
	if d, err := time.ParseDuration(getenv("CERTCTL_ACME_SERVER_NONCE_TTL")); err == nil {
		c.NonceTTL = d
	}
	if d, err := time.ParseDuration(getenv("CERTCTL_ACME_SERVER_ARI_POLL_INTERVAL")); err == nil {
		c.ARIPollInterval = d
	}
	return c
}

// registerACME adds the ACME routes the double serves: directory,
// new-nonce and ARI renewal-info, per profile and as the default-profile
// shorthand. They sit behind the same rate limiter, Bearer auth and fault
// knobs as /api/v1 (certctl sends every non-/api/v1 path through its
// authenticated chain), with no RBAC permission check.
func (s *Server) registerACME(mux *http.ServeMux) {
	for _, prefix := range []string{"/acme/profile/{id}", "/acme"} {
		mux.HandleFunc("GET "+prefix+"/directory", s.acmeDirectory)
		mux.HandleFunc("HEAD "+prefix+"/new-nonce", s.acmeNewNonce)
		mux.HandleFunc("GET "+prefix+"/new-nonce", s.acmeNewNonce)
		mux.HandleFunc("GET "+prefix+"/renewal-info/{cert_id}", s.acmeRenewalInfo)
	}
}

// acmeProblem is RFC 7807 as certctl writes it.
type acmeProblem struct {
	Type   string `json:"type"`
	Detail string `json:"detail"`
	Status int    `json:"status"`
}

func writeProblem(w http.ResponseWriter, p acmeProblem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

const acmeErr = "urn:ietf:params:acme:error:"

var (
	errACMEUserActionRequired = errors.New("acme: default profile not configured")
	errACMEARIDisabled        = errors.New("acme: ARI is disabled")
	errACMEARIBadCertID       = errors.New("acme: ARI cert-id is malformed")
	errACMENotFound           = errors.New("acme: certificate not found")
)

// acmeProfileError is certctl's answer to a profile it cannot load, the
// unknown profile included: its repository wraps sql.ErrNoRows before
// comparing, so the 404 branch never fires and the client gets a 500.
type acmeProfileError struct{ err error }

func (e acmeProfileError) Error() string { return "acme: lookup profile: " + e.err.Error() }

// writeACMEError is certctl's writeServiceError for the sentinels these
// routes can produce.
func (s *Server) writeACMEError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, errACMEUserActionRequired):
		writeProblem(w, acmeProblem{acmeErr + "userActionRequired",
			"this server requires the per-profile path /acme/profile/<id>/* — " +
				"set CERTCTL_ACME_SERVER_DEFAULT_PROFILE_ID for /acme/* shorthand", http.StatusForbidden})
	case errors.Is(err, errACMENotFound):
		writeProblem(w, acmeProblem{acmeErr + "malformed", "resource not found", http.StatusNotFound})
	case errors.Is(err, errACMEARIDisabled):
		writeProblem(w, acmeProblem{acmeErr + "malformed", "ACME Renewal Information is disabled on this server", http.StatusNotFound})
	case errors.Is(err, errACMEARIBadCertID):
		writeProblem(w, acmeProblem{acmeErr + "malformed", "ARI cert-id is malformed", http.StatusBadRequest})
	default:
		var pe acmeProfileError
		if !errors.As(err, &pe) || !errors.Is(pe.err, pgx.ErrNoRows) {
			if !errors.Is(err, context.Canceled) {
				s.errLog.Printf("%s %s: %v", r.Method, r.URL.Path, err)
			}
		}
		writeProblem(w, acmeProblem{acmeErr + "serverInternal", "ACME server error", http.StatusInternalServerError})
	}
}

// resolveACMEProfile is certctl's resolveProfile: the shorthand falls back
// to the default profile, and the profile row must load (a NULL
// description or spiffe_uri_pattern fails certctl's scan, like a missing
// row).
func (s *Server) resolveACMEProfile(ctx context.Context, id string) (string, error) {
	if id == "" {
		if s.cfg.ACME.DefaultProfileID == "" {
			return "", errACMEUserActionRequired
		}
		id = s.cfg.ACME.DefaultProfileID
	}
	var scannable bool
	err := s.db.QueryRow(ctx, `SELECT description IS NOT NULL AND spiffe_uri_pattern IS NOT NULL
		FROM certificate_profiles WHERE id = $1`, id).Scan(&scannable)
	if err == nil && !scannable {
		err = fmt.Errorf("profile %s has a NULL description or spiffe_uri_pattern", id)
	}
	if err != nil {
		return "", acmeProfileError{err}
	}
	return id, nil
}

// acmeBaseURL is certctl's directoryBaseURL: the scheme from the
// connection, the host from the Host header, and for the shorthand just
// /acme (so its directory points at /acme/new-nonce, …).
func acmeBaseURL(r *http.Request, profileID string) string {
	scheme := "https"
	if r.TLS == nil {
		scheme = "http"
	}
	if profileID != "" {
		return scheme + "://" + r.Host + "/acme/profile/" + profileID
	}
	return scheme + "://" + r.Host + "/acme"
}

// issueNonce is certctl's IssueNonce: 32 random bytes, base64url without
// padding, stored in acme_nonces. Nothing consumes them here (the double
// has no JWS endpoints) and nothing collects them, so a long run leaves
// one row per directory/new-nonce request.
func (s *Server) issueNonce(ctx context.Context) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	nonce := base64.RawURLEncoding.EncodeToString(b[:])
	_, err := s.db.Exec(ctx, `INSERT INTO acme_nonces (nonce, issued_at, expires_at, used) VALUES ($1, now(), $2, false)`,
		nonce, time.Now().Add(s.cfg.ACME.NonceTTL))
	if err != nil {
		return "", fmt.Errorf("acme: persist nonce: %w", err)
	}
	return nonce, nil
}

type acmeDirectory struct {
	NewNonce    string `json:"newNonce"`
	NewAccount  string `json:"newAccount"`
	NewOrder    string `json:"newOrder"`
	RevokeCert  string `json:"revokeCert"`
	KeyChange   string `json:"keyChange"`
	RenewalInfo string `json:"renewalInfo,omitempty"`
}

// acmeDirectory is GET …/directory. A nonce that fails to persist only
// drops the Replay-Nonce header, as in certctl.
func (s *Server) acmeDirectory(w http.ResponseWriter, r *http.Request) {
	profileID := r.PathValue("id")
	base := acmeBaseURL(r, profileID)
	if _, err := s.resolveACMEProfile(r.Context(), profileID); err != nil {
		s.writeACMEError(w, r, err)
		return
	}
	dir := acmeDirectory{
		NewNonce:   base + "/new-nonce",
		NewAccount: base + "/new-account",
		NewOrder:   base + "/new-order",
		RevokeCert: base + "/revoke-cert",
		KeyChange:  base + "/key-change",
	}
	if s.cfg.ACME.ARIEnabled {
		dir.RenewalInfo = base + "/renewal-info"
	}
	if nonce, err := s.issueNonce(r.Context()); err == nil {
		w.Header().Set("Replay-Nonce", nonce)
	}
	w.Header().Set("Cache-Control", "public, max-age=0, no-cache")
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(dir)
}

// acmeNewNonce is HEAD (200) and GET (204) …/new-nonce.
func (s *Server) acmeNewNonce(w http.ResponseWriter, r *http.Request) {
	if _, err := s.resolveACMEProfile(r.Context(), r.PathValue("id")); err != nil {
		s.writeACMEError(w, r, err)
		return
	}
	nonce, err := s.issueNonce(r.Context())
	if err != nil {
		s.errLog.Printf("%s %s: %v", r.Method, r.URL.Path, err)
		writeProblem(w, acmeProblem{acmeErr + "serverInternal", "nonce issuance failed", http.StatusInternalServerError})
		return
	}
	w.Header().Set("Replay-Nonce", nonce)
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// parseARICertID is certctl's ParseARICertID: exactly one '.', both
// halves non-empty base64url without padding, both decoding to at least
// one byte.
func parseARICertID(id string) (aki, serial []byte, err error) {
	parts := strings.Split(id, ".")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return nil, nil, errACMEARIBadCertID
	}
	if aki, err = base64.RawURLEncoding.DecodeString(parts[0]); err != nil {
		return nil, nil, errACMEARIBadCertID
	}
	if serial, err = base64.RawURLEncoding.DecodeString(parts[1]); err != nil {
		return nil, nil, errACMEARIBadCertID
	}
	if len(aki) == 0 || len(serial) == 0 {
		return nil, nil, errACMEARIBadCertID
	}
	return aki, serial, nil
}

// serialHexARI is certctl's ARICertID.SerialHex: the serial as lower-case
// hex "with no leading zeros". certctl's local CA stores serials
// zero-padded to 40 digits (storedSerialHex), so for every serial whose
// stored form starts with 0 — one in eight — the lookup misses and ARI
// answers 404. That is certctl 151107c's bug, reproduced by doing the
// same two conversions rather than by special-casing it.
func serialHexARI(serial []byte) string {
	return new(big.Int).SetBytes(serial).Text(16)
}

type renewalWindow struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// acmeRenewalInfo is GET …/renewal-info/{AKI}.{serial} (RFC 9773) with
// certctl's lookup: ARI switched off → 404; the profile must load (500);
// a malformed id → 400; then the serial is looked up among the
// certificates of whichever issuer the registry yields first — the AKI
// is decoded but never compared — and anything not found is 404.
func (s *Server) acmeRenewalInfo(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if !s.cfg.ACME.ARIEnabled {
		s.writeACMEError(w, r, errACMEARIDisabled)
		return
	}
	if _, err := s.resolveACMEProfile(ctx, r.PathValue("id")); err != nil {
		s.writeACMEError(w, r, err)
		return
	}
	_, serial, err := parseARICertID(r.PathValue("cert_id"))
	if err != nil {
		s.writeACMEError(w, r, err)
		return
	}
	ic, ok := s.firstIssuer()
	if !ok {
		s.writeACMEError(w, r, errACMENotFound)
		return
	}
	v, err := scanVersion(s.db.QueryRow(ctx, "SELECT "+versionColumns+` FROM certificate_versions cv
		JOIN managed_certificates mc ON mc.id = cv.certificate_id
		WHERE mc.issuer_id = $1 AND cv.serial_number = $2
		ORDER BY cv.created_at DESC LIMIT 1`, ic.id, serialHexARI(serial)))
	if err != nil {
		s.writeACMEError(w, r, errACMENotFound)
		return
	}
	cert, err := s.getCertificateRow(ctx, v.CertificateID)
	if err != nil || cert == nil {
		s.writeACMEError(w, r, errACMENotFound)
		return
	}
	var windowDays int
	if cert.RenewalPolicyID != "" {
		_ = s.db.QueryRow(ctx, `SELECT renewal_window_days FROM renewal_policies WHERE id = $1`, cert.RenewalPolicyID).Scan(&windowDays)
	}
	start, end := renewalWindowFor(cert.ExpiresAt, v.NotBefore, windowDays, time.Now().UTC())

	secs := int(s.cfg.ACME.ARIPollInterval.Seconds())
	if s.cfg.ACME.ARIPollInterval <= 0 {
		secs = int((6 * time.Hour).Seconds())
	}
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(struct {
		SuggestedWindow renewalWindow `json:"suggestedWindow"`
	}{renewalWindow{start.UTC(), end.UTC()}})
}

// renewalWindowFor is certctl's ComputeRenewalWindow. notAfter is the
// managed certificate's expires_at (not the version's not_after).
//   - expired: now … now+24h;
//   - a renewal policy with renewal_window_days W > 0: start = notAfter−W,
//     end = start + W/2 (rp-default, W = 30: −30 d … −15 d), start never
//     before now;
//   - otherwise the last third of the validity: start = notAfter−V/3,
//     end = notAfter−V/9, start never before now.
func renewalWindowFor(notAfter, notBefore time.Time, windowDays int, now time.Time) (time.Time, time.Time) {
	notAfter = notAfter.UTC()
	if notBefore.IsZero() {
		notBefore = notAfter
	}
	notBefore = notBefore.UTC()
	if now.After(notAfter) {
		return now, now.Add(24 * time.Hour)
	}
	if windowDays > 0 {
		w := time.Duration(windowDays) * 24 * time.Hour
		start := notAfter.Add(-w)
		end := start.Add(w / 2)
		if start.Before(now) {
			start = now
		}
		if end.Before(start) {
			end = start
		}
		return start, end
	}
	validity := notAfter.Sub(notBefore)
	if validity <= 0 {
		return notAfter.Add(-24 * time.Hour), notAfter
	}
	third := validity / 3
	start := notAfter.Add(-third)
	end := notAfter.Add(-third / 3)
	if start.Before(now) {
		start = now
	}
	if end.Before(start) {
		end = start
	}
	return start, end
}
