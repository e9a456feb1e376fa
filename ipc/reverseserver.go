package ipc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clrspy/clrspy/internal/procfs"
)

// ReverseServer is clrspy's one reverse diagnostic port type: a port that
// many runtimes connect to (dotnet-monitor's listen mode; ListenReverseAt)
// or the private port of one program clrspy starts (launch mode;
// ListenReverse and AcceptOnly). Every runtime started with
// DOTNET_DiagnosticPorts=PATH connects, sends its advertise (runtime cookie
// and pid) and waits for one command on that connection; after each command
// it connects again for the next. The server tells runtimes apart by their
// cookie: Accept yields each new one once, as a ReverseRuntime whose Client
// sends its commands over that runtime's own connections.
//
// A runtime's idle connection is watched: when the runtime hangs it up (it
// exited), the runtime is Gone and forgotten. A runtime that dies between
// commands (with no idle connection) is given up after ReconnectTimeout
// without one; should it connect again later, it is taken back silently
// (not accepted a second time). Each runtime costs one file descriptor and
// one goroutine while it waits between commands.
type ReverseServer struct {
	Path string
	// DialTimeout bounds the wait for a runtime's next connection when a
	// command needs one (0: 10 s). The runtime reconnects within about
	// 500 ms of its previous command. Set it before the first command, or
	// later with SetDialTimeout.
	DialTimeout time.Duration
	// ReconnectTimeout is how long a runtime may stay without an idle
	// connection before it is taken for gone (0: 10 s; a live runtime
	// reconnects within 500 ms of its previous command).
	ReconnectTimeout time.Duration
	// MaxRuntimes caps the runtimes connected at once (0: 1024) and
	// MaxPerUser those of one user (by the kernel's peer credentials; 0:
	// 256); a new runtime past either is refused (RejectTotal,
	// RejectUser). The total is also kept under what the file descriptor
	// limit allows with FDReserve descriptors (0: 512) left for the rest
	// of the program (the HTTP side, its files): each runtime holds one
	// connection between commands and one per session. Set them before
	// the first runtime connects.
	MaxRuntimes, MaxPerUser, FDReserve int

	// greeting bounds the connections whose advertise is still awaited
	// (maxGreeting; past it a connection is closed at once).
	greeting chan struct{}

	ln *net.UnixListener
	// dirfd is the port's directory; base the socket's name there; ino its
	// inode (Close removes the file only if it is still this one).
	dirfd int
	base  string
	ino   uint64
	// tmpdir is ListenReverse's private directory, removed by Close.
	tmpdir string

	mu       sync.Mutex
	runtimes map[[16]byte]*ReverseRuntime
	queue    []*ReverseRuntime // new runtimes not yet accepted
	// given up: runtimes taken for gone without a hang-up, by cookie (a
	// bounded memory, so they are not accepted twice).
	givenUp  map[[16]byte]bool
	givenUpQ [][16]byte
	// rejected counts connections refused, by reason (see Rejected).
	rejected map[string]uint64
	ready    chan struct{} // closed and replaced when queue grows
	closed   bool
	done     chan struct{}
}

// ReverseRuntime is one runtime connected to a ReverseServer.
type ReverseRuntime struct {
	Advertise
	// Peer is who the runtime's first connection came from, by the
	// kernel's word (SO_PEERCRED), not the runtime's.
	Peer Peer
	// Client sends commands to this runtime over its reverse connections.
	Client *Client

	srv    *ReverseServer
	mu     sync.Mutex
	idle   *idleConn
	avail  chan struct{} // closed and replaced when idle is set
	gone   chan struct{}
	isGone bool
	// since is when the runtime was last left without an idle connection.
	since time.Time
}

// idleConn is a runtime's connection waiting for a command, watched for a
// hang-up until a command takes it.
type idleConn struct {
	c       net.Conn
	taken   bool          // guarded by the runtime's mu
	watched chan struct{} // closed when the watcher has let go
}

