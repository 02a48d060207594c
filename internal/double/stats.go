package double

import (
	"net/http"
	"strings"
	"time"
)

type dashboardSummary struct {
	TotalCertificates    int64     `json:"total_certificates"`
	ExpiringCertificates int64     `json:"expiring_certificates"`
	ExpiredCertificates  int64     `json:"expired_certificates"`
	RevokedCertificates  int64     `json:"revoked_certificates"`
	ActiveAgents         int64     `json:"active_agents"`
	OfflineAgents        int64     `json:"offline_agents"`
	TotalAgents          int64     `json:"total_agents"`
	PendingJobs          int64     `json:"pending_jobs"`
	FailedJobs           int64     `json:"failed_jobs"`
	CompleteJobs         int64     `json:"complete_jobs"`
	NotificationsDead    int64     `json:"notifications_dead"`
	CompletedAt          time.Time `json:"completed_at"`
}

// statsSummary is GET /api/v1/stats/summary. total_certificates is a true
// count, but certctl classifies expiring/expired/revoked over a list call
// that asks for 10000 rows and gets the 50 oldest, so those three only
// ever reflect the first 50 certificates; the double does the same.
func (s *Server) statsSummary(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	now := s.now()
	sum := dashboardSummary{CompletedAt: now}

	certs, total, err := s.queryCertificates(ctx, &certFilter{Page: 1, PerPage: 10000})
	if err != nil {
		s.internalError(w, r, "Failed to get dashboard summary", err)
		return
	}
	sum.TotalCertificates = int64(total)
	soon := now.AddDate(0, 0, 30)
	for _, c := range certs {
		st := strings.ToLower(c.Status)
		switch {
		case st == "revoked":
			sum.RevokedCertificates++
		case st == "expired" || (!c.ExpiresAt.IsZero() && c.ExpiresAt.Before(now)):
			sum.ExpiredCertificates++
		case !c.ExpiresAt.IsZero() && c.ExpiresAt.Before(soon) && c.ExpiresAt.After(now):
			sum.ExpiringCertificates++
		}
	}

	// Active means a heartbeat within five minutes; retired agents are not
	// counted at all.
	err = s.db.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE last_heartbeat_at > $1)
		FROM agents WHERE retired_at IS NULL`, now.Add(-5*time.Minute)).
		Scan(&sum.TotalAgents, &sum.ActiveAgents)
	if err != nil {
		s.internalError(w, r, "Failed to get dashboard summary", err)
		return
	}
	sum.OfflineAgents = sum.TotalAgents - sum.ActiveAgents

	err = s.db.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE status IN ('Pending', 'AwaitingCSR', 'AwaitingApproval', 'Running')),
		       count(*) FILTER (WHERE status = 'Failed'),
		       count(*) FILTER (WHERE status = 'Completed'),
		       (SELECT count(*) FROM notification_events WHERE status = 'dead')
		FROM jobs`).Scan(&sum.PendingJobs, &sum.FailedJobs, &sum.CompleteJobs, &sum.NotificationsDead)
	if err != nil {
		s.internalError(w, r, "Failed to get dashboard summary", err)
		return
	}
	writeJSON(w, http.StatusOK, sum)
}
