package main

// End-to-end tests of clrspy top: the binary in a real terminal (tmux)
// against the workload, its screen read back with capture-pane and
// compared with what the runtime says about itself.
//
// Tolerances: the machine is shared and loaded (2 cores, load average
// about 20 while these were written), so nothing here is timed: every
// check polls the screen until it shows the expected figures, with a
// deadline (screenWait) far beyond the one-second refresh. The figures
// themselves are exact: GC counts equal the runtime's, the longest pause
// equals clrspy gc's on the same events (the screen rounds to 1 µs; the
// issue's bound is 1 ms).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/clrspy/clrspy/internal/workload"
)

// screenWait bounds every wait for the screen to show something: the
// refresh is 1 s, the rest is room for a loaded machine.
const screenWait = 45 * time.Second

var tmuxSeq atomic.Int32

// tmuxTerm is clrspy top running in a detached tmux session on a private
// server (its own socket: other tmux users are not disturbed).
type tmuxTerm struct {
	t            *testing.T
	sock         string
	rcFile, errF string
}

// startTop runs clrspy with args in a w x h terminal. Its exit status
// and stderr go to files (the pane shows only the screen).
func startTop(t *testing.T, w, h int, args ...string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed (.ci/run installs it): the clrspy top tests drive a real terminal")
	}
	dir := t.TempDir()
	tm := &tmuxTerm{t: t, sock: fmt.Sprintf("clrspy-test-%d-%d", os.Getpid(), tmuxSeq.Add(1)),
		rcFile: filepath.Join(dir, "rc"), errF: filepath.Join(dir, "stderr")}
	argv := append([]string{e2eBinary(t)}, args...)
	for i, a := range argv {
		argv[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	script := fmt.Sprintf("%s 2>%s; echo $? > %s; sleep 600", strings.Join(argv, " "), tm.errF, tm.rcFile)
	tm.tmux("new-session", "-d", "-s", "top", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), script)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	return tm
}

func (tm *tmuxTerm) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// screen is the pane's text; joined: lines the terminal wrapped are
// joined back (a wrapped table row shows as one line wider than the
// terminal).
func (tm *tmuxTerm) screen(joined bool) string {
	if joined {
		return tm.tmux("capture-pane", "-p", "-J", "-t", "top")
	}
	return tm.tmux("capture-pane", "-p", "-t", "top")
}

func (tm *tmuxTerm) keys(k ...string) { tm.tmux(append([]string{"send-keys", "-t", "top"}, k...)...) }

