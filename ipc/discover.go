package ipc

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clrspy/clrspy/internal/procfs"
)

// maxSunPath is the size of sockaddr_un.sun_path on Linux, NUL included.
const maxSunPath = 108

// Endpoint is where a process's diagnostics server listens.
type Endpoint struct {
	Pid    int    // process id in clrspy's pid namespace
	NsPid  int    // process id inside the target's own pid namespace
	Socket string // path of the socket as clrspy reaches it
	Owner  int    // uid the process runs as (the socket has the same owner)
	// Notice, when set, is one line the caller should show the user once:
	// clrspy runs as root and attaches to another user's process.
	Notice string
}

// AttachError says why clrspy cannot attach to a process. Its message is
// one line meant for the user.
type AttachError struct {
	Pid    int
	Reason string
}

func (e *AttachError) Error() string { return fmt.Sprintf("pid %d: %s", e.Pid, e.Reason) }

// Kind classifies the cause in one word, for counting (clrspy serve's
// clrspy_attach_errors_total): "gone" (no such process, or it exited),
// "permission", "disabled" (diagnostics turned off in the process),
// "no_socket" (no diagnostics socket: not .NET, not started yet, or
// removed), "refused" (a stale socket nothing listens on), "timeout" (a
// reverse-port runtime did not connect in time) or "other".
func (e *AttachError) Kind() string {
	r := e.Reason
	switch {
	case strings.Contains(r, "no such process"), strings.Contains(r, "(exited)"):
		return "gone"
	case strings.Contains(r, "permission denied"), strings.Contains(r, " is owned by "), strings.Contains(r, "belongs to "):
		return "permission"
	case strings.Contains(r, "disabled in this process"):
		return "disabled"
	case strings.Contains(r, "no diagnostics socket"):
		return "no_socket"
	case strings.Contains(r, "nothing listens"):
		return "refused"
	case strings.Contains(r, "did not connect"):
		return "timeout"
	}
	return "other"
}

// Find locates the diagnostics socket of pid. The error is an *AttachError
// naming the cause: no such process, not a .NET process, diagnostics
// disabled, or a socket owned by another user.
func Find(pid int) (*Endpoint, error) {
	if pid <= 0 {
		return nil, &AttachError{pid, "not a valid process id"}
	}
	dir := procfs.Dir(pid)
	if !procfs.Exists(pid) {
		return nil, &AttachError{pid, "no such process"}
	}
	nspid, inNs := procfs.NSpid(pid)
	tmp, envErr := targetTmpDir(pid)
	base := "/"
	if inNs || !sameMountNs(pid) {
		// The socket lives in the target's mount namespace; reach it
		// through its root (needs the rights to do so, i.e. root).
		base = filepath.Join(dir, "root")
	}
	sdir := filepath.Join(base, tmp)
	key := startTicks(pid)
	sock, err := socketIn(sdir, nspid, key)
	if err != nil {
		if os.IsPermission(err) {
			return nil, &AttachError{pid, fmt.Sprintf("cannot search %s for its diagnostics socket: permission denied", sdir)}
		}
		return nil, &AttachError{pid, err.Error()}
	}
	if sock != "" && key != "" && filepath.Base(sock) != fmt.Sprintf("dotnet-diagnostic-%d-%s-socket", nspid, key) {
		// Not named for this process's start: the socket of an earlier
		// process with the same pid. A process known not to run .NET, or
		// with its diagnostics turned off, has none of its own.
		if isNet, known := isDotnet(pid); known && !isNet || diagnosticsOff(pid) {
			sock = ""
		}
	}
	if sock == "" {
		return nil, &AttachError{pid, noSocketReason(pid, sdir, envErr)}
	}
	owner := procOwner(pid)
	if err := checkOwner(sock, owner); err != nil {
		return nil, &AttachError{pid, err.Error()}
	}
	ep := &Endpoint{Pid: pid, NsPid: nspid, Socket: sock, Owner: owner}
	if os.Geteuid() == 0 && owner != 0 {
		ep.Notice = fmt.Sprintf("pid %d runs as %s; clrspy runs as root and attaches to it", pid, ownerName(owner))
	}
	return ep, nil
}

