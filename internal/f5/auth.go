package f5

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

type token struct {
	value   string
	user    string
	addr    string
	start   time.Time
	expires time.Time
	gen     int64
}

func (t *token) json() map[string]any {
	return map[string]any{
		"token":            t.value,
		"name":             t.value,
		"userName":         t.user,
		"authProviderName": "tmos",
		"user":             map[string]string{"link": "https://localhost/mgmt/shared/authz/users/" + t.user},
		"timeout":          tokenTimeout,
		"startTime":        t.start.UTC().Format("2006-01-02T15:04:05.000-0700"),
		"address":          t.addr,
		"partition":        "[All]",
		"generation":       t.gen,
		"lastUpdateMicros": t.start.UnixMicro(),
		"expirationMicros": t.expires.UnixMicro(),
		"kind":             "shared:authz:tokens:authtokenitemstate",
		"selfLink":         "https://localhost/mgmt/shared/authz/tokens/" + t.value,
	}
}

// userUUID is how BIG-IP names a local user in token errors: the name's MD5
// laid out as a version-3 UUID ("admin" -> 21232f29-7a57-35a7-8389-...).
func userUUID(name string) string {
	b := md5.Sum([]byte(name))
	b[6] = b[6]&0x0f | 0x30
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// newTokenValue has the look of BIG-IP's tokens: 26 upper-case base32
// characters.
func newTokenValue() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}

func (a *API) credsOK(user, pass string) bool {
	u := subtle.ConstantTimeCompare([]byte(user), []byte(a.user))
	p := subtle.ConstantTimeCompare([]byte(pass), []byte(a.pass))
	return u&p == 1
}

// pruneTokens drops expired tokens and returns how many are left. With a
// token cap it runs on every login (the map stays near the cap); without
// one, only when the map has doubled since the last run.
func (a *API) pruneTokens(now time.Time) int {
	if a.maxTokens <= 0 && len(a.tokens) <= 2*a.tokensPrune+1024 {
		return len(a.tokens)
	}
	for k, t := range a.tokens {
		if !now.Before(t.expires) {
			delete(a.tokens, k)
		}
	}
	a.tokensPrune = len(a.tokens)
	return len(a.tokens)
}

// login is POST /mgmt/shared/authn/login with the credentials in the JSON
// body, the only way certctl logs in.
func (a *API) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		a.fail(w, r, restErr(405, "Method "+r.Method+" is not supported on "+loginPath))
		return
	}
	body, e := readBody(r, 64<<10)
	if e != nil {
		a.fail(w, r, e)
		return
	}
	var req struct {
		Username          string `json:"username"`
		Password          string `json:"password"`
		LoginProviderName string `json:"loginProviderName"`
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			a.fail(w, r, restErr(400, "Invalid login request body: "+err.Error()))
			return
		}
	}
	if !a.credsOK(req.Username, req.Password) {
		a.fail(w, r, restErr(401, "Authentication failed."))
		return
	}

	a.mu.Lock()
	now := a.now()
	active := a.pruneTokens(now)
	if a.maxTokens > 0 && active >= a.maxTokens {
		a.mu.Unlock()
		a.fail(w, r, restErr(400, "user "+a.userID+" has reached maximum active login tokens"))
		return
	}
	a.gen++
	t := &token{value: newTokenValue(), user: a.user, addr: clientIP(r), start: now,
		expires: now.Add(tokenTimeout * time.Second), gen: a.gen}
	a.tokens[t.value] = t
	a.mu.Unlock()

	writeJSON(w, http.StatusOK, map[string]any{
		"username":          a.user,
		"loginReference":    map[string]string{"link": "https://localhost/mgmt/cm/system/authn/providers/tmos/" + userUUID("tmos") + "/login"},
		"loginProviderName": "tmos",
		"token":             t.json(),
		"generation":        0,
		"lastUpdateMicros":  0,
	})
}

// authorize accepts a live X-F5-Auth-Token only: certctl sends nothing else
// (BIG-IP's HTTP basic auth alternative is not modelled).
func (a *API) authorize(r *http.Request) *apiErr {
	if v := r.Header.Get("X-F5-Auth-Token"); v != "" {
		a.mu.Lock()
		t := a.tokens[v]
		live := t != nil && a.now().Before(t.expires)
		if t != nil && !live {
			delete(a.tokens, v)
		}
		a.mu.Unlock()
		if !live {
			return restErr(401, "X-F5-Auth-Token does not exist.")
		}
		return nil
	}
	ip := clientIP(r)
	return restErr(401, fmt.Sprintf("Authorization failed: no user authentication header or token detected. Uri:http://localhost:8100%s Referrer:%s Sender:%s", r.URL.Path, ip, ip))
}
