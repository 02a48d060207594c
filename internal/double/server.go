package double

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Server is the double's HTTP surface over one database pool.
type Server struct {
	cfg    Config
	db     *pgxpool.Pool
	roles  map[string]*rolePerms
	keys   map[[32]byte]actor
	faults *faultInjector
	errLog *log.Logger
	now    func() time.Time

	// issuers is certctl's issuer registry, loaded once at startup;
	// newSerial draws leaf serials (injectable for tests).
	issuers   map[string]*issuerConn
	newSerial func() (*big.Int, error)

	api  http.Handler // full chain: rate limit, auth, faults, routes
	anon http.Handler // probes and version: own rate limit, no auth
}

// NewServer builds the handler chain. The database must already hold
// certctl's schema (see Migrate); the RBAC seed is read from it here.
func NewServer(ctx context.Context, cfg Config, db *pgxpool.Pool, errLog io.Writer) (*Server, error) {
	if errLog == nil {
		errLog = os.Stderr
	}
	present, err := SchemaPresent(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	if !present {
		return nil, ErrSchemaMissing
	}
	roles, err := loadRoles(ctx, db)
	if err != nil {
		return nil, err
	}
	issuers, err := loadIssuers(ctx, db)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:    cfg,
		db:     db,
		roles:  roles,
		keys:   keyIndex(cfg.Keys),
		faults: newFaultInjector(cfg.Faults),
		errLog: log.New(errLog, "certctl-double: ", log.LstdFlags),
		now:    time.Now,

		issuers:   issuers,
		newSerial: randomSerial,
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /ready", s.ready)
	mux.HandleFunc("GET /api/v1/version", s.version)
	mux.HandleFunc("GET /api/v1/auth/info", s.authInfo)
	mux.HandleFunc("GET /api/v1/auth/check", s.authCheck)
	mux.Handle("GET /api/v1/certificates", s.require("cert.read", s.listCertificates))
	mux.Handle("POST /api/v1/certificates", s.require("cert.issue", s.createCertificate))
	mux.Handle("POST /api/v1/certificates/bulk-renew", s.require("cert.issue", s.bulkRenew))
	mux.Handle("POST /api/v1/certificates/bulk-revoke", s.require("cert.bulk_revoke", s.bulkRevoke))
	mux.Handle("GET /api/v1/stats/summary", s.require("stats.read", s.statsSummary))
	mux.Handle("POST /api/v1/agents/{id}/heartbeat", s.require("agent.heartbeat", s.heartbeat))
	mux.Handle("GET /api/v1/certificates/{id}", s.require("cert.read", s.getCertificate))
	mux.Handle("GET /api/v1/certificates/{id}/versions", s.require("cert.read", s.certificateVersions))
	mux.Handle("GET /api/v1/agents", s.require("agent.read", s.listAgents))
	mux.Handle("POST /api/v1/agents", s.require("agent.edit", s.registerAgent))
	mux.Handle("POST /api/v1/agents/{id}/csr", s.require("agent.job.poll", s.submitCSR))
	s.registerACME(mux)
	mux.HandleFunc("/api/v1/", notFound)

	// certctl runs two chains: the authenticated one for /api/v1 (and, with
	// no dashboard, everything else), and an unauthenticated one for the
	// probes and /api/v1/version, each with its own per-IP rate limiter.
	// The limiter comes before auth, as in certctl.
	api := s.authenticate(s.faults.middleware(mux))
	anon := s.faults.middleware(mux)
	if cfg.RateLimitEnabled {
		api = newRateLimiter(cfg.RateLimitRPS, cfg.RateLimitBurst, nil).middleware(api)
		anon = newRateLimiter(cfg.RateLimitRPS, cfg.RateLimitBurst, nil).middleware(anon)
	}
	s.api = withRequestID(s.limitBody(api))
	s.anon = withRequestID(s.limitBody(anon))
	return s, nil
}

// ServeHTTP dispatches like certctl's buildFinalHandler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/health", "/ready", "/api/v1/version", "/api/v1/auth/info":
		s.anon.ServeHTTP(w, r)
	default:
		s.api.ServeHTTP(w, r)
	}
}

