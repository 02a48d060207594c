package pgwire

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// md5Password is PostgreSQL's MD5 challenge response:
// "md5" + hex(md5(hex(md5(password + user)) + salt)).
func md5Password(user, password string, salt []byte) string {
	inner := md5.Sum([]byte(password + user))
	outer := md5.Sum(append([]byte(hex.EncodeToString(inner[:])), salt...))
	return "md5" + hex.EncodeToString(outer[:])
}

// scramClient runs the client side of SCRAM-SHA-256 (RFC 5802, RFC 7677)
// without channel binding, as the connection has no TLS.
//
// The password is used as given, without SASLprep: SASLprep is the identity
// for printable ASCII, and normalising other passwords would need Unicode
// tables outside the standard library.
type scramClient struct {
	user, password  string
	nonce           string
	clientFirstBare string
	serverSignature []byte
}

// gs2Header says "no channel binding, none supported"; its base64 form is
// the c= attribute of the client-final message.
const gs2Header = "n,,"

func newSCRAMClient(user, password string) (*scramClient, error) {
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	return &scramClient{user: user, password: password, nonce: base64.StdEncoding.EncodeToString(raw)}, nil
}

func (s *scramClient) clientFirst() string {
	name := strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s.user)
	s.clientFirstBare = "n=" + name + ",r=" + s.nonce
	return gs2Header + s.clientFirstBare
}

// clientFinal answers the server-first message with the client proof and
// remembers the signature the server must present in its final message.
func (s *scramClient) clientFinal(serverFirst string) (string, error) {
	attrs, err := scramAttrs(serverFirst)
	if err != nil {
		return "", err
	}
	nonce, salt64, iter64 := attrs["r"], attrs["s"], attrs["i"]
	// The server extends our nonce; anything else would let a replayed or
	// foreign exchange through.
	if !strings.HasPrefix(nonce, s.nonce) || len(nonce) == len(s.nonce) {
		return "", errors.New("SCRAM: server nonce does not extend the client nonce")
	}
	salt, err := base64.StdEncoding.DecodeString(salt64)
	if err != nil || len(salt) == 0 {
		return "", errors.New("SCRAM: invalid salt from server")
	}
	iter, err := strconv.Atoi(iter64)
	if err != nil || iter < 1 {
		return "", fmt.Errorf("SCRAM: invalid iteration count %q from server", iter64)
	}

	salted, err := pbkdf2.Key(sha256.New, s.password, salt, iter, sha256.Size)
	if err != nil {
		return "", fmt.Errorf("SCRAM: %w", err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	withoutProof := "c=" + base64.StdEncoding.EncodeToString([]byte(gs2Header)) + ",r=" + nonce
	authMessage := s.clientFirstBare + "," + serverFirst + "," + withoutProof
	proof := hmacSHA256(storedKey[:], authMessage)
	for i := range proof {
		proof[i] ^= clientKey[i]
	}
	s.serverSignature = hmacSHA256(hmacSHA256(salted, "Server Key"), authMessage)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
}

// verifyServerFinal proves the server knows the password too, so a server
// that merely accepts any proof is not trusted.
func (s *scramClient) verifyServerFinal(serverFinal string) error {
	attrs, err := scramAttrs(serverFinal)
	if err != nil {
		return err
	}
	if e, ok := attrs["e"]; ok {
		return fmt.Errorf("SCRAM: server reported %q", e)
	}
	sig, err := base64.StdEncoding.DecodeString(attrs["v"])
	if err != nil || s.serverSignature == nil || subtle.ConstantTimeCompare(sig, s.serverSignature) != 1 {
		return errors.New("SCRAM: server signature does not match; the server did not prove it knows the password")
	}
	return nil
}

// scramAttrs splits "k=v,k=v". A mandatory extension (m=) is refused as
// RFC 5802 requires.
func scramAttrs(msg string) (map[string]string, error) {
	attrs := map[string]string{}
	for _, part := range strings.Split(msg, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || len(k) != 1 {
			return nil, fmt.Errorf("SCRAM: malformed server message %q", msg)
		}
		if k == "m" {
			return nil, errors.New("SCRAM: server requires an unsupported extension")
		}
		attrs[k] = v
	}
	return attrs, nil
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
