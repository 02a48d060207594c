package f5

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Paths of the iControl REST endpoints the stand-in answers: those of
// certctl's calls (README.md, C1-C11), and no others.
const (
	loginPath     = "/mgmt/shared/authn/login"
	uploadsPrefix = "/mgmt/shared/file-transfer/uploads/"
	txnPath       = "/mgmt/tm/transaction"
	certPath      = "/mgmt/tm/sys/crypto/cert"
	keyPath       = "/mgmt/tm/sys/crypto/key"
	clientSSLPath = "/mgmt/tm/ltm/profile/client-ssl"
)

// Limits and lifetimes. The store budgets exist because of long load runs
// (see boundedMap); the others keep one request from making the stand-in
// buffer much.
const (
	maxObjects     = 10000
	maxUploadBytes = 256 << 20
	// maxChunk caps one upload request: BIG-IP clients send files in chunks
	// of at most 1 MiB, and certctl sends a whole PEM in one.
	maxChunk     = 1 << 20
	maxFileSize  = 16 << 20
	maxJSONBody  = 1 << 20
	tokenTimeout = 1200 // seconds, BIG-IP's default token lifetime
	txnTimeout   = 120  // seconds, BIG-IP's default transaction timeoutSeconds
)

// API is the iControl REST part of the stand-in (everything under /mgmt/).
type API struct {
	user, pass string
	userID     string
	maxTokens  int
	now        func() time.Time
	opID       atomic.Int64

	mu          sync.Mutex
	gen         int64 // BIG-IP's config generation, bumped by every change
	tokens      map[string]*token
	tokensPrune int
	uploads     *boundedMap[*upload]
	certs       *boundedMap[*certObj]
	keys        *boundedMap[*keyObj]
	profiles    map[string]*profile
	partitions  map[string]bool
	txns        map[int64]*txn
	lastTxnID   int64
	calls       *callLog // F5_LOG_CALLS: one line per /mgmt/ call
}

// NewAPI builds the iControl REST handler. The management certificate
// doubles as /Common/default.crt and /Common/default.key, as on a BIG-IP
// with its factory self-signed certificate, and every client-ssl profile
// starts out with that pair.
func NewAPI(cfg Config, mgmt tls.Certificate, now func() time.Time) (*API, error) {
	if now == nil {
		now = time.Now
	}
	a := &API{
		user: cfg.Username, pass: cfg.Password, userID: userUUID(cfg.Username),
		maxTokens: cfg.MaxTokens, now: now,
		tokens:     map[string]*token{},
		profiles:   map[string]*profile{},
		partitions: map[string]bool{"Common": true},
		txns:       map[int64]*txn{},
	}
	a.uploads = newBoundedMap[*upload](maxObjects, maxUploadBytes, func(u *upload) int { return len(u.data) }, nil)
	a.certs = newBoundedMap[*certObj](maxObjects, 0, nil, a.certInUse)
	a.keys = newBoundedMap[*keyObj](maxObjects, 0, nil, a.keyInUse)

	leaf := mgmt.Leaf
	if leaf == nil && len(mgmt.Certificate) > 0 {
		var err error
		if leaf, err = x509.ParseCertificate(mgmt.Certificate[0]); err != nil {
			return nil, fmt.Errorf("management certificate: %w", err)
		}
	}
	signer, ok := mgmt.PrivateKey.(crypto.Signer)
	if leaf == nil || !ok {
		return nil, errors.New("management certificate: no leaf or no usable private key")
	}
	a.gen = 1
	a.certs.put("/Common/default.crt", &certObj{certs: []*x509.Certificate{leaf}})
	a.keys.put("/Common/default.key", newKeyObj(signer))

	seed := append([]string{"/Common/clientssl"}, cfg.Profiles...)
	for _, full := range seed {
		part, name, err := splitName(full, "Common")
		if err != nil {
			return nil, err
		}
		if _, dup := a.profiles[full]; dup {
			continue
		}
		a.partitions[part] = true
		parent := "/Common/clientssl"
		if full == parent {
			parent = "none"
		}
		a.profiles[full] = &profile{partition: part, name: name, cert: "/Common/default.crt", key: "/Common/default.key",
			chain: "none", defaultsFrom: parent, extra: map[string]json.RawMessage{}, generation: 1}
	}
	return a, nil
}

func (a *API) certInUse(full string) bool {
	for _, p := range a.profiles {
		if p.cert == full || p.chain == full {
			return true
		}
	}
	return false
}

func (a *API) keyInUse(full string) bool {
	for _, p := range a.profiles {
		if p.key == full {
			return true
		}
	}
	return false
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, e *apiErr) {
	writeJSON(w, e.Code, e.body(r, a.opID.Add(1)))
}