// waitScreen polls the screen until ok accepts it.
func (tm *tmuxTerm) waitScreen(what string, ok func(string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(screenWait)
	var s string
	for time.Now().Before(deadline) {
		s = tm.screen(false)
		if ok(s) {
			return s
		}
		if _, err := os.Stat(tm.rcFile); err == nil {
			b, _ := os.ReadFile(tm.errF)
			tm.t.Fatalf("clrspy top exited while waiting for %s: %s\nscreen:\n%s", what, b, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	tm.t.Fatalf("the screen never showed %s within %v:\n%s", what, screenWait, s)
	return ""
}

// stable is the screen once two captures 300 ms apart agree (a capture
// can fall in the middle of a frame's bytes).
func (tm *tmuxTerm) stable(joined bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(screenWait)
	a := tm.screen(joined)
	for time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		b := tm.screen(joined)
		if a == b {
			return b
		}
		a = b
	}
	tm.t.Fatalf("the screen kept changing for %v:\n%s", screenWait, a)
	return ""
}

// exit waits for clrspy top to exit and returns its status and stderr.
func (tm *tmuxTerm) exit() (int, string) {
	tm.t.Helper()
	deadline := time.Now().Add(screenWait)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(tm.rcFile); err == nil && len(b) > 0 {
			rc, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				tm.t.Fatal(err)
			}
			e, _ := os.ReadFile(tm.errF)
			return rc, string(e)
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.t.Fatalf("clrspy top did not exit within %v:\n%s", screenWait, tm.screen(false))
	return 0, ""
}

// gcCounts are GCs per generation collected, as the screen shows them.
type gcCounts struct{ gen0, gen1, gen2, all int }

var countsRE = regexp.MustCompile(`GCs gen0 (\d+)  gen1 (\d+)  gen2 (\d+)  all (\d+)`)

func screenCounts(s string) (gcCounts, bool) {
	m := countsRE.FindStringSubmatch(s)
	if m == nil {
		return gcCounts{}, false
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	return gcCounts{n(1), n(2), n(3), n(4)}, true
}

var longestRE = regexp.MustCompile(`longest ([0-9.]+) ms \(GC (\d+), (\w+)\)`)

// runtimeCounts turns GC.CollectionCount(0..2), which count a GC under its
// generation and every younger one, into GCs per generation collected.
func runtimeCounts(c0, c1, c2 int) gcCounts { return gcCounts{c0 - c1, c1 - c2, c2, c0} }

// stepsCounts sends "counts" to the steps workload and returns its
// answer: the runtime's GC counts (per generation collected) and total
// pause.
func stepsCounts(t *testing.T, p *workload.Proc) (gcCounts, float64) {
	t.Helper()
	before := strings.Count(p.Stderr(), "counts ")
	p.Stdin("counts\n")
	deadline := time.Now().Add(screenWait)
	for time.Now().Before(deadline) {
		s := p.Stderr()
		if strings.Count(s, "counts ") > before {
			l := s[strings.LastIndex(s, "counts "):]
			l = l[:strings.IndexByte(l, '\n')]
			var c0, c1, c2 int
			var pause float64
			if _, err := fmt.Sscanf(l, "counts %d %d %d %g", &c0, &c1, &c2, &pause); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			return runtimeCounts(c0, c1, c2), pause
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the workload did not answer counts: %s", p.Stderr())
	return gcCounts{}, 0
}

// checkWidth fails when a line of the (joined) screen is wider than w
// cells.
func checkWidth(t *testing.T, screen string, w int) {
	t.Helper()
	for i, l := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d cells (wrapped or wider than the terminal): %q", i+1, n, l)
		}
	}
}

// TestTopLive drives clrspy top --pid in a 160x48 terminal against the
// steps workload: after each phase the GCs per generation on the screen
// equal GC.CollectionCount's; the longest pause equals clrspy gc's over
// the events top read (its --record copy); space freezes the
// screen while the workload goes on allocating (and GCing); a resize to
// 80x24 keeps every panel with no wrapped line; q exits 0 and leaves the
// target running and attachable; the --snapshot-every lines carry the
// same figures.
func TestTopLive(t *testing.T) {
	p := workload.Start(t, nil, "steps")
	pid := strconv.Itoa(p.Pid)
	dir := t.TempDir()

	// --record saves the stream the screen reads: clrspy gc reads the
	// same events at the end. (A second session on the process would not
	// do: the runtime stamps each session's copy of an event as it writes
	// it, and on this loaded machine the thread writing a GC's events can
	// be preempted between two sessions' copies, which moved one pause by
	// 4.4 ms between two sessions in a trial run.)
	rec := filepath.Join(dir, "steps.nettrace")
	snaps := filepath.Join(dir, "top.jsonl")
	tm := startTop(t, 160, 48, "top", "--pid", pid, "--snapshot-every", "500ms", "-o", snaps, "--record", rec)
	// The screen appears once the session is open (source.Open returned).
	tm.waitScreen("the target's header", func(s string) bool {
		return strings.Contains(s, "Workload pid "+pid) && strings.Contains(s, ".NET 10.") && strings.Contains(s, "runtime counters")
	})
	// The workload has waited for commands since it started: no GC yet,
	// or the screen could not match the runtime's counts.
	if base, _ := stepsCounts(t, p); base != (gcCounts{}) {
		t.Fatalf("the workload made GCs before clrspy top attached: %+v", base)
	}

	waitCounts := func(phase string, want gcCounts) string {
		t.Helper()
		return tm.waitScreen(fmt.Sprintf("%s: the runtime's counts %+v", phase, want), func(s string) bool {
			got, ok := screenCounts(s)
			return ok && got == want
		})
	}

	// Induced GCs of every generation and one long gen2 GC over a big
	// live graph.
	p.Stdin("gc 0 3\ngc 1 2\ngc 2 2\nbig 1000000\n")
	rt, _ := stepsCounts(t, p)
	s := waitCounts("induced and big", rt)
	// 3 + 2 + 2 induced and one big: 8 GCs, and those the big graph's
	// allocation triggers. The runtime may collect a deeper generation than
	// asked (a CI machine turned an induced gen1 into a gen2 one), never a
	// shallower one.
	if rt.all < 8 || rt.gen2 < 3 || rt.gen1+rt.gen2 < 5 {
		t.Errorf("runtime counts %+v: the induced GCs are missing", rt)
	}
	if !strings.Contains(s, "Induced") || !strings.Contains(s, "GC workstation, concurrent") {
		t.Errorf("screen:\n%s", s)
	}
	t.Logf("160x48:\n%s", s)
	// The memory line: clrspy memory's split, read every 2 s; the
	// workload idles between its steps, so its RSS settles within 10 %
	// of the process's VmRSS read right after the capture.
	memRe := regexp.MustCompile(`memory RSS ([0-9.]+) MB  GC heap [0-9.]+ [kMG]?B  native [0-9.]+ [kMG]?B  other [0-9.]+ [kMG]?B`)
	tm.waitScreen("the memory line, its RSS the process's", func(s string) bool {
		mm := memRe.FindStringSubmatch(s)
		if mm == nil {
			return false
		}
		rss, _ := strconv.ParseFloat(mm[1], 64)
		return math.Abs(rss*1e6-vmRSS(t, p.Pid)) <= 0.1*vmRSS(t, p.Pid)
	})

	// Freeze: the screen stays while the workload allocates and GCs.
	p.Stdin("alloc\n")
	tm.waitScreen("GCs from the allocating workload", func(s string) bool {
		got, ok := screenCounts(s)
		return ok && got.all >= rt.all+2
	})
	tm.keys("Space")
	tm.waitScreen("FROZEN", func(s string) bool { return strings.Contains(s, "FROZEN") })
	frozen := tm.stable(false)
	fc, _ := screenCounts(frozen)
	// The runtime's count once frozen (the screen may lag it by a
	// refresh), then GCs beyond it: the workload went on while frozen.
	atFreeze, _ := stepsCounts(t, p)
	deadline := time.Now().Add(screenWait)
	var during gcCounts
	for {
		time.Sleep(time.Second)
		if during, _ = stepsCounts(t, p); during.all >= atFreeze.all+2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workload made no GC while the screen was frozen: %+v, %+v when frozen", during, atFreeze)
		}
	}
	if again := tm.screen(false); again != frozen || fc.all >= during.all {
		t.Errorf("the frozen screen (%d GCs) changed while the runtime went from %d to %d GCs:\n%s\n---\n%s", fc.all, atFreeze.all, during.all, frozen, again)
	}
	tm.keys("Space")
	tm.waitScreen("the counts after unfreezing", func(s string) bool {
		got, ok := screenCounts(s)
		return ok && got.all >= during.all && !strings.Contains(s, "FROZEN")
	})
	p.Stdin("idle\n")
	final, _ := stepsCounts(t, p)
	s = waitCounts("after allocating, idle", final)
	lm := longestRE.FindStringSubmatch(s)
	if lm == nil {
		t.Fatalf("no longest pause on the screen:\n%s", s)
	}
	longest, _ := strconv.ParseFloat(lm[1], 64)
	longestGC, _ := strconv.Atoi(lm[2])

	// 80x24: every panel still there, no line wider than the terminal.
	tm.tmux("resize-window", "-t", "top", "-x", "80", "-y", "24")
	small := tm.waitScreen("the 80x24 layout", func(s string) bool {
		return strings.Count(s, "\n") <= 24 && strings.Contains(s, "counters ") && !strings.Contains(s, "runtime counters")
	})
	joined := tm.stable(true)
	t.Logf("80x24:\n%s", joined)
	checkWidth(t, joined, 80)
	for _, want := range []string{
		fmt.Sprintf("GCs gen0 %d  gen1 %d  gen2 %d  all %d", final.gen0, final.gen1, final.gen2, final.all),
		lm[0], "paused 1s ", "pause ms", "after MB", "pauses by length", "gen2 ", "paused per 1s", "working set",
		"q quit", "Workload pid " + pid,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("80x24 screen lacks %q:\n%s", want, small)
		}
	}

	// q: exit 0, the target runs on and can be attached again.
	tm.keys("q")
	rc, stderr := tm.exit()
	if rc != 0 || stderr != "" {
		t.Errorf("clrspy top: exit %d, stderr %q", rc, stderr)
	}
	if p.Exited() {
		t.Fatal("the target exited with clrspy top")
	}
	if _, serr, code := clrspyRun(t, "gc", "--pid", pid, "--duration", "1s", "--level", "none"); code != 0 {
		t.Errorf("attach after top: exit %d: %s", code, serr)
	}

	// clrspy gc over top's recording: the same longest pause.
	out := filepath.Join(dir, "gc.json")
	if _, serr, code := clrspyRun(t, "gc", "--json", "-o", out, rec); code != 0 {
		t.Fatalf("clrspy gc: exit %d: %s", code, serr)
	}
	var doc struct {
		Summary struct {
			MaxPauseMS   float64 `json:"max_pause_ms"`
			ByGeneration map[string]struct {
				Count int `json:"count"`
			} `json:"by_generation"`
		} `json:"summary"`
		GCs []gcRowJSON `json:"gcs"`
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var gcLongest gcRowJSON
	for _, g := range doc.GCs {
		if g.Complete && g.StartSeen && g.PauseMS > gcLongest.PauseMS {
			gcLongest = g
		}
	}
	// The same events: the pauses agree to the screen's rounding (half a
	// µs; 1 µs allowed), well inside the 1 ms.
	t.Logf("runtime %+v; longest: top %.3f ms (GC %d), clrspy gc %.6f ms (GC %d)", final, longest, longestGC, doc.Summary.MaxPauseMS, gcLongest.Number)
	if math.Abs(longest-doc.Summary.MaxPauseMS) > 0.001 || uint32(longestGC) != gcLongest.Number || gcLongest.PauseMS != doc.Summary.MaxPauseMS {
		t.Errorf("longest pause: top %.3f ms (GC %d), clrspy gc %.6f ms (GC %d)", longest, longestGC, doc.Summary.MaxPauseMS, gcLongest.Number)
	}
	if g := doc.Summary.ByGeneration; g["gen2"].Count < final.gen2 {
		t.Errorf("the recording has %d gen2 GCs, the runtime made %d before top quit", g["gen2"].Count, final.gen2)
	}

	// The snapshot lines: JSON, snake_case, the last one the final
	// figures of the stopped session (the screen's longest pause, which
	// it rounds to 1 µs).
	f, err := os.Open(snaps)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last map[string]any
	lines := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines++
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("snapshot line %d: %v", lines, err)
		}
	}
	var lastDoc struct {
		State    string `json:"state"`
		Pid      int    `json:"pid"`
		GCCounts struct {
			Gen0, Gen1, Gen2, Total int
		} `json:"gc_counts"`
		Longest struct {
			Number  uint32  `json:"number"`
			PauseMS float64 `json:"pause_ms"`
		} `json:"longest"`
	}
	lb, _ := json.Marshal(last)
	json.Unmarshal(lb, &lastDoc)
	c := lastDoc.GCCounts
	if lines < 5 || lastDoc.State != "stopped" || lastDoc.Pid != p.Pid || (gcCounts{c.Gen0, c.Gen1, c.Gen2, c.Total}) != final ||
		lastDoc.Longest.Number != uint32(longestGC) || math.Abs(lastDoc.Longest.PauseMS-longest) > 0.0005 {
		t.Errorf("%d snapshot lines, the last: %s", lines, lb)
	}
	checkSnakeKeys(t, "", last)

	// (The exit line allocates: it may cause one more GC, so its counts
	// are not compared.)
	p.Stdin("exit\n")
	if _, err := p.Wait(screenWait); err != nil {
		t.Fatal(err)
	}
}

func checkSnakeKeys(t *testing.T, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k != strings.ToLower(k) || strings.ContainsAny(k, " -") {
				t.Errorf("JSON key %s.%s is not snake_case", path, k)
			}
			checkSnakeKeys(t, path+"."+k, e)
		}
	case []any:
		for _, e := range x {
			checkSnakeKeys(t, path+"[]", e)
		}
	}
}

