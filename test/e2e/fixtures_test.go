package e2e

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// offlineImages reads images/offline.env: the images the e2e tests run on.
func offlineImages(t *testing.T) map[string]string {
	f, err := os.Open(filepath.Join(root, "images", "offline.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok && !strings.HasPrefix(k, "#") {
			m[k] = v
		}
	}
	return m
}

// starterCert writes a throwaway starter certificate like tls-init's into a directory.
func starterCert(t *testing.T) string {
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "certctl-loadtest-starter"},
		DNSNames: []string{"nginx", "apache", "haproxy", "f5"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	k := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
	for name, b := range map[string][]byte{"starter.crt": crt, "starter.key": k, "starter.pem": append(append([]byte{}, crt...), k...)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(dir, 0o755)
	return dir
}

// Each sidecar's configuration, as users mount it, is accepted by the daemon itself.
func TestFixturesValidatedByTheirDaemons(t *testing.T) {
	e2e(t)
	t.Parallel()
	imgs := offlineImages(t)
	tls := starterCert(t)
	fx := filepath.Join(root, "fixtures")
	cases := []struct {
		name, image string
		mounts      []string
		cmd         []string
		want        string
	}{
		{"nginx -t", imgs["IMAGE_NGINX"], []string{fx + "/nginx.conf:/etc/nginx/nginx.conf:ro"},
			[]string{"nginx", "-t"}, "test is successful"},
		{"httpd -t", imgs["IMAGE_HTTPD"], []string{fx + "/httpd.conf:/usr/local/apache2/conf/httpd.conf:ro", fx + "/apache-htdocs:/usr/local/apache2/htdocs:ro"},
			[]string{"httpd", "-t"}, "Syntax OK"},
		{"haproxy -c", imgs["IMAGE_HAPROXY"], []string{fx + "/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro"},
			[]string{"haproxy", "-c", "-f", "/usr/local/etc/haproxy/haproxy.cfg"}, "Configuration file is valid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"run", "--rm", "--network", "none", "-v", tls + ":/tls:ro"}
			for _, m := range c.mounts {
				args = append(args, "-v", m)
			}
			args = append(append(args, "--entrypoint", c.cmd[0], c.image), c.cmd[1:]...)
			out, err := exec.Command("docker", args...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), c.want) {
				t.Fatalf("%s in %s: %v\n%s", c.name, c.image, err, out)
			}
		})
	}
	// The check must be able to fail: a broken configuration is refused.
	t.Run("a broken nginx.conf is refused", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "nginx.conf")
		os.WriteFile(bad, []byte("events {}\nhttp { server { listen 443 ssl; ssl_certificate /tls/nope.crt; } }\n"), 0o644)
		out, err := exec.Command("docker", "run", "--rm", "--network", "none", "-v", bad+":/etc/nginx/nginx.conf:ro",
			"--entrypoint", "nginx", imgs["IMAGE_NGINX"], "-t").CombinedOutput()
		if err == nil {
			t.Fatalf("nginx -t accepted a configuration with a missing certificate:\n%s", out)
		}
	})
}
