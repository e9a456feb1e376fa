package report

import (
	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/runinfo"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// PageAnalyses are the analyses a report page is built from, all fed
// from one stream: the process information, one symbol table shared by
// the profile and the lock stacks, GC pauses, CPU samples (with when they
// happened), lock contention and sampled heap objects. Each shows on the
// page when its events exist.
type PageAnalyses struct {
	Run      *runinfo.Analyzer
	Symbols  *stacks.Symbols
	GC       *gcpause.Analyzer
	Stacks   *stacks.Builder
	Timeline *stacks.Timeline
	Locks    *locks.Analyzer
	// Exceptions counts exceptions by type, throw and catch site.
	Exceptions *exceptions.Analyzer
	Heap       *movementHeap // nil with NoHeap
	// retired holds, as page rows, the GCs a file's pause analysis let
	// go of: a GC record is ~670 bytes, its row ~270, spooled to a file
	// in chunks.
	retired *GCColumns

	// ThreadPool follows the thread pool (starvation, blocking sites).
	ThreadPool *threadpool.Analyzer

	// Snapshot collects a heap dump when the stream holds one (clrspy
	// record --profile gcdump); nil with NoSnapshot. Until a dump's GC
	// it keeps only the type names.
	Snapshot *heapgraph.Builder
}

// PageAnalysesOptions configure NewPageAnalyses.
type PageAnalysesOptions struct {
	// GC configures the pause analysis (live views bound its rows and
	// hook OnGC).
	GC gcpause.Options
	// TimelineRuns bounds the memory of the sample timeline (0: default).
	TimelineRuns int
	// NoHeap leaves the heap analysis out (it keeps every sampled object).
	NoHeap bool
	// NoSnapshot leaves the heap snapshot section out.
	NoSnapshot bool
	// OnSample is also called for every CPU sample (after the timeline).
	OnSample func(stacks.RawSample)
}

// retiredGCsAfter is how many GC records a page's unbounded pause analysis
// keeps; older ones become page rows.
var retiredGCsAfter = 1024 // a variable for the tests

// NewPageAnalyses creates the analyses for a stream with header hdr.
func NewPageAnalyses(hdr *nettrace.Header, o PageAnalysesOptions) *PageAnalyses {
	a := &PageAnalyses{Run: runinfo.New(hdr), Symbols: stacks.NewSymbols(hdr), Timeline: stacks.NewTimeline(o.TimelineRuns)}
	if o.GC.MaxGCs == 0 && o.GC.OnRetire == nil {
		// Every row goes on the page: the analysis keeps the recent ones,
		// the page the rest.
		a.retired = &GCColumns{}
		o.GC.MaxGCs, o.GC.OnRetire = retiredGCsAfter, a.retired.appendSpooled
	}
	a.GC = gcpause.New(hdr, o.GC)
	onSample := a.Timeline.Add
	if f := o.OnSample; f != nil {
		onSample = func(s stacks.RawSample) { a.Timeline.Add(s); f(s) }
	}
	a.Stacks = stacks.New(hdr, stacks.Options{Symbols: a.Symbols, OnSample: onSample, StacksOnly: true})
	a.Locks = locks.New(hdr, locks.Options{Symbols: a.Symbols, NoSamples: true}) // the page has no pprof
	a.Exceptions = exceptions.New(hdr, exceptions.Options{Symbols: a.Symbols})
	a.ThreadPool = threadpool.New(hdr, threadpool.Options{Symbols: a.Symbols})
	if !o.NoHeap {
		a.Heap = &movementHeap{t: heap.New(hdr, heap.Options{SkipObjects: true})}
	}
	if !o.NoSnapshot {
		a.Snapshot = heapgraph.NewBuilder(hdr, nil)
	}
	return a
}

// Analyzers lists the analyses to feed, the symbol table first.
func (a *PageAnalyses) Analyzers() []analysis.Analyzer {
	as := []analysis.Analyzer{a.Symbols, a.Run, a.GC, a.Stacks, a.Locks, a.Exceptions, a.ThreadPool}
	if a.Heap != nil {
		as = append(as, a.Heap)
	}
	if a.Snapshot != nil {
		as = append(as, uncountedSnapshot{a.Snapshot})
	}
	return as
}

// Parts returns the results as page parts (Title, Input, Pid, Start and
// the time axis are the caller's). It is the end of the analyses: the
// large ones let go of their working state once their result is made, so
// the page is built without it (on a 1 GiB trace the lock analysis alone
// held ~35 MB); their Stats still answer.
func (a *PageAnalyses) Parts() PageParts {
	pp := PageParts{Run: a.Run.Result(), GC: a.GC.Result(), RetiredGCs: a.retired, Timeline: a.Timeline, Stacks: a.Stacks}
	// The lock table is made now: the result names every waiting stack
	// (7 MB on a 1 GiB trace), the table a hundred.
	pp.PageLocks = PageLocksOf(a.Locks.Result())
	a.Locks.Release()
	pp.Exceptions = a.Exceptions.Result()
	pp.PageThreadPool = PageThreadPoolOf(a.ThreadPool.Result(), a.ThreadPool.FirstNanos())
	if a.Heap != nil && a.Heap.t != nil {
		r := a.Heap.t.Result()
		pp.Heap = heap.Summarize(r, a.Symbols)
		pp.HeapMovement = r.Stats.HasMovementEvents
	}
	if a.Snapshot != nil && a.Snapshot.Dumped() {
		g, err := a.Snapshot.Graph()
		if err != nil {
			pp.SnapshotError = "no heap snapshot section: " + err.Error()
		}
		pp.Snapshot = g
		a.Snapshot = nil
	}
	// The page's flame graph counts from the timeline, not the samples.
	pp.CPU = a.Stacks.ResultStacks()
	a.Stacks.Release()
	return pp
}

// uncountedSnapshot hides the snapshot builder's stats: it decodes the GC
// events the pause analysis already counts, and what it loses of a heap
// dump the section itself reports (heapgraph.Missing).
type uncountedSnapshot struct{ *heapgraph.Builder }

// Stats implements analysis.Analyzer.
func (uncountedSnapshot) Stats() analysis.Stats { return analysis.Stats{} }

// heapGiveUp is how many GCs the page's heap analysis waits for a survival
// or movement event before it gives up.
const heapGiveUp = 16

// movementHeap feeds the heap analysis only while it can tell survival:
// without the GC's survival and movement events it learns nothing the
// page shows, and following every sampled object across thousands of GCs
// would cost more than all the other analyses together. After heapGiveUp
// GCs without such an event it drops the tracker and ignores the rest.
type movementHeap struct {
	t     *heap.Tracker
	gcs   int
	seen  bool
	stats analysis.Stats // the tracker's, when it was dropped
}

// Event implements analysis.Analyzer.
func (m *movementHeap) Event(ev *nettrace.Event) {
	if m.t == nil {
		return
	}
	if ev.Meta.Runtime == nettrace.Runtime && !m.seen {
		switch ev.Meta.EventID {
		case clrevents.IDGCBulkMovedObjectRanges, clrevents.IDGCBulkSurvivingObjectRanges:
			m.seen = true
		case clrevents.IDGCStart:
			if m.gcs++; m.gcs > heapGiveUp {
				m.stats, m.t = m.t.Stats(), nil
				return
			}
		}
	}
	m.t.Event(ev)
}

// Stats implements analysis.Analyzer.
func (m *movementHeap) Stats() analysis.Stats {
	if m.t == nil {
		return m.stats
	}
	return m.t.Stats()
}

// Finish implements analysis.Finisher.
func (m *movementHeap) Finish() {
	if m.t != nil {
		m.t.Finish()
	}
}