// TestTopLaunch: clrspy top -- PROGRAM. The program's output never
// reaches the screen (a file with --program-output, else discarded with a
// note); when it exits, the last screen stays with its status (and its
// GC counts, all of them: a launched program is watched from its start)
// until q, and clrspy top exits with the program's status. q before the
// program's end leaves it running. --cpu and --locks fill their panels.
func TestTopLaunch(t *testing.T) {
	dir := t.TempDir()
	po := filepath.Join(dir, "program.out")
	tm := startTop(t, 120, 40, append([]string{"top", "--program-output", po, "--"},
		workload.Argv(t, "induced", "gen0=2", "gen1=1", "gen2=1", "exit=3")...)...)
	tm.waitScreen("the exit status", func(s string) bool { return strings.Contains(s, "process exited (status 3)") })
	b, err := os.ReadFile(po)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := workload.ParseResult(b)
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want := runtimeCounts(wl.Gen0, wl.Gen1, wl.Gen2)
	tm.waitScreen(fmt.Sprintf("the runtime's counts %+v", want), func(s string) bool {
		got, ok := screenCounts(s)
		return ok && got == want
	})
	s := tm.stable(false)
	if !strings.Contains(string(b), "ready ") || strings.Contains(s, "ready ") || strings.Contains(s, `"mode"`) ||
		!strings.Contains(s, "the program's output goes to "+po) || !strings.Contains(s, fmt.Sprintf("Workload pid %d", wl.Pid)) {
		t.Errorf("program output %q; screen:\n%s", b, s)
	}
	time.Sleep(1500 * time.Millisecond) // the screen stays
	if again := tm.screen(false); again != s {
		t.Errorf("the last screen changed after the exit:\n%s\n---\n%s", s, again)
	}
	tm.keys("q")
	if rc, stderr := tm.exit(); rc != 3 || stderr != "" {
		t.Errorf("clrspy top after the program's exit 3: exit %d, stderr %q", rc, stderr)
	}

	// No --program-output: discarded, with a note; q leaves it running.
	tm = startTop(t, 100, 30, append([]string{"top", "--"}, workload.Argv(t, "idle", "seconds=120")...)...)
	s = tm.waitScreen("the discarded-output note", func(s string) bool {
		return strings.Contains(s, "the program's output is discarded") && strings.Contains(s, "Workload pid ")
	})
	pidM := regexp.MustCompile(`Workload pid (\d+)`).FindStringSubmatch(s)
	pid, _ := strconv.Atoi(pidM[1])
	if strings.Contains(s, "ready ") {
		t.Errorf("the program's output is on the screen:\n%s", s)
	}
	tm.keys("q")
	rc, stderr := tm.exit()
	if rc != 0 || !strings.Contains(stderr, fmt.Sprintf("(pid %d) keeps running", pid)) {
		t.Errorf("q with the program running: exit %d, stderr %q", rc, stderr)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the program did not keep running: %v", err)
	} else {
		syscall.Kill(pid, syscall.SIGKILL)
	}

	// --cpu: the sample profiler's top methods (c); --locks: the
	// contended lock (l), its object's type and its owner thread.
	tm = startTop(t, 160, 48, append([]string{"top", "--cpu", "--"}, workload.Argv(t, "cpu", "seconds=3")...)...)
	tm.keys("c")
	tm.waitScreen("HotA among the top methods", func(s string) bool {
		return strings.Contains(s, "top methods by samples") && strings.Contains(s, "Workload.Cpu.HotA(")
	})
	tm.keys("q")
	if rc, stderr := tm.exit(); rc != 0 || (stderr != "" && !strings.Contains(stderr, "keeps running")) {
		t.Errorf("--cpu: exit %d, stderr %q", rc, stderr)
	}
	tm = startTop(t, 160, 48, append([]string{"top", "--locks", "--"}, workload.Argv(t, "contention", "threads=3", "iterations=5")...)...)
	tm.keys("l")
	// The object column names the lock's type, read from the target's
	// memory while it ran (the workload's Gate is a System.Object).
	lockRow := regexp.MustCompile(`(?m)^0x[0-9a-f]+ +System\.Object +(\d+) +[0-9.]+ +[0-9.]+ +\d+ `)
	s = tm.waitScreen("a contended lock with its owner", func(s string) bool {
		m := lockRow.FindStringSubmatch(s)
		return m != nil && m[1] != "0" && strings.Contains(s, "process exited (status 0)")
	})
	if !strings.Contains(s, "lock contention") || !strings.Contains(s, "contentions ") {
		t.Errorf("locks panel:\n%s", s)
	}
	tm.keys("q")
	if rc, stderr := tm.exit(); rc != 0 || stderr != "" {
		t.Errorf("--locks: exit %d, stderr %q", rc, stderr)
	}
}

