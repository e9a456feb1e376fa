package serve

// Live tests of the daemon against real .NET processes. Every test runs
// the workload under a name of its own (a symlink: the process name is the
// link's) and gives the daemon that name, so processes of other tests on
// the machine are never touched.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/metrics"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/report"
)

var aliasSeq struct {
	sync.Mutex
	n int
}

// alias is a symlink to the workload named Srv<test-unique suffix> (at
// most 15 characters: the kernel's process name length), in dir.
func alias(t testing.TB, dir string) (path, name string) {
	t.Helper()
	aliasSeq.Lock()
	aliasSeq.n++
	name = fmt.Sprintf("Srv%d_%d", os.Getpid()%100000, aliasSeq.n)
	aliasSeq.Unlock()
	path = filepath.Join(dir, name)
	if err := os.Symlink(workload.Exe(t), path); err != nil {
		t.Fatal(err)
	}
	return path, name
}

// startAs runs the workload under its alias.
func startAs(t testing.TB, path string, env []string, args ...string) *workload.Proc {
	t.Helper()
	return workload.StartCmd(t, exec.Command(path, args...), env)
}

// run starts the daemon; the test's cleanup stops it and checks that Run
// returned.
func run(t *testing.T, cfg Config) (*Daemon, *workload.LockedBuffer) {
	t.Helper()
	log := &workload.LockedBuffer{}
	cfg.LogOutput = log
	if cfg.PauseLog == nil {
		// Every pause at info (Info 0): an induced GC of a small heap takes
		// well under a millisecond on an idle machine, tens on a loaded one,
		// and the tests look for the line whatever its length.
		cfg.PauseLog = &report.PauseLogOptions{Warn: time.Second}
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Run did not return 30 s after its context ended")
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", log.String())
		}
	})
	return d, log
}

// waitFor polls cond every 20 ms for up to timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < timeout {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v", what, timeout)
	return 0
}

func info(d *Daemon, pid string) (TargetInfo, bool) {
	for _, ti := range d.List() {
		if strconv.Itoa(ti.Pid) == pid {
			return ti, true
		}
	}
	return TargetInfo{}, false
}

func exported(d *Daemon, pid string) (metrics.Target, bool) {
	for _, t := range d.Targets() {
		if t.Pid == pid {
			return t, true
		}
	}
	return metrics.Target{}, false
}

// startedCounts reads the workload's "started gen0=.. gen1=.. gen2=.."
// line (wait=1).
func startedCounts(t *testing.T, p *workload.Proc) [3]int {
	t.Helper()
	var c [3]int
	var pause float64
	for _, l := range strings.Split(p.Stderr(), "\n") {
		if strings.HasPrefix(l, "started ") {
			if _, err := fmt.Sscanf(l, "started gen0=%d gen1=%d gen2=%d pauseMs=%g", &c[0], &c[1], &c[2], &pause); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			return c
		}
	}
	t.Fatalf("no started line in %q", p.Stderr())
	return c
}

