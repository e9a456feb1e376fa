package serve

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/plant"
	"github.com/clrspy/clrspy/report"
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
		cfg := Config{HTTP: c.h, LeakWatch: LeakWatch{Off: true}}
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

// TestValidateCommand: the rules Validate adds for the command's flags,
// row by row: the leak watch on by default with serve's flag defaults
// (its start-up not judged is its window), its bad values refused in one
// line naming the flag unless it is off; --cpu-profile with --web only,
// at 1 to 1000 Hz, windows of 1 s at least; --info not longer than
// --warn; a --pid no process has now is a warning, not a refusal.
func TestValidateCommand(t *testing.T) {
	lw := func(f func(*LeakWatch)) func(*Config) {
		return func(c *Config) { f(&c.LeakWatch) }
	}
	for _, r := range []struct {
		name string
		set  func(*Config)
		err  string // the refusal's prefix ("": none)
		warn string // a substring of the one warning ("": none)
	}{
		{"defaults", func(*Config) {}, "", ""},
		{"window 0", lw(func(l *LeakWatch) { l.Window = 0 }), "--leak-watch-window 0s: must be positive", ""},
		{"every negative", lw(func(l *LeakWatch) { l.Every = -time.Hour }), "--leak-watch-every -1h0m0s: must be positive", ""},
		{"growth 0", lw(func(l *LeakWatch) { l.Growth = 0 }), "--leak-watch-growth 0: a percentage, positive", ""},
		{"growth NaN", lw(func(l *LeakWatch) { l.Growth = math.NaN() }), "--leak-watch-growth NaN: a percentage, positive", ""},
		{"off, window 0", lw(func(l *LeakWatch) { l.Off, l.Window = true, 0 }), "", ""},
		{"cpu without web", func(c *Config) { c.CPUProfile = CPUProfile{On: true, Hz: 19, Window: time.Minute} }, "--cpu-profile feeds the live web view's flame graph: add --web", ""},
		{"cpu too fast", func(c *Config) { c.Web, c.CPUProfile = true, CPUProfile{On: true, Hz: 1001, Window: time.Minute} }, "--cpu-profile-hz 1001: give 1 to 1000", ""},
		{"cpu at 0 Hz", func(c *Config) { c.Web, c.CPUProfile = true, CPUProfile{On: true, Hz: 0, Window: time.Minute} }, "--cpu-profile-hz 0: give 1 to 1000", ""},
		{"cpu window short", func(c *Config) {
			c.Web, c.CPUProfile = true, CPUProfile{On: true, Hz: 19, Window: 500 * time.Millisecond}
		}, "--cpu-profile-window 500ms: give at least 1s", ""},
		{"info over warn", func(c *Config) { c.PauseLog = &report.PauseLogOptions{Info: time.Second, Warn: time.Millisecond} }, "--info (1s) must not be longer than --warn (1ms)", ""},
		{"pid missing", func(c *Config) { c.Pids = []int{1 << 30} }, "", "warning: --pid 1073741824: no process has this pid now"},
	} {
		c := Config{LeakWatch: LeakWatch{Window: 5 * time.Minute, Growth: 10, Every: 6 * time.Hour},
			HTTP: HTTP{Listen: "127.0.0.1:9464", MaxConnections: 1, MaxWebClients: 1}}
		r.set(&c)
		e, err := c.Validate()
		switch {
		case r.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), r.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v, want %q in one line", r.name, err, r.err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", r.name, err)
			continue
		}
		if r.warn == "" && len(e.Warnings) != 0 || r.warn != "" && (len(e.Warnings) != 1 || !strings.Contains(e.Warnings[0], r.warn)) {
			t.Errorf("%s: warnings %q, want %q", r.name, e.Warnings, r.warn)
		}
		if !c.LeakWatch.Off && c.LeakWatch.Settle != c.LeakWatch.Window {
			t.Errorf("%s: start-up not judged %v, want the window %v", r.name, c.LeakWatch.Settle, c.LeakWatch.Window)
		}
	}
}

// TestResolveToken: the token Validate's exposure asks for: none; the
// file's, a new file's said once; a run's own, said.
func TestResolveToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if tok, note, err := (&Exposure{}).ResolveToken(file); tok != "" || note != "" || err != nil {
		t.Errorf("none: %q %q %v", tok, note, err)
	}
	e := &Exposure{Token: TokenFromFile}
	tok, note, err := e.ResolveToken(file)
	if err != nil || len(tok) < 20 || note != "wrote a new token to "+file+": "+tok {
		t.Errorf("new file: %q %q %v", tok, note, err)
	}
	if again, note, err := e.ResolveToken(file); again != tok || note != "" || err != nil {
		t.Errorf("the file again: %q %q %v, want %q and nothing said", again, note, err, tok)
	}
	tok, note, err = (&Exposure{Token: TokenNew}).ResolveToken("")
	if err != nil || len(tok) < 20 || note != "no --auth-token-file: this run's token is "+tok {
		t.Errorf("this run's: %q %q %v", tok, note, err)
	}
}
