package ipc

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/plant"
	"github.com/clrspy/clrspy/internal/workload"
)

func TestMain(m *testing.M) {
	plant.MaybeListen() // the planted listener of another user is this binary
	os.Exit(m.Run())
}

// plantedErr is the one line Find gives for a socket owned by another
// user than the process.
func plantedErr(pid int, sock string, uid int) string {
	return fmt.Sprintf("pid %d: the diagnostics socket %s is owned by user %s (uid %d) but the process runs as user root (uid 0): refusing it (another user may have planted it)",
		pid, sock, plant.UserName, uid)
}

// A root process without a socket of its own (diagnostics disabled, or its
// socket deleted) and a socket another user planted in its TMPDIR, named
// with the process's start time or not (discovery then falls back to the
// newest socket): root's clrspy refuses the socket in one line naming it and
// both owners (or, when the process has its diagnostics off and the socket
// is not named for it, does not consider it), and never connects to it.
func TestPlantedSocketRefused(t *testing.T) {
	uid, gid := plant.User(t)
	for _, tc := range []struct {
		name     string
		disabled bool // DOTNET_EnableDiagnostics=0; otherwise the socket is deleted
		exactKey bool
	}{
		{"diagnostics disabled, start-time name", true, true},
		{"diagnostics disabled, newest fallback", true, false},
		{"socket deleted, start-time name", false, true},
		{"socket deleted, newest fallback", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := plant.StickyDir(t)
			env := []string{"TMPDIR=" + dir}
			if tc.disabled {
				env = append(env, "DOTNET_EnableDiagnostics=0")
			}
			p := workload.Start(t, env, "idle", "seconds=60", "stdin=1")
			defer p.Release()
			if !tc.disabled {
				// The runtime's own socket, then deleted.
				ep, err := Find(p.Pid)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(ep.Socket); err != nil {
					t.Fatal(err)
				}
			}
			key := startTicks(p.Pid)
			if !tc.exactKey {
				key = "1"
			}
			sock := filepath.Join(dir, fmt.Sprintf("dotnet-diagnostic-%d-%s-socket", p.Pid, key))
			l := plant.Listen(t, sock, uid, gid)
			want := plantedErr(p.Pid, sock, uid)
			if tc.disabled && !tc.exactKey {
				// Not named for this process, which has its diagnostics
				// off, so it has no socket of its own: the planted one is
				// not even considered, and the process is reported as
				// disabled.
				want = "pid " + strconv.Itoa(p.Pid) + ": diagnostics are disabled in this process (DOTNET_EnableDiagnostics=0)"
			}
			if _, err := Find(p.Pid); err == nil || err.Error() != want {
				t.Errorf("Find: %v\nwant %s", err, want)
			}
			var ae *AttachError
			if _, err := Dial(p.Pid); !errors.As(err, &ae) || err.Error() != want {
				t.Errorf("Dial: %v", err)
			}
			// ps lists the process with that reason, not as attachable.
			if pr, ok := probe(p.Pid, 2*time.Second, func(Process) {}); !ok || pr.Attachable || "pid "+strconv.Itoa(p.Pid)+": "+pr.Reason != want {
				t.Errorf("ps entry %+v", pr)
			}
			conns, n, err := l.Stop()
			if err != nil || conns != 0 || n != 0 {
				t.Errorf("the planted listener saw %d connections, %d bytes (%v)", conns, n, err)
			}
		})
	}
}

// A symbolic link in the socket's place (to a socket anywhere) is refused
// whoever owns it.
func TestPlantedSymlinkRefused(t *testing.T) {
	uid, gid := plant.User(t)
	dir := plant.StickyDir(t)
	p := workload.Start(t, []string{"TMPDIR=" + dir, "DOTNET_EnableDiagnostics=0"}, "idle", "seconds=60", "stdin=1")
	defer p.Release()
	target := filepath.Join(dir, "elsewhere")
	ln, err := net.Listen("unix", target)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	link := filepath.Join(dir, fmt.Sprintf("dotnet-diagnostic-%d-%s-socket", p.Pid, startTicks(p.Pid)))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	os.Lchown(link, uid, gid)
	want := fmt.Sprintf("pid %d: %s is not a socket but a symbolic link owned by user %s (uid %d): refusing it (another user may have planted it)", p.Pid, link, plant.UserName, uid)
	if _, err := Find(p.Pid); err == nil || err.Error() != want {
		t.Errorf("Find: %v\nwant %s", err, want)
	}
}

// A socket with the right owner but another process listening on it (here
// this test, as root, for a root process): the kernel's record of who
// listens (SO_PEERCRED) gives it away, and no request is sent.
func TestPlantedListenerOfSameUserRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the target and the planted listener must share a uid")
	}
	dir := plant.StickyDir(t)
	p := workload.Start(t, []string{"TMPDIR=" + dir, "DOTNET_EnableDiagnostics=0"}, "idle", "seconds=60", "stdin=1")
	defer p.Release()
	sock := filepath.Join(dir, fmt.Sprintf("dotnet-diagnostic-%d-%s-socket", p.Pid, startTicks(p.Pid)))
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	conns, got := 0, 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		conns++
		mu.Unlock()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 512)
		for {
			n, err := c.Read(buf)
			mu.Lock()
			got += n
			mu.Unlock()
			if err != nil {
				c.Close()
				return
			}
		}
	}()
	c, err := Dial(p.Pid)
	if err != nil {
		t.Fatalf("Dial: %v (the socket's owner is the process's)", err)
	}
	_, err = c.ProcessInfo()
	want := fmt.Sprintf("pid %d: the process listening on %s is pid %d of user root (uid 0), not pid %d of user root (uid 0): refusing it (another user may have planted it)",
		p.Pid, sock, os.Getpid(), p.Pid)
	if err == nil || err.Error() != want {
		t.Errorf("ProcessInfo: %v\nwant %s", err, want)
	}
	<-done // the client closed without a byte
	ln.Close()
	mu.Lock()
	defer mu.Unlock()
	if conns != 1 || got != 0 {
		t.Errorf("the planted listener saw %d connections and %d bytes, want 1 and 0", conns, got)
	}
}
