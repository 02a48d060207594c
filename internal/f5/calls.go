package f5

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
)

// Which iControl REST calls a client makes, one line each (F5_LOG_CALLS=1): the deploy tier's stand-in
// logs them so that a run against certctl's real F5 connector shows what it uses, method, route and
// status, with object names, ids and tokens replaced by placeholders.
type callLog struct {
	w io.Writer
}

// callRoutes keeps the routes the stand-in no longer answers (tokens, transaction commands): a client
// that calls them still shows up by route, without its token, which is how such a call would be noticed.
var callRoutes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`^(/mgmt/shared/file-transfer/uploads/).+$`), "${1}{file}"},
	{regexp.MustCompile(`^(/mgmt/shared/authz/tokens/).+$`), "${1}{token}"},
	{regexp.MustCompile(`^(/mgmt/tm/transaction/)[0-9]+(/commands)?(/[0-9]+)?$`), "${1}{id}${2}"},
	{regexp.MustCompile(`^(/mgmt/tm/(?:sys/crypto/(?:cert|key)|ltm/profile/client-ssl)/).+$`), "${1}{name}"},
}

// callRoute is a path with its variable parts named.
func callRoute(path string) string {
	for _, r := range callRoutes {
		if r.re.MatchString(path) {
			return r.re.ReplaceAllString(path, r.repl)
		}
	}
	return path
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// wrap serves r through next and logs the call.
func (l *callLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		fmt.Fprintf(l.w, "f5-standin: call %s %s %d\n", r.Method, callRoute(r.URL.Path), sw.status)
	})
}
