package double

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// certificate is certctl's domain.ManagedCertificate on the wire; the JSON
// tags (and so the request decoding and the response shape) are the same.
type certificate struct {
	ID                   string            `json:"id"`
	Name                 string            `json:"name"`
	CommonName           string            `json:"common_name"`
	SANs                 []string          `json:"sans"`
	Environment          string            `json:"environment"`
	OwnerID              string            `json:"owner_id"`
	TeamID               string            `json:"team_id"`
	IssuerID             string            `json:"issuer_id"`
	TargetIDs            []string          `json:"target_ids"`
	RenewalPolicyID      string            `json:"renewal_policy_id"`
	CertificateProfileID string            `json:"certificate_profile_id,omitempty"`
	Status               string            `json:"status"`
	ExpiresAt            time.Time         `json:"expires_at"`
	Tags                 map[string]string `json:"tags"`
	LastRenewalAt        *time.Time        `json:"last_renewal_at,omitempty"`
	LastDeploymentAt     *time.Time        `json:"last_deployment_at,omitempty"`
	RevokedAt            *time.Time        `json:"revoked_at,omitempty"`
	RevocationReason     string            `json:"revocation_reason,omitempty"`
	CreatedAt            time.Time         `json:"created_at"`
	UpdatedAt            time.Time         `json:"updated_at"`
	Source               string            `json:"source,omitempty"`
}

var idCounter atomic.Uint64

// generateID is certctl's id scheme for rows it creates (cert-…, job-…).
func generateID(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), idCounter.Add(1))
}

// createCertificate is POST /api/v1/certificates: validation in certctl's
// order and wording, then a plain INSERT whose constraint violations
// (duplicate name, unknown owner/team/issuer/policy/profile) become 500s,
// exactly as certctl reports them.
func (s *Server) createCertificate(w http.ResponseWriter, r *http.Request) {
	var c certificate
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		handlerError(w, r, http.StatusBadRequest, "Invalid request body")
		return
	}
	if msg := validateCreate(&c); msg != "" {
		handlerError(w, r, http.StatusBadRequest, msg)
		return
	}
	if c.ID == "" {
		c.ID = generateID("cert")
	}
	now := s.now()
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now
	}
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = now
	}
	if c.Status == "" {
		c.Status = "Pending"
	}
	if c.Tags == nil {
		c.Tags = map[string]string{}
	}
	var profileID, revocationReason *string
	if c.CertificateProfileID != "" {
		profileID = &c.CertificateProfileID
	}
	if c.RevocationReason != "" {
		revocationReason = &c.RevocationReason
	}
	// A zero expires_at is stored as 0001-01-01, not NULL, as certctl does;
	// bulk-renew later reads that as "never issued".
	_, err := s.db.Exec(r.Context(), `
		INSERT INTO managed_certificates (
			id, name, common_name, sans, environment, owner_id, team_id, issuer_id, renewal_policy_id,
			certificate_profile_id, status, expires_at, tags, last_renewal_at, last_deployment_at,
			revoked_at, revocation_reason, source, created_at, updated_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20)`,
		c.ID, c.Name, c.CommonName, c.SANs, c.Environment, c.OwnerID, c.TeamID, c.IssuerID, c.RenewalPolicyID,
		profileID, c.Status, c.ExpiresAt, c.Tags, c.LastRenewalAt, c.LastDeploymentAt,
		c.RevokedAt, revocationReason, c.Source, c.CreatedAt, c.UpdatedAt)
	if err != nil {
		s.internalError(w, r, "Failed to create certificate", err)
		return
	}
	writeJSON(w, http.StatusCreated, c)
}

func validateCreate(c *certificate) string {
	required := func(field, v string) string {
		if v == "" {
			return field + " is required"
		}
		return ""
	}
	if msg := required("common_name", c.CommonName); msg != "" {
		return msg
	}
	if msg := validateCommonName(c.CommonName); msg != "" {
		return msg
	}
	for _, f := range []struct{ name, v string }{
		{"owner_id", c.OwnerID}, {"team_id", c.TeamID}, {"issuer_id", c.IssuerID},
		{"name", c.Name}, {"renewal_policy_id", c.RenewalPolicyID},
	} {
		if msg := required(f.name, f.v); msg != "" {
			return msg
		}
	}
	return ""
}

