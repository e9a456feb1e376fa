package monitor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

// launched is a workload run under a Monitor.
type launched struct {
	snap *monitor.Snapshot // after the end
	// during is the snapshot taken in the last OnGC callback: before the
	// session's end (and its rundown).
	during *monitor.Snapshot
	wl     *workload.Result
	gcs    []*gcpause.GC // as the callback saw them
}

// launchMonitored runs a workload mode under a Monitor from its first GC
// (launch mode).
func launchMonitored(t *testing.T, opts monitor.Options, env []string, mode string, args ...string) *launched {
	return launchWith(t, opts, nil, env, mode, args...)
}

// launchWith is launchMonitored with other analyses fed the same stream
// (in the order of the stream, after the monitor).
func launchWith(t *testing.T, opts monitor.Options, extra func(*nettrace.Header) []analysis.Analyzer, env []string, mode string, args ...string) *launched {
	t.Helper()
	var mu sync.Mutex
	var seen []*gcpause.GC
	var snapshots atomic.Int32
	var m *monitor.Monitor
	var during *monitor.Snapshot
	opts.OnGC = func(g *gcpause.GC) {
		mu.Lock()
		seen = append(seen, g)
		mu.Unlock()
		// Callbacks run outside the monitor's lock: a snapshot from one
		// must not deadlock, and must already count this GC.
		s := m.Snapshot()
		if err := s.CheckValid(); err != nil {
			t.Errorf("snapshot in OnGC: %v", err)
		}
		if s.GC.Last == nil || s.GC.Last.Number != g.Number {
			t.Errorf("snapshot in OnGC: last GC %+v, callback for %d", s.GC.Last, g.Number)
		}
		during = s
		snapshots.Add(1)
	}
	provs := monitor.Providers(&opts)
	var out bytes.Buffer
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		t.Setenv(k, v)
	}
	s, err := source.Open(source.Spec{Argv: workload.Argv(t, mode, args...), Providers: provs, ProgramStdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	m = monitor.New(s.Header(), opts)
	// Snapshots from another goroutine while events flow (go test -race
	// checks the locking).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				if _, err := json.Marshal(m.Snapshot()); err != nil {
					t.Error(err)
				}
			}
		}
	}()
	if extra == nil {
		if _, err := m.Run(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	} else if _, err := s.Run(append([]analysis.Analyzer{m}, extra(s.Header())...)...); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	m.SetExitCode(s.ExitCode())
	wl, err := workload.ParseResult(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if int(snapshots.Load()) != len(seen) {
		t.Errorf("%d snapshots from %d callbacks", snapshots.Load(), len(seen))
	}
	return &launched{snap: m.Snapshot(), during: during, wl: wl, gcs: seen}
}

// TestMonitorInducedLive: a monitor over the induced workload, launched so
// that it sees every GC, counts GCs per generation exactly as the
// runtime's GC.CollectionCount (cumulative there, exclusive here).
func TestMonitorInducedLive(t *testing.T) {
	run := launchMonitored(t, monitor.Options{}, nil, "induced", "gen0=4", "gen1=3", "gen2=2", "pauselog=1")
	snap, wl, seen := run.snap, run.wl, run.gcs
	gens := [3]gcpause.GenSummary{snap.GC.Gen(0), snap.GC.Gen(1), snap.GC.Gen(2)}
	t.Logf("runtime %s server=%v concurrent=%v: gen0 %d gen1 %d gen2 %d, pause %.3f ms; monitor: %d/%d/%d, pause %.3f ms (suspend %.3f ms), flavour %s (%s/%s)",
		wl.Runtime, wl.ServerGC, wl.ConcurrentGC, wl.Gen0, wl.Gen1, wl.Gen2, wl.PauseMs,
		gens[0].Count, gens[1].Count, gens[2].Count, snap.GC.TotalPauseMS, snap.GC.TotalSuspendMS,
		snap.Process.GC, snap.Process.GC.KindFrom, snap.Process.GC.ConcurrentFrom)
	if gens[2].Count != wl.Gen2 || gens[1].Count != wl.Gen1-wl.Gen2 || gens[0].Count != wl.Gen0-wl.Gen1 {
		t.Errorf("exclusive counts %d/%d/%d, runtime's cumulative %d/%d/%d", gens[0].Count, gens[1].Count, gens[2].Count, wl.Gen0, wl.Gen1, wl.Gen2)
	}
	if gens[2].Count < 2 || gens[1].Count < 3 {
		t.Errorf("the induced GCs are missing: %+v", gens)
	}
	if snap.GC.GCCount != wl.Gen0 || snap.GC.Incomplete != 0 || len(seen) != wl.Gen0 {
		t.Errorf("%d complete, %d incomplete, %d callbacks; runtime %d GCs", snap.GC.GCCount, snap.GC.Incomplete, len(seen), wl.Gen0)
	}
	if snap.Session.State != monitor.StateExited || snap.Session.ExitCode == nil || *snap.Session.ExitCode != 0 || snap.Session.EventsLost != 0 {
		t.Errorf("session %+v", snap.Session)
	}
	p := snap.Process
	if p.Pid != wl.Pid || p.Name != "Workload" || !strings.HasSuffix(wl.Runtime, " "+p.RuntimeVersion) || !p.UptimeFromStart || p.UptimeSec <= 0 {
		t.Errorf("process %+v, workload pid %d runtime %q", p, wl.Pid, wl.Runtime)
	}
	wantKind := "workstation"
	if wl.ServerGC {
		wantKind = "server"
	}
	if p.GC.Kind != wantKind || p.GC.Concurrent == nil || *p.GC.Concurrent != wl.ConcurrentGC {
		t.Errorf("GC flavour %+v, runtime server=%v concurrent=%v", p.GC, wl.ServerGC, wl.ConcurrentGC)
	}
	// Rows and the longest pause.
	if len(snap.GCs) != wl.Gen0 || snap.GC.Longest == nil {
		t.Fatalf("%d rows, longest %v", len(snap.GCs), snap.GC.Longest)
	}
	var longest gcpause.GCRow
	var total float64
	for _, r := range snap.GCs {
		total += r.PauseMS
		if r.PauseMS > longest.PauseMS {
			longest = r
		}
		if !r.Complete || !r.AfterMB.Valid() || r.Gen == "" {
			t.Errorf("row %+v", r)
		}
	}
	if snap.GC.Longest.Number != longest.Number || snap.GC.Longest.PauseMS != longest.PauseMS {
		t.Errorf("longest %d (%.3f ms), rows say %d (%.3f ms)", snap.GC.Longest.Number, snap.GC.Longest.PauseMS, longest.Number, longest.PauseMS)
	}
	// Blocking GCs do not overlap: the stopped time is the pauses' sum
	// (the union is of suspensions, whose nanoseconds the pauses share).
	sum := snap.GC.TotalPauseMS + snap.GC.OverlapMS
	if d := total - sum; d > 1e-6 || d < -1e-6 || math.Abs(snap.GC.TotalPauseMS-sum) > 1e-6 || math.Abs(snap.GC.StoppedMS-sum) > 1e-6 {
		t.Errorf("rows sum to %.6f ms, sum %.6f ms, stopped %.6f ms (%.6f ms by every GC suspension)", total, sum, snap.GC.TotalPauseMS, snap.GC.StoppedMS)
	}
	last := snap.GCs[len(snap.GCs)-1]
	for i, b := range snap.GC.HeapSizeAfterBytes {
		if mb := last.GenSizeMB[i]; b.Valid() != mb.Valid() || math.Abs(b.Or(0)-mb.Or(0)*1e6) > 0.5 || !snap.GC.HeapSizeAfterBytes[2].Valid() {
			t.Errorf("heap after the last GC %v bytes, its row %v MB", snap.GC.HeapSizeAfterBytes, last.GenSizeMB)
			break
		}
	}
	var hist uint64
	for _, c := range snap.GC.PauseHistogram.Counts {
		hist += c
	}
	if hist != uint64(wl.Gen0) || snap.GC.SuspendHistogram.Count != uint64(wl.Gen0) {
		t.Errorf("histograms hold %d and %d GCs", hist, snap.GC.SuspendHistogram.Count)
	}
	// The stopped share since the start is the GCs' pause over the session
	// (no other suspension in this workload; GC pauses do not overlap).
	w := snap.Windows[3]
	if want := snap.GC.TotalPauseMS / 1e3 / w.CoveredSec * 100; w.GCPausedPercent < want*0.999-1e-9 || w.GCPausedPercent > want*1.001+1e-9 {
		t.Errorf("since start %.6f%% paused, the GCs' pauses make %.6f%%", w.GCPausedPercent, want)
	}
	checkRuntimePause(t, snap, wl)
	if snap.Counters == nil {
		t.Errorf("no counters")
	}
}

// TestMonitorGCFlavourLive: the GC flavour while the session runs and at
// its end is the runtime's own startup flags (package runinfo: the
// runtime provider's RuntimeInformation at the session's start, the
// rundown's at its end; before the monitor read runinfo it had only the
// rundown's and guessed until then); and what the GCs alone show
// (gcpause.Flavor without startup flags, on the same stream) agrees.
func TestMonitorGCFlavourLive(t *testing.T) {
	for _, c := range []struct {
		env                []string
		kind               string
		concurrent         bool
		kindFrom, concFrom string
	}{
		{[]string{"DOTNET_gcServer=1"}, "server", true, "gc_thread", "pause_mode"},
		{[]string{"DOTNET_gcConcurrent=0"}, "workstation", false, "gc_thread", "pause_mode"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			var gc *gcpause.Analyzer
			run := launchWith(t, monitor.Options{}, func(h *nettrace.Header) []analysis.Analyzer {
				gc = gcpause.New(h, gcpause.Options{MaxGCs: 1, MaxSuspensions: 1})
				return []analysis.Analyzer{gc}
			}, c.env, "induced", "gen0=3", "gen1=1", "gen2=1")
			if run.wl.ServerGC != (c.kind == "server") || run.wl.ConcurrentGC != c.concurrent {
				t.Fatalf("the workload runs server=%v concurrent=%v", run.wl.ServerGC, run.wl.ConcurrentGC)
			}
			for _, s := range []*monitor.Snapshot{run.during, run.snap} {
				f := s.Process.GC
				t.Logf("%s: %s (kind from %s, concurrent from %s, %d heaps, %s)", s.Session.State, f, f.KindFrom, f.ConcurrentFrom, f.Heaps, f.LatencyMode)
				if f.Kind != c.kind || f.Concurrent == nil || *f.Concurrent != c.concurrent || f.Heaps < 1 {
					t.Errorf("flavour %+v, want %s concurrent=%v", f, c.kind, c.concurrent)
				}
				if f.KindFrom != "startup_flags" || f.ConcurrentFrom != "startup_flags" {
					t.Errorf("%s: kind from %q, concurrent from %q", s.Session.State, f.KindFrom, f.ConcurrentFrom)
				}
			}
			// Server GC with dynamic adaptation may run on one heap: the GC
			// threads decide; more heaps would decide too.
			// A background GC, when one ran, decides concurrency first.
			f := gc.Flavor(gcpause.Startup{})
			t.Logf("the GCs alone: %s (kind from %s, concurrent from %s)", f, f.KindFrom, f.ConcurrentFrom)
			if f.Kind != c.kind || f.Concurrent == nil || *f.Concurrent != c.concurrent || (f.KindFrom != c.kindFrom && f.KindFrom != "heap_count") ||
				(f.ConcurrentFrom != c.concFrom && !(c.concurrent && f.ConcurrentFrom == "background_gc")) {
				t.Errorf("the GCs alone: %+v, want %s concurrent=%v from %s and %s", f, c.kind, c.concurrent, c.kindFrom, c.concFrom)
			}
		})
	}
}

