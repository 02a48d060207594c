// Package responder answers certctl's ACME challenge validation on the stack: the HTTP-01 server is
// Let's Encrypt's challtestsrv (the library Pebble's pebble-challtestsrv wraps), and a management API in
// pebble-challtestsrv's shape lets a k6 client publish the key authorization for its token before it
// asks certctl to validate. certctl offers only http-01 challenges at both builds the harness judges
// (internal/service/acme_orders.go emits one http-01 challenge per authorization), so only that server
// listens.
package responder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/letsencrypt/challtestsrv"
)

// Config is what the responder listens on.
type Config struct {
	HTTP01      string // the HTTP-01 server's address: certctl fetches http://<name>/.well-known/acme-challenge/<token>, port 80
	Management  string // the management API's address
	Healthcheck bool   // probe a running responder's management API and exit
}

// LoadConfig reads RESPONDER_HTTP01 and RESPONDER_MANAGEMENT (defaults :80 and :8055, pebble-challtestsrv's
// management port) and the --healthcheck flag.
func LoadConfig(getenv func(string) string, args []string) (Config, error) {
	c := Config{HTTP01: ":80", Management: ":8055"}
	if v := getenv("RESPONDER_HTTP01"); v != "" {
		c.HTTP01 = v
	}
	if v := getenv("RESPONDER_MANAGEMENT"); v != "" {
		c.Management = v
	}
	for _, a := range args {
		switch a {
		case "--healthcheck":
			c.Healthcheck = true
		default:
			return c, fmt.Errorf("unknown argument %q (want none, or --healthcheck)", a)
		}
	}
	for name, addr := range map[string]string{"RESPONDER_HTTP01": c.HTTP01, "RESPONDER_MANAGEMENT": c.Management} {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return c, fmt.Errorf("%s=%q: want host:port (%v)", name, addr, err)
		}
	}
	return c, nil
}

// Management is the API a client publishes its challenges through, in pebble-challtestsrv's shape:
// POST /add-http01 {"token","content"}, POST /del-http01 {"token"}, POST /http-request-history {"host"}
// (the validation requests the HTTP-01 server saw for a name), GET /healthz.
func Management(srv *challtestsrv.ChallSrv) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /add-http01", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Token, Content string }
		if !decode(w, r, &req) {
			return
		}
		if req.Token == "" || req.Content == "" {
			http.Error(w, "token and content are required", http.StatusBadRequest)
			return
		}
		srv.AddHTTPOneChallenge(req.Token, req.Content)
	})
	mux.HandleFunc("POST /del-http01", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Token string }
		if !decode(w, r, &req) {
			return
		}
		if req.Token == "" {
			http.Error(w, "token is required", http.StatusBadRequest)
			return
		}
		srv.DeleteHTTPOneChallenge(req.Token)
	})
	mux.HandleFunc("POST /http-request-history", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Host string }
		if !decode(w, r, &req) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		events := srv.RequestHistory(req.Host, challtestsrv.HTTPRequestEventType)
		if events == nil {
			events = []challtestsrv.RequestEvent{}
		}
		_ = json.NewEncoder(w).Encode(events)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(v); err != nil {
		http.Error(w, "a JSON body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// Run serves HTTP-01 and the management API until ctx ends.
func Run(ctx context.Context, c Config, logw io.Writer) error {
	logger := log.New(logw, "challenge-responder ", log.LstdFlags)
	srv, err := challtestsrv.New(challtestsrv.Config{HTTPOneAddrs: []string{c.HTTP01}, Log: logger})
	if err != nil {
		return err
	}
	go srv.Run()
	defer srv.Shutdown()
	mgmt := &http.Server{Addr: c.Management, Handler: Management(srv), ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- mgmt.ListenAndServe() }()
	logger.Printf("HTTP-01 on %s, management on %s", c.HTTP01, c.Management)
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return mgmt.Shutdown(sctx)
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// Healthcheck asks a running responder's management API for /healthz.
func Healthcheck(ctx context.Context, c Config) error {
	host, port, _ := net.SplitHostPort(c.Management)
	// SplitHostPort has taken IPv6's brackets off: "[::]:8055" is host "::".
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/healthz answered %s", resp.Status)
	}
	return nil
}
