package serve

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clrspy/clrspy/internal/fleet"
)

// guard applies the access rules every endpoint shares: a cross-site
// request (Origin of another host, Sec-Fetch-Site other than same-origin
// or none) gets 403, so no web page in a local browser can make a target
// pause or read its data; on a loopback listener, only loopback Host names
// are answered (a page served from another name, resolved to 127.0.0.1 by
// DNS rebinding, gets 421 and cannot read /targets or open the
// websocket); with a token, every endpoint but /healthz needs it (401
// otherwise); with PeerUsers, the connection's user must be clrspy's or
// root, or reads only its own processes (peercred.go).
func guard(h http.Handler, o HandlerOptions) http.Handler {
	want := []byte(o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A refused client's connection is not kept alive: idle
		// connections of clients that have no access must not fill
		// --max-connections.
		if o.LoopbackHosts && !loopbackHost(r.Host) {
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("Host %q: serve listens on loopback and answers loopback names only (localhost, 127.0.0.1, [::1])", r.Host), http.StatusMisdirectedRequest)
			return
		}
		if why := crossSite(r); why != "" {
			w.Header().Set("Connection", "close")
			http.Error(w, "forbidden: a cross-site request ("+why+"): serve answers same-origin pages and clients that are not browsers", http.StatusForbidden)
			return
		}
		if len(want) > 0 && r.URL.Path != "/healthz" {
			if got, ok := credential(r); !ok || subtle.ConstantTimeCompare(got, want) != 1 {
				// Two challenges: a browser, which has no use for Bearer,
				// prompts for Basic (the token as the password).
				w.Header().Set("Connection", "close")
				w.Header().Add("WWW-Authenticate", `Bearer realm="clrspy"`)
				w.Header().Add("WWW-Authenticate", `Basic realm="clrspy"`)
				http.Error(w, "unauthorized: send the token of --auth-token-file as Authorization: Bearer TOKEN", http.StatusUnauthorized)
				return
			}
		}
		if o.PeerUsers && r.URL.Path != "/healthz" {
			r2, code, msg := checkPeer(r)
			if r2 == nil {
				w.Header().Set("Connection", "close")
				http.Error(w, msg, code)
				return
			}
			r = r2
		}
		h.ServeHTTP(w, r)
	})
}

// crossSite says why r comes from a page of another origin ("": it does
// not): a browser names the page's site in Sec-Fetch-Site (same-origin,
// or none for an address the user typed) and, on most requests, its
// origin in Origin.
func crossSite(r *http.Request) string {
	switch s := r.Header.Get("Sec-Fetch-Site"); s {
	case "", "same-origin", "none":
	default:
		return "Sec-Fetch-Site: " + s
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) || (u.Scheme != "http" && u.Scheme != "https") {
		return "Origin: " + origin
	}
	return ""
}

// credential is the token a request carries: "Authorization: Bearer T",
// or Basic auth with T as the password (what a browser sends after its
// login prompt, to the page and its websocket alike).
func credential(r *http.Request) ([]byte, bool) {
	a := r.Header.Get("Authorization")
	scheme, rest, ok := strings.Cut(a, " ")
	if !ok {
		return nil, false
	}
	switch strings.ToLower(scheme) {
	case "bearer":
		return []byte(strings.TrimSpace(rest)), true
	case "basic":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
		if err != nil {
			return nil, false
		}
		_, pw, ok := strings.Cut(string(b), ":")
		return []byte(pw), ok
	}
	return nil, false
}

// loopbackHost reports whether a Host header names the loopback
// interface: localhost, 127.0.0.0/8 or ::1, with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether a listener's address is on the loopback
// interface only (127.0.0.0/8, ::1); a wildcard address is not.
func IsLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// NewToken is a fresh random token (256 bits, hex).
func NewToken() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// LoadToken reads the token in path (its first line). A missing file is
// created with a new token, readable by this user only (created true), as
// dotnet-monitor generates its key on first start; an empty one, a
// symbolic link of another user, one that other users may read or one
// owned by another user than clrspy's or root (who would know the token)
// is an error.
func LoadToken(path string) (token string, created bool, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err == nil {
		token = NewToken()
		_, err = f.WriteString(token + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return "", false, fmt.Errorf("--auth-token-file %s: %v", path, fleet.PlainErr(err))
		}
		return token, true, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return "", false, fmt.Errorf("--auth-token-file %s: %v", path, fleet.PlainErr(err))
	}
	real, err := checkSecretFile("--auth-token-file", path)
	if err != nil {
		return "", false, err
	}
	b, err := readNoFollow(real)
	if err != nil {
		return "", false, fmt.Errorf("--auth-token-file %s: %v", path, fleet.PlainErr(err))
	}
	line, _, _ := strings.Cut(string(b), "\n")
	token = strings.TrimSpace(line)
	if token == "" {
		return "", false, fmt.Errorf("--auth-token-file %s: empty (delete it to have a token generated)", path)
	}
	return token, false, nil
}

