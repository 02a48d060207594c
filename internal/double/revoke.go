package double

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// RFC 5280 reason names certctl accepts (domain/revocation.go).
var revocationReasons = map[string]bool{
	"unspecified": true, "keyCompromise": true, "caCompromise": true, "affiliationChanged": true,
	"superseded": true, "cessationOfOperation": true, "certificateHold": true, "privilegeWithdrawn": true,
}

type bulkRevokeRequest struct {
	bulkRenewRequest
	Reason string `json:"reason"`
}

type bulkRevokeResult struct {
	TotalMatched int         `json:"total_matched"`
	TotalRevoked int         `json:"total_revoked"`
	TotalSkipped int         `json:"total_skipped"`
	TotalFailed  int         `json:"total_failed"`
	Errors       []bulkError `json:"errors,omitempty"`
}

// bulkRevoke is POST /api/v1/certificates/bulk-revoke, admin only, as certctl's
// BulkRevocationService: Revoked or Archived certificates are skipped, one that was never issued (no
// certificate_versions row) fails, every other one is revoked with a certificate_revocations row.
func (s *Server) bulkRevoke(w http.ResponseWriter, r *http.Request) {
	var req bulkRevokeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		handlerError(w, r, http.StatusBadRequest, "Invalid request body")
		return
	}
	if !req.hasFilter() && len(req.CertificateIDs) == 0 {
		handlerError(w, r, http.StatusBadRequest, "at least one filter criterion is required")
		return
	}
	if req.Reason == "" || !revocationReasons[req.Reason] {
		handlerError(w, r, http.StatusBadRequest, fmt.Sprintf("invalid revocation reason: %s", req.Reason))
		return
	}
	ids, err := s.resolveBulk(r.Context(), req.bulkRenewRequest)
	if err != nil {
		s.internalError(w, r, "Bulk revocation failed: failed to resolve certificates: "+err.Error(), err)
		return
	}
	res := bulkRevokeResult{TotalMatched: len(ids)}
	for _, id := range ids {
		skipped, err := s.revokeOne(r.Context(), id, req.Reason, actorFrom(r).Name)
		switch {
		case err != nil:
			res.TotalFailed++
			res.Errors = append(res.Errors, bulkError{CertificateID: id, Error: err.Error()})
		case skipped:
			res.TotalSkipped++
		default:
			res.TotalRevoked++
		}
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) revokeOne(ctx context.Context, id, reason, actor string) (skipped bool, err error) {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx)
	var status, issuer string
	if err := tx.QueryRow(ctx, "SELECT status, issuer_id FROM managed_certificates WHERE id = $1 FOR UPDATE", id).Scan(&status, &issuer); err != nil {
		return false, fmt.Errorf("failed to fetch certificate: %w", err)
	}
	if status == "Revoked" || status == "Archived" {
		return true, nil
	}
	var serial string
	err = tx.QueryRow(ctx, "SELECT serial_number FROM certificate_versions WHERE certificate_id = $1 ORDER BY created_at DESC LIMIT 1", id).Scan(&serial)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("failed to get certificate version: %w", err)
	}
	if err != nil {
		return false, err
	}
	now := time.Now()
	if _, err := tx.Exec(ctx, "UPDATE managed_certificates SET status = 'Revoked', revoked_at = $2, revocation_reason = $3, updated_at = $2 WHERE id = $1", id, now, reason); err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO certificate_revocations (id, certificate_id, serial_number, reason, revoked_by, revoked_at, issuer_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, generateID("rev"), id, serial, reason, actor, now, issuer); err != nil {
		return false, err
	}
	return false, tx.Commit(ctx)
}