// validateCommonName is certctl's check: ≤253 bytes; an e-mail address
// (S/MIME) if it has an @; else an IP or a name of letters, digits, '.',
// '-', '_' and '*' with no empty label and no label starting or ending
// with '-'.
func validateCommonName(cn string) string {
	if len(cn) > 253 {
		return "common_name must be 253 characters or fewer"
	}
	if strings.Contains(cn, "@") {
		if _, err := mail.ParseAddress(cn); err != nil {
			return fmt.Sprintf("invalid email format for S/MIME common name: %v", err)
		}
		return ""
	}
	if net.ParseIP(cn) != nil {
		return ""
	}
	for _, ch := range cn {
		ok := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' ||
			ch == '.' || ch == '-' || ch == '_' || ch == '*'
		if !ok {
			return fmt.Sprintf("invalid hostname format: hostname contains invalid character: %c", ch)
		}
	}
	for _, label := range strings.Split(cn, ".") {
		if label == "" {
			return "invalid hostname format: hostname has empty label"
		}
		if strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return "invalid hostname format: hostname labels cannot start or end with hyphen"
		}
	}
	return ""
}

// certFilter is certctl's repository.CertificateFilter, reduced to what
// the double serves.
type certFilter struct {
	Status, Environment, OwnerID, TeamID, IssuerID, ProfileID, AgentID string

	Sort     string
	SortDesc bool

	Cursor   string
	Page     int
	PerPage  int
	PageSize int
}

// sortColumns is certctl's whitelist for ?sort=; anything else keeps
// created_at.
var sortColumns = map[string]string{
	"notAfter": "expires_at", "expiresAt": "expires_at", "createdAt": "created_at",
	"updatedAt": "updated_at", "commonName": "common_name", "name": "name",
	"status": "status", "environment": "environment",
}

const certColumns = `id, name, common_name, sans, environment, owner_id, team_id, issuer_id, renewal_policy_id,
	certificate_profile_id, status, expires_at, tags, last_renewal_at, last_deployment_at, revoked_at,
	revocation_reason, source, created_at, updated_at`

// queryCertificates is certctl's CertificateRepository.List, bugs included:
//   - PerPage 0 or above 500 becomes 50. certctl's own callers ask for
//     10000 (bulk-renew by filter, the dashboard summary) and silently get
//     the first 50.
//   - The cursor is decoded by splitting "<RFC 3339 time>:<id>" at the
//     first ':', which falls inside the time, so decoding always fails, the
//     cursor condition is dropped, and every cursor request returns the
//     first page again.
//   - Default order is created_at ascending (oldest first).
func (s *Server) queryCertificates(ctx context.Context, f *certFilter) ([]certificate, int, error) {
	if f.Page < 1 {
		f.Page = 1
	}
	if f.PerPage == 0 || f.PerPage > 500 {
		f.PerPage = 50
	}
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	for _, c := range []struct{ col, v string }{
		{"status", f.Status}, {"environment", f.Environment}, {"owner_id", f.OwnerID},
		{"team_id", f.TeamID}, {"issuer_id", f.IssuerID}, {"certificate_profile_id", f.ProfileID},
	} {
		if c.v != "" {
			add(c.col+" = $?", c.v)
		}
	}
	if f.AgentID != "" {
		add(`id IN (SELECT DISTINCT ctm.certificate_id FROM certificate_target_mappings ctm
			JOIN deployment_targets dt ON ctm.target_id = dt.id WHERE dt.agent_id = $?)`, f.AgentID)
	}
	if f.Cursor != "" {
		if t, id, err := decodeCursor(f.Cursor); err == nil {
			args = append(args, t, id)
			where = append(where, fmt.Sprintf("(created_at, id) < ($%d, $%d)", len(args)-1, len(args)))
		}
	}
	whereClause := ""
	if len(where) > 0 {
		whereClause = "WHERE " + strings.Join(where, " AND ")
	}

	var total int
	if err := s.db.QueryRow(ctx, "SELECT count(*) FROM managed_certificates "+whereClause, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count certificates: %w", err)
	}

	col, ok := sortColumns[f.Sort]
	if !ok {
		col = "created_at"
	}
	dir := "ASC"
	if f.SortDesc {
		dir = "DESC"
	}
	pageSize := f.PerPage
	if f.PageSize > 0 && f.PageSize <= 500 {
		pageSize = f.PageSize
	}
	limit := fmt.Sprintf("LIMIT %d", pageSize)
	if f.Cursor == "" {
		limit += fmt.Sprintf(" OFFSET %d", (f.Page-1)*pageSize)
	}
	// certctl orders by the sort column alone; the id tie-break keeps pages
	// stable when bulk-seeded rows share one created_at.
	q := fmt.Sprintf("SELECT %s FROM managed_certificates %s ORDER BY %s %s, id %s %s",
		certColumns, whereClause, col, dir, dir, limit)
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("query certificates: %w", err)
	}
	certs, err := scanCertificates(rows, true)
	if err != nil {
		return nil, 0, err
	}
	if err := s.attachTargets(ctx, certs); err != nil {
		return nil, 0, err
	}
	return certs, total, nil
}

