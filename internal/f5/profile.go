package f5

import (
	"encoding/json"
	"fmt"
	"maps"
)

// profile is a client-ssl profile, reduced to what deployments touch. Any
// other attribute a client sets is kept verbatim in extra and echoed back,
// so that a GET after a PATCH shows what was set.
type profile struct {
	partition, name  string
	cert, key, chain string // full paths; chain is "none" when unset
	defaultsFrom     string
	extra            map[string]json.RawMessage
	generation       int64
}

func (p *profile) clone() *profile {
	c := *p
	c.extra = maps.Clone(p.extra)
	return &c
}

// profileDefaults are attributes of BIG-IP's parent clientssl profile the
// stand-in reports without modelling them.
var profileDefaults = map[string]any{
	"alertTimeout":         "indefinite",
	"allowNonSsl":          "disabled",
	"authenticate":         "once",
	"cacheSize":            262144,
	"cacheTimeout":         3600,
	"ciphers":              "DEFAULT",
	"handshakeTimeout":     "10",
	"mode":                 "enabled",
	"options":              []string{"dont-insert-empty-fragments", "no-tlsv1.3"},
	"peerCertMode":         "ignore",
	"renegotiation":        "enabled",
	"secureRenegotiation":  "require",
	"serverName":           "none",
	"sniDefault":           "false",
	"sniRequire":           "false",
	"strictResume":         "disabled",
	"uncleanShutdown":      "enabled",
	"proxySsl":             "disabled",
	"sessionTicket":        "disabled",
	"sslForwardProxy":      "disabled",
	"retainCertificate":    "true",
	"inheritCertkeychain":  "false",
	"maxRenegotiationsPer": 5,
}

// readOnlyProfileFields are what a GET returns that a PATCH may echo back
// and BIG-IP ignores.
var readOnlyProfileFields = map[string]bool{
	"kind": true, "name": true, "partition": true, "fullPath": true, "generation": true,
	"selfLink": true, "subPath": true, "certReference": true, "keyReference": true,
	"chainReference": true, "defaultsFromReference": true,
}

func fileRef(objPath string) map[string]string {
	return map[string]string{"link": selfLink("/mgmt/tm/sys/file/ssl-cert/" + tildePath(objPath))}
}

func keyRef(objPath string) map[string]string {
	return map[string]string{"link": selfLink("/mgmt/tm/sys/file/ssl-key/" + tildePath(objPath))}
}

func (p *profile) json() map[string]any {
	fp := fullPath(p.partition, p.name)
	m := make(map[string]any, len(profileDefaults)+len(p.extra)+16)
	maps.Copy(m, profileDefaults)
	for k, v := range p.extra {
		m[k] = v
	}
	ckc := map[string]any{
		"name": "default", "cert": p.cert, "certReference": fileRef(p.cert),
		"key": p.key, "keyReference": keyRef(p.key),
	}
	m["kind"] = "tm:ltm:profile:client-ssl:client-sslstate"
	m["name"] = p.name
	m["partition"] = p.partition
	m["fullPath"] = fp
	m["generation"] = p.generation
	m["selfLink"] = selfLink("/mgmt/tm/ltm/profile/client-ssl/" + tildePath(fp))
	m["defaultsFrom"] = p.defaultsFrom
	m["cert"] = p.cert
	m["certReference"] = fileRef(p.cert)
	m["key"] = p.key
	m["keyReference"] = keyRef(p.key)
	m["chain"] = p.chain
	if p.chain != "none" {
		m["chainReference"] = fileRef(p.chain)
		ckc["chain"] = p.chain
		ckc["chainReference"] = fileRef(p.chain)
	}
	m["certKeyChain"] = []any{ckc}
	return m
}

// profileChange is a parsed PATCH body.
type profileChange struct {
	cert, key, chain, defaults *string
	extra                      map[string]json.RawMessage
}

// parseProfileChange reads a body; relative object names resolve in
// /Common, as they do for an admin session on BIG-IP.
func parseProfileChange(body []byte) (*profileChange, *apiErr) {
	var raw map[string]json.RawMessage
	if len(body) > 0 {
		if err := json.Unmarshal(body, &raw); err != nil {
			return nil, tmErr(400, "Invalid JSON body: "+err.Error())
		}
	}
	ch := &profileChange{extra: map[string]json.RawMessage{}}
	str := func(k string) (*string, *apiErr) {
		var s string
		if err := json.Unmarshal(raw[k], &s); err != nil {
			return nil, tmErr(400, fmt.Sprintf("Found invalid JSON body in the request: %q must be a string", k))
		}
		return &s, nil
	}
	var e *apiErr
	for k, v := range raw {
		switch k {
		case "cert":
			ch.cert, e = str(k)
		case "key":
			ch.key, e = str(k)
		case "chain":
			ch.chain, e = str(k)
		case "defaultsFrom":
			ch.defaults, e = str(k)
		case "certKeyChain":
			// BIG-IP 11.6+ form; the first entry is the profile's default pair.
			var ckc []struct{ Cert, Key, Chain *string }
			if err := json.Unmarshal(v, &ckc); err != nil {
				return nil, tmErr(400, "Found invalid JSON body in the request: certKeyChain must be an array of objects")
			}
			if len(ckc) > 0 {
				if ckc[0].Cert != nil {
					ch.cert = ckc[0].Cert
				}
				if ckc[0].Key != nil {
					ch.key = ckc[0].Key
				}
				if ckc[0].Chain != nil {
					ch.chain = ckc[0].Chain
				}
			}
		default:
			if !readOnlyProfileFields[k] {
				ch.extra[k] = v
			}
		}
		if e != nil {
			return nil, e
		}
	}
	return ch, nil
}
