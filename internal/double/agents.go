package double

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// heartbeat is POST /api/v1/agents/{id}/heartbeat. Like certctl 151107c it
// answers 500, not 404, for an unknown agent: certctl's repository wraps
// sql.ErrNoRows before comparing it, so its not-found branch never fires.
// A retired agent gets 410, and an agent row certctl cannot scan (NULL in
// one of the text columns it reads into plain strings) gets 500.
func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == "" {
		handlerError(w, r, http.StatusBadRequest, "Agent ID is required")
		return
	}

	// The body is optional and a malformed one is ignored, as in certctl.
	var meta struct {
		Version      string `json:"version"`
		Hostname     string `json:"hostname"`
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		IPAddress    string `json:"ip_address"`
	}
	_ = json.NewDecoder(r.Body).Decode(&meta)

	ctx := r.Context()
	var hostname, osName, arch, ip, version *string
	var retiredAt *time.Time
	err := s.db.QueryRow(ctx, `SELECT hostname, os, architecture, ip_address, version, retired_at FROM agents WHERE id = $1`, id).
		Scan(&hostname, &osName, &arch, &ip, &version, &retiredAt)
	if errors.Is(err, pgx.ErrNoRows) {
		handlerError(w, r, http.StatusInternalServerError, "Failed to record heartbeat")
		return
	}
	if err != nil {
		s.internalError(w, r, "Failed to record heartbeat", err)
		return
	}
	if retiredAt != nil {
		handlerError(w, r, http.StatusGone, "Agent has been retired")
		return
	}
	if hostname == nil || osName == nil || arch == nil || ip == nil || version == nil {
		s.internalError(w, r, "Failed to record heartbeat",
			fmt.Errorf("agent %s has a NULL hostname/os/architecture/ip_address/version, which certctl cannot scan", id))
		return
	}

	_, err = s.db.Exec(ctx, `
		UPDATE agents SET
			last_heartbeat_at = now(),
			status = 'Online',
			hostname = CASE WHEN $2 = '' THEN hostname ELSE $2 END,
			os = CASE WHEN $3 = '' THEN os ELSE $3 END,
			architecture = CASE WHEN $4 = '' THEN architecture ELSE $4 END,
			ip_address = CASE WHEN $5 = '' THEN ip_address ELSE $5 END,
			version = CASE WHEN $6 = '' THEN version ELSE $6 END
		WHERE id = $1 AND retired_at IS NULL`,
		id, meta.Hostname, meta.OS, meta.Architecture, meta.IPAddress, meta.Version)
	if err != nil {
		s.internalError(w, r, "Failed to record heartbeat", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "heartbeat_recorded"})
}
