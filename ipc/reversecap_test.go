package ipc

import (
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// advertiseFrom connects to the port as this process with cookie b and
// sends the advertise (the pid is this process's own: the kernel agrees).
func advertiseFrom(t *testing.T, path string, b byte) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	msg := make([]byte, advertiseSize)
	copy(msg, advertiseMagic[:])
	msg[8], msg[23] = b, b
	binary.LittleEndian.PutUint64(msg[24:], uint64(os.Getpid()))
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReverseCaps: one user's process cannot make a runtime per cookie
// without bound: past MaxPerUser new cookies of that user are refused,
// counted as too_many_for_user, their connections closed; past
// MaxRuntimes every user's are (too_many_runtimes). A known runtime's
// reconnection is not a new runtime and passes. The total is also kept
// under the file descriptor limit less FDReserve.
func TestReverseCaps(t *testing.T) {
	srv, err := ListenReverseAt(filepath.Join(t.TempDir(), "p.sock"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.MaxPerUser, srv.MaxRuntimes = 3, 4
	deadline := time.Now().Add(10 * time.Second)
	// One at a time: runtimes 1-3 are the ones let in (handshakes served
	// concurrently could let in any three, and 1 must be known below).
	for b := byte(1); b <= 5; b++ {
		advertiseFrom(t, srv.Path, b)
		for uint64(srv.Runtimes())+srv.Rejected()[RejectUser] < uint64(b) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	for (srv.Runtimes() < 3 || srv.Rejected()[RejectUser] < 2) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n, rej := srv.Runtimes(), srv.Rejected(); n != 3 || rej[RejectUser] != 2 {
		t.Errorf("%d runtimes, refusals %v; want 3 and 2 too_many_for_user", n, rej)
	}
	// A known cookie reconnecting passes.
	advertiseFrom(t, srv.Path, 1)
	time.Sleep(100 * time.Millisecond)
	if rej := srv.Rejected(); rej[RejectUser] != 2 || srv.Runtimes() != 3 {
		t.Errorf("a known runtime's reconnection refused: %v", rej)
	}
	srv.mu.Lock()
	srv.MaxPerUser = 10
	srv.MaxRuntimes = 3
	srv.mu.Unlock()
	advertiseFrom(t, srv.Path, 9)
	for srv.Rejected()[RejectTotal] < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if rej := srv.Rejected(); rej[RejectTotal] != 1 || srv.Runtimes() != 3 {
		t.Errorf("past MaxRuntimes: %d runtimes, %v", srv.Runtimes(), rej)
	}
	// The descriptor limit: with 1,000 descriptors and the default
	// reserve of 512, 244 runtimes at most.
	lim := &ReverseServer{MaxRuntimes: 5000}
	if total, _ := lim.limits(); total > 5000 {
		t.Errorf("limits: %d", total)
	}
	var rl, old unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &old)
	rl = old
	rl.Cur = 1000
	if unix.Setrlimit(unix.RLIMIT_NOFILE, &rl) == nil {
		defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
		if total, per := lim.limits(); total != 244 || per != 244 {
			t.Errorf("with 1000 descriptors: total %d per user %d, want 244", total, per)
		}
	} else {
		t.Fatal("cannot lower RLIMIT_NOFILE")
	}
}