// sameMountNs reports whether pid shares clrspy's mount namespace (true
// when that cannot be read: then only the plain path can work anyway).
func sameMountNs(pid int) bool {
	mine, theirs := procfs.Namespace(procfs.Self, "mnt"), procfs.Namespace(pid, "mnt")
	return mine == "" || theirs == "" || mine == theirs
}

// targetTmpDir is the target's $TMPDIR (the runtime creates its socket
// there), "/tmp" when unset; the error says environ was unreadable.
func targetTmpDir(pid int) (string, error) {
	b, err := procfs.Environ(pid)
	if err != nil {
		return "/tmp", err
	}
	if v, _ := procfs.EnvValue(b, "TMPDIR"); v != "" {
		return v, nil
	}
	return "/tmp", nil
}

// envFlag returns the value of a DOTNET_/COMPlus_ variable of pid.
func envFlag(pid int, name string) (string, bool) {
	b, err := procfs.Environ(pid)
	if err != nil {
		return "", false
	}
	return procfs.RuntimeSetting(b, name)
}

// startTicks is field 22 of /proc/PID/stat: the process start time in
// clock ticks since boot, which the runtime uses as the socket's key.
func startTicks(pid int) string {
	t, err := procfs.StartTicks(pid)
	if err != nil {
		return ""
	}
	return strconv.FormatInt(t, 10)
}

// socketIn finds dotnet-diagnostic-NSPID-KEY-socket in dir: the one whose
// key is the process start time, else the newest (as the official client
// does). "" when there is none.
func socketIn(dir string, nspid int, key string) (string, error) {
	prefix := fmt.Sprintf("dotnet-diagnostic-%d-", nspid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return "", nil
		}
		return "", err
	}
	var best string
	var bestTime time.Time
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, "-socket") {
			continue
		}
		if key != "" && n == prefix+key+"-socket" {
			return filepath.Join(dir, n), nil
		}
		if info, err := e.Info(); err == nil && (best == "" || info.ModTime().After(bestTime)) {
			best, bestTime = filepath.Join(dir, n), info.ModTime()
		}
	}
	return best, nil
}

// diagnosticsOff reports whether pid's environment turns its diagnostic
// port off (DOTNET_EnableDiagnostics=0 or DOTNET_EnableDiagnostics_IPC=0).
func diagnosticsOff(pid int) bool {
	for _, name := range []string{"EnableDiagnostics", "EnableDiagnostics_IPC"} {
		if v, ok := envFlag(pid, name); ok && v == "0" {
			return true
		}
	}
	return false
}

// noSocketReason explains why pid has no diagnostics socket.
func noSocketReason(pid int, dir string, envErr error) string {
	if v, ok := envFlag(pid, "EnableDiagnostics"); ok && v == "0" {
		return "diagnostics are disabled in this process (DOTNET_EnableDiagnostics=0)"
	}
	if v, ok := envFlag(pid, "EnableDiagnostics_IPC"); ok && v == "0" {
		return "the diagnostic port is disabled in this process (DOTNET_EnableDiagnostics_IPC=0)"
	}
	isNet, known := isDotnet(pid)
	nspid, _ := procfs.NSpid(pid)
	// The path as the runtime sees it: dir without the /proc/PID/root prefix.
	inside := strings.TrimPrefix(dir, procfs.Dir(pid)+"/root")
	want := filepath.Join(inside, fmt.Sprintf("dotnet-diagnostic-%d-%s-socket", nspid, startTicks(pid)))
	switch {
	case known && !isNet:
		return fmt.Sprintf("%s is not a .NET process (no CoreCLR runtime loaded, no diagnostics socket in %s)", comm(pid), dir)
	case len(want) >= maxSunPath:
		return fmt.Sprintf("its diagnostics socket %s would be %d bytes, over the %d-byte limit of Unix socket paths, so the runtime could not create it: start the process with a shorter TMPDIR", want, len(want), maxSunPath-1)
	case envErr != nil && os.IsPermission(envErr) && os.Geteuid() != 0 && procOwner(pid) != os.Geteuid():
		return fmt.Sprintf("no diagnostics socket in %s, and the process belongs to %s, so its TMPDIR cannot be read: run clrspy as that user or as root", dir, ownerName(procOwner(pid)))
	case isNet:
		return fmt.Sprintf("%s runs .NET but has no diagnostics socket in %s (removed, or the diagnostic port disabled by configuration)", comm(pid), dir)
	}
	return fmt.Sprintf("%s has no diagnostics socket in %s: not a .NET process, or one whose runtime has not started yet", comm(pid), dir)
}

