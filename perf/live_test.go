package perf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/sys/unix"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/stacks"
)

// Live tests: they start the C# workload (testdata/workloads, modes
// mixed, gcsample, throughput) and sample it with perf_event. The machine
// is shared and loaded: every expectation is stated against what the
// workload measured about itself in the same run (thread CPU time, which
// is what a cpu-clock sampler counts), not against wall time.

// TestMain doubles as the unprivileged helper: re-executed under another
// uid with CLRSPY_PERF_HELPER set, it profiles the pid it is given and
// prints a JSON summary (see helperMain).
func TestMain(m *testing.M) {
	if os.Getenv("CLRSPY_PERF_HELPER") != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

// profileWorkload starts mode (waiting on stdin), starts a perf session
// on it, lets it run, and returns the profile and the workload's result
// once it exited.
func profileWorkload(t *testing.T, env []string, cfg ProfileOptions, mode string, args ...string) (*stacks.Profile, *workload.Result, *Session) {
	t.Helper()
	p := workload.Start(t, env, mode, append(args, "wait=1")...)
	if cfg.PerfMap {
		// The runtime leaves its perf map behind.
		t.Cleanup(func() { os.Remove(fmt.Sprintf("/tmp/perf-%d.map", p.Pid)) })
	}
	s, err := Start(p.Pid, cfg)
	if err != nil {
		t.Fatalf("perf session on pid %d: %v", p.Pid, err)
	}
	p.Release()
	select {
	case <-s.Done():
	case <-time.After(120 * time.Second):
		t.Fatal("the workload did not exit within 120 s")
	}
	prof, err := s.Stop()
	if err != nil {
		t.Fatalf("stop: %v", err)
	}
	res, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples on %d threads, %d lost, unwinding %+v, notes %q", prof.Total, len(prof.Threads), prof.Lost, s.UnwindStats(), prof.Notes)
	return prof, res, s
}

// folded returns the profile's folded stacks (root first, ';'-joined) with
// their sample counts, per thread id.
type foldedLine struct {
	tid   uint64
	stack string
	count int64
}

func foldedLines(p *stacks.Profile) []foldedLine {
	var out []foldedLine
	for i := range p.Samples {
		s := &p.Samples[i]
		out = append(out, foldedLine{tid: p.Threads[s.Thread].ID, stack: p.Folded(s, ";"), count: s.Count})
	}
	return out
}

const (
	fillFrame    = "Workload.MixedKernels.Fill(unsigned int8)"
	sortFrame    = "Workload.MixedKernels.Sort()"
	compareFrame = "Workload.MixedKernels.Compare(int32*,int32*)"
	managedFrame = "Workload.MixedKernels.Managed(int32)"
	runFrame     = "Workload.Mixed.Run("
	deepFrame    = "Workload.MixedKernels.SortDeep()"
	nestedFrame  = "Workload.MixedKernels.Nested()"
	mainFrame    = "Workload.Program.Main("
)

var (
	// Fill → … memset…: the P/Invoke target under the managed caller.
	fillMemset = regexp.MustCompile(`(^|;)Workload\.MixedKernels\.Fill\(unsigned int8\);([^;]*;)*[^;]*memset[^;]*(;|$)`)
	// Sort → … qsort/msort … → Compare: managed → libc → managed.
	sortCompare = regexp.MustCompile(`(^|;)Workload\.MixedKernels\.Sort\(\);([^;]*;)*[^;]*(qsort|msort)[^;]*;([^;]*;)*Workload\.MixedKernels\.Compare\(int32\*,int32\*\)(;|$)`)
	// The deeper cases, each from Main (Run twice once it runs as an OSR
	// method on top of its Tier0 frame): SortDeep → qsort/msort →
	// CompareDeep → CompareWork (the comparer calls managed code), and
	// Nested → qsort/msort → CompareNested → qsort/msort → CompareInner (a
	// callback that P/Invokes again).
	deepCases = []struct {
		leaf string
		path *regexp.Regexp
	}{
		{"Workload.MixedKernels.CompareWork(int32,int32)", regexp.MustCompile(`^([^;]*;)*Workload\.Program\.Main\([^;]*;(Workload\.Mixed\.Run\([^;]*;)+Workload\.MixedKernels\.SortDeep\(\);([^;]*;)*[^;]*(qsort|msort)[^;]*;Workload\.MixedKernels\.CompareDeep\(int32\*,int32\*\);Workload\.MixedKernels\.CompareWork\(int32,int32\)(;|$)`)},
		{"Workload.MixedKernels.CompareInner(int32*,int32*)", regexp.MustCompile(`^([^;]*;)*Workload\.Program\.Main\([^;]*;(Workload\.Mixed\.Run\([^;]*;)+Workload\.MixedKernels\.Nested\(\);([^;]*;)*[^;]*(qsort|msort)[^;]*;Workload\.MixedKernels\.CompareNested\(int32\*,int32\*\);([^;]*;)*[^;]*(qsort|msort)[^;]*;Workload\.MixedKernels\.CompareInner\(int32\*,int32\*\)(;|$)`)},
	}
)

// TestMixedModeStacks profiles the mixed workload at 999 Hz with the
// EventPipe session naming managed code, and checks the mixed-mode stacks,
// the frames' kinds and modules, and the time shares.
//
//   - Folded stacks contain Fill → … memset… and Sort → … qsort/msort … →
//     Compare, in that order; libc's internal functions are named (glibc's
//     debug symbols, libc6-dbg, found by build id).
//   - Of the worker thread's samples in Compare (called by glibc's
//     msort, built without frame pointers), at least 90 % reach Sort
//     through msort and qsort: the DWARF unwinder bridges what frame
//     pointers cannot. The same samples walked with frame pointers alone
//     (the kernel's callchain) reach Sort in at most half the cases: the
//     control that shows the DWARF walk is what does it.
//   - The deeper cases have their full stacks: of the worker's samples in
//     CompareWork (called by the comparer CompareDeep, a JIT'd method
//     with an RSP-based frame) and in CompareInner (under a callback that
//     P/Invokes qsort again), at least 90 % are walked to Main through
//     SortDeep → qsort/msort → CompareDeep, and Nested → qsort/msort →
//     CompareNested → qsort/msort respectively.
//   - The inclusive shares of Fill, Sort, SortDeep, Nested and Managed
//     among the worker's samples under Mixed.Run match the thread CPU
//     time the workload measured in each within 5 points. cpu-clock samples every 1/999 s
//     of the thread's CPU time (systematic, not random sampling): with the
//     ≥ 300 samples required even a machine loaded to a sixth of a CPU per
//     thread gives, the counting error is about 1 point; the rest covers
//     unwinds that fail before Run.
func TestMixedModeStacks(t *testing.T) {
	prof, res, s := profileWorkload(t, nil, ProfileOptions{Options: Options{Hz: 999}, compareFP: true}, "mixed", "seconds=6")
	if s.Events() == 0 || prof.Methods == 0 {
		t.Fatalf("EventPipe session: %d events, %d methods", s.Events(), prof.Methods)
	}
	tid := uint64(res.Int("tid"))
	lines := foldedLines(prof)
	checkMixedStacks(t, lines, tid, "DWARF")
	for _, c := range deepCases {
		var leaf, full int64
		var example string
		for _, l := range lines {
			if l.tid != tid || !strings.Contains(l.stack, c.leaf) {
				continue
			}
			leaf += l.count
			if c.path.MatchString(l.stack) {
				full += l.count
			} else if example == "" {
				example = l.stack
			}
		}
		t.Logf("%d of %d samples in %s walked to Main; not: e.g. %s", full, leaf, c.leaf, example)
		if leaf < 20 || float64(full) < 0.9*float64(leaf) {
			t.Errorf("%s: %d of %d samples have the full stack (want ≥ 20 samples, ≥ 90 %% full)", c.leaf, full, leaf)
		}
	}

	// The control: frame pointers alone, same samples.
	var cmp, reach int64
	for _, l := range foldedLines(s.fp.Result()) {
		if l.tid == tid && strings.Contains(l.stack, compareFrame) {
			cmp += l.count
			if strings.Contains(l.stack, sortFrame) {
				reach += l.count
			}
		}
	}
	t.Logf("frame pointers only: %d of %d Compare samples reach Sort", reach, cmp)
	if cmp == 0 || float64(reach) > 0.5*float64(cmp) {
		t.Errorf("frame pointers alone reached Sort from Compare in %d of %d samples: expected them to lose it", reach, cmp)
	}

	// Shares under Run against the workload's own CPU times.
	var run, fill, sort, managed, deep, nested int64
	for _, l := range lines {
		if l.tid != tid || !strings.Contains(l.stack, runFrame) {
			continue
		}
		run += l.count
		for _, c := range []struct {
			frame string
			n     *int64
		}{{fillFrame, &fill}, {sortFrame, &sort}, {managedFrame, &managed}, {deepFrame, &deep}, {nestedFrame, &nested}} {
			if strings.Contains(l.stack, c.frame) {
				*c.n += l.count
			}
		}
	}
	runCPU := res.Float("runCpuMs")
	if run < 300 || runCPU <= 0 {
		t.Fatalf("%d samples under Run (workload: %.0f ms of CPU in Run): too few to compare shares", run, runCPU)
	}
	for _, c := range []struct {
		name    string
		samples int64
		cpuMs   float64
	}{{"Fill", fill, res.Float("fillCpuMs")}, {"Sort", sort, res.Float("sortCpuMs")}, {"Managed", managed, res.Float("managedCpuMs")},
		{"SortDeep", deep, res.Float("sortDeepCpuMs")}, {"Nested", nested, res.Float("nestedCpuMs")}} {
		got := 100 * float64(c.samples) / float64(run)
		want := 100 * c.cpuMs / runCPU
		t.Logf("%-8s %5.1f %% of %d samples under Run; workload: %5.1f %% of %.0f ms", c.name, got, run, want, runCPU)
		if math.Abs(got-want) > 5 {
			t.Errorf("%s: %.1f %% of samples, workload measured %.1f %% of its CPU time (more than 5 points apart)", c.name, got, want)
		}
	}

	// Frame kinds and modules: the runtime's own code is named at least
	// by module.
	kinds := map[stacks.FrameKind]int{}
	modules := map[string]bool{}
	for _, f := range prof.Frames {
		kinds[f.Kind]++
		modules[f.Module] = true
	}
	if kinds[stacks.KindManaged] == 0 || kinds[stacks.KindNative] == 0 || kinds[stacks.KindKernel] == 0 {
		t.Errorf("frame kinds %v: want managed, native and kernel frames (as root the kernel is sampled too)", kinds)
	}
	for _, m := range []string{"libcoreclr.so", "libclrjit.so", "libc.so.6", "Workload.dll", "System.Private.CoreLib.dll", "[kernel]"} {
		if !modules[m] {
			t.Errorf("no frame of module %s", m)
		}
	}
	// The runtime's exported functions are named from .dynsym, in every
	// module (libcoreclr.so's code segment is a page off its file offset:
	// the bias must account for it).
	named := map[string]bool{}
	for _, f := range prof.Frames {
		named[f.Module+"!"+f.Name] = true
	}
	for _, want := range []string{"libcoreclr.so!coreclr_execute_assembly", "libhostpolicy.so!corehost_main", "libhostfxr.so!hostfxr_main_startupinfo"} {
		if !named[want] {
			t.Errorf("no frame %s (its .dynsym entry)", want)
		}
	}
	// libcoreclr.so ships without .symtab: its internal functions are
	// module+offset (ELF address).
	stripped := regexp.MustCompile(`^libcoreclr\.so\+0x[0-9a-f]+$`)
	n := 0
	for _, f := range prof.Frames {
		if f.Module == "libcoreclr.so" && stripped.MatchString(f.Name) {
			n++
		}
	}
	if n == 0 {
		t.Error("no libcoreclr.so+0xOFF frame")
	}
	// pprof: the value is CPU time.
	var buf bytes.Buffer
	if err := report.WritePprof(&buf, prof); err != nil {
		t.Fatal(err)
	}
	if pp, err := profile.Parse(&buf); err != nil || pp.SampleType[1].Type != "cpu" || pp.PeriodType.Type != "cpu" {
		t.Errorf("pprof: %v; sample types %v", err, pp)
	}
}

// TestPerfMapNames profiles without an EventPipe session, with the
// runtime's perf map (enabled through the diagnostics IPC) as the source
// of managed names: the same mixed-mode stacks appear under the perf
// map's spelling of the methods.
func TestPerfMapNames(t *testing.T) {
	prof, _, _ := profileWorkload(t, nil, ProfileOptions{Options: Options{Hz: 999}, NoSession: true, PerfMap: true}, "mixed", "seconds=2")
	if len(prof.Notes) != 0 {
		t.Errorf("notes %q", prof.Notes)
	}
	re := regexp.MustCompile(`(^|;)[^;]*Workload\.MixedKernels::Sort\(\)[^;]*;([^;]*;)*[^;]*(qsort|msort)[^;]*;([^;]*;)*[^;]*Workload\.MixedKernels::Compare\(int32\*,int32\*\)`)
	n := int64(0)
	for _, l := range foldedLines(prof) {
		if re.MatchString(l.stack) {
			n += l.count
		}
	}
	if n < 20 {
		t.Errorf("%d samples Sort → qsort → Compare named from the perf map", n)
	}
}

// checkMixedStacks asserts the two mixed-mode patterns and that Compare
// samples reach Sort.
func checkMixedStacks(t *testing.T, lines []foldedLine, tid uint64, how string) {
	t.Helper()
	var fillN, sortN, cmp, reach int64
	var example string
	for _, l := range lines {
		if fillMemset.MatchString(l.stack) {
			fillN += l.count
		}
		if sortCompare.MatchString(l.stack) {
			sortN += l.count
			if example == "" {
				example = l.stack
			}
		}
		if l.tid == tid && (strings.Contains(l.stack, compareFrame) || strings.Contains(l.stack, "MixedKernels::Compare(")) {
			cmp += l.count
			if strings.Contains(l.stack, sortFrame) || strings.Contains(l.stack, "MixedKernels::Sort(") {
				reach += l.count
			}
		}
	}
	t.Logf("%s: Fill→memset in %d samples, Sort→qsort/msort→Compare in %d, e.g. %s", how, fillN, sortN, example)
	if fillN == 0 {
		t.Errorf("%s: no stack Fill → … memset…", how)
	}
	if sortN == 0 {
		t.Errorf("%s: no stack Sort → … qsort/msort … → Compare", how)
	}
	t.Logf("%s: %d of %d Compare samples reach Sort", how, reach, cmp)
	if cmp == 0 || float64(reach) < 0.9*float64(cmp) {
		t.Errorf("%s: only %d of %d Compare samples reach Sort (want ≥ 90 %%)", how, reach, cmp)
	}
}

// TestGCLabels profiles gcsample (a 3-million-object graph, two forced
// blocking gen2 GCs, workstation non-concurrent GC) at 999 Hz. The samples
// labelled with each GC's number exist, and on the thread that ran the GC
// their count matches the pause's length × the rate within 20 %, the
// length taken as the CPU time that thread got during GC.Collect (what a
// cpu-clock sampler can see: on this shared machine a 500 ms pause gave
// the GC thread as little as 120 ms of CPU). The pause length × rate is
// logged beside it.
func TestGCLabels(t *testing.T) {
	const hz = 999
	prof, res, _ := profileWorkload(t, []string{"DOTNET_gcConcurrent=0", "DOTNET_gcServer=0"},
		ProfileOptions{Options: Options{Hz: hz}}, "gcsample", "nodes=3000000", "count=2")
	var gcs []struct {
		Index     int64   `json:"index"`
		PauseMs   float64 `json:"pauseMs"`
		CollectMs float64 `json:"collectMs"`
		CPUMs     float64 `json:"cpuMs"`
	}
	if err := res.Get("gcs", &gcs); err != nil || len(gcs) != 2 {
		t.Fatalf("gcs %v: %v", gcs, err)
	}
	tid := uint64(res.Int("tid"))
	for _, g := range gcs {
		var onThread, others, suspend int64
		for i := range prof.Samples {
			s := &prof.Samples[i]
			num, phase := labelOf(s)
			if num != g.Index {
				continue
			}
			if prof.Threads[s.Thread].ID == tid {
				onThread += s.Count
			} else {
				others += s.Count
			}
			if phase == "suspend" {
				suspend += s.Count
			}
		}
		want := g.CPUMs * hz / 1000
		t.Logf("gc %d: %d samples labelled on the GC thread (%d on others, %d in the suspend phase); thread CPU %.0f ms × %d Hz = %.0f; pause %.0f ms × %d Hz = %.0f",
			g.Index, onThread, others, suspend, g.CPUMs, hz, want, g.PauseMs, hz, g.PauseMs*hz/1000)
		if onThread == 0 || math.Abs(float64(onThread)-want) > 0.2*want {
			t.Errorf("gc %d: %d labelled samples on the GC thread, want %.0f ± 20 %%", g.Index, onThread, want)
		}
	}
	// pprof carries the labels.
	var buf bytes.Buffer
	if err := report.WritePprof(&buf, prof); err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range pp.Sample {
		if len(s.NumLabel["gc"]) == 1 && s.NumLabel["gc"][0] == gcs[1].Index && len(s.Label["gc_phase"]) == 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("no pprof sample with gc=%d and a gc_phase label", gcs[1].Index)
	}
}

func labelOf(s *stacks.Sample) (int64, string) {
	var num int64 = -1
	var phase string
	for _, l := range s.Labels {
		switch l.Key {
		case "gc":
			num = l.Num
		case "gc_phase":
			phase = l.Str
		}
	}
	return num, phase
}

// TestPerfRecordOracle runs Linux perf (perf record -g, 999 Hz
// cpu-clock) on the mixed workload at the same time as clrspy's sampler,
// and compares the share of samples whose leaf is in libc and in
// libcoreclr: within 5 points. Both sample the same threads over the same
// seconds; the difference is sampling noise (about 1 point at these
// counts) and the few milliseconds at the edges where only one of them
// runs.
func TestPerfRecordOracle(t *testing.T) {
	perfBin, err := exec.LookPath("perf")
	if err != nil {
		t.Fatal("Linux perf (linux-perf) is this test's oracle: not found")
	}
	p := workload.Start(t, nil, "mixed", "seconds=4", "wait=1")
	s, err := Start(p.Pid, ProfileOptions{Options: Options{Hz: 999}, NoSession: true})
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "perf.data")
	var rec *exec.Cmd
	var recErr bytes.Buffer
	done := make(chan error, 1)
	// perf record opens an event per thread of /proc/PID/task: a thread
	// that exits in between (the runtime's tiering worker does) makes it
	// fail with ESRCH. The workload waits on stdin, so try again.
	for try := 1; ; try++ {
		rec = exec.Command(perfBin, "record", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-p", strconv.Itoa(p.Pid), "-o", data)
		recErr.Reset()
		rec.Stderr = &recErr
		if err := rec.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- rec.Wait() }()
		select {
		case err := <-done:
			if try < 5 {
				t.Logf("perf record attempt %d ended at once (%v): %s", try, err, recErr.String())
				continue
			}
			t.Fatalf("perf record: %v\n%s", err, recErr.String())
		case <-time.After(500 * time.Millisecond): // perf record attached
		}
		break
	}
	p.Release()
	<-s.Done()
	prof, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		rec.Process.Signal(os.Interrupt)
		<-done
	}
	out, err := exec.Command(perfBin, "report", "-i", data, "--stdio", "--sort", "dso", "--no-children", "-g", "none", "--percent-limit", "0").Output()
	if err != nil {
		t.Fatalf("perf report: %v\n%s", err, recErr.String())
	}
	theirs := map[string]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.HasSuffix(f[0], "%") && !strings.HasPrefix(line, "#") {
			v, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
			if err == nil {
				theirs[f[1]] += v
			}
		}
	}
	ours := map[string]float64{}
	for i := range prof.Samples {
		sm := &prof.Samples[i]
		if len(sm.Stack) > 0 {
			ours[prof.Frames[sm.Stack[0]].Module] += 100 * float64(sm.Count) / float64(prof.Total)
		}
	}
	t.Logf("leaf shares: perf %v", theirs)
	t.Logf("leaf shares: clrspy %v (%d samples)", ours, prof.Total)
	for _, dso := range []string{"libc.so.6", "libcoreclr.so"} {
		if math.Abs(theirs[dso]-ours[dso]) > 5 {
			t.Errorf("%s: perf %.1f %%, clrspy %.1f %% (more than 5 points apart)", dso, theirs[dso], ours[dso])
		}
	}
	if theirs["libc.so.6"] < 10 {
		t.Errorf("perf sees %.1f %% in libc: the workload should spend a third of its time there", theirs["libc.so.6"])
	}
}

