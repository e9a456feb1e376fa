package ipc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/plant"
)

// TestReversePortSymlinkRace: the attack of issue 29 item 1. Another user
// who may write to the port's directory (a sticky one, as /tmp) keeps
// swapping the port's path for a symlink to a root-owned 0600 file while
// root's clrspy creates the port with mode 0666, 300 times. The file's
// mode never changes; every port that was created is a socket of root's
// with mode 0666; every refusal names the file in the way (there before
// the port was made, or put there while it was).
func TestReversePortSymlinkRace(t *testing.T) {
	uid, gid := plant.User(t)
	dir := plant.StickyDir(t)
	victim := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(victim, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "port.sock")
	// The swapper: a shell loop as the other user, making path a symlink
	// to the victim as often as it can.
	sw := exec.Command("/bin/sh", "-c", `while :; do ln -sfn "$V" "$P" 2>/dev/null; done`)
	sw.Env = []string{"V=" + victim, "P=" + path, "PATH=/usr/bin:/bin"}
	sw.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Setpgid: true}
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-sw.Process.Pid, syscall.SIGKILL); sw.Wait() }()
	made, refused := 0, 0
	for i := 0; i < 300; i++ {
		// Open the window: the swapper's symlink goes, and it races to put
		// one back while the port is made.
		os.Remove(path)
		srv, err := ListenReverseAt(path, 0o666)
		if err != nil {
			if !strings.Contains(err.Error(), "a file that is not a socket is in the way") && !strings.Contains(err.Error(), "a file appeared in the way") {
				t.Fatalf("attempt %d: %v", i, err)
			}
			refused++
			continue
		}
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o666 || st.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("attempt %d: the port is %v (%v)", i, st.Mode(), err)
		}
		srv.Close()
		made++
	}
	st, err := os.Stat(victim)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the victim's mode is %v (%v), want 0600", st.Mode(), err)
	}
	t.Logf("300 attempts: %d ports made, %d refused (the symlink was in the way)", made, refused)
	if made == 0 {
		t.Errorf("no port was made in 300 attempts")
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 1 {
		t.Errorf("left behind in the directory: %v", ents)
	}
}

// TestReversePortDir: a directory other users may write to is refused
// unless sticky; a missing last directory is made, closed to writers; a
// symlinked directory is judged by what it names; a directory of another
// user is refused.
func TestReversePortDir(t *testing.T) {
	uid, _ := plant.User(t)
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	_, err := ListenReverseAt(filepath.Join(open, "p.sock"), 0)
	if err == nil || !strings.Contains(err.Error(), "writable by other users and not sticky") {
		t.Errorf("world-writable directory: %v", err)
	}
	// One directory below it is made by clrspy, 0755.
	srv, err := ListenReverseAt(filepath.Join(open, "clrspy", "p.sock"), 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(open, "clrspy")); err != nil || st.Mode().Perm()&0o022 != 0 {
		t.Errorf("the port's directory: %v %v", st.Mode(), err)
	}
	srv.Close()
	// A symlink as the port's directory is resolved once, and what it
	// names is checked: a directory of ours is taken, the open one not.
	link := filepath.Join(t.TempDir(), "link")
	mine := t.TempDir()
	os.Symlink(mine, link)
	srv, err = ListenReverseAt(filepath.Join(link, "p.sock"), 0)
	if err != nil {
		t.Errorf("a symlink to a directory of ours: %v", err)
	} else {
		if st, err := os.Lstat(filepath.Join(mine, "p.sock")); err != nil || st.Mode()&os.ModeSocket == 0 {
			t.Errorf("the port is not in the directory the symlink names: %v", err)
		}
		srv.Close()
	}
	openLink := filepath.Join(t.TempDir(), "open-link")
	os.Symlink(open, openLink)
	if _, err := ListenReverseAt(filepath.Join(openLink, "p.sock"), 0); err == nil || !strings.Contains(err.Error(), "writable by other users and not sticky") {
		t.Errorf("a symlink to a world-writable directory: %v", err)
	}
	other := filepath.Join(t.TempDir(), "other")
	os.Mkdir(other, 0o755)
	os.Chown(other, uid, uid)
	if _, err := ListenReverseAt(filepath.Join(other, "p.sock"), 0); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Errorf("another user's directory: %v", err)
	}
}

// TestReversePeerCredentials: a listen-mode peer's identity comes from the
// kernel (SO_PEERCRED), not from its advertise. Fake runtimes run as
// another user: one claiming the pid of a root process (this test's) is
// refused and counted, never accepted; one advertising its own pid is
// accepted with the pid and uid the kernel gives; one in a pid namespace
// of its own advertising its pid there (1) is accepted under its pid here;
// one in a namespace claiming another pid is refused; one reusing an
// accepted runtime's cookie from another process is refused.
func TestReversePeerCredentials(t *testing.T) {
	uid, gid := plant.User(t)
	dir := plant.StickyDir(t)
	srv, err := ListenReverseAt(filepath.Join(dir, "p.sock"), 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	accepted := make(chan *ReverseRuntime, 8)
	go func() {
		for {
			r, err := srv.Accept()
			if err != nil {
				return
			}
			accepted <- r
		}
	}()
	next := func(what string) *ReverseRuntime {
		t.Helper()
		select {
		case r := <-accepted:
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not accepted within 10 s (refused: %v)", what, srv.Rejected())
			return nil
		}
	}
	waitRejected := func(reason string, n uint64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for srv.Rejected()[reason] < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := srv.Rejected()[reason]; got != n {
			t.Errorf("%s refusals: %d, want %d", reason, got, n)
		}
	}
	cookie := func(b byte) (c [16]byte) { c[0], c[15] = b, b; return }

	plant.FakeRuntime(t, srv.Path, uid, gid, false, os.Getpid(), cookie(1))
	waitRejected(RejectPid, 1)

	own := plant.FakeRuntime(t, srv.Path, uid, gid, false, 0, cookie(2))
	r := next("own pid")
	if r.Pid != uint64(own.Pid) || r.Peer.Pid != own.Pid || r.Peer.Uid != uid || r.Peer.Gid != gid || r.Cookie != cookie(2) {
		t.Errorf("own pid: advertised %d, cookie %x, peer %+v; want pid %d uid %d gid %d", r.Pid, r.Cookie, r.Peer, own.Pid, uid, gid)
	}

	ns := plant.FakeRuntime(t, srv.Path, uid, gid, true, 0, cookie(3))
	r = next("own pid in a pid namespace")
	if ns.NsPid != 1 || r.Pid != 1 || r.Peer.Pid != ns.Pid || r.Peer.Uid != uid {
		t.Errorf("pid namespace: its pid there %d, advertised %d, peer %+v; want pid here %d", ns.NsPid, r.Pid, r.Peer, ns.Pid)
	}

	plant.FakeRuntime(t, srv.Path, uid, gid, true, os.Getpid(), cookie(4))
	waitRejected(RejectPid, 2)

	plant.FakeRuntime(t, srv.Path, uid, gid, false, 0, cookie(2))
	waitRejected(RejectCookie, 1)

	select {
	case r := <-accepted:
		t.Errorf("accepted a refused runtime: pid %d, peer %+v", r.Pid, r.Peer)
	case <-time.After(300 * time.Millisecond):
	}
}