// ListenReverseAt creates a reverse diagnostic port at path. A stale
// socket file there (nothing listening) is replaced; a live one, or any
// other file, is an error. mode sets the socket file's permissions (0:
// 0600, as the runtime's own sockets: only this user and root may
// connect).
//
// Nothing is done by a path another user could swap for a symlink between
// two calls: the port's directory is resolved and opened once and checked
// on that descriptor; the socket is bound in a fresh private
// directory inside it (mode 0700: no one else may enter), given its mode
// there, and renamed into place relative to the descriptor, never over a
// file that appeared meanwhile. A directory that other users may write to
// is refused unless it is sticky (as /tmp), where they cannot remove or
// rename what is ours, and a file already at path must then be ours too.
// A missing last directory is made (0755: the way to use a shared volume
// whose root anyone may write to is a path one directory below it).
func ListenReverseAt(path string, mode os.FileMode) (*ReverseServer, error) {
	if len(path) >= maxSunPath {
		return nil, fmt.Errorf("diagnostic port %s: %d bytes, over the %d-byte limit of Unix socket paths", path, len(path), maxSunPath-1)
	}
	if mode == 0 {
		mode = 0o600
	}
	dirfd, base, err := openPortDir(path)
	if err != nil {
		return nil, fmt.Errorf("diagnostic port %s: %w", path, err)
	}
	ln, ino, err := bindPort(dirfd, base, path, mode)
	if err != nil {
		unix.Close(dirfd)
		return nil, fmt.Errorf("diagnostic port %s: %w", path, err)
	}
	s := &ReverseServer{Path: path, ln: ln, dirfd: dirfd, base: base, ino: ino, runtimes: make(map[[16]byte]*ReverseRuntime),
		givenUp: make(map[[16]byte]bool), rejected: make(map[string]uint64), ready: make(chan struct{}), done: make(chan struct{}),
		greeting: make(chan struct{}, maxGreeting)}
	go s.serve()
	go s.janitor()
	return s, nil
}

// openPortDir opens the port's directory (made when missing, never
// followed through a symlink as the last component) and checks it on the
// descriptor: owned by this user or root, and not writable by others
// unless sticky.
func openPortDir(path string) (int, string, error) {
	dir, base := filepath.Split(path)
	if base == "" || base == "." || base == ".." {
		return -1, "", errors.New("not a file name")
	}
	dir = filepath.Clean(dir)
	// A symlink in the path (/var/run is one) is resolved once, here:
	// what is opened and checked below is the directory it named then.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	parent, last := filepath.Split(dir)
	if last == "" {
		parent, last = "/", "."
	}
	if parent == "" {
		parent = "."
	}
	pfd, err := unix.Open(parent, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", err
	}
	defer unix.Close(pfd)
	unix.Mkdirat(pfd, last, 0o755)
	fd, err := unix.Openat(pfd, last, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, "", fmt.Errorf("%s is not a directory (a symlink is not followed)", dir)
		}
		return -1, "", err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, "", err
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		unix.Close(fd)
		return -1, "", fmt.Errorf("directory %s belongs to another user (uid %d), who could replace the port", dir, st.Uid)
	}
	if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 {
		unix.Close(fd)
		return -1, "", fmt.Errorf("directory %s is writable by other users and not sticky (mode %04o): they could replace the port; use a directory only this user may write to, a path one directory below it, or make it sticky (chmod +t)", dir, st.Mode&0o7777)
	}
	return fd, base, nil
}

// bindPort makes the listening socket base in the directory dirfd with
// mode: bound in a private directory, renamed into place. It returns the
// socket file's inode, so that Close removes only that file.
func bindPort(dirfd int, base, path string, mode os.FileMode) (*net.UnixListener, uint64, error) {
	var st unix.Stat_t
	stale := false
	if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			return nil, 0, errors.New("a file that is not a socket is in the way")
		}
		if int(st.Uid) != os.Geteuid() {
			return nil, 0, fmt.Errorf("a socket of another user (uid %d) is in the way", st.Uid)
		}
		c, err := net.DialTimeout("unix", fmt.Sprintf("/proc/self/fd/%d/%s", dirfd, base), time.Second)
		if err == nil {
			c.Close()
			return nil, 0, errors.New("in use (another server listens on it)")
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, 0, err
		}
		stale = true
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	priv := ".clrspy-" + hex.EncodeToString(rnd[:])
	if err := unix.Mkdirat(dirfd, priv, 0o700); err != nil {
		return nil, 0, err
	}
	defer unix.Unlinkat(dirfd, priv, unix.AT_REMOVEDIR)
	pfd, err := unix.Openat(dirfd, priv, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, err
	}
	defer unix.Close(pfd)
	// Bound through the descriptor's /proc link: the name cannot lead
	// anywhere else.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: fmt.Sprintf("/proc/self/fd/%d/s", pfd), Net: "unix"})
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return nil, 0, errno
		}
		return nil, 0, err
	}
	// The name the listener knows is gone once renamed; Close removes the
	// socket at path itself, when it is still this one.
	ln.SetUnlinkOnClose(false)
	fail := func(err error) (*net.UnixListener, uint64, error) {
		unix.Unlinkat(pfd, "s", 0)
		ln.Close()
		return nil, 0, err
	}
	if err := unix.Fchmodat(pfd, "s", uint32(mode.Perm()), 0); err != nil {
		return fail(err)
	}
	if stale {
		unix.Unlinkat(dirfd, base, 0)
	}
	// Never over a file that appeared since the check.
	if err := unix.Renameat2(pfd, "s", dirfd, base, unix.RENAME_NOREPLACE); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return fail(errors.New("a file appeared in the way while the port was made"))
		}
		return fail(err)
	}
	if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		ln.Close()
		return nil, 0, err
	}
	return ln, st.Ino, nil
}