// TestTopCPUAttach: attached to a process whose hot methods were compiled
// before the session, --cpu names them while the session runs (a second
// session's rundown), not only once it ends: before, the pane showed
// [unknown] and CoreLib+offset rows until q.
func TestTopCPUAttach(t *testing.T) {
	p := workload.Start(t, nil, "cpu", "seconds=60")
	// Let HotA and HotB be compiled (and re-compiled at tier 1) before
	// the session opens; on a loaded machine 3 s is ample for a loop that
	// calls them continuously.
	time.Sleep(3 * time.Second)
	tm := startTop(t, 160, 48, "top", "--cpu", "--pid", strconv.Itoa(p.Pid))
	tm.keys("c")
	s := tm.waitScreen("HotA among the top methods while attached", func(s string) bool {
		return strings.Contains(s, "top methods by samples") && strings.Contains(s, "Workload.Cpu.HotA(")
	})
	if strings.Contains(s, "process exited") {
		t.Errorf("the method was named only after the session ended:\n%s", s)
	}
	tm.keys("q")
	if rc, stderr := tm.exit(); rc != 0 {
		t.Errorf("exit %d, stderr %q", rc, stderr)
	}
}

// TestTopCPULaunch: launched by top (-- COMMAND), the cpu workload's two
// hot methods are named while it runs, as attached (TestTopCPUAttach):
// before, launch mode showed [native code], [unknown] and
// System.Private.CoreLib.dll+0x... rows until the program ended.
func TestTopCPULaunch(t *testing.T) {
	tm := startTop(t, 160, 48, append([]string{"top", "--cpu", "--"}, workload.Argv(t, "cpu", "seconds=60")...)...)
	tm.keys("c")
	s := tm.waitScreen("HotA and HotB among the top methods", func(s string) bool {
		return strings.Contains(s, "top methods by samples") && strings.Contains(s, "Workload.Cpu.HotA(") && strings.Contains(s, "Workload.Cpu.HotB(")
	})
	if strings.Contains(s, "process exited") {
		t.Errorf("the methods were named only after the program ended:\n%s", s)
	}
	tm.keys("q")
	if rc, stderr := tm.exit(); rc != 0 || !strings.Contains(stderr, "keeps running") {
		t.Errorf("exit %d, stderr %q", rc, stderr)
	}
}