// TestExitMidProfile: a process that exits while Profile waits for a 60 s
// duration ends the profile cleanly, with what was collected.
func TestExitMidProfile(t *testing.T) {
	p := workload.Start(t, nil, "mixed", "seconds=1", "wait=1")
	done := make(chan struct{})
	var prof *stacks.Profile
	var err error
	start := time.Now()
	go func() {
		defer close(done)
		// 999 Hz: enough samples even when the machine leaves the
		// workload a tenth of a CPU.
		prof, err = Profile(context.Background(), p.Pid, ProfileOptions{Options: Options{Hz: 999}, Duration: 60 * time.Second})
	}()
	time.Sleep(300 * time.Millisecond)
	p.Release()
	select {
	case <-done:
	case <-time.After(45 * time.Second):
		t.Fatal("Profile did not return after the process exited")
	}
	if err != nil {
		t.Fatalf("Profile: %v", err)
	}
	if prof.Total < 20 || prof.Methods == 0 {
		t.Errorf("profile of the exited process: %d samples, %d methods", prof.Total, prof.Methods)
	}
	t.Logf("returned after %v with %d samples", time.Since(start).Round(time.Millisecond), prof.Total)
	// And a pid that does not exist is refused with a one-line reason.
	_, err = Profile(context.Background(), p.Pid, ProfileOptions{Duration: time.Second})
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Reason != fmt.Sprintf("no process with pid %d", p.Pid) {
		t.Errorf("profiling the exited pid: %v", err)
	}
}

