package f5

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
)

// Version is the TMOS version the stand-in claims in selfLinks and in its
// startup line.
const Version = "17.1.0"

// apiErr is an error answer. BIG-IP has two error producers: the tm
// configuration daemon (code, message, errorStack, apiError) and restjavad,
// the REST front end that handles login, tokens, file transfer and
// unregistered paths (code, message, referer, restOperationId, kind).
// restjavad errors here carry both sets of fields, so a client keyed to
// either shape finds what it looks for.
type apiErr struct {
	Code    int
	Message string
	// APIError is tmsh's error class (1 = request, 3 = configuration).
	APIError int
	// REST marks a restjavad error.
	REST bool
}

func tmErr(code int, msg string) *apiErr {
	return &apiErr{Code: code, Message: msg, APIError: 3}
}

func restErr(code int, msg string) *apiErr {
	return &apiErr{Code: code, Message: msg, APIError: 1, REST: true}
}

func (e *apiErr) body(r *http.Request, opID int64) map[string]any {
	b := map[string]any{
		"code":       e.Code,
		"message":    e.Message,
		"errorStack": []string{},
		"apiError":   e.APIError,
	}
	if e.REST {
		ip := clientIP(r)
		b["referer"] = ip
		b["restOperationId"] = opID
		b["kind"] = ":resterrorresponse"
	}
	return b
}

func clientIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// writeJSON always sets Content-Length so that a client sending
// "Connection: close" gets a complete, non-chunked answer.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"code":500,"message":"stand-in could not encode its answer","errorStack":[],"apiError":1}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeEmpty is BIG-IP's answer to a successful DELETE: 200, no body.
func writeEmpty(w http.ResponseWriter) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

func selfLink(path string) string {
	return "https://localhost" + path + "?ver=" + Version
}
