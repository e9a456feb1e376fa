package serve

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/clrspy/clrspy/internal/procfs"
)

// On a loopback listener without a token, the kernel says who connected:
// the TCP peer's socket is in /proc/net/tcp (or tcp6) with its owner's
// uid, its local address being the connection's remote one and the other
// way round. clrspy's own user and root read everything; another user
// reads only the processes that run as that user (their profiles, heap
// snapshots, triage and their rows of /targets), and gets 403 on what
// holds every process's data (/metrics, the live web view).

// peerKey keys a connection's peer in its context (Server's ConnContext).
type peerKey struct{}

// peerInfo is a connection's peer, looked up once.
type peerInfo struct {
	once sync.Once
	uid  int
	err  error
}

// restrictedKey keys the uid of a peer that may read its own processes
// only, in a request's context.
type restrictedKey struct{}

// connContext gives every connection its peerInfo, so the /proc lookup
// is done once per connection, not per request.
func connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, peerKey{}, &peerInfo{})
}

// requestPeerUID is the uid of the user whose socket sent r.
func requestPeerUID(r *http.Request) (int, error) {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return -1, errors.New("no local address")
	}
	lookup := func() (int, error) { return PeerUID(local.String(), r.RemoteAddr) }
	if pi, ok := r.Context().Value(peerKey{}).(*peerInfo); ok {
		pi.once.Do(func() { pi.uid, pi.err = lookup() })
		return pi.uid, pi.err
	}
	return lookup()
}

// PeerUID is the owner of the TCP socket at remote connected to local
// (both "host:port"), from /proc/net/tcp and /proc/net/tcp6: the user of
// a loopback client.
func PeerUID(local, remote string) (int, error) {
	l, err := procNetAddr(local)
	if err != nil {
		return -1, err
	}
	r, err := procNetAddr(remote)
	if err != nil {
		return -1, err
	}
	uid, found, err := procfs.TCPOwner(r, l)
	if err != nil {
		return -1, err
	}
	if !found {
		return -1, fmt.Errorf("no socket %s -> %s in /proc/net/tcp", remote, local)
	}
	return uid, nil
}

// procNetAddr spells a "host:port" as /proc/net/tcp does: the address's
// 32-bit words in host order (little-endian here), hex, then the port.
func procNetAddr(hostport string) (string, error) {
	ap, err := netipAddrPort(hostport)
	if err != nil {
		return "", err
	}
	ip, port := ap.IP, ap.Port
	var b strings.Builder
	words := ip.To4()
	if words == nil {
		words = ip.To16()
	}
	for i := 0; i+4 <= len(words); i += 4 {
		fmt.Fprintf(&b, "%08X", binary.LittleEndian.Uint32(words[i:i+4]))
	}
	fmt.Fprintf(&b, ":%04X", port)
	return b.String(), nil
}

func netipAddrPort(hostport string) (*net.TCPAddr, error) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	port, err := strconv.Atoi(p)
	if ip == nil || err != nil {
		return nil, fmt.Errorf("%q: not an address and port", hostport)
	}
	return &net.TCPAddr{IP: ip, Port: port}, nil
}

// privileged reports whether uid reads every process: root or clrspy's
// own user.
func privileged(uid int) bool { return uid == 0 || uid == os.Geteuid() }

// checkPeer applies the peer rule to r: nil when the request goes on
// (with its context marked when the peer may read its own processes
// only), else the status and line of the refusal.
func checkPeer(r *http.Request) (*http.Request, int, string) {
	uid, err := requestPeerUID(r)
	if err != nil {
		return nil, http.StatusForbidden, fmt.Sprintf("forbidden: cannot tell which user connected (%v); serve on loopback answers its own user and root, and others about their own processes", err)
	}
	if privileged(uid) {
		return r, 0, ""
	}
	switch p := r.URL.Path; p {
	case "/targets", "/debug/pprof/profile", "/debug/pprof/contention", "/debug/pprof/heap", "/triage", "/":
		if p == "/" && strings.Contains(r.Header.Get("Accept"), "text/html") {
			break
		}
		return r.WithContext(context.WithValue(r.Context(), restrictedKey{}, uid)), 0, ""
	}
	return nil, http.StatusForbidden, fmt.Sprintf("forbidden: uid %d may read only its own processes (pid endpoints and /targets); %s holds every process's data: clrspy's user (uid %d) and root only, or give serve --auth-token-file", uid, r.URL.Path, os.Geteuid())
}

// restrictedUID is the uid of a request's peer when it may read its own
// processes only (ok false: it reads everything).
func restrictedUID(r *http.Request) (int, bool) {
	uid, ok := r.Context().Value(restrictedKey{}).(int)
	return uid, ok
}

// peerAllowed reports whether r's peer may read t, answering 403 itself
// when not.
func (d *Daemon) peerAllowed(w http.ResponseWriter, r *http.Request, t *target) bool {
	uid, restricted := restrictedUID(r)
	if !restricted {
		return true
	}
	if o := t.Owner(); o == uid && o >= 0 {
		return true
	}
	http.Error(w, fmt.Sprintf("forbidden: pid %s is not a process of uid %d; only its own user, clrspy's user and root may read it", t.PidLabel(), uid), http.StatusForbidden)
	return false
}
