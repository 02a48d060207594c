package f5

import (
	"crypto"
	"crypto/x509"
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
	certs []*x509.Certificate // as in the file: the leaf first, then any chain
}

type keyObj struct {
	pub crypto.PublicKey
	// signer is kept for the virtual server (virtual.go), which serves the
	// profile's pair; the REST API never shows it.
	signer crypto.Signer
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

func newKeyObj(k crypto.Signer) *keyObj {
	return &keyObj{pub: k.Public(), signer: k}
}

// keyMatches reports whether the key object's public key is the
// certificate's, which BIG-IP checks before it lets a profile use the pair.
func keyMatches(c *certObj, k *keyObj) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	p, ok := c.certs[0].PublicKey.(equaler)
	return ok && p.Equal(k.pub)
}
