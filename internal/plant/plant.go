// Package plant is test support for the planted-socket tests: it makes a
// throwaway local user and runs, as that user, a Unix socket listener at a
// path of the test's choosing (what an attacker would leave in /tmp), and
// reports whether anything connected to it or sent it a byte.
//
// The listener is the test binary itself, copied where the other user may
// run it and started with that user's credentials; the package's TestMain
// calls MaybeListen first so that such a child only listens.
//
// The same child can instead be a fake runtime (FakeRuntime): it connects
// to a reverse diagnostic port as that user, optionally in a pid namespace
// of its own, and advertises whatever pid and cookie the test says.
package plant

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// UserName is the throwaway account the tests plant sockets as.
const UserName = "clrspy-test"

const envListen = "CLRSPY_PLANT_LISTEN"

// User returns the uid and gid of UserName, creating the account (no home,
// no login shell) when it does not exist yet. It needs root.
func User(t testing.TB) (uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (to create a user and run a listener as it)")
	}
	u, err := user.Lookup(UserName)
	if err != nil {
		out, err := exec.Command("useradd", "-M", "-r", "-s", "/usr/sbin/nologin", UserName).CombinedOutput()
		// Another test binary may have created it at the same time.
		if u2, err2 := user.Lookup(UserName); err2 == nil {
			u = u2
		} else {
			t.Fatalf("useradd %s: %v %s", UserName, err, out)
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// StickyDir makes a world-writable sticky directory directly under /tmp
// (like /tmp itself, so that another user can create a socket in it and
// paths stay short), removed at the end of the test.
func StickyDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "clrspy-plant-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Listener is a planted socket and the process listening on it.
type Listener struct {
	Path  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	once  sync.Once
	conns int
	bytes int
	err   error
}

// Listen runs a listener on path as uid/gid.
func Listen(t testing.TB, path string, uid, gid int) *Listener {
	t.Helper()
	cmd, stdin, out := startAs(t, []string{envListen + "=" + path}, uid, gid, 0)
	l := &Listener{Path: path, cmd: cmd, stdin: stdin, out: out}
	t.Cleanup(func() { l.Stop() })
	line, err := l.out.ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		l.Stop()
		t.Fatalf("planted listener on %s as uid %d: %q %v", path, uid, line, err)
	}
	return l
}

// startAs starts a copy of the test binary as uid/gid with env and the
// clone flags given (syscall.CLONE_NEWPID: a pid namespace of its own).
func startAs(t testing.TB, env []string, uid, gid int, cloneflags uintptr) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary lives in a directory only its owner may enter: copy
	// it where the other user can run it.
	dir, err := os.MkdirTemp("", "clrspy-plant-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "listener")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: cloneflags}
	if uid != os.Geteuid() || gid != os.Getegid() {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, bufio.NewReader(stdout)
}

const (
	envFake       = "CLRSPY_PLANT_FAKE_RUNTIME"
	envFakePid    = "CLRSPY_PLANT_FAKE_PID"
	envFakeCookie = "CLRSPY_PLANT_FAKE_COOKIE"
)

// Fake is a fake runtime connected to a reverse diagnostic port.
type Fake struct {
	// Pid is its pid as the test sees it; NsPid as it sees itself (1 in
	// a pid namespace of its own).
	Pid, NsPid int
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	once       sync.Once
}

// FakeRuntime connects to the reverse diagnostic port at path as uid/gid
// (in a pid namespace of its own with newPidNs) and sends an advertise
// with cookie and the pid claim (0: its own pid, as a runtime does). It
// holds the connection until Stop, as a runtime waiting for a command.
func FakeRuntime(t testing.TB, path string, uid, gid int, newPidNs bool, claim int, cookie [16]byte) *Fake {
	t.Helper()
	var flags uintptr
	if newPidNs {
		flags = syscall.CLONE_NEWPID
	}
	env := []string{envFake + "=" + path, envFakePid + "=" + strconv.Itoa(claim), fmt.Sprintf("%s=%x", envFakeCookie, cookie)}
	cmd, stdin, out := startAs(t, env, uid, gid, flags)
	f := &Fake{Pid: cmd.Process.Pid, cmd: cmd, stdin: stdin}
	t.Cleanup(f.Stop)
	line, err := out.ReadString('\n')
	if _, serr := fmt.Sscanf(line, "ready %d", &f.NsPid); serr != nil {
		f.Stop()
		t.Fatalf("fake runtime on %s as uid %d: %q %v", path, uid, line, err)
	}
	return f
}

// Stop ends the fake runtime.
func (f *Fake) Stop() {
	f.once.Do(func() {
		f.stdin.Close()
		f.cmd.Wait()
	})
}

// fakeRuntime is the child of FakeRuntime.
func fakeRuntime(path string) {
	claim, _ := strconv.Atoi(os.Getenv(envFakePid))
	if claim == 0 {
		claim = os.Getpid()
	}
	var cookie [16]byte
	b, _ := hex.DecodeString(os.Getenv(envFakeCookie))
	copy(cookie[:], b)
	c, err := net.Dial("unix", path)
	if err != nil {
		fmt.Printf("dial: %v\n", err)
		os.Exit(1)
	}
	// The runtime's advertise: "ADVR_V1\0", cookie, pid, two reserved
	// bytes (docs/runtime-diagnostics.md).
	msg := append([]byte("ADVR_V1\x00"), cookie[:]...)
	msg = binary.LittleEndian.AppendUint64(msg, uint64(claim))
	msg = append(msg, 0, 0)
	if _, err := c.Write(msg); err != nil {
		fmt.Printf("write: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("ready %d\n", os.Getpid())
	io.Copy(io.Discard, os.Stdin)
	c.Close()
	os.Exit(0)
}

// Pid is the listener's process id.
func (l *Listener) Pid() int { return l.cmd.Process.Pid }

// Stop ends the listener and returns how many connections it accepted and
// how many bytes it received over all of them.
func (l *Listener) Stop() (conns, bytes int, err error) {
	l.once.Do(func() {
		l.stdin.Close()
		line, err := l.out.ReadString('\n')
		l.cmd.Wait()
		if err != nil {
			l.err = fmt.Errorf("planted listener: no report: %w", err)
			return
		}
		if _, err := fmt.Sscanf(line, "conns=%d bytes=%d", &l.conns, &l.bytes); err != nil {
			l.err = fmt.Errorf("planted listener: bad report %q", line)
		}
	})
	return l.conns, l.bytes, l.err
}

// MaybeListen turns the process into the listener when it was started by
// Listen; otherwise it returns at once. Call it first thing in TestMain.
func MaybeListen() {
	if p := os.Getenv(envFake); p != "" {
		fakeRuntime(p)
	}
	path := os.Getenv(envListen)
	if path == "" {
		return
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		fmt.Printf("listen: %v\n", err)
		os.Exit(1)
	}
	os.Chmod(path, 0o600) // as the runtime makes its socket
	var mu sync.Mutex
	conns, n := 0, 0
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns++
			mu.Unlock()
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(time.Minute))
				buf := make([]byte, 4096)
				for {
					k, err := c.Read(buf)
					mu.Lock()
					n += k
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) // until the test closes stdin
	ln.Close()
	mu.Lock()
	fmt.Printf("conns=%d bytes=%d\n", conns, n)
	mu.Unlock()
	os.Exit(0)
}