func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Faults.Unhealthy {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unhealthy", "error": "DOUBLE_UNHEALTHY is set"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "healthy"})
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Faults.Unhealthy {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "db_unavailable", "error": "DOUBLE_UNHEALTHY is set"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "db_unavailable", "error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "db": "reachable"})
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	v := struct {
		Version   string `json:"version"`
		Commit    string `json:"commit"`
		Modified  bool   `json:"modified"`
		BuildTime string `json:"build_time"`
		GoVersion string `json:"go_version"`
	}{Version: Version, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				v.Commit = kv.Value
			case "vcs.modified":
				v.Modified = kv.Value == "true"
			case "vcs.time":
				v.BuildTime = kv.Value
			}
		}
	}
	writeJSON(w, http.StatusOK, v)
}

// internalError logs an unexpected failure and answers with certctl's
// message for it. Constraint violations are certctl's documented answer to
// bad references and duplicates (500 too), not faults, so they stay quiet.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, message string, err error) {
	var pgErr *pgconn.PgError
	if !(errors.As(err, &pgErr) && pgErr.Code[:2] == "23") && !errors.Is(err, context.Canceled) {
		s.errLog.Printf("%s %s: %s: %v", r.Method, r.URL.Path, message, err)
	}
	handlerError(w, r, http.StatusInternalServerError, message)
}

// RunOptions are the process-level hooks Run needs; zero values mean the
// real process (stdout, stderr, os.Exit).
type RunOptions struct {
	Stdout, Stderr io.Writer
	// Exit is called with status 1 when DOUBLE_EXIT_AFTER elapses.
	Exit func(code int)
	// OnListen, if set, receives the bound address once the server accepts
	// connections (tests listen on port 0).
	OnListen func(addr net.Addr)
}

// Run is the whole program: --migrate-only loads the schema and returns;
// otherwise it serves HTTPS until ctx is cancelled.
func Run(ctx context.Context, cfg Config, opts RunOptions) error {
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Exit == nil {
		opts.Exit = os.Exit
	}
	errLog := log.New(opts.Stderr, "certctl-double: ", log.LstdFlags)

	if cfg.MigrateOnly {
		if err := waitForDB(ctx, cfg.DatabaseURL, 30*time.Second); err != nil {
			return err
		}
		loaded, err := Migrate(ctx, cfg.DatabaseURL, cfg.SchemaPath)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if loaded {
			fmt.Fprintf(opts.Stdout, "certctl-double: schema loaded from %s\n", cfg.SchemaPath)
		} else {
			fmt.Fprintf(opts.Stdout, "certctl-double: schema already present, nothing to do\n")
		}
		return nil
	}

	// The crash clock starts with the process, not when the listener is up.
	stopExit := scheduleExit(cfg.Faults.ExitAfter, opts.Exit, errLog.Printf)
	defer stopExit()

	cert, err := tls.LoadX509KeyPair(cfg.TLSCertPath, cfg.TLSKeyPath)
	if err != nil {
		return fmt.Errorf("CERTCTL_SERVER_TLS_CERT_PATH/CERTCTL_SERVER_TLS_KEY_PATH: %w", err)
	}

	if err := waitForDB(ctx, cfg.DatabaseURL, 30*time.Second); err != nil {
		return err
	}
	poolCfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("CERTCTL_DATABASE_URL: %w", err)
	}
	poolCfg.MaxConns = DefaultPoolSize
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	defer pool.Close()

	srv, err := NewServer(ctx, cfg, pool, opts.Stderr)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return err
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	hs := &http.Server{
		Handler:           srv,
		Protocols:         protocols,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		// certctl's 120 s, stretched so DOUBLE_LATENCY cannot turn into
		// connection resets instead of slow answers.
		WriteTimeout: 120*time.Second + cfg.Faults.Latency,
		IdleTimeout:  60 * time.Second,
		ErrorLog:     log.New(opts.Stderr, "certctl-double: http: ", log.LstdFlags),
	}
	fmt.Fprintf(opts.Stdout, "certctl-double %s listening on https://%s (TLS 1.3+, h2) %s\n", Version, ln.Addr(), cfg)
	if opts.OnListen != nil {
		opts.OnListen(ln.Addr())
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.ServeTLS(ln, "", "") }()
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// waitForDB retries the first connection for a while: in compose the
// double may start while PostgreSQL is still coming up.
func waitForDB(ctx context.Context, url string, timeout time.Duration) error {
	connCfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("CERTCTL_DATABASE_URL: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.ConnectConfig(cctx, connCfg)
		if err == nil {
			_ = conn.Close(cctx)
			cancel()
			return nil
		}
		cancel()
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code != "57P03" { // anything but "starting up" is final
			return fmt.Errorf("database: %w", err)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("database not reachable after %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
