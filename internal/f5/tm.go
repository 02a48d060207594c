package f5

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// collection is one of the tm configuration collections the stand-in
// models; everything else under /mgmt/tm is "not registered".
type collection int

const (
	colCert collection = iota + 1
	colKey
	colProfile
)

var collections = []struct {
	prefix string
	col    collection
	// bare: the collection's own URL answers (install). certctl only ever
	// addresses one named client-ssl profile, so that collection's URL is
	// not registered.
	bare bool
}{{certPath, colCert, true}, {keyPath, colKey, true}, {clientSSLPath, colProfile, false}}

func parseTMPath(path string) (collection, string, bool) {
	for _, c := range collections {
		if path == c.prefix && c.bare {
			return c.col, "", true
		}
		if id, ok := strings.CutPrefix(path, c.prefix+"/"); ok && id != "" && !strings.Contains(id, "/") {
			return c.col, id, true
		}
	}
	return 0, "", false
}

// opResult is the outcome of one configuration operation. undo reverts a
// successful change, which is how a failed transaction rolls back.
type opResult struct {
	status int
	body   any // nil: an empty 200, BIG-IP's answer to DELETE
	undo   func()
	err    *apiErr
}

func fail(e *apiErr) opResult { return opResult{err: e} }

func okResult(body any) opResult { return opResult{status: http.StatusOK, body: body} }

// mutating methods carry a body and can be queued in a transaction.
func mutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// tmAllows is what certctl does on each tm URL: install on a crypto
// collection (C4/C5), delete an item (C10/C11), read or change a profile
// (C9/C7). Anything else is refused before it can be run or queued, so the
// operations below can assume it.
func tmAllows(col collection, id, method string) bool {
	switch {
	case col == colProfile:
		return method == http.MethodGet || method == http.MethodPatch
	case id == "":
		return method == http.MethodPost
	}
	return method == http.MethodDelete
}

func (a *API) tm(w http.ResponseWriter, r *http.Request, col collection, id, path string) {
	if !tmAllows(col, id, r.Method) {
		a.fail(w, r, tmErr(405, fmt.Sprintf("Method %s is not supported on %s", r.Method, path)))
		return
	}
	var body []byte
	if mutating(r.Method) {
		var e *apiErr
		if body, e = readBody(r, maxJSONBody); e != nil {
			a.fail(w, r, e)
			return
		}
		if txID, present, e := txnHeader(r); present {
			if e != nil {
				a.fail(w, r, e)
				return
			}
			a.enqueue(w, r, txID, path, col, id, body)
			return
		}
	}
	a.mu.Lock()
	res := a.tmOp(r.Method, col, id, body)
	a.mu.Unlock()
	a.writeResult(w, r, res)
}

func (a *API) writeResult(w http.ResponseWriter, r *http.Request, res opResult) {
	switch {
	case res.err != nil:
		a.fail(w, r, res.err)
	case res.body == nil:
		writeEmpty(w)
	default:
		writeJSON(w, res.status, res.body)
	}
}

// tmOp runs one operation against the configuration. Callers hold a.mu and
// have checked tmAllows.
func (a *API) tmOp(method string, col collection, id string, body []byte) opResult {
	switch col {
	case colCert, colKey:
		return a.cryptoOp(col, id, body)
	case colProfile:
		return a.profileOp(method, id, body)
	}
	return fail(tmErr(404, "unknown collection"))
}

// --- sys crypto cert / key ---------------------------------------------------

type installReq struct {
	Command       string `json:"command"`
	Name          string `json:"name"`
	Partition     string `json:"partition,omitempty"`
	FromLocalFile string `json:"from-local-file"`
}

func cryptoWords(col collection) (kind, noun, base string) {
	if col == colKey {
		return "tm:sys:crypto:key", "Certificate Key File", keyPath
	}
	return "tm:sys:crypto:cert", "Certificate File", certPath
}

// cryptoOp is an install on the collection URL, or a delete on an item's.
func (a *API) cryptoOp(col collection, id string, body []byte) opResult {
	if id == "" {
		return a.install(col, body)
	}
	_, noun, _ := cryptoWords(col)
	part, name, err := parseID(id)
	if err != nil {
		return fail(tmErr(400, err.Error()))
	}
	full := fullPath(part, name)
	notFound := tmErr(404, fmt.Sprintf("01020036:3: The requested %s (%s) was not found.", noun, full))
	inUse := a.certInUse
	if col == colKey {
		inUse = a.keyInUse
	}
	if user := a.profileUsing(full, inUse); user != "" {
		return fail(tmErr(400, fmt.Sprintf("%s (%s) is in use by client-ssl profile (%s) and cannot be deleted.", noun, full, user)))
	}
	var undo func()
	if col == colKey {
		old, had := a.keys.del(full)
		if !had {
			return fail(notFound)
		}
		undo = func() { a.keys.restore(full, old, true) }
	} else {
		old, had := a.certs.del(full)
		if !had {
			return fail(notFound)
		}
		undo = func() { a.certs.restore(full, old, true) }
	}
	a.gen++
	return opResult{status: http.StatusOK, undo: undo}
}

// profileUsing names a profile that references full, or "".
func (a *API) profileUsing(full string, inUse func(string) bool) string {
	if !inUse(full) {
		return ""
	}
	for fp, p := range a.profiles {
		if p.cert == full || p.key == full || p.chain == full {
			return fp
		}
	}
	return ""
}