// TestThreadsStartedLater: the throughput workload starts its 4 threads
// after the sampler is attached; each is sampled (picked up from the fork
// records) and named.
func TestThreadsStartedLater(t *testing.T) {
	prof, res, s := profileWorkload(t, nil, ProfileOptions{Options: Options{Hz: 999}, NoSession: true}, "throughput", "threads=4", "seconds=2")
	var tids []int
	if err := res.Get("tids", &tids); err != nil || len(tids) != 4 {
		t.Fatalf("tids %v: %v", tids, err)
	}
	byID := map[uint64]*stacks.Thread{}
	for i := range prof.Threads {
		byID[prof.Threads[i].ID] = &prof.Threads[i]
	}
	for i, tid := range tids {
		th := byID[uint64(tid)]
		if th == nil || th.Samples < 10 {
			t.Errorf("thread %d (throughput-%d): %+v", tid, i, th)
			continue
		}
		if want := fmt.Sprintf("throughput-%d", i); th.Name != want {
			t.Errorf("thread %d named %q, want %q", tid, th.Name, want)
		}
	}
	if st := s.Stats(); st.Threads < 8 || st.OpenErrors != 0 {
		t.Errorf("sampler stats %+v", st)
	}
}

// TestSessionClock verifies that the runtime's EventPipe clock is
// CLOCK_MONOTONIC in nanoseconds, the clock the sampler asks perf for:
// the session header says 1e9 ticks per second, and its start timestamp
// lies between two CLOCK_MONOTONIC readings taken around the session's
// start. GC stops are then placed on the samples' timeline exactly.
func TestSessionClock(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=10", "stdin=1")
	defer p.Release()
	before := monotonic()
	s, err := Start(p.Pid, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after := monotonic()
	hdr := s.reader.Header()
	t.Logf("QPC frequency %d, session start %d, CLOCK_MONOTONIC %d..%d", hdr.QPCFrequency, hdr.SyncTimeQPC, before, after)
	if hdr.QPCFrequency != 1_000_000_000 {
		t.Errorf("event clock at %d Hz, want 1e9 (CLOCK_MONOTONIC ns)", hdr.QPCFrequency)
	}
	if hdr.SyncTimeQPC < before || hdr.SyncTimeQPC > after {
		t.Errorf("session start %d outside the CLOCK_MONOTONIC window %d..%d", hdr.SyncTimeQPC, before, after)
	}
	if _, err := s.Stop(); err != nil {
		t.Fatal(err)
	}
}

// TestUnprivileged runs the profile as an unprivileged user (nobody, uid
// 65534) at this machine's perf_event_paranoid: on the user's own process
// it works with user frames only (paranoid ≥ 2 forbids kernel frames
// without CAP_PERFMON) and names managed and native frames; on a process
// of root it is refused with a one-line reason.
func TestUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test runs the workload and the profiler under another uid: it needs root")
	}
	par := readParanoid(t)
	// t.TempDir's parent is private to root: a directory of its own.
	dir, err := os.MkdirTemp("", "clrspy-perf-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(dir, "perf.test")
	if err := copyFile(self, helper); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}

	// The user's own process.
	cmd := exec.Command(workload.Exe(t), "mixed", "seconds=3", "wait=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	w := workload.StartCmd(t, cmd, []string{"HOME=/tmp", "TMPDIR=/tmp"})
	h := runHelper(t, helper, nobody, w.Pid, func() { w.Release() })
	t.Logf("as nobody on its own process (paranoid %d): %+v", par, h)
	if h.Err != "" {
		t.Fatalf("refused: %s", h.Err)
	}
	if h.Samples < 50 || !h.Fill || !h.Sort {
		t.Errorf("own process: %d samples, Fill named %v, Sort named %v", h.Samples, h.Fill, h.Sort)
	}
	if par >= 2 {
		if h.Kernel != 0 {
			t.Errorf("%d kernel frames at perf_event_paranoid %d without CAP_PERFMON", h.Kernel, par)
		}
		if !strings.Contains(strings.Join(h.Notes, "\n"), fmt.Sprintf("kernel frames omitted: perf_event_paranoid is %d", par)) {
			t.Errorf("notes %q do not say why kernel frames are missing", h.Notes)
		}
	}
	if _, err := w.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}

	// Root's process.
	r := workload.Start(t, nil, "idle", "seconds=30", "stdin=1")
	defer r.Release()
	h = runHelper(t, helper, nobody, r.Pid, nil)
	want := fmt.Sprintf("pid %d belongs to user root (uid 0), clrspy runs as uid 65534: sampling another user's process needs CAP_PERFMON or root (EACCES)", r.Pid)
	if h.Err != want {
		t.Errorf("as nobody on root's process:\n got %q\nwant %q", h.Err, want)
	}
}

