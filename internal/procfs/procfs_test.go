package procfs

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// TestSelfReaders reads the test process's own /proc: its uid, pid, name,
// arguments, namespaces and mappings are known to it.
func TestSelfReaders(t *testing.T) {
	pid := os.Getpid()
	if Dir(Self) != "/proc/self" || Dir(pid) != "/proc/"+strconv.Itoa(pid) {
		t.Errorf("Dir: %s, %s", Dir(Self), Dir(pid))
	}
	if !Exists(pid) || Exists(1<<30) || Exists(0) || Exists(-3) {
		t.Error("Exists: wrong for self, a pid no process has, 0 or a negative pid")
	}
	if uid, ok := Euid(pid); !ok || uid != os.Geteuid() {
		t.Errorf("Euid %d %v, want %d", uid, ok, os.Geteuid())
	}
	if uid, ok := Euid(1 << 30); ok {
		t.Errorf("Euid of no process: %d", uid)
	}
	if n, inNs := NSpid(pid); inNs == (n == pid) {
		t.Errorf("NSpid %d, in a namespace %v (pid %d)", n, inNs, pid)
	}
	exe, _ := os.Executable()
	if c := Comm(pid, 0); !strings.HasPrefix(filepath.Base(exe), c) || c == "" {
		t.Errorf("Comm %q, executable %s", c, exe)
	}
	if a := Args(pid); !slices.Equal(a, os.Args) {
		t.Errorf("Args %q, os.Args %q", a, os.Args)
	}
	if c := Cmdline(pid); c != strings.Join(os.Args, " ") {
		t.Errorf("Cmdline %q", c)
	}
	if Args(1<<30) != nil || Cmdline(1<<30) != "" || Comm(1<<30, 0) != "" {
		t.Error("readers of no process return something")
	}
	if m := Namespace(Self, "mnt"); m == "" || m != Namespace(pid, "mnt") || !strings.HasPrefix(m, "mnt:[") {
		t.Errorf("mount namespace %q, of pid %d %q", m, pid, Namespace(pid, "mnt"))
	}
	if Namespace(1<<30, "mnt") != "" {
		t.Error("namespace of no process")
	}
	pids, err := Pids()
	if err != nil || !slices.Contains(pids, pid) || !slices.Contains(pids, os.Getppid()) {
		t.Errorf("Pids (%v) lacks self %d or parent %d: %v", err, pid, os.Getppid(), pids)
	}
	if has, known := MapsPath(Self, filepath.Base(exe)); !has || !known {
		t.Errorf("own executable %s not in own maps (%v, %v)", exe, has, known)
	}
	if has, known := MapsPath(Self, "libcoreclr.so"); has || !known {
		t.Errorf("libcoreclr.so in a Go test's maps (%v, %v)", has, known)
	}
	if _, known := MapsPath(1<<30, "x"); known {
		t.Error("maps of no process known")
	}
	ths, err := Threads(pid)
	if err != nil || !slices.Contains(ths, uint64(pid)) {
		t.Errorf("Threads %v (%v) lacks the main thread %d", ths, err, pid)
	}
	// Uptime against the process's own start: started before now, after boot.
	up, err := Uptime()
	ticks, err2 := StartTicks(pid)
	if err != nil || err2 != nil || up <= 0 || float64(ticks)/ClockTicks > up || ticks <= 0 {
		t.Errorf("uptime %v (%v), start ticks %d (%v)", up, err, ticks, err2)
	}
	if b, err := TaskFile(pid, pid, "comm"); err != nil || strings.TrimSpace(string(b)) != Comm(pid, 0) {
		t.Errorf("main thread's comm %q (%v), process's %q", b, err, Comm(pid, 0))
	}
	if r, err := os.Readlink(Root(pid)); err != nil || r != "/" {
		t.Errorf("root %q (%v)", r, err)
	}
	if b, err := MapsText(pid); err != nil || len(ParseMaps(b)) < 5 {
		t.Errorf("maps: %d bytes (%v)", len(b), err)
	}
	st, _ := Status(Self)
	if f := StatusField(st, "Pid"); len(f) != 1 || f[0] != strconv.Itoa(pid) {
		t.Errorf("status Pid %q", f)
	}
	if f := StatusField(st, "NoSuchField"); f != nil {
		t.Errorf("status NoSuchField %q", f)
	}
}