func (s *ReverseServer) reconnectTimeout() time.Duration {
	if s.ReconnectTimeout > 0 {
		return s.ReconnectTimeout
	}
	return 10 * time.Second
}

// janitor gives up runtimes left without an idle connection too long.
func (s *ReverseServer) janitor() {
	tick := time.NewTicker(s.reconnectTimeout() / 4)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		var stale []*ReverseRuntime
		for _, r := range s.runtimes {
			r.mu.Lock()
			if r.idle == nil && !r.since.IsZero() && time.Since(r.since) > s.reconnectTimeout() {
				stale = append(stale, r)
			}
			r.mu.Unlock()
		}
		for _, r := range stale {
			s.givenUp[r.Cookie] = true
			s.givenUpQ = append(s.givenUpQ, r.Cookie)
			if len(s.givenUpQ) > maxGivenUp {
				delete(s.givenUp, s.givenUpQ[0])
				s.givenUpQ = s.givenUpQ[1:]
			}
		}
		s.mu.Unlock()
		for _, r := range stale {
			r.setGone()
		}
	}
}

// maxGivenUp bounds the cookies of given-up runtimes remembered.
const maxGivenUp = 4096

// EnvVar is the environment entry that makes a runtime connect here and
// wait, suspended, for ResumeRuntime.
func (s *ReverseServer) EnvVar() string {
	return "DOTNET_DiagnosticPorts=" + s.Path + ",connect,suspend"
}

func (s *ReverseServer) dialTimeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.DialTimeout > 0 {
		return s.DialTimeout
	}
	return 10 * time.Second
}

// SetDialTimeout changes DialTimeout while commands may run.
func (s *ReverseServer) SetDialTimeout(d time.Duration) {
	s.mu.Lock()
	s.DialTimeout = d
	s.mu.Unlock()
}

// serve accepts connections until Close.
func (s *ReverseServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return
			}
			// EMFILE and the like: back off rather than spin.
			time.Sleep(100 * time.Millisecond)
			continue
		}
		select {
		case s.greeting <- struct{}{}:
		default:
			s.reject(c, RejectBusy)
			continue
		}
		go func() {
			defer func() { <-s.greeting }()
			s.greet(c)
		}()
	}
}

// maxGreeting bounds the connections awaiting their advertise at once
// (each is given replyTimeout to send it).
const maxGreeting = 256

