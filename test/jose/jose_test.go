// Package jose_test verifies what k6/lib signs (an ACME JWS and a certificate request) with Go's own
// crypto, so the PKI tier's requests are checked by an implementation other than the WebCrypto that
// made them: k6 prints them (k6/test/jose.vectors.js), Go parses and verifies.
package jose_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type vectors struct {
	JWS struct {
		Protected, Payload, Signature string
	} `json:"jws"`
	JWK        map[string]string `json:"jwk"`
	Thumbprint string            `json:"thumbprint"`
	CSR        string            `json:"csr"`
}

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("%q is not base64url: %v", s, err)
	}
	return b
}

func fromK6(t *testing.T) vectors {
	t.Helper()
	root, _ := filepath.Abs("../..")
	cmd := exec.Command("go", "tool", "k6", "run", "--quiet", "--no-color", "--log-format", "raw", "k6/test/jose.vectors.js")
	cmd.Dir = root
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("k6: %v\n%s", err, errb.String())
	}
	for _, line := range strings.Split(errb.String()+out.String(), "\n") {
		var v vectors
		if json.Unmarshal([]byte(strings.TrimSpace(line)), &v) == nil && v.CSR != "" {
			return v
		}
	}
	t.Fatalf("k6 printed no vectors:\n%s\n%s", out.String(), errb.String())
	return vectors{}
}

func TestK6SignsWhatGoVerifies(t *testing.T) {
	v := fromK6(t)
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(b64(t, v.JWK["x"])), Y: new(big.Int).SetBytes(b64(t, v.JWK["y"]))}

	t.Run("JWS ES256", func(t *testing.T) {
		var h map[string]any
		if err := json.Unmarshal(b64(t, v.JWS.Protected), &h); err != nil {
			t.Fatal(err)
		}
		if h["alg"] != "ES256" || h["nonce"] != "bm9uY2U" || h["url"] != "https://ca.example/acme/new-order" || h["jwk"] == nil {
			t.Errorf("protected header %v", h)
		}
		sig := b64(t, v.JWS.Signature)
		if len(sig) != 64 {
			t.Fatalf("signature of %d bytes, want r||s of 64", len(sig))
		}
		digest := sha256.Sum256([]byte(v.JWS.Protected + "." + v.JWS.Payload))
		if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Error("the JWS does not verify under its JWK")
		}
		digest[0] ^= 1
		if ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Error("a changed signing input verifies too: the check proves nothing")
		}
	})

	t.Run("JWK thumbprint", func(t *testing.T) {
		in := `{"crv":"P-256","kty":"EC","x":"` + v.JWK["x"] + `","y":"` + v.JWK["y"] + `"}`
		sum := sha256.Sum256([]byte(in))
		if got := base64.RawURLEncoding.EncodeToString(sum[:]); got != v.Thumbprint {
			t.Errorf("thumbprint %s, want %s", v.Thumbprint, got)
		}
	})

	t.Run("CSR", func(t *testing.T) {
		csr, err := x509.ParseCertificateRequest(b64(t, v.CSR))
		if err != nil {
			t.Fatal(err)
		}
		if err := csr.CheckSignature(); err != nil {
			t.Errorf("the CSR's signature: %v", err)
		}
		if csr.Subject.CommonName != "a.example.com" || !slices.Equal(csr.DNSNames, []string{"a.example.com", "b.example.com"}) {
			t.Errorf("CSR names %q %q", csr.Subject.CommonName, csr.DNSNames)
		}
		if k, ok := csr.PublicKey.(*ecdsa.PublicKey); !ok || !k.Equal(pub) {
			t.Error("the CSR's key is not the account key it was made with")
		}
	})
}