// install is tmsh's "install sys crypto cert|key NAME from-local-file
// PATH", the form certctl uses. Files come from the file-transfer uploads.
func (a *API) install(col collection, body []byte) opResult {
	kind, _, _ := cryptoWords(col)
	var req installReq
	if err := json.Unmarshal(body, &req); err != nil {
		return fail(tmErr(400, "Invalid JSON body: "+err.Error()))
	}
	if req.Command != "install" {
		return fail(tmErr(400, fmt.Sprintf("command %q is not supported here; use \"install\" with \"name\" and \"from-local-file\"", req.Command)))
	}
	defPart := "Common"
	if req.Partition != "" {
		defPart = req.Partition
	}
	part, name, err := splitName(req.Name, defPart)
	if err != nil {
		return fail(tmErr(400, err.Error()))
	}
	if !a.partitions[part] {
		return fail(tmErr(400, fmt.Sprintf("01020036:3: The requested folder (/%s) was not found.", part)))
	}
	upName, inDownloads := strings.CutPrefix(req.FromLocalFile, downloadsDir)
	u, found := a.uploads.get(upName)
	if !inDownloads || !found || !u.complete() {
		return fail(tmErr(400, fmt.Sprintf("Unable to open file %s: No such file or directory", req.FromLocalFile)))
	}
	full := fullPath(part, name)
	var undo func()
	if col == colKey {
		k, err := parseKeyPEM(u.data)
		if err != nil {
			return fail(tmErr(400, fmt.Sprintf("Unable to load the key from %s: %v", req.FromLocalFile, err)))
		}
		a.gen++
		old, had := a.keys.put(full, newKeyObj(k))
		undo = func() { a.keys.restore(full, old, had) }
	} else {
		certs, err := parseCertPEM(u.data)
		if err != nil {
			return fail(tmErr(400, fmt.Sprintf("Unable to load the certificate from %s: %v", req.FromLocalFile, err)))
		}
		a.gen++
		old, had := a.certs.put(full, &certObj{certs: certs})
		undo = func() { a.certs.restore(full, old, had) }
	}
	out := map[string]any{"kind": kind + ":installstate", "command": "install", "name": req.Name, "from-local-file": req.FromLocalFile}
	if req.Partition != "" {
		out["partition"] = req.Partition
	}
	return opResult{status: http.StatusOK, body: out, undo: undo}
}

// --- ltm profile client-ssl -----------------------------------------------

// profileOp is a read (GET) or a change (PATCH) of one profile.
func (a *API) profileOp(method, id string, body []byte) opResult {
	part, name, err := parseID(id)
	if err != nil {
		return fail(tmErr(400, err.Error()))
	}
	full := fullPath(part, name)
	p, found := a.profiles[full]
	if !found {
		return fail(tmErr(404, fmt.Sprintf("01020036:3: The requested Client SSL Profile (%s) was not found.", full)))
	}
	if method == http.MethodGet {
		return okResult(p.json())
	}
	ch, e := parseProfileChange(body)
	if e != nil {
		return fail(e)
	}
	np := p.clone()
	if e := a.applyProfileChange(np, ch); e != nil {
		return fail(e)
	}
	a.gen++
	np.generation = a.gen
	a.profiles[full] = np
	return opResult{status: http.StatusOK, body: np.json(), undo: func() { a.profiles[full] = p }}
}

// applyProfileChange applies ch to p and checks the result the way BIG-IP
// does before it accepts a profile: every referenced object exists and the
// key belongs to the certificate.
func (a *API) applyProfileChange(p *profile, ch *profileChange) *apiErr {
	fp := fullPath(p.partition, p.name)
	ref := func(v string, allowNone bool, what string) (string, *apiErr) {
		if v == "" || v == "none" {
			if allowNone {
				return "none", nil
			}
			return "", tmErr(400, fmt.Sprintf("Client SSL Profile (%s): %s cannot be none.", fp, what))
		}
		part, name, err := splitName(v, "Common")
		if err != nil {
			return "", tmErr(400, err.Error())
		}
		return fullPath(part, name), nil
	}
	var e *apiErr
	if ch.cert != nil {
		if p.cert, e = ref(*ch.cert, false, "cert"); e != nil {
			return e
		}
	}
	if ch.key != nil {
		if p.key, e = ref(*ch.key, false, "key"); e != nil {
			return e
		}
	}
	if ch.chain != nil {
		if p.chain, e = ref(*ch.chain, true, "chain"); e != nil {
			return e
		}
	}
	if ch.defaults != nil {
		d, e := ref(*ch.defaults, true, "defaultsFrom")
		if e != nil {
			return e
		}
		if _, found := a.profiles[d]; d != "none" && !found {
			return tmErr(400, fmt.Sprintf("01020036:3: The requested Client SSL Profile (%s) was not found.", d))
		}
		p.defaultsFrom = d
	}
	for k, v := range ch.extra {
		if string(v) == "null" {
			delete(p.extra, k)
		} else {
			p.extra[k] = v
		}
	}

	c, found := a.certs.get(p.cert)
	if !found {
		return tmErr(400, fmt.Sprintf("01020036:3: The requested Certificate File (%s) was not found.", p.cert))
	}
	k, found := a.keys.get(p.key)
	if !found {
		return tmErr(400, fmt.Sprintf("01020036:3: The requested Certificate Key File (%s) was not found.", p.key))
	}
	if p.chain != "none" {
		if _, found := a.certs.get(p.chain); !found {
			return tmErr(400, fmt.Sprintf("01020036:3: The requested Certificate File (%s) was not found.", p.chain))
		}
	}
	if !keyMatches(c, k) {
		return tmErr(400, fmt.Sprintf("Client SSL Profile (%s): certificate (%s) and key (%s): key values mismatch.", fp, p.cert, p.key))
	}
	return nil
}
