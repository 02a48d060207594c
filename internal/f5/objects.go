package f5

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"
)

// downloadsDir is where BIG-IP's file-transfer worker puts uploads, and the
// only directory install commands can read here.
const downloadsDir = "/var/config/rest/downloads/"

type upload struct {
	data     []byte
	total    int
	chunks   map[int]int // start offset -> length, BIG-IP's "usedChunks"
	received int
	updated  time.Time
}

func (u *upload) complete() bool { return u.received >= u.total }

type certObj struct {
	partition, name string
	certs           []*x509.Certificate // the first is the one BIG-IP describes
	generation      int64
}

type keyObj struct {
	partition, name string
	pub             crypto.PublicKey
	// signer is kept for the virtual server (virtual.go), which serves the
	// profile's pair; the REST API never shows it.
	signer     crypto.Signer
	keyType    string
	keySize    int
	curve      string
	generation int64
}

func fullPath(partition, name string) string { return "/" + partition + "/" + name }

// tildePath is the URL form of a full path ("/Common/x" -> "~Common~x").
func tildePath(full string) string { return strings.ReplaceAll(full, "/", "~") }

// parseID reads the object part of a tm URL: "~Partition~name" (subfolders
// as further "~"), or a bare "name", which BIG-IP resolves in /Common.
func parseID(id string) (partition, name string, err error) {
	if !strings.HasPrefix(id, "~") {
		if id == "" || strings.Contains(id, "/") {
			return "", "", fmt.Errorf("invalid object name %q", id)
		}
		return "Common", id, nil
	}
	rest := id[1:]
	i := strings.IndexByte(rest, '~')
	if i <= 0 || i == len(rest)-1 {
		return "", "", fmt.Errorf("invalid object name %q", id)
	}
	return rest[:i], strings.ReplaceAll(rest[i+1:], "~", "/"), nil
}

// splitName reads a name given in a JSON body: "/Partition/name" or a bare
// name in the given default partition.
func splitName(s, defPartition string) (partition, name string, err error) {
	if !strings.HasPrefix(s, "/") {
		if s == "" || strings.Contains(s, "/") {
			return "", "", fmt.Errorf("invalid object name %q", s)
		}
		return defPartition, s, nil
	}
	rest := s[1:]
	i := strings.IndexByte(rest, '/')
	if i <= 0 || i == len(rest)-1 {
		return "", "", fmt.Errorf("invalid object name %q", s)
	}
	return rest[:i], rest[i+1:], nil
}

func parseCertPEM(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	return out, nil
}

func parseKeyPEM(data []byte) (crypto.Signer, error) {
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no PEM private key block")
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "" {
			return nil, errors.New("the key is encrypted and no passphrase was given")
		}
		var k any
		var err error
		switch b.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported key type %T", k)
		}
		return s, nil
	}
}

// describeKey gives BIG-IP's keyType/keySize/curveName for a public key.
func describeKey(pub crypto.PublicKey, suffix string) (keyType string, size int, curve string) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return "rsa-" + suffix, k.N.BitLen(), ""
	case *ecdsa.PublicKey:
		return "ec-" + suffix, k.Curve.Params().BitSize, curveName(k.Curve)
	case ed25519.PublicKey:
		return "ed25519-" + suffix, 256, ""
	}
	return "unknown", 0, ""
}

// curveName uses OpenSSL's names, as tmsh does.
func curveName(c elliptic.Curve) string {
	switch c {
	case elliptic.P256():
		return "prime256v1"
	case elliptic.P384():
		return "secp384r1"
	case elliptic.P521():
		return "secp521r1"
	}
	return c.Params().Name
}

func newKeyObj(partition, name string, k crypto.Signer, gen int64) *keyObj {
	pub := k.Public()
	kt, size, curve := describeKey(pub, "private")
	return &keyObj{partition: partition, name: name, pub: pub, signer: k, keyType: kt, keySize: size, curve: curve, generation: gen}
}

// keyMatches reports whether the key object's public key is the
// certificate's, which BIG-IP checks before it lets a profile use the pair.
func keyMatches(c *certObj, k *keyObj) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	p, ok := c.certs[0].PublicKey.(equaler)
	return ok && p.Equal(k.pub)
}

// opensslTime is the date format tmsh shows (OpenSSL's).
func opensslTime(t time.Time) string { return t.UTC().Format("Jan _2 15:04:05 2006 GMT") }

func fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var b strings.Builder
	b.WriteString("SHA256/")
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}

func sanString(c *x509.Certificate) string {
	var parts []string
	for _, d := range c.DNSNames {
		parts = append(parts, "DNS:"+d)
	}
	for _, ip := range c.IPAddresses {
		parts = append(parts, "IP Address:"+ip.String())
	}
	for _, e := range c.EmailAddresses {
		parts = append(parts, "email:"+e)
	}
	for _, u := range c.URIs {
		parts = append(parts, "URI:"+u.String())
	}
	return strings.Join(parts, ", ")
}

func (c *certObj) json() map[string]any {
	fp := fullPath(c.partition, c.name)
	leaf := c.certs[0]
	kt, size, curve := describeKey(leaf.PublicKey, "public")
	m := map[string]any{
		"kind":             "tm:sys:crypto:cert:certstate",
		"name":             c.name,
		"partition":        c.partition,
		"fullPath":         fp,
		"generation":       c.generation,
		"selfLink":         selfLink("/mgmt/tm/sys/crypto/cert/" + tildePath(fp)),
		"commonName":       leaf.Subject.CommonName,
		"expirationDate":   leaf.NotAfter.Unix(),
		"expirationString": opensslTime(leaf.NotAfter),
		"fingerprint":      fingerprint(leaf),
		"isBundle":         fmt.Sprint(len(c.certs) > 1),
		"issuer":           leaf.Issuer.String(),
		"keySize":          size,
		"keyType":          kt,
		"serialNumber":     leaf.SerialNumber.String(),
		"subject":          leaf.Subject.String(),
		"version":          leaf.Version,
	}
	if san := sanString(leaf); san != "" {
		m["subjectAlternativeName"] = san
	}
	if curve != "" {
		m["curveName"] = curve
	}
	if len(c.certs) > 1 {
		var bundle []map[string]any
		for _, x := range c.certs {
			bundle = append(bundle, map[string]any{
				"commonName":       x.Subject.CommonName,
				"expirationString": opensslTime(x.NotAfter),
				"subject":          x.Subject.String(),
				"issuer":           x.Issuer.String(),
			})
		}
		m["certificateBundle"] = bundle
	}
	return m
}

func (k *keyObj) json() map[string]any {
	fp := fullPath(k.partition, k.name)
	m := map[string]any{
		"kind":         "tm:sys:crypto:key:keystate",
		"name":         k.name,
		"partition":    k.partition,
		"fullPath":     fp,
		"generation":   k.generation,
		"selfLink":     selfLink("/mgmt/tm/sys/crypto/key/" + tildePath(fp)),
		"keySize":      k.keySize,
		"keyType":      k.keyType,
		"securityType": "normal",
	}
	if k.curve != "" {
		m["curveName"] = k.curve
	}
	return m
}
