package double

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
)

type requestIDKey struct{}

// withRequestID gives every request the X-Request-ID header and the id
// that handler errors echo, as certctl's outermost middleware does.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := newUUID()
		w.Header().Set("X-Request-ID", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// writeJSON is certctl's handler.JSON: plain application/json and the
// encoder's trailing newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// handlerErrorBody is certctl's handler.ErrorResponse.
type handlerErrorBody struct {
	Error     string `json:"error"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

// handlerError answers the way certctl's handlers fail:
// {"error":"<status text>","message":…,"request_id":…} as application/json.
func handlerError(w http.ResponseWriter, r *http.Request, status int, message string) {
	writeJSON(w, status, handlerErrorBody{
		Error:     http.StatusText(status),
		Message:   message,
		RequestID: requestID(r),
	})
}

// middlewareError answers the way certctl's auth and rate-limit middleware
// fail: a JSON-looking body sent through http.Error, which labels it
// text/plain and appends a newline. Clients that trust Content-Type will
// not parse it as JSON, on certctl as here.
func middlewareError(w http.ResponseWriter, status int, body string) {
	http.Error(w, body, status)
}

// rbacError is certctl's RequirePermission failure: unlike the auth
// middleware it writes JSON with a JSON content type and no newline.
func rbacError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"error":"` + msg + `"}`))
}

// notFound answers unknown /api/v1 routes with a handler-style error.
func notFound(w http.ResponseWriter, r *http.Request) {
	handlerError(w, r, http.StatusNotFound, "No route for "+r.Method+" "+r.URL.Path)
}