// TestMonitorLocksLive: lock totals, the wait histogram and the top lock
// against the contention workload's own measurements.
func TestMonitorLocksLive(t *testing.T) {
	run := launchMonitored(t, monitor.Options{Locks: true}, nil, "contention", "threads=4", "iterations=10", "holdMs=20")
	var tids []uint64
	var contended []int64
	if err := run.wl.Get("tids", &tids); err != nil {
		t.Fatal(err)
	}
	if err := run.wl.Get("contended", &contended); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range contended {
		n += c
	}
	measured := run.wl.Float("totalWaitMs")
	l := run.snap.Locks
	t.Logf("monitor: %d contentions, %d waits, %.3f ms (max %.3f); workload: %d contended acquisitions, %.3f ms; top %+v",
		l.Contentions, l.Waits, l.TotalWaitMS, l.MaxWaitMS, n, measured, l.Top)
	if len(l.Top) == 0 || l.WaitHistogram.Count != l.Waits || l.Waiting != 0 || l.Unpaired != 0 {
		t.Fatalf("locks %+v", l)
	}
	top := l.Top[0]
	// The workload's lock is the most contended; the runtime's own locks
	// may add a few short waits elsewhere. Waits are timed by the runtime
	// (ContentionStop's duration) and by the workload's stopwatch around
	// Monitor.Enter, which also counts the spinning before the wait: 10 %.
	if int64(top.Waits) != n || l.Contentions < uint64(n) {
		t.Errorf("top lock %d waits (%d contentions in all), the workload had %d contended acquisitions", top.Waits, l.Contentions, n)
	}
	if top.TotalWaitMS < measured*0.9 || top.TotalWaitMS > measured*1.1 {
		t.Errorf("top lock waited %.3f ms, the workload measured %.3f ms", top.TotalWaitMS, measured)
	}
	if !slices.Contains(tids, top.OwnerThreadID) || top.LockID == 0 {
		t.Errorf("owner %d of lock %#x is not one of the workload's threads %v", top.OwnerThreadID, top.LockID, tids)
	}
}

