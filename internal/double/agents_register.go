package double

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// agent is certctl's domain.Agent on the wire (api_key_hash is never
// serialised). Register decodes the request body into it, so unknown keys
// are ignored and the server-owned fields are overwritten, as in certctl.
type agent struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Hostname        string     `json:"hostname"`
	Status          string     `json:"status"`
	LastHeartbeatAt *time.Time `json:"last_heartbeat_at,omitempty"`
	RegisteredAt    time.Time  `json:"registered_at"`
	OS              string     `json:"os"`
	Architecture    string     `json:"architecture"`
	IPAddress       string     `json:"ip_address"`
	Version         string     `json:"version"`
	RetiredAt       *time.Time `json:"retired_at,omitempty"`
	RetiredReason   *string    `json:"retired_reason,omitempty"`
}

// registerAgent is POST /api/v1/agents: certctl's bootstrap-token gate
// (401 before the body is read), then the same validation order and
// messages, then an INSERT whose unique violation on name becomes 409.
// certctl generates an agent API key, stores its SHA-256 and never returns
// it; the double does the same, so no key authenticates as the agent.
func (s *Server) registerAgent(w http.ResponseWriter, r *http.Request) {
	if !bootstrapTokenOK(r, s.cfg.AgentBootstrapToken) {
		handlerError(w, r, http.StatusUnauthorized, "invalid_or_missing_bootstrap_token")
		return
	}
	var a agent
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
		handlerError(w, r, http.StatusBadRequest, "Invalid request body")
		return
	}
	switch {
	case a.Name == "":
		handlerError(w, r, http.StatusBadRequest, "name is required")
		return
	case len(a.Name) > 128:
		handlerError(w, r, http.StatusBadRequest, "name must be 128 characters or fewer")
		return
	case a.Hostname == "":
		handlerError(w, r, http.StatusBadRequest, "hostname is required")
		return
	}

	var key [32]byte
	_, _ = rand.Read(key[:])
	keyHash := sha256.Sum256(key[:])
	now := s.now()
	a.ID = generateID("agent")
	a.Status = "Online"
	a.RegisteredAt = now
	a.LastHeartbeatAt = &now
	_, err := s.db.Exec(r.Context(), `
		INSERT INTO agents (id, name, hostname, status, last_heartbeat_at, registered_at, api_key_hash,
			os, architecture, ip_address, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		a.ID, a.Name, a.Hostname, a.Status, a.LastHeartbeatAt, a.RegisteredAt, hex.EncodeToString(keyHash[:]),
		a.OS, a.Architecture, a.IPAddress, a.Version)
	if err != nil {
		// certctl decides by the error text, so "value too long" for a
		// column is a 500, not a 400.
		msg := err.Error()
		if strings.Contains(msg, "unique") || strings.Contains(msg, "duplicate") || strings.Contains(msg, "already exists") {
			handlerError(w, r, http.StatusConflict, "Agent with this name already exists")
			return
		}
		s.internalError(w, r, "Failed to register agent", err)
		return
	}
	writeJSON(w, http.StatusCreated, a)
}

// bootstrapTokenOK is certctl's verifyBootstrapToken: with no token
// configured anything passes; otherwise the Bearer value (which the auth
// middleware has already accepted as an API key) must equal it.
func bootstrapTokenOK(r *http.Request, expected string) bool {
	if expected == "" {
		return true
	}
	presented, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || presented == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(expected), []byte(presented)) == 1
}

// pageParams is the page/per_page parsing certctl's list handlers share:
// anything unparsable or out of range (per_page 1–500) silently becomes
// the default.
func pageParams(r *http.Request) (page, perPage int) {
	page, perPage = 1, 50
	q := r.URL.Query()
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 0 {
		page = n
	}
	if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n > 0 && n <= 500 {
		perPage = n
	}
	return page, perPage
}

// listAgents is GET /api/v1/agents. certctl loads every non-retired agent
// (newest registration first) and slices the page out in memory, so:
//   - a page past the end (or an empty fleet) has "data": null, not [];
//   - one agent row with a NULL os/architecture/ip_address/version, which
//     certctl scans into plain strings, fails the whole list with 500,
//     whichever page is asked for.
//
// The double asks PostgreSQL for the page instead, with the same result
// (plus an id tie-break certctl does not have).
func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	page, perPage := pageParams(r)
	ctx := r.Context()
	var total, unscannable int
	if err := s.db.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE os IS NULL OR architecture IS NULL OR ip_address IS NULL OR version IS NULL)
		FROM agents WHERE retired_at IS NULL`).Scan(&total, &unscannable); err != nil {
		s.internalError(w, r, "Failed to list agents", err)
		return
	}
	if unscannable > 0 {
		s.internalError(w, r, "Failed to list agents",
			fmt.Errorf("%d agent row(s) have a NULL os/architecture/ip_address/version, which certctl cannot scan", unscannable))
		return
	}
	rows, err := s.db.Query(ctx, `
		SELECT id, name, hostname, status, last_heartbeat_at, registered_at, os, architecture, ip_address,
			version, retired_at, retired_reason
		FROM agents WHERE retired_at IS NULL
		ORDER BY registered_at DESC, id DESC
		LIMIT $1 OFFSET $2`, perPage, (page-1)*perPage)
	if err != nil {
		s.internalError(w, r, "Failed to list agents", err)
		return
	}
	defer rows.Close()
	var agents []agent
	for rows.Next() {
		var a agent
		if err := rows.Scan(&a.ID, &a.Name, &a.Hostname, &a.Status, &a.LastHeartbeatAt, &a.RegisteredAt,
			&a.OS, &a.Architecture, &a.IPAddress, &a.Version, &a.RetiredAt, &a.RetiredReason); err != nil {
			s.internalError(w, r, "Failed to list agents", err)
			return
		}
		agents = append(agents, a)
	}
	if err := rows.Err(); err != nil {
		s.internalError(w, r, "Failed to list agents", err)
		return
	}
	var data any // nil slice → null, as certctl answers
	if len(agents) > 0 {
		data = agents
	}
	writeJSON(w, http.StatusOK, pagedResponse{Data: data, Total: total, Page: page, PerPage: perPage})
}