// scanCertificates reads rows of certColumns. certctl scans environment
// and expires_at into non-pointer fields, so a NULL in either (possible in
// hand-seeded rows; certctl itself writes "" and 0001-01-01) is a scan
// error there: with strict set the whole call fails as certctl's List
// does; without it the row is dropped as certctl's per-id Get callers do.
func scanCertificates(rows pgx.Rows, strict bool) ([]certificate, error) {
	defer rows.Close()
	certs := []certificate{}
	for rows.Next() {
		var c certificate
		var env, profileID, reason, source *string
		var expires *time.Time
		var tags []byte
		if err := rows.Scan(&c.ID, &c.Name, &c.CommonName, &c.SANs, &env, &c.OwnerID, &c.TeamID,
			&c.IssuerID, &c.RenewalPolicyID, &profileID, &c.Status, &expires, &tags,
			&c.LastRenewalAt, &c.LastDeploymentAt, &c.RevokedAt, &reason, &source,
			&c.CreatedAt, &c.UpdatedAt); err != nil {
			return nil, fmt.Errorf("scan certificate: %w", err)
		}
		var nullErr error
		switch {
		case env == nil:
			nullErr = fmt.Errorf("certificate %s: environment is NULL (certctl fails to scan it: converting NULL to string is unsupported)", c.ID)
		case expires == nil:
			nullErr = fmt.Errorf("certificate %s: expires_at is NULL (certctl fails to scan it into time.Time)", c.ID)
		}
		if nullErr != nil {
			if strict {
				return nil, nullErr
			}
			continue
		}
		c.Environment, c.ExpiresAt = *env, *expires
		if profileID != nil {
			c.CertificateProfileID = *profileID
		}
		if reason != nil {
			c.RevocationReason = *reason
		}
		if source != nil {
			c.Source = *source
		}
		c.Tags = map[string]string{}
		if len(tags) > 0 {
			if err := json.Unmarshal(tags, &c.Tags); err != nil {
				if strict {
					return nil, fmt.Errorf("certificate %s: tags: %w", c.ID, err)
				}
				continue
			}
		}
		certs = append(certs, c)
	}
	return certs, rows.Err()
}