// TestAttach: a process started after the daemon is found within 2 s and
// monitored; its GCs after the attach are every GC the runtime counted
// since then; once it exits its series stay for the grace period, then go.
func TestAttach(t *testing.T) {
	path, name := alias(t, t.TempDir())
	d, log := run(t, Config{Names: []string{name}, Grace: 2 * time.Second})
	p := startAs(t, path, nil, "induced", "gen0=4", "gen1=2", "gen2=1", "wait=1")
	pid := strconv.Itoa(p.Pid)
	// "ready" is printed once the runtime runs: its socket exists then.
	found := waitFor(t, 10*time.Second, "target listed", func() bool { _, ok := info(d, pid); return ok })
	up := waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	t.Logf("found %v after ready, session open %v later", found, up)
	// The bound; the discovery itself takes one inotify event and
	// a 250 ms settle (the scan, a second at most, is the fallback).
	if found > 2*time.Second {
		t.Errorf("found %v after the process was ready, want within 2 s", found)
	}
	p.Release()
	res, err := p.Wait(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	before := startedCounts(t, p)
	waitFor(t, 20*time.Second, "exit seen", func() bool { ti, _ := info(d, pid); return ti.State == "exited" })
	tg, ok := exported(d, pid)
	if !ok || tg.Up || tg.Process != name {
		t.Fatalf("exited target: %+v (found %v)", tg, ok)
	}
	gens := [3]gcpause.GenSummary{tg.Snapshot.GC.Gen(0), tg.Snapshot.GC.Gen(1), tg.Snapshot.GC.Gen(2)}
	// Exclusive counts: the runtime's CollectionCount(n) counts every GC of
	// generation n or higher.
	want := [3]int{res.Gen0 - res.Gen1 - (before[0] - before[1]), res.Gen1 - res.Gen2 - (before[1] - before[2]), res.Gen2 - before[2]}
	if got := [3]int{gens[0].Count, gens[1].Count, gens[2].Count}; got != want {
		t.Errorf("GCs per generation %v, the runtime counted %v after the attach", got, want)
	}
	if !strings.Contains(log.String(), "GC pause pid="+pid+" process="+name+" gc=") {
		t.Errorf("no pause log line with pid and process:\n%s", log.String())
	}
	waitFor(t, 10*time.Second, "series dropped after the grace period", func() bool {
		_, ok := exported(d, pid)
		_, listed := info(d, pid)
		return !ok && !listed
	})
}

// TestListen: runtimes started with DOTNET_DiagnosticPorts wait for the
// daemon, which opens their session before resuming them: every GC the
// runtime counts is in the model. One left out by --name runs unmonitored.
func TestListen(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	other, _ := alias(t, dir)
	port := filepath.Join(dir, "port.sock")
	d, _ := run(t, Config{Names: []string{name}, DiagnosticPort: port, NoAttach: true})
	env := []string{d.DiagnosticPortEnv(), "DOTNET_gcServer=1"}
	if d.DiagnosticPortEnv() != "DOTNET_DiagnosticPorts="+port+",connect,suspend" {
		t.Errorf("env %q", d.DiagnosticPortEnv())
	}
	p := startAs(t, path, env, "service", "seconds=2")
	q := startAs(t, other, env, "idle", "seconds=1")
	res, err := p.Wait(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Wait(60 * time.Second); err != nil {
		t.Fatalf("the runtime left out was not resumed: %v", err)
	}
	pid := strconv.Itoa(p.Pid)
	waitFor(t, 20*time.Second, "exit seen", func() bool { ti, _ := info(d, pid); return ti.State == "exited" })
	if _, ok := info(d, strconv.Itoa(q.Pid)); ok {
		t.Errorf("pid %d (left out by --name) is monitored", q.Pid)
	}
	tg, _ := exported(d, pid)
	ti, _ := info(d, pid)
	if ti.Kind != "listen" || ti.HostPid != p.Pid || tg.Snapshot.Process.GC.Kind != "server" || !res.ServerGC {
		t.Errorf("target %+v, GC %+v", ti, tg.Snapshot.Process.GC)
	}
	gens := [3]gcpause.GenSummary{tg.Snapshot.GC.Gen(0), tg.Snapshot.GC.Gen(1), tg.Snapshot.GC.Gen(2)}
	want := [3]int{res.Gen0 - res.Gen1, res.Gen1 - res.Gen2, res.Gen2}
	if got := [3]int{gens[0].Count, gens[1].Count, gens[2].Count}; got != want || res.Gen0 == 0 {
		t.Errorf("GCs per generation %v, the runtime counted %v", got, want)
	}
	var lk struct {
		TotalWaitMs float64 `json:"totalWaitMs"`
	}
	if err := res.Get("contention", &lk); err != nil {
		t.Fatal(err)
	}
	// The workload times TryEnter+Enter on its one lock, spinning
	// included; the events time the wait after the spin: a little less,
	// never more. The process total may hold more: under load the
	// runtime's and the libraries' own locks contend too (a CI run saw
	// 2.7 ms over 1,332), so the check is on the lock that waited longest,
	// the workload's, when the runtime names locks (.NET 8+).
	ls := tg.Snapshot.Locks
	got := ls.TotalWaitMS
	if len(ls.Top) > 0 && ls.Top[0].LockID != 0 {
		got = ls.Top[0].TotalWaitMS
	}
	t.Logf("lock waits: top lock %.1f ms, process %.1f ms, the workload %.1f ms (%d locks)", got, ls.TotalWaitMS, lk.TotalWaitMs, len(ls.Top))
	if got > lk.TotalWaitMs || got < 0.9*lk.TotalWaitMs || ls.TotalWaitMS < got {
		t.Errorf("lock waits %.1f ms (process total %.1f, top %+v), the workload measured %.1f ms", got, ls.TotalWaitMS, ls.Top, lk.TotalWaitMs)
	}
}

// staleSocket leaves a socket file nothing listens on, named as the
// runtime names pid's.
func staleSocket(t *testing.T, pid int) {
	t.Helper()
	ticks, err := procfs.StartTicks(pid)
	if err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/tmp/dotnet-diagnostic-%d-%d-socket", pid, ticks)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	t.Cleanup(func() { os.Remove(path) })
}

// TestFailingTarget: a process whose attach fails (a stale socket: a
// process that looks like .NET but refuses) is retried, given up, counted,
// and never disturbs the monitoring of the others.
func TestFailingTarget(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	sleeper := filepath.Join(dir, "sleep-"+name)
	os.Symlink("/bin/sleep", sleeper)
	d, _ := run(t, Config{Names: []string{name, "sleep-" + name}, Retry: 100 * time.Millisecond})
	fake := exec.Command(sleeper, "60")
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	defer fake.Process.Kill()
	time.Sleep(200 * time.Millisecond)
	staleSocket(t, fake.Process.Pid)
	p := startAs(t, path, nil, "idle", "seconds=30", "gcEveryMs=100", "stdin=1")
	waitFor(t, 20*time.Second, "real process monitored", func() bool { ti, _ := info(d, strconv.Itoa(p.Pid)); return ti.State == "running" })
	waitFor(t, 20*time.Second, "failed attaches counted", func() bool { return d.Health().AttachErrors["refused"] >= maxFirstAttempts })
	if _, ok := info(d, strconv.Itoa(fake.Process.Pid)); ok {
		t.Errorf("a process never monitored is listed")
	}
	time.Sleep(time.Second)
	if n := d.Health().AttachErrors["refused"]; n != maxFirstAttempts {
		t.Errorf("%d refused attaches, want %d then no more", n, maxFirstAttempts)
	}
	if h := d.Health(); h.Sessions != 1 {
		t.Errorf("health %+v", h)
	}
	p.Release()
}

// TestStop: ending Run stops every session with its rundown; the
// processes run on and can be attached again.
func TestStop(t *testing.T) {
	path, name := alias(t, t.TempDir())
	d, err := New(Config{Names: []string{name}, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	p := startAs(t, path, nil, "idle", "seconds=60", "gcEveryMs=50", "stdin=1")
	pid := strconv.Itoa(p.Pid)
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	ti, _ := info(d, pid)
	tg, _ := exported(d, pid)
	if ti.State != "stopped" || p.Exited() || tg.Snapshot.Session.State != "stopped" || d.Health().Sessions != 0 {
		t.Errorf("after stop: %+v, session %+v, exited %v", ti, tg.Snapshot.Session, p.Exited())
	}
	// Attachable again: a second daemon monitors it.
	d2, _ := run(t, Config{Names: []string{name}})
	waitFor(t, 20*time.Second, "attached again", func() bool { ti, _ := info(d2, pid); return ti.State == "running" })
	p.Release()
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, h http.Handler, url string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
	return rec
}

// TestProfiles: /debug/pprof/profile is a CPU profile of one process
// naming its hot method; one profile per process at a time; contention is
// a lock profile; bad requests are refused in one line.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	lpath, lname := alias(t, dir)
	d, _ := run(t, Config{Names: []string{name, lname}})
	h, err := d.Handler(HandlerOptions{HeapEvery: -1, ProfileEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	p := startAs(t, path, nil, "cpu", "seconds=60")
	pid := strconv.Itoa(p.Pid)
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	second := make(chan int, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		second <- get(t, h, "/debug/pprof/profile?pid="+pid+"&seconds=1").Code
	}()
	start := time.Now()
	rec := get(t, h, "/debug/pprof/profile?pid="+pid+"&seconds=2&sampler=eventpipe")
	t.Logf("a 2 s EventPipe profile took %v", time.Since(start).Round(time.Millisecond))
	if rec.Code != 200 {
		t.Fatalf("profile: %d %s", rec.Code, rec.Body)
	}
	if c := <-second; c != http.StatusConflict {
		t.Errorf("a second profile at the same time: %d, want 409", c)
	}
	checkHot(t, "eventpipe", rec.Body)
	// The perf_event sampler where the kernel permits it (root here).
	if _, err := perf.Check(p.Pid, perf.Options{}); err == nil {
		start := time.Now()
		rec := get(t, h, "/debug/pprof/profile?pid="+pid+"&seconds=2&sampler=perf")
		t.Logf("a 2 s perf profile took %v", time.Since(start).Round(time.Millisecond))
		if rec.Code != 200 {
			t.Fatalf("perf profile: %d %s", rec.Code, rec.Body)
		}
		checkHot(t, "perf", rec.Body)
	} else {
		t.Logf("perf sampler not checked: %v", err)
	}
	for url, code := range map[string]int{
		"/debug/pprof/profile":                              400,
		"/debug/pprof/profile?pid=" + pid + "&seconds=abc":  400,
		"/debug/pprof/profile?pid=" + pid + "&seconds=9999": 400,
		"/debug/pprof/profile?pid=1&seconds=1":              404,
		"/healthz":                                          200,
		"/targets":                                          200,
		"/nothing":                                          404,
	} {
		if rec := get(t, h, url); rec.Code != code || strings.Count(strings.TrimSpace(rec.Body.String()), "\n") > 0 && code != 200 {
			t.Errorf("%s: %d %q, want %d in one line", url, rec.Code, rec.Body.String(), code)
		}
	}
	post := httptest.NewRecorder()
	h.ServeHTTP(post, httptest.NewRequest("POST", "/metrics", nil))
	if post.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", post.Code)
	}
	// Lock contention of another process.
	q := startAs(t, lpath, nil, "contention", "threads=4", "iterations=40", "holdMs=20", "wait=1")
	lpid := strconv.Itoa(q.Pid)
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, lpid); return ti.State == "running" })
	q.Release()
	start = time.Now()
	rec = get(t, h, "/debug/pprof/contention?pid="+lpid+"&seconds=2")
	t.Logf("a 2 s contention profile took %v", time.Since(start).Round(time.Millisecond))
	if rec.Code != 200 {
		t.Fatalf("contention: %d %s", rec.Code, rec.Body)
	}
	lp, err := profile.Parse(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	var waits, delay int64
	for _, s := range lp.Sample {
		waits += s.Value[0]
		delay += s.Value[1]
	}
	if len(lp.SampleType) != 2 || lp.SampleType[1].Unit != "nanoseconds" || waits == 0 || delay < int64(10*time.Millisecond) {
		t.Errorf("contention profile: types %v, %d waits, %v", lp.SampleType, waits, time.Duration(delay))
	}
	if _, err := q.Wait(60 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// checkHot: the profile names HotA, which does three times HotB's work.
func checkHot(t *testing.T, sampler string, body io.Reader) {
	t.Helper()
	prof, err := profile.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	hot := map[string]int64{}
	var total int64
	for _, s := range prof.Sample {
		total += s.Value[0]
		seen := map[string]bool{}
		for _, l := range s.Location {
			for _, ln := range l.Line {
				n := ln.Function.Name
				for _, m := range []string{"HotA", "HotB"} {
					if strings.Contains(n, "Cpu."+m) && !seen[m] {
						seen[m] = true
						hot[m] += s.Value[0]
					}
				}
			}
		}
	}
	if total == 0 || hot["HotA"] <= hot["HotB"] {
		t.Errorf("%s: %d samples: HotA in %d, HotB in %d", sampler, total, hot["HotA"], hot["HotB"])
	}
}

// TestCaptures: pauses over the threshold are saved per process, named by
// process, pid and GC, readable, and the directory stays within its cap.
func TestCaptures(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	capDir := t.TempDir()
	os.WriteFile(filepath.Join(capDir, "unrelated.nettrace"), []byte("keep me"), 0o644)
	d, _ := run(t, Config{Names: []string{name}, Capture: Capture{Over: time.Millisecond, Dir: capDir,
		Before: 500 * time.Millisecond, After: 100 * time.Millisecond, MaxFiles: 3}})
	p := startAs(t, path, nil, "churn", "seconds=4", "wait=1")
	pid := strconv.Itoa(p.Pid)
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	p.Release()
	if _, err := p.Wait(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "exit seen", func() bool { ti, _ := info(d, pid); return ti.State == "exited" })
	ents, _ := os.ReadDir(capDir)
	var caps []string
	for _, e := range ents {
		if e.Name() != "unrelated.nettrace" {
			caps = append(caps, e.Name())
		}
	}
	if len(caps) != 3 || len(ents) != 4 {
		t.Fatalf("capture dir holds %v, want 3 captures and the unrelated file", caps)
	}
	for _, c := range caps {
		if !strings.HasPrefix(c, name+"_"+pid+"_gc") || !captureName.MatchString(c) {
			t.Errorf("capture %s: not named PROCESS_PID_gcN_TIME", c)
		}
		f, err := os.Open(filepath.Join(capDir, c))
		if err != nil {
			t.Fatal(err)
		}
		r, err := nettrace.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				if err != io.EOF {
					t.Errorf("%s: %v after %d events", c, err, n)
				}
				break
			}
			n++
		}
		f.Close()
		if n == 0 || r.Header().ProcessID != p.Pid {
			t.Errorf("%s: %d events, pid %d", c, n, r.Header().ProcessID)
		}
	}
}

// TestNamespacedDiscovery (root): a process in its own pid and mount
// namespace with a private /tmp (a container) is found through the /proc
// scan within 2 s and monitored, under its host pid.
func TestNamespacedDiscovery(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (new namespaces)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare (util-linux)")
	}
	dir, err := os.MkdirTemp(filepath.Dir(filepath.Dir(workload.Exe(t))), "ns-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// A copy of the workload's directory under the alias's name, not a
	// symbolic link: the checkout may be under /tmp, which the namespace
	// replaces, and a link would point into what it hides.
	link, name := alias(t, dir)
	os.Remove(link)
	bin := filepath.Dir(workload.Exe(t))
	ents, err := os.ReadDir(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(bin, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		to := e.Name()
		if to == filepath.Base(workload.Exe(t)) {
			to = name
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := run(t, Config{Names: []string{name}})
	// The directory is bound onto /mnt inside the namespace only.
	w := exec.Command("unshare", "--pid", "--mount", "--fork", "--mount-proc", "sh", "-c",
		"mount --bind \"$0\" /mnt && mount -t tmpfs tmpfs /tmp && exec /mnt/\"$1\" idle seconds=60 gcEveryMs=50 stdin=1", dir, name)
	p := workload.StartCmd(t, w, nil)
	var pid int
	waitFor(t, 10*time.Second, "workload under unshare", func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", p.Pid, p.Pid))
		f := strings.Fields(string(b))
		if len(f) > 0 {
			pid, _ = strconv.Atoi(f[0])
		}
		return pid > 0 && procfs.Comm(pid, 0) == name
	})
	found := waitFor(t, 10*time.Second, "namespaced target listed", func() bool { _, ok := info(d, strconv.Itoa(pid)); return ok })
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, strconv.Itoa(pid)); return ti.State == "running" })
	t.Logf("namespaced process found %v after it was ready", found)
	if found > 2*time.Second {
		t.Errorf("found after %v, want within 2 s", found)
	}
	p.Release()
	p.Cmd.Process.Signal(syscall.SIGTERM)
}

// TestSeedAgesInHelp holds dotnet_gc_collections_total's HELP text (the
// metrics package's golden exposition) to the ages serve seeds at: the
// meter asked for at the attach from meterMinAge, the second session at
// seedMinAge.
func TestSeedAgesInHelp(t *testing.T) {
	b, err := os.ReadFile("../metrics/testdata/exposition.txt")
	if err != nil {
		t.Fatal(err)
	}
	var help string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "# HELP dotnet_gc_collections_total ") {
			help = l
		}
	}
	secs := func(d interface{ Seconds() float64 }) string { return fmt.Sprintf("%g s", d.Seconds()) }
	for _, want := range []string{
		"ran at least " + secs(meterMinAge),
		"once younger ones have run " + secs(seedMinAge),
		"attached younger than " + secs(meterMinAge) + " until it is " + secs(seedMinAge) + " old",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("dotnet_gc_collections_total's HELP lacks %q:\n%s", want, help)
		}
	}
}

