package seed

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certctl-loadtest/internal/testenv"
)

// skipNoDist is printed once, by TestMain, when CERTCTL_DIST is not set outside CI.
const skipNoDist = "seed: skipped: CERTCTL_DIST is not set; point it at a certctl build (server, migrations) " +
	"to test the seeds on certctl's own migrated schema"

// certctlDist is the certctl build the tests migrate with: an absolute directory holding server and
// migrations/. Empty when the tests that need certctl's schema skip.
var certctlDist string

func TestMain(m *testing.M) {
	dist, skip, err := checkDist(os.Getenv("CERTCTL_DIST"), os.Getenv("CI"))
	switch {
	case err != nil:
		fmt.Println("seed: FAIL:", err)
		os.Exit(1)
	case skip != "":
		// Said once here; the tests that need the schema then skip without repeating it.
		fmt.Println(skip)
	}
	certctlDist = dist
	os.Exit(m.Run())
}

// checkDist decides what the tests do with CERTCTL_DIST and CI: the build's absolute directory, or a
// reason to skip (CERTCTL_DIST unset outside CI), or an error (unset in CI, or not a usable build).
func checkDist(dist, ci string) (dir, skip string, err error) {
	if dist == "" {
		if ci != "" {
			return "", "", errors.New("CERTCTL_DIST is not set and CI is: CI never skips the seed tests; " +
				"point CERTCTL_DIST at a certctl build (server, migrations) so they run on certctl's own migrated schema")
		}
		return "", skipNoDist, nil
	}
	dir, err = filepath.Abs(dist)
	if err != nil {
		return "", "", fmt.Errorf("CERTCTL_DIST=%s: %v", dist, err)
	}
	notBuild := func(format string, args ...any) error {
		return fmt.Errorf("CERTCTL_DIST=%s is not a usable certctl build (it needs an executable server and a migrations/ "+
			"directory of *.up.sql files): %s", dist, fmt.Sprintf(format, args...))
	}
	server := filepath.Join(dir, "server")
	fi, err := os.Stat(server)
	switch {
	case err != nil:
		return "", "", notBuild("no server: %v", err)
	case !fi.Mode().IsRegular():
		return "", "", notBuild("%s is not a regular file", server)
	case fi.Mode().Perm()&0o111 == 0:
		return "", "", notBuild("%s is not executable (mode %v)", server, fi.Mode().Perm())
	}
	migrations := filepath.Join(dir, "migrations")
	ups, err := filepath.Glob(filepath.Join(migrations, "*.up.sql"))
	if err == nil && len(ups) == 0 {
		if _, statErr := os.Stat(migrations); statErr != nil {
			err = fmt.Errorf("no migrations directory: %v", statErr)
		} else {
			err = fmt.Errorf("no *.up.sql in %s", migrations)
		}
	}
	if err != nil {
		return "", "", notBuild("%v", err)
	}
	return dir, "", nil
}

func TestCheckDist(t *testing.T) {
	good := t.TempDir()
	writeFile(t, filepath.Join(good, "server"), "#!/bin/sh\n", 0o755)
	if err := os.Mkdir(filepath.Join(good, "migrations"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(good, "migrations", "000001_initial_schema.up.sql"), "SELECT 1;\n", 0o644)

	noExec := t.TempDir()
	writeFile(t, filepath.Join(noExec, "server"), "", 0o644)
	if err := os.Mkdir(filepath.Join(noExec, "migrations"), 0o755); err != nil {
		t.Fatal(err)
	}
	noMigrations := t.TempDir()
	writeFile(t, filepath.Join(noMigrations, "server"), "#!/bin/sh\n", 0o755)
	emptyMigrations := t.TempDir()
	writeFile(t, filepath.Join(emptyMigrations, "server"), "#!/bin/sh\n", 0o755)
	if err := os.Mkdir(filepath.Join(emptyMigrations, "migrations"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, dist, ci string
		skip           bool
		err            string // substring; "" for no error
	}{
		{"UnsetLocally", "", "", true, ""},
		{"UnsetInCI", "", "true", false, "CI never skips"},
		{"Missing", filepath.Join(good, "nope"), "", false, "no server"},
		{"ServerNotExecutable", noExec, "", false, "not executable"},
		{"NoMigrations", noMigrations, "", false, "no migrations directory"},
		{"EmptyMigrations", emptyMigrations, "true", false, "no *.up.sql"},
		{"Good", good, "true", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, skip, err := checkDist(c.dist, c.ci)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one mentioning %q", err, c.err)
			case (skip != "") != c.skip:
				t.Fatalf("skip %q, want skip=%v", skip, c.skip)
			case c.err == "" && !c.skip && dir != c.dist:
				t.Fatalf("dir %q, want %q", dir, c.dist)
			}
			if err != nil && !strings.Contains(err.Error(), "CERTCTL_DIST") {
				t.Errorf("error %q does not name CERTCTL_DIST", err)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

// requireDist skips a test that needs certctl's schema when TestMain found no build (it has said why).
func requireDist(t testing.TB) {
	t.Helper()
	if certctlDist == "" {
		testenv.SkipOrFailInCI(t, "CERTCTL_DIST is not set")
	}
}

// migrate builds certctl's schema in the database at url the way certctl's own deployment does: the
// build's `server --migrate-only`, which applies every migration and certctl's base seed, then exits.
// It returns how long the server took.
//
// The server insists on a full configuration even for --migrate-only: a readable TLS certificate and
// key (HTTPS only), an auth secret, and (from main-151107c on) an agent bootstrap token. They are dummies
// here, made up per run; the server never listens. Its environment is built from scratch, so nothing from
// the caller's (CERTCTL_DEMO_SEED above all: the demo seed makes certctl scan private networks) leaks in.
func migrate(t testing.TB, dist, url string) time.Duration {
	t.Helper()
	tmp := t.TempDir()
	cert, key := selfSignedPair(t, tmp)
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + tmp,
		"TZ=UTC",
		"CERTCTL_DATABASE_URL=" + url,
		"CERTCTL_DATABASE_MIGRATIONS_PATH=" + filepath.Join(dist, "migrations"),
		"CERTCTL_DEMO_SEED=false",
		"CERTCTL_SERVER_TLS_CERT_PATH=" + cert,
		"CERTCTL_SERVER_TLS_KEY_PATH=" + key,
		"CERTCTL_AUTH_SECRET=" + randomHex(t),
		"CERTCTL_AGENT_BOOTSTRAP_TOKEN=" + randomHex(t),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dist, "server"), "--migrate-only")
	cmd.Dir = dist // certctl's images run it from the folder holding migrations/
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("%s --migrate-only: %v after %v\n%s", cmd.Path, err, elapsed.Round(time.Millisecond), out.String())
	}
	if !strings.Contains(out.String(), "migrations completed") || !strings.Contains(out.String(), "seed completed") {
		t.Fatalf("%s --migrate-only exited 0 without reporting its migrations and seed:\n%s", cmd.Path, out.String())
	}
	return elapsed
}

// selfSignedPair writes a throwaway ECDSA certificate and key: certctl's config check parses them.
func selfSignedPair(t testing.TB, dir string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "certctl-loadtest seed test (never served)"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

func randomHex(t testing.TB) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
