package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/plant"
	"github.com/clrspy/clrspy/internal/workload"
)

func TestMain(m *testing.M) {
	plant.MaybeListen() // the planted listener of another user is this binary
	os.Exit(m.Run())
}

// record as root, against a root process with diagnostics disabled whose
// TMPDIR holds a socket another user planted: one line naming the socket
// and both owners, exit 1, no file, and nothing reached the listener.
func TestRecordRefusesPlantedSocket(t *testing.T) {
	uid, gid := plant.User(t)
	dir := plant.StickyDir(t)
	p := workload.Start(t, []string{"TMPDIR=" + dir, "DOTNET_EnableDiagnostics=0"}, "idle", "seconds=60", "stdin=1")
	defer p.Release()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	sock := filepath.Join(dir, fmt.Sprintf("dotnet-diagnostic-%d-%s-socket", p.Pid, f[19]))
	l := plant.Listen(t, sock, uid, gid)
	out := filepath.Join(t.TempDir(), "x.nettrace")
	_, stderr, code := clrspyRun(t, "record", "--pid", strconv.Itoa(p.Pid), "-o", out)
	want := fmt.Sprintf("clrspy: pid %d: the diagnostics socket %s is owned by user %s (uid %d) but the process runs as user root (uid 0): refusing it (another user may have planted it)\n",
		p.Pid, sock, plant.UserName, uid)
	if code != 1 || stderr != want {
		t.Errorf("exit %d\n got %q\nwant %q", code, stderr, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused record left %s", out)
	}
	if conns, n, err := l.Stop(); err != nil || conns != 0 || n != 0 {
		t.Errorf("the planted listener saw %d connections, %d bytes (%v)", conns, n, err)
	}
}

// Root attaching to another user's process says so once on stderr, and
// records to a file only root may read.
func TestRootAttachNotice(t *testing.T) {
	requireRoot(t)
	exe := copyWorkload(t, "Workload")
	w := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe, "idle", "seconds=60", "gcEveryMs=50", "stdin=1")
	p := workload.StartCmd(t, w, []string{"HOME=/tmp", "TMPDIR=/tmp"})
	defer p.Release()
	pid := dotnetChild(t, p.Pid)
	out := filepath.Join(t.TempDir(), "root.nettrace")
	_, stderr, code := clrspyRun(t, "record", "--pid", strconv.Itoa(pid), "--duration", "500ms", "-o", out)
	notice := fmt.Sprintf("clrspy: pid %d runs as user nobody (uid 65534); clrspy runs as root and attaches to it\n", pid)
	if code != 0 || strings.Count(stderr, notice) != 1 || !strings.HasPrefix(stderr, notice) {
		t.Errorf("exit %d, stderr %q\nwant it to start with %q, once", code, stderr, notice)
	}
	if c := readBack(t, out); c.pid != pid || c.events == 0 {
		t.Errorf("trace of pid %d with %d events", c.pid, c.events)
	}
	// The trace holds nobody's process data: only root may read it.
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("trace file mode %v (%v), want 0600", st.Mode(), err)
	}
}

// Root's reports about another user's process (they hold its command line,
// method names, stacks) are readable by root only, as record's traces are
// (issue 29: gc, report and profile -o wrote 0644); a report of a trace
// file gets the usual 0644 (less the umask).
func TestRootReportsOwnerOnly(t *testing.T) {
	requireRoot(t)
	exe := copyWorkload(t, "Workload")
	w := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe, "idle", "seconds=90", "gcEveryMs=50", "stdin=1")
	p := workload.StartCmd(t, w, []string{"HOME=/tmp", "TMPDIR=/tmp"})
	defer p.Release()
	pid := strconv.Itoa(dotnetChild(t, p.Pid))
	dir := t.TempDir()
	for _, args := range [][]string{
		{"gc", "--json", "-o", filepath.Join(dir, "gc.json")},
		{"profile", "--sampler", "eventpipe", "--format", "folded", "-o", filepath.Join(dir, "cpu.folded")},
		{"report", "-o", filepath.Join(dir, "report.html")},
		{"locks", "-o", filepath.Join(dir, "locks.txt")},
	} {
		out := args[len(args)-1]
		_, stderr, code := clrspyRun(t, append(args, "--pid", pid, "--duration", "1s")...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", args[0], code, stderr)
			continue
		}
		if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s -o of another user's process: mode %v (%v), want 0600", args[0], st.Mode(), err)
		}
	}
	out := filepath.Join(dir, "file.txt")
	if _, stderr, code := clrspyRun(t, "gc", "-o", out, filepath.Join(sharedTraces, "filtrace__contention.nettrace")); code != 0 {
		t.Fatalf("gc of a file: exit %d: %s", code, stderr)
	}
	umask := os.FileMode(0o022)
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		if i := strings.Index(string(b), "Umask:"); i >= 0 {
			if v, err := strconv.ParseUint(strings.Fields(string(b[i+6:]))[0], 8, 32); err == nil {
				umask = os.FileMode(v)
			}
		}
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644&^umask {
		t.Errorf("gc -o of a trace file: mode %v (%v), want %v", st.Mode(), err, 0o644&^umask)
	}
}
