package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// How clrspy's pauses by the runtime's definition (gcpause/runtime.go) are
// held against the runtime's own figures, and why not simply "total within
// 0.5 %".
//
// gc.cpp reads its clock a few calls away from the event clrspy uses for
// each reading: just before SuspendEE (GCSuspendEEBegin fires first thing
// in it), just before RestartEE (GCRestartEEBegin), and at the end of gc1
// right before GCEnd (workstation) or after the last GCPerHeapHistory
// (server). Idle, each window is microseconds: per GC the two agree to
// 2–25 µs (median, measured here). Server GC reads the end after
// distribute_free_regions, which follows the last event on that thread:
// clrspy is short by that step, 0.05–0.5 ms per GC (measured). And on a
// CPU-starved machine the thread is now and then stalled inside a window
// (preempted, or waiting in EventPipe's write path for a buffer): measured
// 1–145 ms on about one GC in 30 at load 17–26 on 2 cores, in either
// direction. The source bounds none of that, so a bare band on the total
// would be either loose or flaky.
//
// So the workload logs what GC.GetTotalPauseDuration adds at each GC
// (pauselog=1) and the test compares GC by GC:
//   - each log entry, or group of entries for a background GC (its first
//     stop with the ephemeral GC run in it, the foreground GCs during it,
//     its final stop), against clrspy's figures for the same GCs, and each
//     kind's last GC against GCMemoryInfo: all within gcTolerance except
//     at most max(2, 10 %) of them (the stalls);
//   - the total against GetTotalPauseDuration within 0.5 %, plus the
//     differences beyond 0.5 % that the comparisons above measured. What
//     the log does not isolate (GCs before or after the mode's loop) has to
//     fit in the 0.5 %.

// perGC is a GC, or a background GC's group, by the runtime's definition
// beside the runtime's own figure.
type perGC struct {
	what       string
	got, want  float64
	tol, extra float64 // tolerance; difference beyond 0.5 % of want
}

func newPerGC(what string, got, want float64, server, background bool) perGC {
	c := perGC{what: what, got: got, want: want, tol: gcTolerance(want, server, background)}
	c.extra = max(0, math.Abs(got-want)-0.005*want)
	return c
}

// checkRuntimePauses compares clrspy's pauses by the runtime's definition
// with what the runtime reports about itself (see above).
func (r *gcLiveRun) checkRuntimePauses(t *testing.T) {
	t.Helper()
	s := r.doc.Summary
	rows := map[int64]*gcRowJSON{}
	var sum float64
	n := 0
	for i, g := range r.doc.GCs {
		rows[int64(g.Number)] = &r.doc.GCs[i]
		if !g.Complete {
			continue
		}
		n++
		if !g.StartSeen || g.PauseRuntimeMS == nil {
			t.Errorf("GC %d: start seen %v, runtime pause %v: a launched process's GCs are all seen whole", g.Number, g.StartSeen, g.PauseRuntimeMS)
			continue
		}
		sum += *g.PauseRuntimeMS
	}
	if math.Abs(sum-s.RuntimePauseMS) > 1e-5*float64(n+1) {
		t.Errorf("rows' runtime pauses add up to %.6f ms, total_pause_runtime_ms %.6f", sum, s.RuntimePauseMS)
	}
	cmp, extra := r.fromPauseLog(t, rows)

	// GCMemoryInfo: the last GC of each kind. A background GC's
	// PauseDurations are its first stop less the ephemeral GC run in it
	// (whose own figure runs from its GCStart) plus its final-mark stop.
	// PerfView gives that ephemeral GC the whole rest of the first stop,
	// which holds the BGC's root marking (milliseconds under load): that is
	// why a BGC's PerfView pause never matched GCMemoryInfo, with the
	// sample profiler or without (its SuspendOther stops are on their own
	// thread and never enter a GC's pause). These are counted against the
	// stall budget, not the total's allowance (the log covered them).
	for kind, info := range r.wl.GCInfo {
		var want float64
		for _, p := range info.PauseDurationsMs {
			want += p
		}
		g := rows[info.Index]
		if g == nil || g.PauseRuntimeMS == nil {
			t.Errorf("%s GC %d: no row with a runtime pause", kind, info.Index)
			continue
		}
		t.Logf("%s GC %d (%s): runtime definition %.3f ms, GCMemoryInfo %v = %.3f ms, PerfView's pause %.3f ms",
			kind, info.Index, g.Type, *g.PauseRuntimeMS, info.PauseDurationsMs, want, g.PauseMS)
		if kind == "Background" {
			if fb, ok := r.wl.GCInfo["FullBlocking"]; ok && fb.Index == info.Index {
				continue // it fell back to a blocking GC, recorded as such; this record stays empty
			}
			if f := foregroundDuring(r.doc.GCs, g); f != 0 {
				// do_post_gc → recover_bgc_settings → add_bgc_pause_duration_0:
				// the foreground GC's share up to its restart is written over
				// this BGC's first stop in its record (the total is right).
				t.Logf("%s GC %d: foreground GC %d ran during it, so GCMemoryInfo's first figure is that GC's: not compared", kind, g.Number, f)
				continue
			}
		}
		c := newPerGC(fmt.Sprintf("%s GC %d (GCMemoryInfo)", kind, g.Number), *g.PauseRuntimeMS, want, r.wl.ServerGC, g.Type == "Background")
		c.extra = 0
		cmp = append(cmp, c)
	}

	var out []string
	for _, c := range cmp {
		if math.Abs(c.got-c.want) > c.tol {
			out = append(out, fmt.Sprintf("%s %.3f/%.3f ms", c.what, c.got, c.want))
		}
	}
	t.Logf("%d comparisons for %d GCs; beyond tolerance: %d %v", len(cmp), n, len(out), out)
	if len(cmp) == 0 {
		t.Errorf("no GC compared with the runtime's own figure")
	}
	if len(out) > max(2, len(cmp)/10) {
		t.Errorf("%d of %d comparisons differ from the runtime's own figure by more than the tolerance: %v", len(out), len(cmp), out)
	}

	d := s.RuntimePauseMS - r.wl.PauseMs
	allowed := 0.005*r.wl.PauseMs + extra + 0.001
	t.Logf("total by the runtime's definition %.3f ms, GetTotalPauseDuration %.3f ms: %+.3f ms (%+.3f %%), allowed ±%.3f ms = 0.5 %% + %.3f ms measured per GC; PerfView's total %.3f ms (%+.2f %%); load %s",
		s.RuntimePauseMS, r.wl.PauseMs, d, d*100/r.wl.PauseMs, allowed, extra, s.TotalPauseMS, (s.TotalPauseMS/r.wl.PauseMs-1)*100, loadAvg())
	if math.Abs(d) > allowed {
		t.Errorf("total pause by the runtime's definition %.3f ms, GetTotalPauseDuration %.3f ms: %+.3f ms, more than 0.5 %% plus the %.3f ms the per-GC comparison measured",
			s.RuntimePauseMS, r.wl.PauseMs, d, extra)
	}
}