// TestMonitorCPULive: top methods and the flame graph name the cpu
// workload's two hot methods with exactly the samples clrspy profile's
// builder counts from the same events, HotA ahead as the workload's work
// ratio says.
func TestMonitorCPULive(t *testing.T) {
	var prof *stacks.Builder
	run := launchWith(t, monitor.Options{CPU: true, CPUWindow: time.Minute}, func(hdr *nettrace.Header) []analysis.Analyzer {
		prof = stacks.New(hdr, stacks.Options{})
		return []analysis.Analyzer{prof}
	}, nil, "cpu", "ratio=3", "seconds=3")
	cpu := run.snap.CPU
	if cpu == nil || cpu.Samples == 0 {
		t.Fatalf("no samples: %+v", cpu)
	}
	// The profile's leaf (self) and inclusive samples per method name.
	p := prof.Result()
	self, total := map[string]int64{}, map[string]int64{}
	var samples int64
	for _, smp := range p.Samples {
		samples += smp.Count
		seen := map[string]bool{}
		for i, f := range smp.Stack {
			name := p.Frames[f].Name
			if i == 0 {
				self[name] += smp.Count
			}
			if !seen[name] {
				seen[name] = true
				total[name] += smp.Count
			}
		}
	}
	if cpu.Samples != samples || cpu.Total != samples || cpu.Flame.Total != samples {
		t.Errorf("monitor: %d samples in the window, %d in all, flame root %d; profile: %d", cpu.Samples, cpu.Total, cpu.Flame.Total, samples)
	}
	var a, b monitor.MethodRow
	for _, r := range cpu.TopMethods {
		t.Logf("%6d %6d %5.1f%% %s [%s]; profile %d %d", r.Self, r.Total, r.SelfPercent, r.Name, r.Module, self[r.Name], total[r.Name])
		if r.Self != self[r.Name] || r.Total != total[r.Name] {
			t.Errorf("%s: %d self, %d total samples; the profile %d and %d", r.Name, r.Self, r.Total, self[r.Name], total[r.Name])
		}
		switch {
		case strings.HasPrefix(r.Name, "Workload.Cpu.HotA("):
			a = r
		case strings.HasPrefix(r.Name, "Workload.Cpu.HotB("):
			b = r
		}
	}
	// HotA does three times HotB's work; under load the sampler's ticks
	// and the workload's stopwatch both drift (clrspy profile's test holds
	// the share to 5 points on an idle machine), so only the order and a
	// wide ratio are held here.
	if a.Total < 100 || b.Total < 25 || float64(a.Total) < 1.5*float64(b.Total) || a.Module != "Workload.dll" {
		t.Errorf("HotA %+v, HotB %+v: want HotA well ahead (the workload measured %.2f)", a, b, run.wl.Float("measuredRatio"))
	}
	var find func(n *monitor.FlameNode, name string) int64
	find = func(n *monitor.FlameNode, name string) int64 {
		var s int64
		if n.Name == name {
			s += n.Self
		}
		for _, c := range n.Children {
			s += find(c, name)
		}
		return s
	}
	for _, r := range []monitor.MethodRow{a, b} {
		if got := find(cpu.Flame, r.Name); got != r.Self {
			t.Errorf("%s: %d samples as a leaf in the flame graph, %d in the top methods", r.Name, got, r.Self)
		}
	}
}