// limits are the caps in force: total runtimes, per user.
func (s *ReverseServer) limits() (total, perUser int) {
	total, perUser = s.MaxRuntimes, s.MaxPerUser
	if total <= 0 {
		total = 1024
	}
	if perUser <= 0 {
		perUser = 256
	}
	reserve := s.FDReserve
	if reserve <= 0 {
		reserve = 512
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && rl.Cur < 1<<30 {
		total = min(total, max(1, (int(rl.Cur)-reserve)/2))
	}
	return total, min(perUser, total)
}

// overCapLocked says why a new runtime of peer is refused ("": it is
// not), s.mu held.
func (s *ReverseServer) overCapLocked(peer Peer) string {
	total, perUser := s.limits()
	if len(s.runtimes) >= total {
		return RejectTotal
	}
	n := 0
	for _, r := range s.runtimes {
		if r.Peer.Uid == peer.Uid {
			n++
		}
	}
	if n >= perUser {
		return RejectUser
	}
	return ""
}

// Peer is the process at the other end of a connection as the kernel
// knows it (SO_PEERCRED at connect time), in clrspy's namespaces.
type Peer struct {
	// Pid is the process's pid in clrspy's pid namespace; 0 when it is not
	// visible there (clrspy in a container, the runtime outside it).
	Pid int
	// Uid and Gid are its credentials as clrspy's user namespace maps them
	// (65534 when unmapped).
	Uid, Gid int
}

// peerOf reads the connection's peer credentials.
func peerOf(c net.Conn) (Peer, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Peer{}, errors.New("not a Unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return Peer{}, err
	}
	if cerr != nil {
		return Peer{}, cerr
	}
	return Peer{Pid: int(cred.Pid), Uid: int(cred.Uid), Gid: int(cred.Gid)}, nil
}

// innerPid is pid's pid in its own (innermost) pid namespace: the last
// value of NSpid in /proc/PID/status (pid itself before Linux 4.1).
func innerPid(pid int) (int, error) {
	b, err := procfs.Status(pid)
	if err != nil {
		return 0, err
	}
	if f := procfs.StatusField(b, "NSpid"); len(f) > 0 {
		return strconv.Atoi(f[len(f)-1])
	}
	return pid, nil
}

// Rejection reasons (Rejected's keys).
const (
	// RejectPid: the advertised pid is not the connecting process's pid
	// in its own pid namespace.
	RejectPid = "pid_mismatch"
	// RejectCookie: a connection with a known runtime's cookie came from
	// another process.
	RejectCookie = "cookie_mismatch"
	// RejectPeer: the peer's credentials could not be read (it exited).
	RejectPeer = "peer_unknown"
	// RejectTotal: a new runtime past MaxRuntimes (or what the file
	// descriptor limit leaves); RejectUser: past MaxPerUser for its
	// user; RejectBusy: a connection while maxGreeting others had not
	// yet sent their advertise.
	RejectTotal = "too_many_runtimes"
	RejectUser  = "too_many_for_user"
	RejectBusy  = "too_many_connections"
)

// verify checks a runtime's advertised pid against the connection's peer:
// a runtime advertises its pid in its own pid namespace, which is the last
// of the pids the kernel lists for the peer. A peer not visible in
// clrspy's pid namespace (Pid 0) cannot be checked: it is taken, and
// nothing per-pid is ever aimed at it (its Peer.Pid stays 0).
func verify(a Advertise, p Peer) string {
	if p.Pid == 0 {
		return ""
	}
	inner, err := innerPid(p.Pid)
	if err != nil {
		return RejectPeer
	}
	if uint64(inner) != a.Pid {
		return RejectPid
	}
	return ""
}

// Rejected is the number of connections refused so far, by reason
// (RejectPid, RejectCookie, RejectPeer): a process that claimed another's
// pid or cookie.
func (s *ReverseServer) Rejected() map[string]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]uint64, len(s.rejected))
	for k, v := range s.rejected {
		m[k] = v
	}
	return m
}

func (s *ReverseServer) reject(c net.Conn, reason string) {
	c.Close()
	s.mu.Lock()
	s.rejected[reason]++
	s.mu.Unlock()
}

// greet reads a connection's advertise and files the connection under its
// runtime, once the kernel's peer credentials confirm the pid it claims.
func (s *ReverseServer) greet(c net.Conn) {
	a, err := readAdvertise(c)
	if err != nil {
		c.Close()
		return
	}
	peer, err := peerOf(c)
	if err != nil {
		s.reject(c, RejectPeer)
		return
	}
	if why := verify(a, peer); why != "" {
		s.reject(c, why)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	r := s.runtimes[a.Cookie]
	if r != nil && (r.Peer.Pid != peer.Pid || r.Peer.Uid != peer.Uid) {
		// The cookie is the runtime's secret only while nothing leaks it:
		// a connection is filed under a runtime only from that process
		// (and user: the pid is 0 for every peer not visible here).
		s.rejected[RejectCookie]++
		s.mu.Unlock()
		c.Close()
		return
	}
	if r == nil && !s.givenUp[a.Cookie] {
		if why := s.overCapLocked(peer); why != "" {
			s.rejected[why]++
			s.mu.Unlock()
			c.Close()
			return
		}
	}
	if r == nil {
		r = &ReverseRuntime{Advertise: a, Peer: peer, srv: s, avail: make(chan struct{}), gone: make(chan struct{})}
		r.Client = &Client{Pid: int(a.Pid), Socket: s.Path, dial: r.take}
		s.runtimes[a.Cookie] = r
		if s.givenUp[a.Cookie] {
			// Taken for gone, yet alive: kept (and its connections
			// watched), not accepted again.
			delete(s.givenUp, a.Cookie)
		} else {
			s.queue = append(s.queue, r)
			close(s.ready)
			s.ready = make(chan struct{})
		}
	}
	s.mu.Unlock()
	r.offer(c)
}

// Accept returns the next runtime that connected for the first time. It
// blocks until one does or the server is closed (net.ErrClosed).
func (s *ReverseServer) Accept() (*ReverseRuntime, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, net.ErrClosed
		}
		if len(s.queue) > 0 {
			r := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return r, nil
		}
		ready := s.ready
		s.mu.Unlock()
		select {
		case <-ready:
		case <-s.done:
		}
	}
}