// readNoFollow reads a small file, refusing a symbolic link swapped in
// since it was checked.
func readNoFollow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<10))
}

// Server is the daemon's HTTP server over h: bounded in time (a request's
// headers must arrive within 10 s, its body within 30 s, the answer go out
// within a minute; an idle keep-alive connection is closed after one) and
// in connections (LimitListener). Profiles, which stream for their
// seconds, extend their own deadlines; the websocket clears them.
func Server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: time.Minute, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10, ConnContext: connContext,
		ConnState: trackConnState}
}

// LimitListener accepts at most n connections at a time. Past that, the
// idle connection that has been idle longest (a keep-alive connection
// between requests, or one that has sent nothing for idleShedAfter) is
// closed to make room: idle connections never lock clients out. With no
// idle one, a new connection is answered at once and closed: with "503 Service
// Unavailable" and the reason when plain is set (a TLS client cannot read
// that), else just closed; it never waits in a queue holding a file
// descriptor (at most maxLingering refused ones linger, for lingerFor). refused, when set, is called after each
// refusal (from the accepting goroutine: it must not block).
func LimitListener(ln net.Listener, n int, plain bool, refused func()) net.Listener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), plain: plain, refused: refused,
		lingering: make(chan struct{}, maxLingering), conns: map[*limitConn]struct{}{}}
}

// idleShedAfter is how long a new connection may send nothing before it
// counts as idle (and may be closed for another).
const idleShedAfter = time.Second

// trackConnState records the HTTP state of LimitListener's connections
// (Server's ConnState), so idle ones can be shed.
func trackConnState(c net.Conn, st http.ConnState) {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok { // TLS
		c = tc.NetConn()
	}
	if lc, ok := c.(*limitConn); ok {
		lc.mu.Lock()
		lc.state, lc.since = st, time.Now()
		lc.mu.Unlock()
	}
}

// shedIdle closes the connection idle longest, freeing its slot (false:
// none is idle).
func (l *limitListener) shedIdle() bool {
	now := time.Now()
	var oldest *limitConn
	var oldestSince time.Time
	l.mu.Lock()
	for c := range l.conns {
		c.mu.Lock()
		st, since := c.state, c.since
		c.mu.Unlock()
		idle := st == http.StateIdle || st == http.StateNew && now.Sub(since) >= idleShedAfter
		if idle && (oldest == nil || since.Before(oldestSince)) {
			oldest, oldestSince = c, since
		}
	}
	l.mu.Unlock()
	if oldest == nil {
		return false
	}
	oldest.Close()
	return true
}

type limitListener struct {
	net.Listener
	sem     chan struct{}
	plain   bool
	refused func()
	// lingering bounds the refused connections kept open a moment so the
	// client reads the 503 (see refuse).
	lingering chan struct{}
	mu        sync.Mutex
	conns     map[*limitConn]struct{}
}

// maxLingering and lingerFor bound what refusals cost: at most this many
// refused connections at once, each for at most this long.
const (
	maxLingering = 16
	lingerFor    = 500 * time.Millisecond
)

// refuse answers a connection past the cap. Closing a socket whose
// client's request is still unread makes the kernel reset it, and the
// client may lose the 503 with it: so the answer is sent, the sending
// side shut, and the request drained briefly before closing, for a
// bounded number of connections at a time (the others are just closed).
func (l *limitListener) refuse(c net.Conn) {
	if !l.plain {
		c.Close()
		return
	}
	// A fresh socket's send buffer takes these bytes without blocking;
	// the deadline is a guard all the same.
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(tooMany)
	tc, ok := c.(*net.TCPConn)
	if !ok {
		c.Close()
		return
	}
	select {
	case l.lingering <- struct{}{}:
	default:
		c.Close()
		return
	}
	tc.CloseWrite()
	go func() {
		defer func() { <-l.lingering }()
		c.SetReadDeadline(time.Now().Add(lingerFor))
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
		c.Close()
	}()
}

var tooMany = func() []byte {
	body := "too many connections to clrspy serve (--max-connections); retry later\n"
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nRetry-After: 5\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}()

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
		if l.shedIdle() {
			if lc := l.admit(c); lc != nil {
				return lc, nil
			}
		}
		l.refuse(c)
		if l.refused != nil {
			l.refused()
		}
	}
}

// admit takes a slot for c (nil: none free).
func (l *limitListener) admit(c net.Conn) *limitConn {
	select {
	case l.sem <- struct{}{}:
	default:
		return nil
	}
	lc := &limitConn{Conn: c, l: l, state: http.StateNew, since: time.Now()}
	l.mu.Lock()
	l.conns[lc] = struct{}{}
	l.mu.Unlock()
	return lc
}

type limitConn struct {
	net.Conn
	l     *limitListener
	once  sync.Once
	mu    sync.Mutex
	state http.ConnState
	since time.Time
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		<-c.l.sem
	})
	return err
}