// helperResult is what the helper prints.
type helperResult struct {
	Err     string   `json:"err"`
	Samples int64    `json:"samples"`
	Kernel  int      `json:"kernel_frames"`
	Fill    bool     `json:"fill"`
	Sort    bool     `json:"sort"`
	Notes   []string `json:"notes"`
}

// runHelper runs the test binary as cred to profile pid; release runs once
// the helper says it is sampling.
func runHelper(t *testing.T, helper string, cred *syscall.Credential, pid int, release func()) helperResult {
	t.Helper()
	cmd := exec.Command(helper)
	cmd.Env = append(os.Environ(), "CLRSPY_PERF_HELPER=1", "CLRSPY_PERF_PID="+strconv.Itoa(pid), "HOME=/tmp", "TMPDIR=/tmp")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if release != nil {
		// The helper prints "sampling" on stderr once its session runs.
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(errb.String(), "sampling") && time.Now().Before(deadline) && cmd.ProcessState == nil {
			time.Sleep(20 * time.Millisecond)
		}
		release()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v\n%s", err, errb.String())
	}
	var h helperResult
	if err := json.Unmarshal(out.Bytes(), &h); err != nil {
		t.Fatalf("helper output %q: %v\n%s", out.String(), err, errb.String())
	}
	return h
}