// TestChildReaders reads a child started with a known environment and a
// name like the tail of a stat line: the readers return what was set.
func TestChildReaders(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	hostile := filepath.Join(t.TempDir(), ") R 1 2 (x")
	if err := os.WriteFile(hostile, b, 0o755); err != nil {
		t.Fatal(err)
	}
	t0, _ := Uptime()
	cmd := exec.Command(hostile, "30")
	cmd.Env = []string{"TMPDIR=/tmp/x y", "COMPlus_EnableDiagnostics=1", "DOTNET_EnableDiagnostics=0", "COMPlus_GCgen0size=30"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	t1, _ := Uptime()
	pid := cmd.Process.Pid
	// Start returns once the exec is past its point of no return, before
	// the kernel has laid out the new arguments and environment (read
	// then, both are empty): wait for the arguments.
	for i := 0; i < 200 && len(Args(pid)) == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	env, err := Environ(pid)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := EnvValue(env, "TMPDIR"); !ok || v != "/tmp/x y" {
		t.Errorf("TMPDIR %q %v", v, ok)
	}
	if v, ok := EnvValue(env, "PATH"); ok {
		t.Errorf("PATH %q set", v)
	}
	if v, ok := RuntimeSetting(env, "EnableDiagnostics"); !ok || v != "0" {
		t.Errorf("EnableDiagnostics %q %v: DOTNET_ wins over COMPlus_", v, ok)
	}
	if v, ok := RuntimeSetting(env, "GCgen0size"); !ok || v != "30" {
		t.Errorf("GCgen0size %q %v (COMPlus_ alone)", v, ok)
	}
	if c := Comm(pid, 0); c != ") R 1 2 (x" {
		t.Errorf("Comm %q", c)
	}
	if a := Args(pid); !slices.Equal(a, []string{hostile, "30"}) {
		t.Errorf("Args %q", a)
	}
	ticks, err := StartTicks(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Started between the two readings of the uptime (ticks are 10 ms).
	if s := float64(ticks) / ClockTicks; s < t0-0.02 || s > t1+0.02 {
		t.Errorf("start %.2f s after boot, started between %.2f and %.2f", s, t0, t1)
	}
	if Namespace(pid, "pid") != Namespace(Self, "pid") {
		t.Error("a child in another pid namespace")
	}
}

// TestParseStat: field 22 counted from the last ')' whatever the command
// name holds; malformed lines are errors, never a number.
func TestParseStat(t *testing.T) {
	tail := " S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 4242 0 0"
	for comm, want := range map[string]int64{"(a)": 4242, "() R 1 2 (x y)": 4242, "(a\nb)": 4242} {
		if v, err := ParseStartTicks([]byte("7 " + comm + tail)); err != nil || v != want {
			t.Errorf("%q: %d %v", comm, v, err)
		}
	}
	for _, bad := range []string{"", "7 (a) S 0 1", "7 a S" + tail, "7 (a) S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 -5 0"} {
		if v, err := ParseStartTicks([]byte(bad)); err == nil {
			t.Errorf("%q: %d, no error", bad, v)
		}
	}
	st := []byte("Name:\tx\nUid:\t1000\t1001\t1000\t1000\nNSpid:\t4321\t7\n")
	if n, ok := ParseNSpid(st); !ok || n != 7 {
		t.Errorf("NSpid %d %v", n, ok)
	}
	if n, ok := ParseNSpid([]byte("NSpid:\t4321\n")); ok {
		t.Errorf("single NSpid read as a namespace: %d", n)
	}
	if u, ok := ParseEuid(st); !ok || u != 1001 {
		t.Errorf("euid %d %v", u, ok)
	}
}

// TestWorkloadReaders reads a real .NET workload: the runtime is mapped,
// its arguments and environment are what it was started with, and two
// spinning threads ask for two cores' time, which a loaded machine does
// not shrink (run plus runnable wait).
func TestWorkloadReaders(t *testing.T) {
	p := workload.Start(t, []string{"DOTNET_ClrspyTestSetting=7", "COMPlus_ClrspyTestSetting=3"}, "cpu", "seconds=6", "threads=2")
	if has, known := MapsPath(p.Pid, "libcoreclr.so"); !has || !known {
		t.Errorf("libcoreclr.so not in the workload's maps (%v, %v)", has, known)
	}
	if a := Args(p.Pid); len(a) < 3 || a[len(a)-3] != "cpu" || a[len(a)-1] != "threads=2" {
		t.Errorf("Args %q", a)
	}
	env, _ := Environ(p.Pid)
	if v, ok := RuntimeSetting(env, "ClrspyTestSetting"); !ok || v != "7" {
		t.Errorf("setting %q %v", v, ok)
	}
	if uid, ok := Euid(p.Pid); !ok || uid != os.Geteuid() {
		t.Errorf("Euid %d %v", uid, ok)
	}
	ths, err := Threads(p.Pid)
	if err != nil || len(ths) < 3 {
		t.Errorf("threads %v (%v): the runtime runs more than 2", ths, err)
	}
	s := StartDemand(p.Pid, 100*time.Millisecond)
	time.Sleep(2500 * time.Millisecond)
	// Per core of a 2-core share: two spinners ask for ~100 %, the
	// runtime's own threads a little more.
	if pct := s.Pct(2); pct < 70 || pct > 160 {
		t.Errorf("demand %.1f %% of 2 cores, two threads spin", pct)
	}
	if pct := s.Pct(2); pct < 70 {
		t.Errorf("a second Pct after the stop: %.1f", pct)
	}
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := SchedNanos(p.Pid); err == nil {
		t.Error("SchedNanos of an exited process")
	}
}

func TestDemandPct(t *testing.T) {
	if v := DemandPct(0, 3e9, 2*time.Second, 2); v != 75 {
		t.Errorf("3 s over 2 s of 2 cores: %v", v)
	}
	if DemandPct(0, 1, 0, 2) != -1 || DemandPct(0, 1, time.Second, 0) != -1 {
		t.Error("no interval or no cores: not -1")
	}
}

// TestTCPOwner: the test's own loopback connection is found in
// /proc/net/tcp under its uid, both ends; a pair of addresses no socket
// has is not found.
func TestTCPOwner(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hex := func(a net.Addr) string {
		ta := a.(*net.TCPAddr)
		ip := ta.IP.To4()
		return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], ta.Port)
	}
	uid, found, err := TCPOwner(hex(c.LocalAddr()), hex(c.RemoteAddr()))
	if err != nil || !found || uid != os.Geteuid() {
		t.Errorf("client socket: uid %d found %v (%v), want %d", uid, found, err, os.Geteuid())
	}
	if _, found, err := TCPOwner("0100007F:0001", "0100007F:0002"); found || err != nil {
		t.Errorf("a socket no one has: found %v (%v)", found, err)
	}
}