// isDotnet reports whether pid has the CoreCLR runtime mapped; known is
// false when its maps cannot be read.
func isDotnet(pid int) (isNet, known bool) { return procfs.MapsPath(pid, "libcoreclr.so") }

// comm is the process name from /proc/PID/comm, "pid N" when unreadable.
func comm(pid int) string {
	if c := procfs.Comm(pid, 0); c != "" {
		return c
	}
	return fmt.Sprintf("pid %d", pid)
}

// procOwner is the effective uid of pid, -1 when it cannot be read. The
// status file says it even for a process that is not dumpable (whose
// /proc entries belong to root); the directory's owner is the fallback.
func procOwner(pid int) int {
	if uid, ok := procfs.Euid(pid); ok {
		return uid
	}
	st, err := os.Stat(procfs.Dir(pid))
	if err != nil {
		return -1
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}

func ownerName(uid int) string {
	if uid < 0 {
		return "another user"
	}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("user %s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// checkOwner refuses, in one line, a socket clrspy must not or cannot
// use. The runtime creates its socket as the process's user, mode 0600, in
// a directory (usually /tmp) where anyone may create files: a socket owned
// by anyone else, or anything but a socket (a symbolic link), was put there
// by someone else and is refused whoever clrspy runs as (root included,
// who could otherwise be made to talk to, and save the data of, a listener
// that user controls). A genuine socket of another user is refused to a
// non-root clrspy, which could not connect anyway.
func checkOwner(sock string, procUid int) error {
	st, err := os.Lstat(sock)
	if err != nil {
		if os.IsPermission(err) {
			return fmt.Errorf("cannot reach the diagnostics socket %s: permission denied", sock)
		}
		return err
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if st.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s is not a socket but a %s owned by %s: refusing it (another user may have planted it)",
			sock, fileKind(st.Mode()), ownerName(int(s.Uid)))
	}
	if procUid < 0 {
		return fmt.Errorf("cannot tell which user the process runs as, so the diagnostics socket %s (owned by %s) cannot be trusted", sock, ownerName(int(s.Uid)))
	}
	if int(s.Uid) != procUid {
		return fmt.Errorf("the diagnostics socket %s is owned by %s but the process runs as %s: refusing it (another user may have planted it)",
			sock, ownerName(int(s.Uid)), ownerName(procUid))
	}
	me := os.Geteuid()
	if me != 0 && int(s.Uid) != me {
		return fmt.Errorf("the diagnostics socket %s is owned by %s; clrspy runs as %s: run it as that user or as root",
			sock, ownerName(int(s.Uid)), ownerName(me))
	}
	return nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	}
	return "special file"
}

// checkPeer verifies, once connected, that the listening end is the target
// process itself (the kernel records who called listen): it closes the gap
// between checkOwner and connect, in which a socket could be swapped in a
// directory without the sticky bit.
func checkPeer(c net.Conn, pid, uid int, sock string) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return nil // no credentials to compare (not expected on Linux)
	}
	// A pid of 0 is a listener in a pid namespace clrspy cannot see into
	// (the kernel cannot name it): only the uid can be compared then.
	if int(cred.Uid) != uid || (cred.Pid != 0 && int(cred.Pid) != pid) {
		return fmt.Errorf("the process listening on %s is pid %d of %s, not pid %d of %s: refusing it (another user may have planted it)",
			sock, cred.Pid, ownerName(int(cred.Uid)), pid, ownerName(uid))
	}
	return nil
}

