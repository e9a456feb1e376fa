package main

// End-to-end tests of ps, record and run: the clrspy binary against real
// .NET processes, including the faults the issue lists (no such pid, not
// .NET, diagnostics disabled, another user's process, a process in its own
// pid and mount namespace, clrspy killed mid-session).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/nettrace"
)

var (
	e2eOnce sync.Once
	e2eDir  string
	e2eBin  string
	e2eErr  error
)

// e2eBinary builds clrspy once into a world-readable directory (the
// other-user test runs it under another uid).
func e2eBinary(t testing.TB) string {
	t.Helper()
	e2eOnce.Do(func() {
		e2eDir, e2eErr = os.MkdirTemp("", "clrspy-e2e-")
		if e2eErr != nil {
			return
		}
		os.Chmod(e2eDir, 0o755)
		e2eBin = filepath.Join(e2eDir, "clrspy")
		cmd := exec.Command("go", "build", "-o", e2eBin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			e2eErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if e2eErr != nil {
		t.Fatal(e2eErr)
	}
	return e2eBin
}

// clrspyRun runs the binary and returns stdout, stderr and the exit code.
func clrspyRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(e2eBinary(t), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

type fileCounts struct {
	events, gcStarts, rundown, lost uint64
	pid                             int
}

// readBack reads a recorded file through clrspy's own reader; a truncated
// or corrupt file fails the test.
func readBack(t *testing.T, path string) fileCounts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := nettrace.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var c fileCounts
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s after %d events: %v", path, c.events, err)
		}
		c.events++
		if ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == 1 {
			c.gcStarts++
		}
		if ev.Meta.Runtime == nettrace.Rundown {
			c.rundown++
		}
	}
	c.lost = r.Stats().LostEvents
	c.pid = r.Header().ProcessID
	return c
}

var summaryRE = regexp.MustCompile(`(\d+) events \((\d+) GCs, (\d+) lost\), (\d+) bytes`)

// summary parses record's stderr line: events, GCs, lost, bytes.
func summary(t *testing.T, stderr string) [4]int64 {
	t.Helper()
	m := summaryRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary line in %q", stderr)
	}
	var v [4]int64
	for i := range v {
		v[i], _ = strconv.ParseInt(m[i+1], 10, 64)
	}
	return v
}

// record -- CMD: the file is a byte copy of the stream that reads back with
// every GC the runtime counted; the child's stdout passes through.
func TestRecordLaunch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "churn.nettrace")
	argv := workload.Argv(t, "churn", "iterations=1500")
	stdout, stderr, code := clrspyRun(t, append([]string{"record", "-o", out, "--profile", "gc", "--"}, argv...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := workload.ParseResult([]byte(stdout))
	if err != nil {
		t.Fatal(err)
	}
	c := readBack(t, out)
	s := summary(t, stderr)
	st, _ := os.Stat(out)
	if st.Size() != s[3] {
		t.Errorf("file has %d bytes, the session sent %d", st.Size(), s[3])
	}
	if int(c.gcStarts) != r.Gen0 || int64(c.gcStarts) != s[1] || int64(c.events) != s[0] {
		t.Errorf("file: %d GCs, %d events; summary %v; runtime counted %d GCs", c.gcStarts, c.events, s, r.Gen0)
	}
	if c.pid != r.Pid || c.lost != 0 || c.rundown == 0 {
		t.Errorf("header pid %d (want %d), lost %d, rundown events %d", c.pid, r.Pid, c.lost, c.rundown)
	}
}

// run passes the child's exit code and output through and counts its GCs
// from the first one.
func TestRunExitCode(t *testing.T) {
	argv := workload.Argv(t, "induced", "gen0=1", "gen1=1", "gen2=2", "sleepMs=0", "exit=3")
	stdout, stderr, code := clrspyRun(t, append([]string{"run", "--"}, argv...)...)
	if code != 3 {
		t.Fatalf("exit code %d, want the child's 3; stderr %s", code, stderr)
	}
	r, err := workload.ParseResult([]byte(stdout))
	if err != nil {
		t.Fatal(err)
	}
	if s := summary(t, stderr); s[1] != int64(r.Gen0) || r.Gen0 != 4 {
		t.Errorf("summary %v, runtime counted %d GCs (want 4)", s, r.Gen0)
	}
	// A .NET child of the program inherits the suspending port: clrspy
	// resumes it instead of leaving it waiting.
	stdout, stderr, code = clrspyRun(t, append([]string{"run", "--"}, workload.Argv(t, "spawn", "children=2")...)...)
	if code != 0 {
		t.Fatalf("spawn: exit %d: %s", code, stderr)
	}
	if r, err := workload.ParseResult([]byte(stdout)); err != nil || r.Int("children") != 2 {
		t.Errorf("spawn result %v %v", r, err)
	} else if ms := r.Float("ms"); ms > 20000 {
		t.Errorf("children took %.0f ms", ms)
	}
	_, stderr, code = clrspyRun(t, "run", "--", "/bin/true")
	if code != 1 || !strings.Contains(stderr, "before its .NET runtime connected") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("non-.NET program: exit %d, %q", code, stderr)
	}
	_, stderr, code = clrspyRun(t, "run", "--", "/nonexistent/prog")
	if code != 1 || !strings.Contains(stderr, "no such file") {
		t.Errorf("missing program: exit %d, %q", code, stderr)
	}
}

