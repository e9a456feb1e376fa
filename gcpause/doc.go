// Package gcpause owns GC pause and runtime suspension analysis: a state
// machine over runtime events (SuspendEE/RestartEE, GCStart/End, heap
// statistics and histories) that turns them into one record per GC, one
// record per non-GC runtime suspension, and a rollup (counts, percentiles,
// a logarithmic pause histogram, suspensions by reason).
//
// It follows PerfView's GCStats rules (pause = SuspendEEBegin → RestartEEEnd,
// suspend = SuspendEEBegin → SuspendEEEnd, a background GC's pause is the sum
// of its short stops, foreground GCs are their own rows, a GC is complete
// when its heap statistics arrived, the ephemeral GC at the start of a
// background GC pauses from its own GCStart) with one deliberate difference:
// suspensions are tracked per thread, so the sample profiler's suspensions
// (reason SuspendOther, about one per millisecond) cannot overwrite the
// timestamps of a GC's suspension as they do in PerfView. And heap
// statistics and histories (which carry no GC number) that a background GC
// writes on its own thread during a foreground GC's pause, or after that
// GC's HeapStats, stay the background GC's instead of becoming the
// foreground GC's (PerfView gives them to the most recent open GC: a second
// heap and doubled generation sizes on a workstation process).
//
// Beside PerfView's pause each GC carries the runtime's own
// (GC.PauseRuntimeNanos: what GC.GetTotalPauseDuration adds for it, rebuilt
// from the events next to gc.cpp's clock reads, see runtime.go). Totals and
// "% paused" count stopped wall time once: where the stops of two GCs
// overlap, the overlap is counted once (the sum of the pauses, PerfView's
// total, is kept beside it). A GC whose start preceded the session has a
// lower-bound pause: it counts in the totals, not in max, mean or
// percentiles.
//
// It is clrspy's one pairing of a suspension with its restart: every
// ended suspension, GC or not, goes out as an analysis.Stopped (to
// Options.OnStopped, and to the StoppedObservers of its analysis.Set:
// gcpause.In), with the GC it belongs to and whether that GC was a heap
// snapshot's (GC.HeapDump); OnGCStart hands each GC's decoded start and
// OpenSince the suspensions still open. The live monitor, perf's sample
// labels, the heap snapshot's pause, hang's target-paused time and the
// flight recorder read these instead of pairing or decoding the events
// again. Flavor is the GC's configuration from the startup flags a caller
// gives (package runinfo's), else from what the GCs show (heap counts,
// the GC's thread against GCTriggered's, background GCs, the latency
// mode).
//
// The Analyzer does no I/O: feed it events from a file or a live session.
package gcpause
