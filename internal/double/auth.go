package double

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"sort"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Role and actor identifiers certctl's seed data and auth layer use.
const (
	roleAdmin       = "r-admin"
	roleViewer      = "r-viewer"
	tenantDefault   = "t-default"
	demoAnonActorID = "actor-demo-anon"
	actorTypeAPIKey = "APIKey"
	actorTypeAnon   = "Anonymous"
)

type actor struct {
	Name  string
	Type  string
	Admin bool
	Role  string
}

type actorKey struct{}

func actorFrom(r *http.Request) actor {
	a, _ := r.Context().Value(actorKey{}).(actor)
	return a
}

// permission is one row of a role's grants, as auth/check reports it.
type permission struct {
	Permission string  `json:"permission"`
	ScopeType  string  `json:"scope_type"`
	ScopeID    *string `json:"scope_id,omitempty"`
}

type rolePerms struct {
	global map[string]bool
	list   []permission
}

// loadRoles reads certctl's RBAC seed (roles r-admin, r-viewer, … and their
// permissions) from the database once at startup. certctl resolves them per
// request; the double only needs the outcome, and the seed does not change
// during a test.
func loadRoles(ctx context.Context, db *pgxpool.Pool) (map[string]*rolePerms, error) {
	rows, err := db.Query(ctx, `
		SELECT rp.role_id, p.name, rp.scope_type, rp.scope_id
		FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id
		ORDER BY rp.role_id, p.name, rp.scope_type, rp.scope_id`)
	if err != nil {
		return nil, fmt.Errorf("load RBAC roles: %w", err)
	}
	defer rows.Close()
	roles := map[string]*rolePerms{}
	for rows.Next() {
		var roleID string
		var p permission
		if err := rows.Scan(&roleID, &p.Permission, &p.ScopeType, &p.ScopeID); err != nil {
			return nil, fmt.Errorf("load RBAC roles: %w", err)
		}
		rp := roles[roleID]
		if rp == nil {
			rp = &rolePerms{global: map[string]bool{}}
			roles[roleID] = rp
		}
		rp.list = append(rp.list, p)
		if p.ScopeType == "global" {
			rp.global[p.Permission] = true
		}
	}
	return roles, rows.Err()
}

// keyIndex maps SHA-256(key) to its actor, so lookups compare digests
// rather than the secrets themselves, as certctl's key store does.
func keyIndex(keys []APIKey) map[[32]byte]actor {
	idx := make(map[[32]byte]actor, len(keys))
	for _, k := range keys {
		// certctl's startup backfill grants admin keys r-admin and every
		// other key r-viewer; that grant is what makes writes 403.
		role := roleViewer
		if k.Admin {
			role = roleAdmin
		}
		idx[sha256.Sum256([]byte(k.Key))] = actor{Name: k.Name, Type: actorTypeAPIKey, Admin: k.Admin, Role: role}
	}
	return idx
}

// authenticate is certctl's Bearer middleware, messages and headers
// included: only the missing-header 401 carries WWW-Authenticate.
func (s *Server) authenticate(next http.Handler) http.Handler {
	if s.cfg.AuthType == "none" {
		anon := actor{Name: demoAnonActorID, Type: actorTypeAnon, Admin: true, Role: roleAdmin}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), actorKey{}, anon)))
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		if h == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="certctl"`)
			middlewareError(w, http.StatusUnauthorized, `{"error":"Authorization header required"}`)
			return
		}
		if len(h) < 8 || h[:7] != "Bearer " {
			middlewareError(w, http.StatusUnauthorized, `{"error":"Invalid Authorization header format, expected: Bearer <token>"}`)
			return
		}
		a, ok := s.keys[sha256.Sum256([]byte(h[7:]))]
		if !ok {
			middlewareError(w, http.StatusUnauthorized, `{"error":"Invalid API key"}`)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), actorKey{}, a)))
	})
}

// require is certctl's rbacGate: the actor's role must hold perm at global
// scope.
func (s *Server) require(perm string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rp := s.roles[actorFrom(r).Role]
		if rp == nil || !rp.global[perm] {
			rbacError(w, http.StatusForbidden, "Insufficient permissions")
			return
		}
		h(w, r)
	})
}

// authCheck is GET /api/v1/auth/check with the RBAC enrichment 151107c
// adds.
func (s *Server) authCheck(w http.ResponseWriter, r *http.Request) {
	a := actorFrom(r)
	perms := []permission{}
	if rp := s.roles[a.Role]; rp != nil {
		perms = append(perms, rp.list...)
	}
	sort.SliceStable(perms, func(i, j int) bool { return perms[i].Permission < perms[j].Permission })
	writeJSON(w, http.StatusOK, map[string]any{
		"status":                "authenticated",
		"user":                  a.Name,
		"admin":                 a.Admin,
		"actor_id":              a.Name,
		"actor_type":            a.Type,
		"tenant_id":             tenantDefault,
		"roles":                 []string{a.Role},
		"effective_permissions": perms,
		"admin_via_role":        a.Role == roleAdmin,
	})
}

// authInfo is the unauthenticated GET /api/v1/auth/info a GUI (or a
// harness preflight) uses to learn whether keys are needed.
func (s *Server) authInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"auth_type": s.cfg.AuthType, "required": s.cfg.AuthType != "none"})
}