// fromPauseLog compares the workload's pause log (work.pauseLog: [GC
// count, growth of GetTotalPauseDuration in 100 ns ticks], read on its
// allocating thread; the first entry is the count when the mode started)
// with clrspy's rows. An entry covers the GCs since the previous entry's
// count; a background GC keeps its group open until its final-mark stop's
// entry (one with an unchanged count). It returns the comparisons and the
// sum of their differences beyond 0.5 %.
func (r *gcLiveRun) fromPauseLog(t *testing.T, rows map[int64]*gcRowJSON) (cmp []perGC, extra float64) {
	t.Helper()
	var log [][2]int64
	if err := r.wl.Get("pauseLog", &log); err != nil || len(log) == 0 {
		t.Fatalf("workload pause log: %v (%d entries)", err, len(log))
	}
	var got, want float64
	var first int64
	open, bgc := 0, false
	next := log[0][0] + 1
	flush := func(last int64) {
		what := fmt.Sprintf("GC %d", first)
		if last > first {
			what = fmt.Sprintf("GCs %d-%d", first, last)
		}
		c := newPerGC(what, got, want, r.wl.ServerGC, bgc)
		cmp = append(cmp, c)
		extra += c.extra
		got, want, first, bgc = 0, 0, 0, false
	}
	prev := log[0][0]
	for _, e := range log[1:] {
		c := e[0]
		want += float64(e[1]) / 1e4
		for ; next <= c; next++ {
			g := rows[next]
			if g == nil || !g.Complete || g.PauseRuntimeMS == nil {
				t.Errorf("GC %d: in the runtime's pause log, no complete row", next)
				return nil, 0
			}
			if first == 0 {
				first = next
			}
			got += *g.PauseRuntimeMS
			if g.Type == "Background" && g.Pauses > 1 {
				open, bgc = open+1, true // its final-mark stop is yet to come
			}
		}
		if c == prev && open > 0 {
			open--
		}
		prev = c
		if open == 0 && first != 0 {
			flush(c)
		}
	}
	if first != 0 {
		flush(next - 1)
	}
	return cmp, extra
}

// gcTolerance is how far a GC's pause by the runtime's definition may be
// from the runtime's own figure, in milliseconds, stalls aside: 0.5 % plus
// 0.25 ms for the clock-read/event windows (tens of µs each, up to a few
// tenths under load) of workstation GC, 0.5 ms and 1 % where a background
// GC's five windows add up, and for server GC 0.5 ms more for
// distribute_free_regions.
func gcTolerance(want float64, server, background bool) float64 {
	tol := 0.25 + want*0.005
	if background {
		tol = 0.5 + want*0.01
	}
	if server {
		tol += 0.5
	}
	return tol
}

// foregroundDuring returns a foreground GC that ran while background GC
// bgc did, or 0.
func foregroundDuring(gcs []gcRowJSON, bgc *gcRowJSON) uint32 {
	if bgc.GCDurationMS == nil {
		return 0
	}
	for _, g := range gcs {
		if g.Type == "Foreground" && g.GCStartMS > bgc.GCStartMS && g.GCStartMS < bgc.GCStartMS+*bgc.GCDurationMS {
			return g.Number
		}
	}
	return 0
}

// cpuHogs keeps every core busy for the rest of the test: one busy loop
// per CPU, killed by the test's cleanup.
func cpuHogs(t *testing.T) {
	t.Helper()
	for i := 0; i < runtime.NumCPU(); i++ {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// TestGCLiveFlavorsLoaded is TestGCLiveFlavors with every core busy.
func TestGCLiveFlavorsLoaded(t *testing.T) {
	cpuHogs(t)
	testGCLiveFlavors(t)
}

// TestGCLiveWithSamplingLoaded is TestGCLiveWithSampling with every core
// busy, where it used to fail.
func TestGCLiveWithSamplingLoaded(t *testing.T) {
	cpuHogs(t)
	testGCLiveWithSampling(t)
}