// dialUnix connects to a Unix socket, working around the 108-byte limit of
// sun_path by naming the socket through /proc/self/fd of its directory.
func dialUnix(path string, timeout time.Duration) (net.Conn, error) {
	if len(path) < maxSunPath {
		return net.DialTimeout("unix", path, timeout)
	}
	d, err := os.OpenFile(filepath.Dir(path), oPath|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("socket path %s is %d bytes, over the %d-byte limit, and its directory cannot be opened: %w", path, len(path), maxSunPath-1, err)
	}
	defer d.Close()
	short := fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), filepath.Base(path))
	if len(short) >= maxSunPath {
		return nil, fmt.Errorf("socket path %s is %d bytes, over the %d-byte limit of Unix sockets", path, len(path), maxSunPath-1)
	}
	return net.DialTimeout("unix", short, timeout)
}

// Dial connects to the diagnostics server of pid.
func Dial(pid int) (*Client, error) {
	return dialWithin(pid, 0)
}

// dialWithin is Dial whose connects and replies each wait at most timeout
// (0: the defaults, 5 s to connect and replyTimeout for a reply).
func dialWithin(pid int, timeout time.Duration) (*Client, error) {
	ep, err := Find(pid)
	if err != nil {
		return nil, err
	}
	connect := 5 * time.Second
	if timeout > 0 {
		connect = timeout
	}
	return &Client{Pid: pid, Socket: ep.Socket, Notice: ep.Notice, timeout: timeout, dial: func() (net.Conn, error) {
		c, err := dialUnix(ep.Socket, connect)
		if err != nil {
			return nil, connectError(pid, ep.Socket, err)
		}
		if err := checkPeer(c, pid, ep.Owner, ep.Socket); err != nil {
			c.Close()
			return nil, &AttachError{pid, err.Error()}
		}
		return c, nil
	}}, nil
}

// connectError turns a failed connect into one line.
func connectError(pid int, sock string, err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &AttachError{pid, fmt.Sprintf("nothing listens on %s (a stale socket of a process that has exited?)", sock)}
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		owner := -1
		if st, e := os.Stat(sock); e == nil {
			if s, ok := st.Sys().(*syscall.Stat_t); ok {
				owner = int(s.Uid)
			}
		}
		return &AttachError{pid, fmt.Sprintf("permission denied connecting to %s (owned by %s)", sock, ownerName(owner))}
	}
	return &AttachError{pid, fmt.Sprintf("connecting to %s: %v", sock, err)}
}

// Process is one entry of Processes.
type Process struct {
	Pid         int
	Name        string // comm
	CommandLine string
	// Attachable is false when clrspy cannot open a session; Reason says
	// why.
	Attachable bool
	Reason     string
	// From ProcessInfo (empty when not attachable).
	RuntimeVersion string
	Arch           string
	OS             string
	Entrypoint     string
	Socket         string
	// NotAnswering: its runtime did not answer in time (busy, stopped,
	// hung, or not a runtime at all behind the socket).
	NotAnswering bool
}

// Processes lists the .NET processes visible in /proc: those with the
// CoreCLR runtime mapped or a diagnostics socket in their temp directory.
// Each is queried with ProcessInfo; a failure is kept as its Reason.
func Processes() ([]Process, error) {
	return ProcessesWithin(replyTimeout)
}

// ProcessesWithin is Processes with every process asked in parallel and
// each question bounded by timeout: it returns within about timeout
// however many processes stay mute. A .NET process that has not answered
// by then is listed, not attachable, with NotAnswering set; a process that
// answered is never dropped.
func ProcessesWithin(timeout time.Duration) ([]Process, error) {
	all, err := procfs.Pids()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var pids []int
	for _, pid := range all {
		if pid != self {
			pids = append(pids, pid)
		}
	}
	var mu sync.Mutex
	found := map[int]*Process{} // .NET processes, answered or not yet
	answered := map[int]bool{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16) // /proc reads are cheap; this bounds the fds
	for _, pid := range pids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p, ok := probe(pid, timeout, func(p Process) {
				mu.Lock()
				found[pid] = &p
				mu.Unlock()
			})
			mu.Lock()
			if ok {
				found[pid] = &p
				answered[pid] = true
			}
			mu.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout + 250*time.Millisecond):
		// Probes still under way hold a dial or a read that their own
		// deadline ends soon; what they found so far is listed.
	}
	mu.Lock()
	defer mu.Unlock()
	out := make([]Process, 0, len(found))
	for pid, p := range found {
		e := *p
		if !answered[pid] {
			e.Attachable, e.NotAnswering = false, true
			e.Reason = fmt.Sprintf("not answering (no reply within %v)", timeout)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pid < out[j].Pid })
	return out, nil
}