func (s *Server) attachTargets(ctx context.Context, certs []certificate) error {
	if len(certs) == 0 {
		return nil
	}
	ids := make([]string, len(certs))
	for i, c := range certs {
		ids[i] = c.ID
	}
	rows, err := s.db.Query(ctx,
		`SELECT certificate_id, target_id FROM certificate_target_mappings WHERE certificate_id = ANY($1) ORDER BY target_id`, ids)
	if err != nil {
		return fmt.Errorf("query target mappings: %w", err)
	}
	defer rows.Close()
	targets := map[string][]string{}
	for rows.Next() {
		var cid, tid string
		if err := rows.Scan(&cid, &tid); err != nil {
			return err
		}
		targets[cid] = append(targets[cid], tid)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range certs {
		certs[i].TargetIDs = targets[certs[i].ID]
		if certs[i].TargetIDs == nil {
			certs[i].TargetIDs = []string{}
		}
	}
	return nil
}

func decodeCursor(cursor string) (time.Time, string, error) {
	raw, err := base64.URLEncoding.DecodeString(cursor)
	if err != nil {
		return time.Time{}, "", err
	}
	parts := strings.SplitN(string(raw), ":", 2)
	if len(parts) != 2 {
		return time.Time{}, "", errors.New("invalid cursor format")
	}
	t, err := time.Parse(time.RFC3339Nano, parts[0])
	return t, parts[1], err
}

func encodeCursor(createdAt time.Time, id string) string {
	return base64.URLEncoding.EncodeToString([]byte(createdAt.Format(time.RFC3339Nano) + ":" + id))
}

type pagedResponse struct {
	Data    any `json:"data"`
	Total   int `json:"total"`
	Page    int `json:"page"`
	PerPage int `json:"per_page"`
}

type cursorResponse struct {
	Data       any    `json:"data"`
	Total      int    `json:"total"`
	NextCursor string `json:"next_cursor,omitempty"`
	PageSize   int    `json:"page_size"`
}

// listCertificates is GET /api/v1/certificates with certctl's parameter
// handling: out-of-range page/per_page/page_size are silently replaced,
// limit is ignored, and a cursor switches to the (stuck) cursor envelope.
func (s *Server) listCertificates(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := &certFilter{
		Status: q.Get("status"), Environment: q.Get("environment"), OwnerID: q.Get("owner_id"),
		TeamID: q.Get("team_id"), IssuerID: q.Get("issuer_id"), AgentID: q.Get("agent_id"),
		ProfileID: q.Get("profile_id"), Cursor: q.Get("cursor"),
	}
	if sort := q.Get("sort"); sort != "" {
		if strings.HasPrefix(sort, "-") {
			f.Sort, f.SortDesc = sort[1:], true
		} else {
			f.Sort, f.SortDesc = sort, q.Get("sort_desc") == "true"
		}
	}
	page, perPage := 1, 50
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 0 {
		page = n
	}
	if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n > 0 && n <= 500 {
		perPage = n
	}
	if n, err := strconv.Atoi(q.Get("page_size")); err == nil && n > 0 && n <= 500 {
		f.PageSize = n
	}
	f.Page, f.PerPage = page, perPage

	certs, total, err := s.queryCertificates(r.Context(), f)
	if err != nil {
		s.internalError(w, r, "Failed to list certificates", err)
		return
	}
	var data any = certs
	if fields := q.Get("fields"); fields != "" {
		data = sparse(certs, strings.Split(fields, ","))
	}

	if f.Cursor != "" {
		resp := cursorResponse{Data: data, Total: total, PageSize: f.PageSize}
		if resp.PageSize == 0 {
			resp.PageSize = f.PerPage
		}
		if len(certs) > 0 {
			last := certs[len(certs)-1]
			resp.NextCursor = encodeCursor(last.CreatedAt, last.ID)
		}
		writeJSON(w, http.StatusOK, resp)
		return
	}
	writeJSON(w, http.StatusOK, pagedResponse{Data: data, Total: total, Page: page, PerPage: perPage})
}

// sparse keeps only the requested JSON keys of each item (?fields=a,b).
func sparse(certs []certificate, fields []string) []map[string]any {
	keep := map[string]bool{}
	for _, f := range fields {
		keep[f] = true
	}
	out := make([]map[string]any, 0, len(certs))
	raw, _ := json.Marshal(certs)
	_ = json.Unmarshal(raw, &out)
	for _, m := range out {
		for k := range m {
			if !keep[k] {
				delete(m, k)
			}
		}
	}
	return out
}

type bulkRenewRequest struct {
	ProfileID      string   `json:"profile_id,omitempty"`
	OwnerID        string   `json:"owner_id,omitempty"`
	AgentID        string   `json:"agent_id,omitempty"`
	IssuerID       string   `json:"issuer_id,omitempty"`
	TeamID         string   `json:"team_id,omitempty"`
	CertificateIDs []string `json:"certificate_ids,omitempty"`
}

func (b bulkRenewRequest) hasFilter() bool {
	return b.ProfileID != "" || b.OwnerID != "" || b.AgentID != "" || b.IssuerID != "" || b.TeamID != ""
}

type bulkEnqueuedJob struct {
	CertificateID string `json:"certificate_id"`
	JobID         string `json:"job_id"`
}

type bulkError struct {
	CertificateID string `json:"certificate_id"`
	Error         string `json:"error"`
}

// bulkRenewResult is certctl's domain.BulkRenewalResult; note the
// omitempty lists: with nothing enqueued there is no enqueued_jobs key.
type bulkRenewResult struct {
	TotalMatched  int               `json:"total_matched"`
	TotalEnqueued int               `json:"total_enqueued"`
	TotalSkipped  int               `json:"total_skipped"`
	TotalFailed   int               `json:"total_failed"`
	EnqueuedJobs  []bulkEnqueuedJob `json:"enqueued_jobs,omitempty"`
	Errors        []bulkError       `json:"errors,omitempty"`
}

// renewalBlockedStatuses are the certificate states certctl's bulk renewal
// silently skips. A successful enqueue moves the certificate to
// RenewalInProgress, which is why a second bulk-renew of the same
// certificates skips them all until a job finishes.
var renewalBlockedStatuses = []string{"Archived", "Revoked", "Expired", "RenewalInProgress"}

// bulkRenew is POST /api/v1/certificates/bulk-renew.
func (s *Server) bulkRenew(w http.ResponseWriter, r *http.Request) {
	var req bulkRenewRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		handlerError(w, r, http.StatusBadRequest, "Invalid request body")
		return
	}
	if !req.hasFilter() && len(req.CertificateIDs) == 0 {
		handlerError(w, r, http.StatusBadRequest,
			"At least one filter criterion is required (profile_id, owner_id, agent_id, issuer_id, team_id, or certificate_ids)")
		return
	}
	ids, err := s.resolveBulk(r.Context(), req)
	if err != nil {
		s.internalError(w, r, "Bulk renewal failed: failed to resolve certificates: "+err.Error(), err)
		return
	}
	res := bulkRenewResult{TotalMatched: len(ids)}
	for _, id := range ids {
		jobID, skipped, err := s.enqueueRenewal(r.Context(), id)
		switch {
		case err != nil:
			res.TotalFailed++
			res.Errors = append(res.Errors, bulkError{CertificateID: id, Error: err.Error()})
		case skipped:
			res.TotalSkipped++
		default:
			res.TotalEnqueued++
			res.EnqueuedJobs = append(res.EnqueuedJobs, bulkEnqueuedJob{CertificateID: id, JobID: jobID})
		}
	}
	writeJSON(w, http.StatusOK, res)
}

