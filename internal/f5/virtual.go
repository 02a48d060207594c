package f5

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// VirtualCertificate is a virtual server's certificate source: at every
// handshake, the pair and chain the client-ssl profile holds right then. A
// BIG-IP applies a committed profile change to new connections; so does
// this, which is what lets the deploy tier see certctl's deployment served.
func (a *API) VirtualCertificate(profilePath string) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		p, ok := a.profiles[profilePath]
		if !ok {
			return nil, fmt.Errorf("virtual server: profile %s does not exist", profilePath)
		}
		c, okc := a.certs.get(p.cert)
		k, okk := a.keys.get(p.key)
		if !okc || !okk || k.signer == nil || len(c.certs) == 0 {
			return nil, fmt.Errorf("virtual server: profile %s has no usable certificate and key", profilePath)
		}
		out := &tls.Certificate{PrivateKey: k.signer, Leaf: c.certs[0]}
		for _, x := range c.certs {
			out.Certificate = append(out.Certificate, x.Raw)
		}
		if p.chain != "" && p.chain != "none" {
			if ch, found := a.certs.get(p.chain); found {
				for _, x := range ch.certs {
					out.Certificate = append(out.Certificate, x.Raw)
				}
			}
		}
		return out, nil
	}
}

// NewVirtualServer serves the page on a virtual server whose certificate is
// the profile's (VirtualCertificate). No management API here: as on a
// BIG-IP, the virtual address is not the management one.
func NewVirtualServer(api *API, profilePath, hostname string) *http.Server {
	page := []byte("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + PageMarker + "</title></head>\n" +
		"<body><h1>" + PageMarker + "</h1><p>virtual server, profile " + profilePath + "</p></body></html>\n")
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	return &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/healthz" {
				_, _ = w.Write([]byte("ok"))
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			_, _ = w.Write(page)
		}),
		Protocols: protocols,
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			NextProtos:     []string{"http/1.1"},
			GetCertificate: api.VirtualCertificate(profilePath),
		},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       15 * time.Second,
	}
}