// TestMonitorAttachStop: attached to a running process, cancelling Run
// stops the session cleanly; the target runs on.
func TestMonitorAttachStop(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=60", "stdin=1", "gcEveryMs=100")
	opts := monitor.Options{}
	s, err := source.Open(source.Spec{Pid: p.Pid, Providers: monitor.Providers(&opts)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := monitor.New(s.Header(), opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.Run(ctx, s)
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for m.Snapshot().GC.GCCount < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no GCs in 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := m.Snapshot().Session.State; st != monitor.StateRunning {
		t.Errorf("state %s while running", st)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	snap := m.Snapshot()
	if snap.Session.State != monitor.StateStopped || snap.Session.Kind != "attach" || p.Exited() {
		t.Errorf("after stopping: session %+v, target exited %v", snap.Session, p.Exited())
	}
	pr := snap.Process
	if pr.Pid != p.Pid || pr.Name != "Workload" || pr.RuntimeVersion == "" || !pr.UptimeFromStart || pr.UptimeSec < snap.Session.ElapsedSec {
		t.Errorf("process %+v (session %.3f s)", pr, snap.Session.ElapsedSec)
	}
	p.Release()
	wl, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(wl.Runtime, " "+pr.RuntimeVersion) {
		t.Errorf("runtime %q, monitor says %q", wl.Runtime, pr.RuntimeVersion)
	}
}

// checkRuntimePause holds the monitor's pauses by the runtime's own
// definition (gcpause's PauseRuntimeNanos) against what the runtime says:
// the workload's log of what GC.GetTotalPauseDuration added at each
// induced GC, and the total. As clrspy gc's live tests (see
// cmd/clrspy/gc_runtime_live_test.go): the runtime reads its clock a few
// calls away from the events that stand for those reads, so per GC the two
// agree to microseconds when idle (0.25 ms + 0.5 % allowed), and a thread
// stalled inside that window on a CPU-starved machine (measured 1-145 ms
// on about one GC in 30 at load 17-26 on 2 cores) can move one GC either
// way: at most max(2, 10 %) of the GCs may miss, and the total must agree
// within 0.5 % plus what the GCs that missed measured beyond 0.5 %.
func checkRuntimePause(t *testing.T, snap *monitor.Snapshot, wl *workload.Result) {
	t.Helper()
	var log [][2]int64
	if err := wl.Get("pauseLog", &log); err != nil || len(log) < 2 {
		t.Fatalf("workload pause log: %v (%d entries)", err, len(log))
	}
	rows := map[int64]gcpause.GCRow{}
	var sum float64
	for _, r := range snap.GCs {
		rows[int64(r.Number)] = r
		if !r.PauseRuntimeMS.Valid() || !r.StartSeen {
			t.Errorf("GC %d: runtime pause %v, start seen %v: a launched process's GCs are seen whole", r.Number, r.PauseRuntimeMS, r.StartSeen)
		}
		sum += r.PauseRuntimeMS.Or(0)
	}
	if math.Abs(sum-snap.GC.TotalPauseRuntimeMS) > 1e-5*float64(len(rows)+1) {
		t.Errorf("rows' runtime pauses add up to %.6f ms, the total says %.6f ms", sum, snap.GC.TotalPauseRuntimeMS)
	}
	var extra float64
	var missed []string
	compared := 0
	for i := 1; i < len(log); i++ {
		// One GC.Collect, one blocking GC: the entry's count is its number.
		n, want := log[i][0], float64(log[i][1])/1e4
		if n != log[i-1][0]+1 {
			continue // nothing new (the last check), or several GCs at once
		}
		r, ok := rows[n]
		if !ok {
			t.Errorf("GC %d in the runtime's pause log has no row", n)
			continue
		}
		compared++
		got := r.PauseRuntimeMS.Or(0)
		if d := math.Abs(got - want); d > 0.25+0.005*want {
			missed = append(missed, fmt.Sprintf("GC %d %.3f/%.3f ms", n, got, want))
		}
		extra += max(0, math.Abs(got-want)-0.005*want)
	}
	d := snap.GC.TotalPauseRuntimeMS - wl.PauseMs
	allowed := 0.005*wl.PauseMs + extra + 0.001
	t.Logf("runtime's definition: %.3f ms in all, GetTotalPauseDuration %.3f ms (%+.3f ms, allowed ±%.3f); %d GCs compared, beyond tolerance %v; PerfView's sum %.3f ms",
		snap.GC.TotalPauseRuntimeMS, wl.PauseMs, d, allowed, compared, missed, snap.GC.TotalPauseMS+snap.GC.OverlapMS)
	if compared < len(rows)-1 {
		t.Errorf("only %d of %d GCs in the runtime's pause log", compared, len(rows))
	}
	if len(missed) > max(2, compared/10) {
		t.Errorf("%d of %d GCs differ from the runtime's own figure beyond tolerance: %v", len(missed), compared, missed)
	}
	if math.Abs(d) > allowed {
		t.Errorf("total by the runtime's definition %.3f ms, GetTotalPauseDuration %.3f ms: %+.3f ms, more than 0.5 %% plus %.3f ms measured per GC",
			snap.GC.TotalPauseRuntimeMS, wl.PauseMs, d, extra)
	}
}