// resolveBulk picks the certificates a bulk request names, as certctl's
// BulkRenewalService does: explicit ids alone are looked up one by one
// (unknown ids silently drop out); any filter goes through the list query
// with per-page 10000, which the 500-cap turns into the first 50 matches,
// intersected with the ids if both were given.
func (s *Server) resolveBulk(ctx context.Context, req bulkRenewRequest) ([]string, error) {
	if !req.hasFilter() {
		rows, err := s.db.Query(ctx, "SELECT "+certColumns+" FROM managed_certificates WHERE id = ANY($1)", req.CertificateIDs)
		if err != nil {
			return nil, err
		}
		found, err := scanCertificates(rows, false)
		if err != nil {
			return nil, err
		}
		known := make(map[string]bool, len(found))
		for _, c := range found {
			known[c.ID] = true
		}
		var ids []string
		for _, id := range req.CertificateIDs {
			if known[id] {
				ids = append(ids, id)
			}
		}
		return ids, nil
	}
	certs, _, err := s.queryCertificates(ctx, &certFilter{
		OwnerID: req.OwnerID, TeamID: req.TeamID, IssuerID: req.IssuerID,
		AgentID: req.AgentID, ProfileID: req.ProfileID, PerPage: 10000,
	})
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range req.CertificateIDs {
		want[id] = true
	}
	var ids []string
	for _, c := range certs {
		if len(want) == 0 || want[c.ID] {
			ids = append(ids, c.ID)
		}
	}
	return ids, nil
}

// enqueueRenewal marks one certificate RenewalInProgress and creates its
// job, in one transaction. The job is an Issuance for a never-issued
// certificate (expires_at unset or before 2000) and a Renewal otherwise;
// in certctl's default agent keygen mode it waits for the agent's CSR.
func (s *Server) enqueueRenewal(ctx context.Context, certID string) (jobID string, skipped bool, err error) {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return "", false, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()

	var expires *time.Time
	err = tx.QueryRow(ctx, `
		UPDATE managed_certificates SET status = 'RenewalInProgress', updated_at = now()
		WHERE id = $1 AND NOT (status = ANY($2))
		RETURNING expires_at`, certID, renewalBlockedStatuses).Scan(&expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("failed to update certificate status: %w", err)
	}
	jobType := "Renewal"
	if expires == nil || expires.Year() < 2000 {
		jobType = "Issuance"
	}
	status := "Pending"
	if s.cfg.KeygenMode == "agent" {
		status = "AwaitingCSR"
	}
	jobID = generateID("job")
	if _, err := tx.Exec(ctx, `
		INSERT INTO jobs (id, type, certificate_id, status, attempts, max_attempts, scheduled_at, created_at)
		VALUES ($1, $2, $3, $4, 0, 3, now(), now())`, jobID, jobType, certID, status); err != nil {
		return "", false, fmt.Errorf("failed to create renewal job: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return "", false, fmt.Errorf("failed to create renewal job: %w", err)
	}
	return jobID, false, nil
}
