package ipc

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// Several runtimes on one reverse port (listen mode): each is accepted
// once, by its own cookie and pid, while it waits suspended; a session
// opened before ResumeRuntime sees every GC the runtime counts; a stopped
// session's StopTracing travels over the runtime's next connection; a
// runtime that exits is Gone and forgotten.
func TestReverseServerManyRuntimes(t *testing.T) {
	dir := t.TempDir()
	srv, err := ListenReverseAt(filepath.Join(dir, "port.sock"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.ReconnectTimeout = 4 * time.Second
	if st, err := os.Stat(srv.Path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v (%v), want 0600", st.Mode(), err)
	}
	const n = 3
	idlePid := 0
	ready := make(chan struct{})
	cmds := map[int]*exec.Cmd{}
	outs := map[int]*strings.Builder{}
	for i := 0; i < n; i++ {
		args := []string{"induced", "gen0=3", "gen1=2", "gen2=1"}
		if i == n-1 {
			// This one waits for a line on stdin: its session is stopped by
			// clrspy, not ended by its exit.
			args = []string{"idle", "seconds=60", "gcEveryMs=30", "stdin=1"}
		}
		cmd := exec.Command(workload.Exe(t), args...)
		cmd.Env = append(os.Environ(), srv.EnvVar(), "DOTNET_CLI_TELEMETRY_OPTOUT=1")
		out := &strings.Builder{}
		cmd.Stdout = out
		if i == n-1 {
			cmd.Stderr = readyWriter(ready)
		}
		if i == n-1 {
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		cmds[cmd.Process.Pid] = cmd
		if i == n-1 {
			idlePid = cmd.Process.Pid
		}
		outs[cmd.Process.Pid] = out
	}
	type result struct {
		pid int
		got traceCounts
	}
	results := make(chan result, n)
	seen := map[[16]byte]bool{}
	stopped := make(chan struct{})
	var idle *ReverseRuntime
	for i := 0; i < n; i++ {
		r, err := srv.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if seen[r.Cookie] || cmds[int(r.Pid)] == nil || r.Client.Pid != int(r.Pid) {
			t.Fatalf("runtime %d (cookie %x) accepted twice or not one of ours", r.Pid, r.Cookie)
		}
		seen[r.Cookie] = true
		info, err := r.Client.ProcessInfo()
		if err != nil || int(info.Pid) != int(r.Pid) || info.RuntimeCookie != r.Cookie {
			t.Fatalf("ProcessInfo of a suspended runtime: %+v, %v", info, err)
		}
		s, err := r.Client.StartSession(SessionConfig{Providers: gcProviders, BufferMB: 16})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Client.ResumeRuntime(); err != nil {
			t.Fatal(err)
		}
		// A runtime suspended at startup has not parsed its arguments yet:
		// its command line is the program alone.
		if !strings.HasSuffix(info.CommandLine, "/Workload") {
			t.Errorf("suspended runtime's command line %q", info.CommandLine)
		}
		if int(r.Pid) == idlePid {
			idle = r
			go func() {
				defer close(stopped)
				// Some induced GCs (the mode starts after the runtime's
				// startup, slow on a loaded machine).
				<-ready
				time.Sleep(time.Second)
				if err := s.Stop(); err != nil {
					t.Errorf("StopTracing over the reverse port: %v", err)
				}
			}()
		}
		go func(pid int) {
			defer s.Close()
			results <- result{pid: pid, got: readTrace(t, s)}
		}(int(r.Pid))
	}
	for i := 0; i < n; i++ {
		res := <-results
		cmd := cmds[res.pid]
		if idle != nil && res.pid == int(idle.Pid) {
			// Stopped by clrspy: the runtime lives on, with its rundown sent.
			if res.got.gcStarts == 0 || res.got.rundownMethods == 0 {
				t.Errorf("stopped session of pid %d: %+v", res.pid, res.got)
			}
			select {
			case <-idle.Gone():
				t.Errorf("pid %d is Gone while it runs", res.pid)
			default:
			}
			<-stopped
			cmd.Process.Kill()
			continue
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		r, err := workload.ParseResult([]byte(outs[res.pid].String()))
		if err != nil {
			t.Fatal(err)
		}
		if int(res.got.gcStarts) != r.Gen0 || int(res.got.gen2Starts) != r.Gen2 || res.got.pid != res.pid {
			t.Errorf("pid %d: trace has %d GCs (%d gen2, header pid %d), the runtime counted %d (%d gen2)",
				res.pid, res.got.gcStarts, res.got.gen2Starts, res.got.pid, r.Gen0, r.Gen2)
		}
	}
	if idle == nil {
		t.Fatal("the idle runtime never connected")
	}
	select {
	case <-idle.Gone():
	case <-time.After(20 * time.Second):
		// Killed with its idle connection open: at once; between two
		// commands: after ReconnectTimeout.
		t.Fatal("a killed runtime is not Gone after 20 s")
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.Runtimes() != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if k := srv.Runtimes(); k != 0 {
		t.Errorf("%d runtimes remembered after every process exited", k)
	}
	if _, err := idle.Client.ProcessInfo(); err == nil {
		t.Errorf("ProcessInfo of a gone runtime succeeded")
	}
}

// The port's path: a stale socket is replaced, a live one or another file
// refused, in one line; Close removes the socket.
func TestReverseServerPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.sock")
	// A stale socket: bound, then its listener gone without unlinking.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	srv, err := ListenReverseAt(path, 0o660)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	if st, _ := os.Stat(path); st == nil || st.Mode().Perm() != 0o660 {
		t.Errorf("mode %v, want 0660", st)
	}
	if _, err := ListenReverseAt(path, 0); err == nil || err.Error() != "diagnostic port "+path+": in use (another server listens on it)" {
		t.Errorf("second server on a live port: %v", err)
	}
	srv.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket left after Close: %v", err)
	}
	if _, err := srv.Accept(); err != net.ErrClosed {
		t.Errorf("Accept after Close: %v", err)
	}
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	for p, want := range map[string]string{
		file:                           "diagnostic port " + file + ": a file that is not a socket is in the way",
		filepath.Join(dir, "no/no/p"):  "diagnostic port " + filepath.Join(dir, "no/no/p") + ": no such file or directory",
		"/" + strings.Repeat("x", 120): "diagnostic port /" + strings.Repeat("x", 120) + ": 121 bytes, over the 107-byte limit of Unix socket paths",
	} {
		if _, err := ListenReverseAt(p, 0); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", p, err, want)
		}
	}
}

// readyWriter closes ready when the workload says "ready".
type readyWriter chan struct{}

func (w readyWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "ready ") {
		select {
		case <-w:
		default:
			close(w)
		}
	}
	return len(p), nil
}