// TestTopCPUFrameworkNamed: launched, a process spending its time in
// CoreLib's precompiled (ReadyToRun) code has those methods named in the
// --cpu pane (UTF-8 transcoding among the top methods), with no
// System.Private.CoreLib.dll+0x... row (issue 37).
func TestTopCPUFrameworkNamed(t *testing.T) {
	tm := startTop(t, 160, 48, append([]string{"top", "--cpu", "--"}, workload.Argv(t, "framework", "seconds=60")...)...)
	tm.keys("c")
	s := tm.waitScreen("Utf8Utility.Transcode among the top methods", func(s string) bool {
		return strings.Contains(s, "top methods by samples") && strings.Contains(s, "Utf8Utility.Transcode")
	})
	if strings.Contains(s, ".dll+0x") {
		t.Errorf("a module+offset row among the top methods:\n%s", s)
	}
	// Named from the file or by the runtime's events, one method is one
	// row: the file's names carry the events' argument lists.
	for _, m := range []string{"Utf8Utility.TranscodeToUtf16", "Utf8Utility.TranscodeToUtf8"} {
		if n := strings.Count(s, m); n > 1 {
			t.Errorf("%s in %d rows:\n%s", m, n, s)
		}
	}
	tm.keys("q")
	if rc, stderr := tm.exit(); rc != 0 {
		t.Errorf("exit %d, stderr %q", rc, stderr)
	}
}