// record --pid stops on SIGINT with the rundown flushed; --name with
// --duration finds a process by name; the target is unharmed.
func TestRecordAttachSignalAndName(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=60", "gcEveryMs=50", "stdin=1")
	out := filepath.Join(t.TempDir(), "idle.nettrace")
	cmd := exec.Command(e2eBinary(t), "record", "--pid", strconv.Itoa(p.Pid), "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForPartial(t, out)
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record after SIGINT: %v: %s", err, stderr.String())
	}
	c := readBack(t, out)
	if c.gcStarts == 0 || c.rundown == 0 || c.pid != p.Pid {
		t.Errorf("after SIGINT: %d GCs, %d rundown events, pid %d", c.gcStarts, c.rundown, c.pid)
	}

	// A uniquely named copy of the workload for --name.
	name := fmt.Sprintf("wl%d", os.Getpid()%100000)
	exe := copyWorkload(t, name)
	q := workload.StartCmd(t, exec.Command(exe, "idle", "seconds=60", "gcEveryMs=50", "stdin=1"), nil)
	out2 := filepath.Join(t.TempDir(), "name.nettrace")
	start := time.Now()
	_, serr, code := clrspyRun(t, "record", "--name", name, "--duration", "700ms", "-o", out2)
	if code != 0 {
		t.Fatalf("record --name: exit %d %s", code, serr)
	}
	if d := time.Since(start); d < 700*time.Millisecond {
		t.Errorf("--duration 700ms ended after %v", d)
	}
	if c := readBack(t, out2); c.pid != q.Pid || c.gcStarts == 0 {
		t.Errorf("--name trace: pid %d (want %d), %d GCs", c.pid, q.Pid, c.gcStarts)
	}
	_, serr, code = clrspyRun(t, "record", "--name", "no-such-dotnet-app", "-o", out2)
	if code != 1 || serr != "clrspy: no .NET process named \"no-such-dotnet-app\" (see clrspy ps)\n" {
		t.Errorf("unknown name: exit %d %q", code, serr)
	}
	for _, w := range []*workload.Proc{p, q} {
		w.Release()
		if _, err := w.Wait(30 * time.Second); err != nil {
			t.Error(err)
		}
	}
}