// Runtimes is the number of runtimes connected now.
func (s *ReverseServer) Runtimes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.runtimes)
}

// Close stops listening, removes the socket and drops every runtime's
// idle connection (a runtime then keeps trying to reconnect, as it does
// when no tool listens; sessions already streaming go on).
func (s *ReverseServer) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	rts := make([]*ReverseRuntime, 0, len(s.runtimes))
	for _, r := range s.runtimes {
		rts = append(rts, r)
	}
	s.mu.Unlock()
	err := s.ln.Close()
	// Remove the socket only when the file there is still this one.
	var st unix.Stat_t
	if unix.Fstatat(s.dirfd, s.base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Ino == s.ino {
		unix.Unlinkat(s.dirfd, s.base, 0)
	}
	unix.Close(s.dirfd)
	if s.tmpdir != "" {
		os.RemoveAll(s.tmpdir)
	}
	for _, r := range rts {
		r.drop()
	}
	return err
}

// offer makes c the runtime's idle connection (an older unused one is
// closed) and watches it for a hang-up.
func (r *ReverseRuntime) offer(c net.Conn) {
	ic := &idleConn{c: c, watched: make(chan struct{})}
	r.mu.Lock()
	if r.isGone {
		r.mu.Unlock()
		c.Close()
		return
	}
	old := r.idle
	r.idle = ic
	close(r.avail)
	r.avail = make(chan struct{})
	r.mu.Unlock()
	if old != nil {
		old.c.Close()
	}
	go r.watch(ic)
}

// watch waits on an idle connection. The runtime never writes on one
// before it received a command, so a read that returns means either a
// command took the connection (its deadline was set to interrupt the read)
// or the runtime hung up: it exited.
func (r *ReverseRuntime) watch(ic *idleConn) {
	var b [1]byte
	_, err := ic.c.Read(b[:])
	r.mu.Lock()
	taken := ic.taken
	current := r.idle == ic
	if !taken && current {
		r.idle = nil
		r.since = time.Now()
	}
	r.mu.Unlock()
	close(ic.watched)
	if taken {
		return
	}
	ic.c.Close()
	var ne net.Error
	if current && !(errors.As(err, &ne) && ne.Timeout()) {
		// Hung up (or wrote out of turn): the runtime is gone.
		r.setGone()
	}
}

func (r *ReverseRuntime) setGone() {
	r.mu.Lock()
	if r.isGone {
		r.mu.Unlock()
		return
	}
	r.isGone = true
	close(r.gone)
	r.mu.Unlock()
	s := r.srv
	s.mu.Lock()
	if s.runtimes[r.Cookie] == r {
		delete(s.runtimes, r.Cookie)
	}
	s.mu.Unlock()
}

// drop closes the idle connection (server shutdown).
func (r *ReverseRuntime) drop() {
	r.mu.Lock()
	ic := r.idle
	r.idle = nil
	r.mu.Unlock()
	if ic != nil {
		ic.c.Close()
	}
	r.setGone()
}

// Gone is closed once the runtime hung up its idle connection (it exited)
// or the server closed.
func (r *ReverseRuntime) Gone() <-chan struct{} { return r.gone }

// take hands the runtime's next connection to a command (the Client's
// dial).
func (r *ReverseRuntime) take() (net.Conn, error) {
	timer := time.NewTimer(r.srv.dialTimeout())
	defer timer.Stop()
	for {
		r.mu.Lock()
		if ic := r.idle; ic != nil {
			r.idle = nil
			r.since = time.Now()
			ic.taken = true
			r.mu.Unlock()
			// Interrupt the watcher's read, wait until it let go, then
			// hand the connection over with no deadline.
			ic.c.SetReadDeadline(time.Unix(1, 0))
			<-ic.watched
			ic.c.SetReadDeadline(time.Time{})
			return ic.c, nil
		}
		if r.isGone {
			r.mu.Unlock()
			return nil, &AttachError{int(r.Pid), "the runtime hung up its diagnostic port connection (exited)"}
		}
		avail := r.avail
		r.mu.Unlock()
		select {
		case <-avail:
		case <-r.gone:
		case <-timer.C:
			return nil, &AttachError{int(r.Pid), fmt.Sprintf("the runtime did not connect to %s within %v", r.srv.Path, r.srv.dialTimeout())}
		}
	}
}