// TestTopNeedsTerminal: without a terminal on stdout top refuses in one
// line that points to gc and serve; bad flag combinations are one line
// each.
func TestTopNeedsTerminal(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "--pid", "1"}, "clrspy: top needs a terminal (standard output is not one): use clrspy gc for a pause log and report, or clrspy serve for metrics\n"},
		{[]string{"top", "--pid", "1", "--snapshot-every", "1s"}, "clrspy: --snapshot-every needs -o FILE\n"},
		{[]string{"top", "--pid", "1", "-o", "x.jsonl"}, "clrspy: -o FILE takes the --snapshot-every lines: give --snapshot-every too\n"},
		{[]string{"top", "--pid", "1", "--program-output", "x"}, "clrspy: --program-output applies to a program started with -- COMMAND\n"},
		{[]string{"top", "--pid", "1", "--info", "1s"}, "clrspy: --info (1s) must not be longer than --warn (100ms)\n"},
		{[]string{"top", "trace.nettrace", "--record", "copy.nettrace"}, "clrspy: --record applies to live sessions (--pid, --name or -- COMMAND)\n"},
		{[]string{"top", "--pid", "1", "--record", "-"}, "clrspy: standard output is the screen: give -o, --record and --program-output a file\n"},
	} {
		stdout, stderr, code := clrspyRun(t, c.args...)
		if code != 1 || stderr != c.want || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestTopLiveFiles: the files top writes as things happen (snapshot lines,
// a program's output) are appended to or truncated as asked, and never
// written through a symbolic link.
func TestTopLiveFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "snaps.jsonl")
	for _, line := range []string{"a\n", "b\n"} {
		f, err := openLive(p, os.O_APPEND)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
	}
	if b, _ := os.ReadFile(p); string(b) != "a\nb\n" {
		t.Errorf("appended %q", b)
	}
	f, err := openLive(p, os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(p); len(b) != 0 {
		t.Errorf("truncated to %q", b)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	want := link + " is a symbolic link (to " + p + "): not writing through it (remove it, or name the file it points to)"
	if _, err := openLive(link, os.O_APPEND); err == nil || err.Error() != want {
		t.Errorf("through a symlink: %v", err)
	}
}

// vmRSS is the process's VmRSS in bytes (/proc/PID/status).
func vmRSS(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v * 1024
		}
	}
	t.Fatalf("no VmRSS in %s", b)
	return 0
}
