package serve

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/plant"
)

// testCert writes a self-signed certificate and its key (0600).
func testCert(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

// TestValidateExposure: the exposure table of Config.Validate, row by row
// (docs/SECURITY.md), and its refusals in one line each.
func TestValidateExposure(t *testing.T) {
	dir := t.TempDir()
	cert, key := testCert(t, dir)
	openKey := filepath.Join(dir, "open-key.pem")
	b, _ := os.ReadFile(key)
	os.WriteFile(openKey, b, 0o644)
	os.Chmod(openKey, 0o644)
	linkKey := filepath.Join(dir, "link-key.pem")
	os.Symlink(key, linkKey)
	uid, gid := plant.User(t)
	os.Lchown(linkKey, uid, gid)
	ownLink := filepath.Join(dir, "own-link.pem")
	os.Symlink(key, ownLink)
	tok := filepath.Join(dir, "token")
	type want struct {
		loopback, peers, tls bool
		token                string
		warn                 string // a substring of the one warning ("": none)
		err                  string
	}
	for _, c := range []struct {
		name string
		h    HTTP
		want want
	}{
		{"loopback", HTTP{Listen: "127.0.0.1:9464"}, want{loopback: true, peers: true}},
		{"localhost", HTTP{Listen: "localhost:9464"}, want{loopback: true, peers: true}},
		{"ipv6 loopback", HTTP{Listen: "[::1]:0"}, want{loopback: true, peers: true}},
		{"loopback insecure", HTTP{Listen: "127.0.0.1:9464", Insecure: true}, want{loopback: true, warn: "every local user"}},
		{"loopback token", HTTP{Listen: "127.0.0.1:9464", TokenFile: tok}, want{loopback: true, token: TokenFromFile}},
		{"loopback tls", HTTP{Listen: "127.0.0.1:9464", TLSCert: cert, TLSKey: key}, want{loopback: true, peers: true, tls: true}},
		{"network token tls", HTTP{Listen: "0.0.0.0:9464", TokenFile: tok, TLSCert: cert, TLSKey: key}, want{tls: true, token: TokenFromFile}},
		{"network token", HTTP{Listen: ":9464", TokenFile: tok}, want{token: TokenFromFile, warn: "the token travels in clear text"}},
		{"network tls", HTTP{Listen: "0.0.0.0:9464", TLSCert: cert, TLSKey: key}, want{tls: true, token: TokenNew}},
		{"network insecure", HTTP{Listen: "0.0.0.0:9464", Insecure: true}, want{warn: "anyone who reaches the port"}},
		{"a name is not loopback", HTTP{Listen: "myhost:9464"}, want{err: "--listen myhost:9464 is not loopback: give --auth-token-file FILE"}},
		{"network bare", HTTP{Listen: "0.0.0.0:9464"}, want{err: "--listen 0.0.0.0:9464 is not loopback"}},
		{"no port", HTTP{Listen: "nowhere"}, want{err: "--listen nowhere: want host:port"}},
		{"cert alone", HTTP{Listen: "127.0.0.1:0", TLSCert: cert}, want{err: "--tls-cert and --tls-key go together"}},
		{"key readable by all", HTTP{Listen: "127.0.0.1:0", TLSCert: cert, TLSKey: openKey}, want{err: "--tls-key " + openKey + ": readable by every user (mode -rw-r--r--): chmod 600 it"}},
		{"key another user's symlink", HTTP{Listen: "127.0.0.1:0", TLSCert: cert, TLSKey: linkKey}, want{err: fmt.Sprintf("--tls-key %s: a symbolic link (to %s) owned by uid %d: name the file itself", linkKey, key, uid)}},
		{"key our own symlink", HTTP{Listen: "127.0.0.1:0", TLSCert: cert, TLSKey: ownLink}, want{loopback: true, peers: true, tls: true}},
		{"key missing", HTTP{Listen: "127.0.0.1:0", TLSCert: cert, TLSKey: filepath.Join(dir, "none")}, want{err: "--tls-key " + filepath.Join(dir, "none") + ": no such file or directory"}},
		{"cert not PEM", HTTP{Listen: "127.0.0.1:0", TLSCert: key, TLSKey: key}, want{err: "--tls-cert " + key + ", --tls-key " + key + ": tls: "}},
		{"no connections", HTTP{Listen: "127.0.0.1:0", MaxConnections: -1}, want{err: "--max-connections and --max-web-clients must be positive"}},
	} {
		c.h.MaxConnections = max(c.h.MaxConnections, 1)
		if c.name == "no connections" {
			c.h.MaxConnections = 0
		}
		c.h.MaxWebClients = 1
		cfg := Config{HTTP: c.h}
		e, err := cfg.Validate()
		if c.want.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.want.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v, want %q in one line", c.name, err, c.want.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := want{loopback: e.Loopback, peers: e.PeerUsers, tls: e.TLS, token: e.Token}
		if len(e.Warnings) > 1 || c.want.warn == "" && len(e.Warnings) != 0 || c.want.warn != "" && (len(e.Warnings) != 1 || !strings.Contains(e.Warnings[0], c.want.warn)) {
			t.Errorf("%s: warnings %q, want one with %q", c.name, e.Warnings, c.want.warn)
		}
		if g, w := fmt.Sprint(got), fmt.Sprint(want{loopback: c.want.loopback, peers: c.want.peers, tls: c.want.tls, token: c.want.token}); g != w {
			t.Errorf("%s: %s, want %s", c.name, g, w)
		}
	}
}

// TestTokenFileChecks: a token file another user made (they know the
// token) or a symbolic link (its target's first line would become the
// token) is refused in one line; this user's 0600 file is read.
func TestTokenFileChecks(t *testing.T) {
	dir := plant.StickyDir(t)
	mine := filepath.Join(dir, "mine")
	os.WriteFile(mine, []byte("tok-1\n"), 0o600)
	if tok, created, err := LoadToken(mine); err != nil || created || tok != "tok-1" {
		t.Errorf("own file: %q %v %v", tok, created, err)
	}
	uid, gid := plant.User(t)
	secret := filepath.Join(t.TempDir(), "shadow")
	os.WriteFile(secret, []byte("root-secret\n"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(secret, link)
	os.Lchown(link, uid, gid)
	want := fmt.Sprintf("--auth-token-file %s: a symbolic link (to %s) owned by uid %d: name the file itself", link, secret, uid)
	if _, _, err := LoadToken(link); err == nil || err.Error() != want {
		t.Errorf("another user's symlink: %v\nwant %s", err, want)
	}
	// A Kubernetes Secret: root's links (token -> ..data/token, ..data ->
	// a dated directory) to a file of mode 0440: followed.
	k8s := t.TempDir()
	os.Mkdir(filepath.Join(k8s, "..2026_12_02"), 0o755)
	os.WriteFile(filepath.Join(k8s, "..2026_12_02", "token"), []byte("k8s-token\n"), 0o440)
	os.Symlink("..2026_12_02", filepath.Join(k8s, "..data"))
	os.Symlink("..data/token", filepath.Join(k8s, "token"))
	if tok, _, err := LoadToken(filepath.Join(k8s, "token")); err != nil || tok != "k8s-token" {
		t.Errorf("a Secret's link: %q %v", tok, err)
	}
	theirs := filepath.Join(dir, "theirs")
	os.WriteFile(theirs, []byte("known-to-them\n"), 0o600)
	os.Chown(theirs, uid, gid)
	want = fmt.Sprintf("--auth-token-file %s: owned by uid %d, not by clrspy's user (uid %d) or root: that user knows it", theirs, uid, os.Geteuid())
	if _, _, err := LoadToken(theirs); err == nil || err.Error() != want {
		t.Errorf("another user's file: %v\nwant %s", err, want)
	}
}