// copyWorkload copies the built workload to a world-readable directory
// with its apphost renamed (the apphost finds Workload.dll by its embedded
// name, so only the process name changes).
func copyWorkload(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Dir(workload.Exe(t))
	dir, err := os.MkdirTemp("", "clrspy-wl-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst := e.Name()
		if dst == "Workload" {
			dst = name
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name)
}

// readTruncated counts the events of a trace cut short (or complete).
func readTruncated(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := nettrace.NewReader(f)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF || errors.Is(err, nettrace.ErrTruncated) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// waitForPartial waits until record's out.partial-XXXXXXXX (where the
// stream goes until the session ends) has bytes, and returns its name.
func waitForPartial(t *testing.T, out string) string {
	t.Helper()
	for i := 0; i < 400; i++ {
		if m, _ := filepath.Glob(out + ".partial-*"); len(m) == 1 {
			waitForBytes(t, m[0])
			return m[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s.partial-* file", out)
	return ""
}

func waitForBytes(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s stayed empty", path)
}

// clrspy killed outright: the target keeps running, can be attached
// again, and exits normally.
func TestKilledClrspyLeavesTargetUnharmed(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=60", "gcEveryMs=50", "stdin=1")
	out := filepath.Join(t.TempDir(), "killed.nettrace")
	cmd := exec.Command(e2eBinary(t), "record", "--pid", strconv.Itoa(p.Pid), "--profile", "all", "-o", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	partial := waitForPartial(t, out)
	// Kill once the partial file holds complete events (the workload's GC
	// every 50 ms makes some within a second, even on a loaded machine).
	before := 0
	for i := 0; i < 400 && before == 0; i++ {
		before, _ = readTruncated(partial)
		if before == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	time.Sleep(300 * time.Millisecond)
	if p.Exited() {
		t.Fatal("the target died with clrspy")
	}
	// The killed clrspy left what it received in the partial file (a
	// stream cut short: it reads as truncated) and nothing under out.
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a killed record left %s", out)
	}
	if n, err := readTruncated(partial); err != nil || n == 0 || n < before {
		t.Errorf("%s: %d events (%d before the kill), %v", partial, n, before, err)
	}
	out2 := filepath.Join(t.TempDir(), "again.nettrace")
	if _, serr, code := clrspyRun(t, "record", "--pid", strconv.Itoa(p.Pid), "--duration", "500ms", "-o", out2); code != 0 {
		t.Fatalf("attach again: exit %d %s", code, serr)
	}
	if c := readBack(t, out2); c.gcStarts == 0 {
		t.Errorf("second session saw no GC")
	}
	p.Release()
	r, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r.Int("steps") == 0 {
		t.Errorf("target did no work")
	}
}

type psJSON struct {
	Pid            int    `json:"pid"`
	Name           string `json:"name"`
	RuntimeVersion string `json:"runtime_version"`
	Arch           string `json:"arch"`
	CommandLine    string `json:"command_line"`
	Attachable     bool   `json:"attachable"`
	Reason         string `json:"reason"`
}

func psList(t *testing.T) map[int]psJSON {
	t.Helper()
	stdout, stderr, code := clrspyRun(t, "ps", "--json")
	if code != 0 {
		t.Fatalf("ps: %d %s", code, stderr)
	}
	var l []psJSON
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatal(err)
	}
	m := map[int]psJSON{}
	for _, e := range l {
		m[e.Pid] = e
	}
	return m
}

func TestPs(t *testing.T) {
	ok := workload.Start(t, nil, "idle", "seconds=60", "stdin=1")
	off := workload.Start(t, []string{"DOTNET_EnableDiagnostics=0"}, "idle", "seconds=60", "stdin=1")
	// A stale socket of a process that no longer exists.
	stale := "/tmp/dotnet-diagnostic-999999998-12345-socket"
	if err := os.WriteFile(stale, nil, 0o600); err == nil {
		defer os.Remove(stale)
	}
	m := psList(t)
	if _, listed := m[999999998]; listed {
		t.Errorf("a stale socket's dead pid is listed")
	}
	e := m[ok.Pid]
	if !e.Attachable || e.Name != "Workload" || e.Arch != "x64" || !strings.Contains(e.CommandLine, "idle seconds=60") ||
		(workload.TFM() == "net10.0" && !strings.HasPrefix(e.RuntimeVersion, "10.")) {
		t.Errorf("ps entry %+v", e)
	}
	if e := m[off.Pid]; e.Attachable || e.Reason != "diagnostics are disabled in this process (DOTNET_EnableDiagnostics=0)" {
		t.Errorf("disabled process: %+v", e)
	}
	if _, listed := m[os.Getpid()]; listed {
		t.Errorf("the Go test process is listed as .NET")
	}
	stdout, _, _ := clrspyRun(t, "ps")
	if !strings.Contains(stdout, strconv.Itoa(ok.Pid)+"  ") || !strings.Contains(stdout, "pid "+strconv.Itoa(off.Pid)+" cannot be attached: diagnostics are disabled") {
		t.Errorf("ps text:\n%s", stdout)
	}
	ok.Release()
	off.Release()
}

// Each bad target is one clear line on stderr and exit status 1.
func TestBadTargets(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	off := workload.Start(t, []string{"DOTNET_EnableDiagnostics=0"}, "idle", "seconds=60", "stdin=1")
	defer off.Release()
	o := filepath.Join(t.TempDir(), "x.nettrace")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "--pid", "999999999", "-o", o}, "clrspy: pid 999999999: no such process\n"},
		{[]string{"record", "--pid", strconv.Itoa(sleep.Process.Pid), "-o", o},
			fmt.Sprintf("clrspy: pid %d: sleep is not a .NET process (no CoreCLR runtime loaded, no diagnostics socket in /tmp)\n", sleep.Process.Pid)},
		{[]string{"record", "--pid", strconv.Itoa(off.Pid), "-o", o},
			fmt.Sprintf("clrspy: pid %d: diagnostics are disabled in this process (DOTNET_EnableDiagnostics=0)\n", off.Pid)},
		{[]string{"record", "-o", o}, "clrspy: record needs a live target: --pid, --name or -- COMMAND\n"},
		{[]string{"record", "--pid", "1", "--profile", "nope", "-o", o}, "clrspy: unknown profile \"nope\" (profiles: all, alloc, contention, cpu, gc, gc-verbose, gcdump, movement, requests, threadpool)\n"},
		{[]string{"record", "--pid", "1", "--providers", "X:zz", "-o", o}, "clrspy: provider X: keywords \"zz\" are not a hex number\n"},
	} {
		_, stderr, code := clrspyRun(t, tc.args...)
		if code != 1 || stderr != tc.want {
			t.Errorf("%v: exit %d\n got %q\nwant %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(o); err == nil {
		t.Errorf("a failed record left %s behind", o)
	}
	// An existing output (here a stand-in for /dev/null) survives a failed
	// record.
	keep := filepath.Join(t.TempDir(), "keep")
	os.WriteFile(keep, []byte("x"), 0o644)
	if _, _, code := clrspyRun(t, "record", "--pid", "999999999", "-o", keep); code != 1 {
		t.Errorf("exit %d", code)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a failed record removed the existing %s", keep)
	}
}

// requireRoot skips when the test cannot change uids or namespaces.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (to run the workload and clrspy under other uids / in new namespaces)")
	}
}

// A process of another user: clrspy (not root) says in one line which
// socket and which owner stop it.
func TestOtherUsersProcess(t *testing.T) {
	requireRoot(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	exe := copyWorkload(t, "Workload")
	w := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe, "idle", "seconds=60", "stdin=1")
	p := workload.StartCmd(t, w, []string{"HOME=/tmp", "TMPDIR=/tmp"})
	pid := dotnetChild(t, p.Pid)
	outDir, err := os.MkdirTemp("", "clrspy-uid-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(outDir)
	os.Chmod(outDir, 0o777)
	cmd := exec.Command("setpriv", "--reuid=65533", "--regid=65533", "--clear-groups", e2eBinary(t),
		"record", "--pid", strconv.Itoa(pid), "-o", filepath.Join(outDir, "x.nettrace"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	want := regexp.MustCompile(fmt.Sprintf(`^clrspy: pid %d: the diagnostics socket /tmp/dotnet-diagnostic-%d-\d+-socket is owned by user nobody \(uid 65534\); clrspy runs as uid 65533: run it as that user or as root\n$`, pid, pid))
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !want.MatchString(stderr.String()) {
		t.Errorf("err %v, stderr %q", err, stderr.String())
	}
	// ps as that user lists the process as not attachable, with the owner.
	ps := exec.Command("setpriv", "--reuid=65533", "--regid=65533", "--clear-groups", e2eBinary(t), "ps", "--json")
	b, err := ps.Output()
	if err != nil {
		t.Fatalf("ps as uid 65533: %v", err)
	}
	var l []psJSON
	json.Unmarshal(b, &l)
	found := false
	for _, e := range l {
		if e.Pid == pid {
			found = true
			if e.Attachable || !strings.Contains(e.Reason, "owned by user nobody (uid 65534)") {
				t.Errorf("ps entry %+v", e)
			}
		}
	}
	if !found {
		t.Errorf("ps as uid 65533 does not list pid %d: %s", pid, b)
	}
	// As root the same process is attachable.
	if _, serr, code := clrspyRun(t, "record", "--pid", strconv.Itoa(pid), "--duration", "300ms", "-o", filepath.Join(outDir, "root.nettrace")); code != 0 {
		t.Errorf("as root: exit %d %s", code, serr)
	}
	p.Release()
}

// dotnetChild is pid itself or, for wrappers that exec (setpriv) or fork
// (unshare --fork), the process under it that runs the runtime.
func dotnetChild(t *testing.T, pid int) int {
	t.Helper()
	for i := 0; i < 3; i++ {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(b)) == "Workload" {
			return pid
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil {
			break
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			break
		}
		pid, _ = strconv.Atoi(f[0])
	}
	t.Fatalf("no Workload process under pid %d", pid)
	return 0
}

// A process in its own pid and mount namespace with a private /tmp (a
// container): found through /proc/PID/root and NSpid, listed and traced.
func TestNamespacedProcess(t *testing.T) {
	requireRoot(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare (util-linux)")
	}
	exe := workload.Exe(t)
	if st, err := os.Stat("/mnt"); err != nil || !st.IsDir() {
		t.Skip("needs an empty /mnt to bind the workload onto")
	}
	// The clone (and so the workload) may itself live under /tmp, which the
	// private tmpfs hides: bind the workload's directory onto /mnt first,
	// inside the private mount namespace (the host's /mnt is untouched).
	w := exec.Command("unshare", "--pid", "--mount", "--fork", "--mount-proc", "sh", "-c",
		"mount --bind \"$0\" /mnt && mount -t tmpfs tmpfs /tmp && exec /mnt/\"$1\" idle seconds=60 gcEveryMs=50 stdin=1",
		filepath.Dir(exe), filepath.Base(exe))
	p := workload.StartCmd(t, w, nil)
	pid := dotnetChild(t, p.Pid)
	if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); !strings.Contains(string(b), "NSpid:\t"+strconv.Itoa(pid)+"\t1") {
		t.Fatalf("workload not in its own pid namespace: %s", b)
	}
	if m, _ := filepath.Glob("/tmp/dotnet-diagnostic-1-*-socket"); len(m) > 0 {
		t.Logf("note: host /tmp also has %v", m)
	}
	if e := psList(t)[pid]; !e.Attachable {
		t.Errorf("ps: %+v", e)
	}
	out := filepath.Join(t.TempDir(), "ns.nettrace")
	if _, serr, code := clrspyRun(t, "record", "--pid", strconv.Itoa(pid), "--duration", "500ms", "-o", out); code != 0 {
		t.Fatalf("record: exit %d %s", code, serr)
	}
	c := readBack(t, out)
	// The trace header carries the pid as the process sees it.
	if c.pid != 1 || c.gcStarts == 0 {
		t.Errorf("trace pid %d (want 1), %d GCs", c.pid, c.gcStarts)
	}
	p.Release()
}

// SIGTERM to clrspy in launch mode stops the session, is passed to the
// program, and leaves a complete trace.
func TestRecordLaunchSIGTERM(t *testing.T) {
	out := filepath.Join(t.TempDir(), "term.nettrace")
	argv := workload.Argv(t, "idle", "seconds=60", "gcEveryMs=50")
	cmd := exec.Command(e2eBinary(t), append([]string{"record", "-o", out, "--"}, argv...)...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The program's own stderr passes through: wait until it runs.
	waitFor(t, &stderr, "ready ")
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		// The program died of SIGTERM: 128+15.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
			t.Errorf("exit %v, want 143; %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("record did not end after SIGTERM")
	}
	if c := readBack(t, out); c.gcStarts == 0 {
		t.Errorf("no GC in the trace")
	}
}

// --duration with a launched program: after the duration the session
// stops (rundown written), the program is sent SIGTERM, and its death by
// that signal is not clrspy's failure: exit 0, the program gone.
func TestRecordLaunchDuration(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dur.nettrace")
	argv := workload.Argv(t, "idle", "seconds=60", "gcEveryMs=50")
	start := time.Now()
	_, serr, code := clrspyRun(t, append([]string{"record", "--duration", "1500ms", "-o", out, "--"}, argv...)...)
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, serr)
	}
	if took < 1500*time.Millisecond || took > 30*time.Second {
		t.Errorf("--duration 1.5s with a 60 s program ended after %v", took)
	}
	if !strings.Contains(serr, "clrspy: --duration 1.5s reached: stopping the session, then sending SIGTERM to ") {
		t.Errorf("stderr does not say why the program ended: %q", serr)
	}
	c := readBack(t, out)
	if c.gcStarts == 0 || c.rundown == 0 {
		t.Errorf("trace: %d GCs, %d rundown events", c.gcStarts, c.rundown)
	}
	if err := syscall.Kill(c.pid, 0); err != syscall.ESRCH {
		t.Errorf("program pid %d still there after clrspy ended: %v", c.pid, err)
	}
}

// Ctrl-C at a terminal signals clrspy and the program together (one
// process group): the program exits and the trace is still complete.
func TestRunCtrlC(t *testing.T) {
	out := filepath.Join(t.TempDir(), "int.nettrace")
	argv := workload.Argv(t, "idle", "seconds=60", "gcEveryMs=50")
	cmd := exec.Command(e2eBinary(t), append([]string{"run", "-o", out, "--"}, argv...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The program's own stderr passes through: wait until it runs.
	waitFor(t, &stderr, "ready ")
	time.Sleep(500 * time.Millisecond)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		// .NET exits with 130 on an unhandled Ctrl-C; clrspy passes it on.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
			t.Errorf("exit %v, want 130; %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatal("run did not end after Ctrl-C")
	}
	if c := readBack(t, out); c.gcStarts == 0 || c.rundown == 0 {
		t.Errorf("trace after Ctrl-C: %d GCs, %d rundown events", c.gcStarts, c.rundown)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a poller.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls b until it contains want.
func waitFor(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(b.String(), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q in %q", want, b.String())
}

// TestRecordTargetDies: the process being recorded is killed mid-session.
// record says so and when, exits 0, and its file reads as complete (no
// truncation) up to the death: the block the kill cut is dropped and the
// stream's end marker written.
func TestRecordTargetDies(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=60", "gcEveryMs=20", "stdin=1")
	out := filepath.Join(t.TempDir(), "dies.nettrace")
	cmd := exec.Command(e2eBinary(t), "record", "--pid", strconv.Itoa(p.Pid), "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForPartial(t, out)
	time.Sleep(time.Second)
	p.Cmd.Process.Kill()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record after the target's death: %v: %s", err, stderr.String())
	}
	want := regexp.MustCompile(fmt.Sprintf(`clrspy: target exited \(pid %d\) after \d+\.\ds: the recording ends there\n`, p.Pid))
	if !want.MatchString(stderr.String()) {
		t.Errorf("stderr %q lacks %s", stderr.String(), want)
	}
	c := readBack(t, out) // fails the test on a truncated file
	if c.gcStarts == 0 || c.pid != p.Pid {
		t.Errorf("the file up to the death: %d GCs, pid %d", c.gcStarts, c.pid)
	}
}