// TestMemWatchDemand: clrspy_findings' CPU demand is triage's formula over
// the readings kept: 15 s of threads' CPU time in 10 s on 2 cores is 75 %;
// the oldest reading leaves past maxMemorySamples; one reading says
// nothing (-1).
func TestMemWatchDemand(t *testing.T) {
	var w memWatch
	t0 := time.Unix(1000, 0)
	w.addCPU(t0, 0)
	if got := w.demandPct(2); got != -1 {
		t.Errorf("one reading: %v, want -1", got)
	}
	w.addCPU(t0.Add(10*time.Second), 15e9)
	if got := w.demandPct(2); got != 75 {
		t.Errorf("15 s of CPU in 10 s on 2 cores: %v %%, want 75", got)
	}
	// maxMemorySamples more readings at 1 s of CPU per second: the first
	// two leave, the span is one core's worth.
	for i := range maxMemorySamples {
		w.addCPU(t0.Add(time.Duration(11+i)*time.Second), 15e9+int64(i+1)*1e9)
	}
	if len(w.cpu) != maxMemorySamples {
		t.Fatalf("%d readings kept, want %d", len(w.cpu), maxMemorySamples)
	}
	if got := w.demandPct(2); got != 50 {
		t.Errorf("1 s of CPU per second on 2 cores: %v %%, want 50", got)
	}
}