// helperMain profiles CLRSPY_PERF_PID until it exits (at most 30 s) and
// prints a helperResult.
func helperMain() int {
	pid, _ := strconv.Atoi(os.Getenv("CLRSPY_PERF_PID"))
	var h helperResult
	s, err := Start(pid, ProfileOptions{Options: Options{Hz: 499}})
	if err != nil {
		h.Err = err.Error()
	} else {
		fmt.Fprintln(os.Stderr, "sampling")
		select {
		case <-s.Done():
		case <-time.After(30 * time.Second):
		}
		prof, err := s.Stop()
		if err != nil {
			h.Err = err.Error()
		} else {
			h.Samples = prof.Total
			h.Notes = prof.Notes
			for _, f := range prof.Frames {
				switch {
				case f.Kind == stacks.KindKernel:
					h.Kernel++
				case f.Name == fillFrame:
					h.Fill = true
				case f.Name == sortFrame:
					h.Sort = true
				}
			}
		}
	}
	json.NewEncoder(os.Stdout).Encode(&h)
	return 0
}

func monotonic() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func readParanoid(t *testing.T) int {
	b, err := os.ReadFile(paranoidPath)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

// TestNamespacedTarget profiles a workload in its own pid and mount
// namespace with a private /tmp (a container, as far as paths go): the
// workload runs from a directory bound onto an empty host directory, so
// its executable exists only inside, and the runtime writes its perf map
// as perf-1.map into the private /tmp. Both are read through
// /proc/PID/root: the executable's frames are native frames with ELF
// addresses (not file offsets of an unreadable file), and managed frames
// are named from the perf map (no EventPipe session).
func TestNamespacedTarget(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test creates namespaces: it needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("unshare (util-linux) is needed")
	}
	exe := workload.Exe(t)
	mnt, err := os.MkdirTemp("/var/tmp", "clrspy-ns-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(mnt)
	w := exec.Command("unshare", "--pid", "--mount", "--fork", "--mount-proc", "sh", "-c",
		`mount --bind "$0" "$1" && mount -t tmpfs tmpfs /tmp && exec "$1/$2" mixed seconds=3 wait=1`,
		filepath.Dir(exe), mnt, filepath.Base(exe))
	p := workload.StartCmd(t, w, nil)
	pid := workloadChild(t, p.Pid)
	if _, err := os.Stat(filepath.Join(mnt, filepath.Base(exe))); err == nil {
		t.Fatalf("%s is visible outside the namespace", mnt)
	}
	s, err := Start(pid, ProfileOptions{Options: Options{Hz: 999}, NoSession: true, PerfMap: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("/proc", strconv.Itoa(pid), "root/tmp/perf-1.map"); s.builder.proc.PerfMapPath() != want {
		t.Errorf("perf map path %s, want %s", s.builder.proc.PerfMapPath(), want)
	}
	p.Release()
	select {
	case <-s.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("the workload did not exit")
	}
	prof, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	var exeNative, exeOther, sorts int64
	for _, sm := range prof.Samples {
		for _, f := range sm.Stack {
			fr := &prof.Frames[f]
			if fr.Module == filepath.Base(exe) {
				if fr.Kind == stacks.KindNative {
					exeNative += sm.Count
				} else {
					exeOther += sm.Count
				}
			}
			if strings.Contains(fr.Name, "Workload.MixedKernels::Sort()") {
				sorts += sm.Count
			}
		}
	}
	t.Logf("%d samples; executable frames: %d native, %d not; Sort named from the perf map in %d; notes %q", prof.Total, exeNative, exeOther, sorts, prof.Notes)
	if exeNative == 0 || exeOther != 0 {
		t.Errorf("frames of the executable: %d native, %d not read through /proc/%d/root", exeNative, exeOther, pid)
	}
	if sorts == 0 {
		t.Error("no frame named Workload.MixedKernels::Sort() from the private perf map")
	}
}

// workloadChild is pid itself or the process under it (unshare forks)
// that runs the workload.
func workloadChild(t *testing.T, pid int) int {
	t.Helper()
	for i := 0; i < 4; i++ {
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
