package source

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/clrspy/clrspy/ipc"
)

// Listener is a diagnostic port that runtimes connect to (listen mode, as
// dotnet-monitor's): a .NET process started with
// DOTNET_DiagnosticPorts=PATH (suspended at startup by default) connects,
// and Accept hands it over while it waits; Runtime.Open opens the session
// and resumes the runtime, so the session sees the process from its first
// GC on (the Listen kind of stream). Any number of runtimes may connect; each is identified by the
// cookie and pid it advertises, which the port checks against the
// connection's peer credentials (a mismatch is refused).
type Listener struct {
	srv *ipc.ReverseServer
}

// ListenAt creates the diagnostic port at path (a stale socket there is
// replaced) with file mode perm (0: 0600: only this user and root may
// connect).
func ListenAt(path string, perm os.FileMode) (*Listener, error) {
	srv, err := ipc.ListenReverseAt(path, perm)
	if err != nil {
		return nil, err
	}
	return &Listener{srv: srv}, nil
}

// Path is the socket's path.
func (l *Listener) Path() string { return l.srv.Path }

// EnvVar is the environment entry a runtime needs to connect here.
func (l *Listener) EnvVar() string { return l.srv.EnvVar() }

// Accept waits for the next runtime that connects for the first time.
// It returns net.ErrClosed once the listener is closed.
func (l *Listener) Accept() (*Runtime, error) {
	r, err := l.srv.Accept()
	if err != nil {
		return nil, err
	}
	return &Runtime{rt: r, Pid: int(r.Pid), Cookie: r.Cookie}, nil
}

// Rejected counts the connections refused because the kernel's peer
// credentials contradict what the connecting process claimed, by reason
// (ipc.RejectPid, ipc.RejectCookie, ipc.RejectPeer).
func (l *Listener) Rejected() map[string]uint64 { return l.srv.Rejected() }

// Close stops listening and removes the socket. Sessions already open go
// on.
func (l *Listener) Close() error { return l.srv.Close() }

// Runtime is one runtime that connected to a Listener. A runtime that
// connected with a suspending port waits until Open or Resume.
type Runtime struct {
	// Pid is the pid the runtime advertised: its pid in its own pid
	// namespace (a container's pid 1 is 1).
	Pid    int
	Cookie [16]byte

	rt       *ipc.ReverseRuntime
	infoOnce sync.Once
	info     *ipc.ProcessInfo
	infoErr  error
}

// Info is the runtime's ProcessInfo (asked once).
func (r *Runtime) Info() (*ipc.ProcessInfo, error) {
	r.infoOnce.Do(func() { r.info, r.infoErr = r.rt.Client.ProcessInfo() })
	return r.info, r.infoErr
}

// Name is the process's name from its command line ("?" when unknown).
func (r *Runtime) Name() string {
	if hp := r.HostPid(); hp > 0 {
		return ProcName(hp)
	}
	if info, err := r.Info(); err == nil {
		if n := commandName(info.CommandLine); n != "" {
			return n
		}
	}
	return "?"
}

// HostPid is the runtime's pid in clrspy's pid namespace, by the kernel's
// word: the pid of the process that connected (SO_PEERCRED), which the
// port checked against the pid the runtime advertised; 0 when the process
// is not visible in clrspy's pid namespace. Every per-pid action (the perf
// sampler, /proc) uses this pid, never one a peer only claimed.
func (r *Runtime) HostPid() int { return r.rt.Peer.Pid }

// Uid is the user the runtime runs as, by the kernel's word.
func (r *Runtime) Uid() int { return r.rt.Peer.Uid }

// Gone is closed once the runtime exited (it hung up its connection to
// the port).
func (r *Runtime) Gone() <-chan struct{} { return r.rt.Gone() }

// Client is the runtime's diagnostics client (commands over its reverse
// connections).
func (r *Runtime) Client() *ipc.Client { return r.rt.Client }

// Resume lets a suspended runtime go on without a session.
func (r *Runtime) Resume() error { return r.rt.Client.ResumeRuntime() }

// Open opens a session with spec's Providers, BufferMB and Duration (its
// File, Pid, Name and Argv are ignored), then resumes the runtime (a no-op
// when it runs already). It may be called again once an earlier stream
// ended, for a new session on the same runtime. The runtime is resumed
// even when the session cannot be opened.
func (r *Runtime) Open(spec Spec) (*Stream, error) {
	cfg, err := spec.sessionConfig()
	if err != nil {
		r.Resume()
		return nil, err
	}
	c := r.rt.Client
	sess, err := c.StartSession(cfg)
	if err != nil {
		r.Resume()
		return nil, fmt.Errorf("pid %d: %w", r.Pid, err)
	}
	if err := c.ResumeRuntime(); err != nil {
		sess.Close()
		return nil, fmt.Errorf("pid %d: resuming the runtime: %w", r.Pid, err)
	}
	s := &Stream{
		Name: fmt.Sprintf("pid %d (%s)", r.Pid, r.Name()), Kind: Listen, Pid: r.Pid,
		in: &countingReader{r: sess}, session: sess, client: c, hostPid: r.HostPid(),
	}
	s.stop = func() { sess.Stop() }
	cancel := s.stopAfter(spec.Duration)
	s.release = func() error {
		cancel()
		return sess.Close()
	}
	if err := s.start(&spec); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// commandName is a program's name from its command line: the file name of
// its first word, the app's for "dotnet app.dll".
func commandName(cl string) string {
	f := strings.Fields(cl)
	if len(f) == 0 {
		return ""
	}
	n := f[0][strings.LastIndexByte(f[0], '/')+1:]
	if (n == "dotnet" || n == "dotnet.exe") && len(f) > 1 && strings.HasSuffix(f[1], ".dll") {
		d := f[1][strings.LastIndexByte(f[1], '/')+1:]
		return strings.TrimSuffix(d, ".dll")
	}
	return n
}
