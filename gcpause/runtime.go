package gcpause

import "github.com/clrspy/clrspy/clrevents"

// The runtime's own pause accounting, beside PerfView's.
//
// GC.GetTotalPauseDuration returns gc_heap::total_suspended_time, and
// GCMemoryInfo.PauseDurations the per-GC figures added to it. gc.cpp (the
// .NET 10 runtime; dotnet/runtime main has split the same functions out of
// it into several files) and vm/threadsuspend.cpp take the timestamps at
// these points, each next to an event clrspy sees:
//
//   - suspended_start_time: read just before GCToEEInterface::SuspendEE, in
//     GCHeap::GarbageCollectGeneration (workstation) or by heap 0 in
//     gc_heap::gc_thread_function (server), and by the BGC thread before
//     bgc_suspend_EE in background_mark_phase. ThreadSuspend::SuspendEE
//     fires GCSuspendEEBegin first thing, before it takes the thread store
//     lock, so the event follows the timer by the few calls between them.
//   - dd_time_clock: read in update_collection_counts at the start of gc1,
//     just after do_pre_gc fired GCStart.
//   - end_gc_time: read in update_end_ngc_time at the end of gc1, after
//     fire_pevents fired GCGlobalHeapHistory and GCPerHeapHistory and
//     distribute_free_regions ran. Workstation: the same thread then runs
//     do_post_gc, which fires GCEnd and GCHeapStats (UpdatePostGCCounters)
//     after a little bookkeeping. Server: the thread that completed the
//     last join took the time; GCEnd comes from heap 0's thread, which may
//     first have to wake from that join (milliseconds under CPU load), so
//     there the last GCPerHeapHistory is the nearer mark.
//   - add_bgc_pause_duration_0 and background_sweep read the clock just
//     before RestartEE, which fires GCRestartEEBegin.
//
// What each kind of GC adds to total_suspended_time:
//
//   - blocking GC (do_post_gc): end_gc_time − suspended_start_time, i.e.
//     SuspendEEBegin → end mark;
//   - the ephemeral GC run at a BGC's start (current_bgc_state ==
//     bgc_initialized) and the provisional-mode full GC: end_gc_time −
//     dd_time_clock, i.e. GCStart → end mark;
//   - background GC: pause_durations[0] = restart − suspended_start_time −
//     the ephemeral GC's figure (add_bgc_pause_duration_0), i.e. its first
//     stop's SuspendEEBegin → RestartEEBegin less that GC's share, plus
//     pause_durations[1] = its final-mark stop (SuspendForGCPrep)
//     SuspendEEBegin → RestartEEBegin (background_sweep). Further GCPrep
//     stops (the heap walk for heap-survival events, heap verification) are
//     not counted;
//   - foreground GC: do_post_gc adds its blocking figure, then
//     recover_bgc_settings restores the BGC's settings and
//     add_bgc_pause_duration_0 adds the rest of the stop up to the restart
//     (less the foreground figure), so the total grows by SuspendEEBegin →
//     RestartEEBegin. (The runtime stores that rest in the BGC's
//     GCMemoryInfo record, overwriting the BGC's first stop there.)
//
// So this figure leaves out what PerfView counts after the clock is read:
// the end of the GC (GCHeapStats and the rest of do_post_gc, server joins)
// and the restart itself (RestartEEBegin → RestartEEEnd), which under CPU
// load can take milliseconds. Where the runtime's clock read and the event
// are on one thread with no wait between them they agree to microseconds;
// if that thread is preempted in between (a loaded machine), the two differ
// by the time it waited for a CPU.

// rtMarks are the events (event clock) that bracket the runtime's timers
// for one GC.
type rtMarks struct {
	start         int64 // GCStart
	end           int64 // GCEnd; 0 unseen
	endThread     uint64
	perHeap       int64 // last GCPerHeapHistory; 0 unseen
	perHeapThread uint64
	restart       int64  // RestartEEBegin ending its (first) stop; 0 unseen
	fromStart     bool   // counted from GCStart (ephemeral GC at a BGC's start, PM full GC)
	wholeStop     bool   // a Background GC that ran whole inside its first stop
	eph           *GC    // the ephemeral GC run in a BGC's first stop
	final         int64  // a BGC's final-mark stop in nanoseconds; -1 unseen
	prepStops     int    // SuspendForGCPrep stops of a BGC
	bgcInit       int64  // a BGC's first-stop share of PauseNanos (PerfView's rule)
	stops         []span // a BGC's later stops
}

// endMark is the event nearest to end_gc_time: GCEnd when the thread that
// fired the last GCPerHeapHistory also fired GCEnd (nothing but bookkeeping
// between them), else that GCPerHeapHistory (server GC: GCEnd waits for
// heap 0's thread to wake).
func (m *rtMarks) endMark() (int64, bool) {
	switch {
	case m.end == 0:
		return 0, false
	case m.perHeap != 0 && m.perHeapThread != m.endThread:
		return m.perHeap, true
	}
	return m.end, true
}

// runtimePause is g's pause by the runtime's definition, or -1 when the
// events that mark it are missing.
func (a *Analyzer) runtimePause(g *GC) int64 {
	m := &g.rt
	switch {
	case g.Type == clrevents.GCBackground && !m.wholeStop:
		if m.restart == 0 || m.final < 0 {
			return -1
		}
		first := a.dur(m.restart - g.pauseStartTS)
		if e := m.eph; e != nil {
			end, ok := e.rt.endMark()
			if !ok {
				return -1
			}
			first = max(first-a.dur(end-e.rt.start), 0)
		}
		return first + m.final
	case g.Type == clrevents.GCForeground:
		if m.restart == 0 {
			return -1
		}
		return a.dur(m.restart - g.pauseStartTS)
	}
	end, ok := m.endMark()
	if !ok {
		return -1
	}
	from := g.pauseStartTS
	if m.fromStart {
		from = m.start
	}
	return a.dur(end - from)
}
