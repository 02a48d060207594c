package f5

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// txn is an iControl REST transaction: commands are queued against it and
// run all-or-nothing when the client PATCHes its state to VALIDATING.
type txn struct {
	id           int64
	state        string // STARTED, COMPLETED, FAILED
	expires      time.Time
	cmds         []txnCmd
	nextCmd      int
	validateOnly bool
	execTime     time.Duration
}

type txnCmd struct {
	id     int
	method string
	path   string
	col    collection
	objID  string
	body   []byte
}

// json answers create and commit. No route reads a transaction back, so a
// failed one is never shown and failedCommandNumber is always 0.
func (t *txn) json() map[string]any {
	return map[string]any{
		"transId":             t.id,
		"state":               t.state,
		"timeoutSeconds":      txnTimeout,
		"asyncExecution":      false,
		"validateOnly":        t.validateOnly,
		"executionTimeout":    300,
		"executionTime":       int(t.execTime.Seconds()),
		"failedCommandNumber": 0,
		"kind":                "tm:transactionstate",
		"selfLink":            selfLink(fmt.Sprintf("%s/%d", txnPath, t.id)),
	}
}

func (c txnCmd) json(txID int64) map[string]any {
	body := json.RawMessage("{}")
	if len(c.body) > 0 {
		body = c.body
	}
	return map[string]any{
		"method":    c.method,
		"uri":       "https://localhost" + c.path,
		"body":      body,
		"evalOrder": c.id,
		"commandId": c.id,
		"kind":      "tm:transaction:commandsstate",
		"selfLink":  selfLink(fmt.Sprintf("%s/%d/commands/%d", txnPath, txID, c.id)),
	}
}

// txnHeader finds the transaction a request is meant for. certctl sends
// X-F5-REST-Overriding-Collection: /mgmt/tm/transaction/<transId>, which a
// real BIG-IP does not document (its header is X-F5-REST-Coordination-Id,
// which certctl never sends); the stand-in honours certctl's, so that
// certctl's deployments go through the transaction path they were written
// for (README.md, "Where it differs from a BIG-IP").
func txnHeader(r *http.Request) (id int64, present bool, e *apiErr) {
	v := strings.TrimSpace(r.Header.Get("X-F5-REST-Overriding-Collection"))
	if v == "" {
		return 0, false, nil
	}
	v = strings.TrimPrefix(v, "https://localhost")
	v = strings.TrimPrefix(v, txnPath+"/")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, true, tmErr(400, fmt.Sprintf("Invalid transaction id %q", v))
	}
	return id, true, nil
}

func txnNotFound(id int64) *apiErr {
	return tmErr(404, fmt.Sprintf("Transaction with id %d not found", id))
}

// lookupTxn returns a live transaction; callers hold a.mu. BIG-IP silently
// deletes a transaction timeoutSeconds after its last change.
func (a *API) lookupTxn(id int64, now time.Time) *txn {
	t := a.txns[id]
	if t != nil && !now.Before(t.expires) {
		delete(a.txns, id)
		return nil
	}
	return t
}

func (a *API) pruneTxns(now time.Time) {
	for id, t := range a.txns {
		if !now.Before(t.expires) {
			delete(a.txns, id)
		}
	}
}

func (a *API) enqueue(w http.ResponseWriter, r *http.Request, id int64, path string, col collection, objID string, body []byte) {
	if len(body) > 0 && !json.Valid(body) {
		a.fail(w, r, tmErr(400, "Invalid JSON body"))
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	t := a.lookupTxn(id, now)
	if t == nil {
		a.fail(w, r, txnNotFound(id))
		return
	}
	if t.state != "STARTED" {
		a.fail(w, r, tmErr(400, fmt.Sprintf("Transaction %d is %s; commands can only be added while it is STARTED", id, t.state)))
		return
	}
	t.nextCmd++
	c := txnCmd{id: t.nextCmd, method: r.Method, path: path, col: col, objID: objID, body: body}
	t.cmds = append(t.cmds, c)
	t.expires = now.Add(txnTimeout * time.Second)
	writeJSON(w, http.StatusOK, c.json(id))
}

// transaction serves /mgmt/tm/transaction (POST: create) and
// /mgmt/tm/transaction/{id} (PATCH: commit), the two calls certctl makes.
func (a *API) transaction(w http.ResponseWriter, r *http.Request, rest string) {
	var body []byte
	if mutating(r.Method) {
		var e *apiErr
		if body, e = readBody(r, maxJSONBody); e != nil {
			a.fail(w, r, e)
			return
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()

	if rest == "" {
		if r.Method != http.MethodPost {
			a.fail(w, r, methodNotAllowed(r))
			return
		}
		if len(a.txns) > 256 {
			a.pruneTxns(now)
		}
		// BIG-IP's ids are microsecond timestamps.
		id := max(now.UnixMicro(), a.lastTxnID+1)
		a.lastTxnID = id
		t := &txn{id: id, state: "STARTED", expires: now.Add(txnTimeout * time.Second)}
		a.txns[id] = t
		writeJSON(w, http.StatusOK, t.json())
		return
	}

	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		a.fail(w, r, notRegistered(r.URL.Path))
		return
	}
	t := a.lookupTxn(id, now)
	if t == nil {
		a.fail(w, r, txnNotFound(id))
		return
	}
	if r.Method != http.MethodPatch {
		a.fail(w, r, methodNotAllowed(r))
		return
	}
	a.commit(w, r, t, body, now)
}

// commit runs the queued commands in order; the first failure undoes the
// ones before it, and the answer carries that command's error.
func (a *API) commit(w http.ResponseWriter, r *http.Request, t *txn, body []byte, now time.Time) {
	var req struct {
		State        string `json:"state"`
		ValidateOnly bool   `json:"validateOnly"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		a.fail(w, r, tmErr(400, "Invalid JSON body: "+err.Error()))
		return
	}
	if req.State != "VALIDATING" {
		a.fail(w, r, tmErr(400, fmt.Sprintf("Invalid state %q: a transaction is committed by setting \"state\" to \"VALIDATING\"", req.State)))
		return
	}
	if t.state != "STARTED" {
		a.fail(w, r, tmErr(400, fmt.Sprintf("Transaction %d is %s and cannot be committed again", t.id, t.state)))
		return
	}
	var undos []func()
	rollback := func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
	}
	genBefore := a.gen
	for _, c := range t.cmds {
		res := a.tmOp(c.method, c.col, c.objID, c.body)
		if res.err != nil {
			rollback()
			a.gen = genBefore + 1
			t.state = "FAILED"
			t.expires = now.Add(txnTimeout * time.Second)
			a.fail(w, r, tmErr(400, "transaction failed:"+res.err.Message))
			return
		}
		if res.undo != nil {
			undos = append(undos, res.undo)
		}
	}
	if req.ValidateOnly {
		rollback()
		t.validateOnly = true
	}
	t.state = "COMPLETED"
	t.execTime = a.now().Sub(now)
	t.expires = now.Add(txnTimeout * time.Second)
	writeJSON(w, http.StatusOK, t.json())
}