// probe decides whether pid is a .NET process and fills its entry;
// pending gets the entry once pid is known to be one, before the runtime
// is asked (timeout bounds each connect and reply).
func probe(pid int, timeout time.Duration, pending func(Process)) (Process, bool) {
	isNet, _ := isDotnet(pid)
	ep, ferr := Find(pid)
	if !isNet && ferr != nil {
		// A process clrspy cannot inspect (another user's) still counts
		// when a socket with its pid sits in the default temp directory.
		nspid, _ := procfs.NSpid(pid)
		s, _ := socketIn("/tmp", nspid, startTicks(pid))
		if s == "" || !strings.HasSuffix(s, "-"+startTicks(pid)+"-socket") {
			return Process{}, false
		}
	}
	p := Process{Pid: pid, Name: comm(pid), CommandLine: procfs.Cmdline(pid)}
	if ferr != nil {
		var ae *AttachError
		if errors.As(ferr, &ae) {
			p.Reason = ae.Reason
		} else {
			p.Reason = ferr.Error()
		}
		return p, true
	}
	p.Socket = ep.Socket
	pending(p)
	c, err := dialWithin(pid, timeout)
	if err == nil {
		var info *ProcessInfo
		info, err = c.ProcessInfo()
		if err == nil {
			p.Attachable = true
			p.RuntimeVersion, p.Arch, p.OS, p.Entrypoint = info.RuntimeVersion, info.Arch, info.OS, info.Entrypoint
			if info.CommandLine != "" {
				p.CommandLine = info.CommandLine
			}
			return p, true
		}
	}
	var ae *AttachError
	var ne net.Error
	switch {
	case errors.As(err, &ae):
		p.Reason = ae.Reason
	case errors.As(err, &ne) && ne.Timeout():
		p.NotAnswering = true
		p.Reason = fmt.Sprintf("not answering (no reply within %v)", timeout)
	default:
		p.Reason = err.Error()
	}
	return p, true
}

// FindByName returns the pid of the one .NET process called name: its
// process name, the base name of its executable, or its entry assembly (as
// in "dotnet app.dll").
func FindByName(name string) (int, error) {
	all, err := procfs.Pids()
	if err != nil {
		return 0, err
	}
	self := os.Getpid()
	var pids []int
	for _, pid := range all {
		if pid == self {
			continue
		}
		if !nameMatches(pid, name) {
			continue
		}
		if isNet, _ := isDotnet(pid); !isNet {
			if _, err := Find(pid); err != nil {
				continue
			}
		}
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	switch len(pids) {
	case 0:
		return 0, fmt.Errorf("no .NET process named %q (see clrspy ps)", name)
	case 1:
		return pids[0], nil
	}
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return 0, fmt.Errorf("%d .NET processes are named %q (pids %s): pick one with --pid", len(pids), name, strings.Join(s, ", "))
}

// NameMatches reports whether process pid is called name, as FindByName
// understands it: its process name, the base name of its executable, or
// its entry assembly (as in "dotnet app.dll").
func NameMatches(pid int, name string) bool { return nameMatches(pid, name) }

func nameMatches(pid int, name string) bool {
	if comm(pid) == name {
		return true
	}
	args := procfs.Args(pid)
	if len(args) == 0 {
		return false
	}
	if filepath.Base(args[0]) == name {
		return true
	}
	// "dotnet [options] app.dll": the first .dll argument names the app.
	for _, a := range args[1:] {
		if strings.HasSuffix(a, ".dll") {
			base := filepath.Base(a)
			return base == name || strings.TrimSuffix(base, ".dll") == name
		}
	}
	return false
}

// oPath is Linux's O_PATH: open a directory only to name it.
const oPath = 0x200000

// ProcessUID is the effective uid pid runs as, -1 when it cannot be read.
func ProcessUID(pid int) int { return procOwner(pid) }
