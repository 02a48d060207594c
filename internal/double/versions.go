package double

import (
	"context"
	"net/http"
	"time"
)

// certificateVersion is certctl's domain.CertificateVersion on the wire.
type certificateVersion struct {
	ID                string    `json:"id"`
	CertificateID     string    `json:"certificate_id"`
	SerialNumber      string    `json:"serial_number"`
	NotBefore         time.Time `json:"not_before"`
	NotAfter          time.Time `json:"not_after"`
	FingerprintSHA256 string    `json:"fingerprint_sha256"`
	PEMChain          string    `json:"pem_chain"`
	CSRPEM            string    `json:"csr_pem"`
	KeyAlgorithm      string    `json:"key_algorithm,omitempty"`
	KeySize           int       `json:"key_size,omitempty"`
	CreatedAt         time.Time `json:"created_at"`
}

const versionColumns = `cv.id, cv.certificate_id, cv.serial_number, cv.not_before, cv.not_after,
	cv.fingerprint_sha256, cv.pem_chain, coalesce(cv.csr_pem, ''), coalesce(cv.key_algorithm, ''),
	coalesce(cv.key_size, 0), cv.created_at`

func scanVersion(row interface{ Scan(...any) error }) (certificateVersion, error) {
	var v certificateVersion
	err := row.Scan(&v.ID, &v.CertificateID, &v.SerialNumber, &v.NotBefore, &v.NotAfter, &v.FingerprintSHA256,
		&v.PEMChain, &v.CSRPEM, &v.KeyAlgorithm, &v.KeySize, &v.CreatedAt)
	return v, err
}

// getCertificateRow is certctl's CertificateRepository.Get: the row plus
// its target ids. A row certctl cannot scan (NULL environment or
// expires_at) counts as not found, as does any database error.
func (s *Server) getCertificateRow(ctx context.Context, id string) (*certificate, error) {
	rows, err := s.db.Query(ctx, "SELECT "+certColumns+" FROM managed_certificates WHERE id = $1", id)
	if err != nil {
		return nil, err
	}
	certs, err := scanCertificates(rows, false)
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, nil
	}
	if err := s.attachTargets(ctx, certs); err != nil {
		return nil, err
	}
	return &certs[0], nil
}

// getCertificate is GET /api/v1/certificates/{id}: the certificate as
// create answers it; certctl maps every lookup failure to 404.
func (s *Server) getCertificate(w http.ResponseWriter, r *http.Request) {
	c, err := s.getCertificateRow(r.Context(), r.PathValue("id"))
	if err != nil {
		s.errLog.Printf("%s %s: %v", r.Method, r.URL.Path, err)
	}
	if c == nil {
		handlerError(w, r, http.StatusNotFound, "Certificate not found")
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// certificateVersions is GET /api/v1/certificates/{id}/versions:
// {"data","total","page","per_page"}, newest first. certctl does not check
// that the certificate exists, so an unknown id is a 200 with
// "data": null and total 0, and so is a page past the end.
func (s *Server) certificateVersions(w http.ResponseWriter, r *http.Request) {
	page, perPage := pageParams(r)
	ctx := r.Context()
	id := r.PathValue("id")
	var total int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM certificate_versions WHERE certificate_id = $1`, id).Scan(&total); err != nil {
		s.internalError(w, r, "Failed to get certificate versions", err)
		return
	}
	rows, err := s.db.Query(ctx, "SELECT "+versionColumns+` FROM certificate_versions cv
		WHERE cv.certificate_id = $1 ORDER BY cv.created_at DESC, cv.id DESC LIMIT $2 OFFSET $3`,
		id, perPage, (page-1)*perPage)
	if err != nil {
		s.internalError(w, r, "Failed to get certificate versions", err)
		return
	}
	defer rows.Close()
	var versions []certificateVersion
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			s.internalError(w, r, "Failed to get certificate versions", err)
			return
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		s.internalError(w, r, "Failed to get certificate versions", err)
		return
	}
	var data any
	if len(versions) > 0 {
		data = versions
	}
	writeJSON(w, http.StatusOK, pagedResponse{Data: data, Total: total, Page: page, PerPage: perPage})
}
