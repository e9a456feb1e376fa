package triage

import (
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/hang"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/requests"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// Inputs are the analyses' results a judgement is made from, over a
// window: what the Analyzer has of its stream, what a live model has
// since its session began. FactsFrom makes the facts of both, so a file
// and a live view are judged by one composition (nil results: the
// analysis did not run; their facts stay unset or come from the
// counters).
type Inputs struct {
	// Target names the target in the next commands.
	Target string
	// WindowNanos is the window's length.
	WindowNanos int64
	// Pauses is the pause analysis' rollup (its Longest names the longest
	// pause); GCs the tally of every GC; HeapDumps the GCs other sessions
	// marked a heap snapshot's (the stream's own marks are in GCs).
	Pauses    *gcpause.Result
	GCs       *GCTally
	HeapDumps []uint32
	// Sampled: the stream has the runtime sample profiler's samples.
	Sampled bool
	// LocksSeen: the window says something about locks (contention events
	// were asked for); Locks is package locks' result, Threads the
	// threads that ran, OpenWaits the lock waits open at the window's end.
	LocksSeen bool
	Locks     *locks.Result
	Threads   int
	OpenWaits []hang.OpenLockWait
	// Counters are the runtime's counters (nil: none arrived) and Peaks
	// their figures over the window.
	Counters *counters.Result
	Peaks    CounterPeaks
	// The analyses that refine the counters' facts (nil: not run).
	ThreadPool *threadpool.Result
	Exceptions *exceptions.Result
	Requests   *requests.Result
	// CPU: /proc's readings, and the profile of the stream's samples
	// (nil: none), else the top methods of a sampler beside it (Methods,
	// named by MethodsSource).
	CPU           Readings
	Profile       *stacks.Profile
	Methods       []Method
	MethodsSource string
}

// FactsFrom gathers the facts of in: the pause rollup (PauseFacts), the
// GC tally's counts and memory trend, the locks (LocksFrom), the counters
// (CountersFrom) refined by the thread-pool, exception and request
// results, and the CPU (CPUFrom).
func FactsFrom(in *Inputs) *Facts {
	win := in.WindowNanos
	f := &Facts{WindowSec: float64(win) / 1e9, Target: in.Target}
	tally := in.GCs
	if tally == nil {
		tally = &GCTally{}
	}
	snap, blocking := tally.snapshot(in.HeapDumps)
	if in.Pauses != nil {
		PauseFacts(&f.GC, in.Pauses, win, snap)
	}
	tally.fill(&f.GC, &f.Memory, blocking)
	f.GC.ProfilerInStream = in.Sampled
	f.Locks.Seen = in.LocksSeen
	if in.Locks != nil {
		LocksFrom(&f.Locks, in.Locks, in.Threads, win, in.OpenWaits)
	}
	CountersFrom(f, in.Counters, in.Peaks)
	ThreadPoolFrom(f, in.ThreadPool)
	ExceptionsFrom(f, in.Exceptions)
	RequestsFrom(f, in.Requests)
	ms, src := in.Methods, in.MethodsSource
	if in.Profile != nil {
		ms, src = TopLeafMethods(in.Profile, topMethods), "eventpipe"
	}
	CPUFrom(&f.CPU, in.CPU, in.Peaks.CPUUsagePct, ms, src)
	return f
}