func notRegistered(path string) *apiErr {
	return restErr(404, "URI path "+path+" not registered.  Please verify URI is supported and wait for /available suffix to be responsive.")
}

func methodNotAllowed(r *http.Request) *apiErr {
	return tmErr(405, fmt.Sprintf("Method %s is not supported on %s", r.Method, r.URL.Path))
}

// readBody caps what a client can make the stand-in buffer.
func readBody(r *http.Request, limit int64) ([]byte, *apiErr) {
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, restErr(400, "Failed to read the request body: "+err.Error())
	}
	if int64(len(b)) > limit {
		return nil, restErr(413, fmt.Sprintf("Request body larger than %d bytes", limit))
	}
	return b, nil
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	if path == loginPath {
		a.login(w, r)
		return
	}
	// restjavad authenticates before it routes, so an unknown path without
	// credentials is a 401, not a 404.
	if e := a.authorize(r); e != nil {
		a.fail(w, r, e)
		return
	}
	switch {
	case strings.HasPrefix(path, uploadsPrefix):
		a.upload(w, r, strings.TrimPrefix(path, uploadsPrefix))
	case path == txnPath || strings.HasPrefix(path, txnPath+"/"):
		a.transaction(w, r, strings.TrimPrefix(strings.TrimPrefix(path, txnPath), "/"))
	default:
		if col, id, ok := parseTMPath(path); ok {
			a.tm(w, r, col, id, path)
			return
		}
		a.fail(w, r, notRegistered(path))
	}
}

// --- file transfer -------------------------------------------------------

// upload is POST /mgmt/shared/file-transfer/uploads/{name}: one chunk of
// the file, placed by the mandatory Content-Range "start-end/total".
func (a *API) upload(w http.ResponseWriter, r *http.Request, name string) {
	if r.Method != http.MethodPost {
		a.fail(w, r, methodNotAllowed(r))
		return
	}
	if name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		a.fail(w, r, restErr(400, fmt.Sprintf("Invalid file name %q", name)))
		return
	}
	start, end, total, ok := parseContentRange(r.Header.Get("Content-Range"))
	if !ok {
		a.fail(w, r, restErr(400, "Content-Range header is missing or invalid; expected \"start-end/total\""))
		return
	}
	if total > maxFileSize {
		a.fail(w, r, restErr(400, fmt.Sprintf("File size %d exceeds the stand-in's limit of %d bytes", total, maxFileSize)))
		return
	}
	if end-start+1 > maxChunk {
		a.fail(w, r, restErr(400, fmt.Sprintf("Chunk size %d exceeds the maximum of %d bytes", end-start+1, maxChunk)))
		return
	}
	data, e := readBody(r, maxChunk)
	if e != nil {
		a.fail(w, r, e)
		return
	}
	if len(data) != end-start+1 {
		a.fail(w, r, restErr(400, fmt.Sprintf("Content-Range %d-%d/%d announces %d bytes, the body has %d", start, end, total, end-start+1, len(data))))
		return
	}

	a.mu.Lock()
	u, ok := a.uploads.get(name)
	// Offset 0 starts the file over, as a re-upload under the same name does.
	if !ok || start == 0 || u.total != total {
		u = &upload{data: make([]byte, total), total: total, chunks: map[int]int{}}
	}
	if _, seen := u.chunks[start]; !seen {
		u.received += len(data)
	}
	u.chunks[start] = len(data)
	copy(u.data[start:], data)
	u.updated = a.now()
	a.uploads.put(name, u)
	body := map[string]any{
		"remainingByteCount": max(u.total-u.received, 0),
		"usedChunks":         chunkMap(u.chunks),
		"totalByteCount":     u.total,
		"localFilePath":      downloadsDir + name,
		"temporaryFilePath":  downloadsDir + "tmp/" + name,
		"generation":         0,
		"lastUpdateMicros":   u.updated.UnixMicro(),
	}
	a.mu.Unlock()
	writeJSON(w, 200, body)
}

func chunkMap(c map[int]int) map[string]int {
	m := make(map[string]int, len(c))
	for k, v := range c {
		m[fmt.Sprint(k)] = v
	}
	return m
}

// parseContentRange reads "start-end/total" (without the "bytes " unit,
// as BIG-IP clients send it; a "bytes " prefix is tolerated).
func parseContentRange(h string) (start, end, total int, ok bool) {
	h = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(h), "bytes "))
	if _, err := fmt.Sscanf(h, "%d-%d/%d", &start, &end, &total); err != nil {
		return 0, 0, 0, false
	}
	if fmt.Sprintf("%d-%d/%d", start, end, total) != h {
		return 0, 0, 0, false
	}
	return start, end, total, start >= 0 && end >= start && end < total
}
