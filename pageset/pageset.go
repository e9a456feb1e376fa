package pageset

import (
	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/requests"
	"github.com/clrspy/clrspy/runinfo"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// Analyses are the analyses a report page is built from, all fed
// from one stream: the process information, one symbol table shared by
// the profile and the lock stacks, GC pauses, CPU samples (with when they
// happened), lock contention and sampled heap objects. Each shows on the
// page when its events exist.
type Analyses struct {
	Run      *runinfo.Analyzer
	Symbols  *stacks.Symbols
	GC       *gcpause.Analyzer
	Stacks   *stacks.Builder
	Timeline *stacks.Timeline
	Locks    *locks.Analyzer
	// Exceptions counts exceptions by type, throw and catch site.
	Exceptions *exceptions.Analyzer
	Heap       *heap.Survival // nil with NoHeap
	// retired holds, as page rows, the GCs a file's pause analysis let
	// go of: a GC record is ~670 bytes, its row ~270, spooled to a file
	// in chunks.
	retired *report.GCColumns

	// ThreadPool follows the thread pool (starvation, blocking sites).
	ThreadPool *threadpool.Analyzer
	// Requests joins ASP.NET Core's requests with the pauses and waits
	// (the Set hands it gcpause's suspensions and locks' waits).
	Requests *requests.Analyzer

	// Snapshot collects a heap dump when the stream holds one (clrspy
	// record --profile gcdump); nil with NoSnapshot. Until a dump's GC
	// it keeps only the type names.
	Snapshot *heapgraph.Builder

	set *analysis.Set
}

// Options configure New and Register.
type Options struct {
	// GC configures the pause analysis (live views bound its rows and
	// hook OnGC).
	GC gcpause.Options
	// TimelineRuns bounds the memory of the sample timeline (0: default).
	TimelineRuns int
	// NoHeap leaves the heap analysis out (it keeps every sampled object).
	NoHeap bool
	// NoSnapshot leaves the heap snapshot section out.
	NoSnapshot bool
	// Movement adds the survival and movement events to the providers
	// (the Set's: web.PageProviders).
	Movement bool
	// OnSample is also called for every CPU sample (after the timeline).
	OnSample func(stacks.RawSample)
}

// heapGiveUp is how many GCs the page's heap analysis waits for a survival
// or movement event before it gives up (heap.Survival).
const heapGiveUp = 16

// New creates the analyses for a stream with header hdr: a Set of them
// (Register), started.
func New(hdr *nettrace.Header, o Options) *Analyses {
	s := analysis.NewSet()
	a := Register(s, o)
	s.Start(hdr)
	return a
}

// Register registers the page's analyses in s, the symbol table first;
// the fields of the Analyses are set when s starts. The Set feeds the
// analyses; the report renders their results (Parts).
func Register(s *analysis.Set, o Options) *Analyses {
	a := &Analyses{set: s}
	sym := stacks.SymbolsIn(s)
	gco := o.GC
	if gco.MaxGCs == 0 && gco.OnRetire == nil {
		// Every row goes on the page: the analysis keeps the recent ones,
		// the page the rest.
		gco, a.retired = report.RetireGCs(gco)
	}
	gc := gcpause.In(s, gco)
	analysis.Add(s, analysis.Spec{Name: "runinfo"}, func(h *nettrace.Header) *runinfo.Analyzer {
		a.Symbols, a.GC = sym.Get(), gc.Get()
		a.Run = runinfo.New(h)
		return a.Run
	})
	analysis.Add(s, stacks.SamplesSpec,
		func(h *nettrace.Header) *stacks.Builder {
			a.Timeline = stacks.NewTimeline(o.TimelineRuns)
			onSample := a.Timeline.Add
			if f := o.OnSample; f != nil {
				onSample = func(s stacks.RawSample) { a.Timeline.Add(s); f(s) }
			}
			a.Stacks = stacks.New(h, stacks.Options{Symbols: a.Symbols, OnSample: onSample, StacksOnly: true})
			return a.Stacks
		})
	analysis.Add(s, analysis.Spec{Name: "locks", Keep: locks.Wants, Enable: wants(locks.WantsContention)},
		func(h *nettrace.Header) *locks.Analyzer {
			a.Locks = locks.New(h, locks.Options{Symbols: a.Symbols, NoSamples: true}) // the page has no pprof
			return a.Locks
		})
	analysis.Add(s, analysis.Spec{Name: "exceptions", Keep: exceptions.Wants}, func(h *nettrace.Header) *exceptions.Analyzer {
		a.Exceptions = exceptions.New(h, exceptions.Options{Symbols: a.Symbols})
		return a.Exceptions
	})
	analysis.Add(s, analysis.Spec{Name: "threadpool", Keep: threadpool.Wants}, func(h *nettrace.Header) *threadpool.Analyzer {
		a.ThreadPool = threadpool.New(h, threadpool.Options{Symbols: a.Symbols, Counters: counters.New(h, counters.Options{}), FeedCounters: true})
		return a.ThreadPool
	})
	// After the pause and lock analyses: it observes their suspensions
	// and waits, handed on before the event that follows them. Its
	// providers are a requests session's (clrspy record --profile
	// requests), not the page's.
	analysis.Add(s, analysis.Spec{Name: "requests", Keep: requests.Wants, Enable: wants()}, func(h *nettrace.Header) *requests.Analyzer {
		a.Requests = requests.New(h, requests.Options{})
		return a.Requests
	})
	if !o.NoHeap {
		enable := wants(heap.WantsSession)
		if o.Movement {
			enable = append(enable, heap.WantsMovement)
		}
		analysis.Add(s, analysis.Spec{Name: "heap", Keep: heap.Wants, Enable: enable}, func(h *nettrace.Header) *heap.Survival {
			a.Heap = heap.NewSurvival(h, heap.Options{SkipObjects: true}, heapGiveUp)
			return a.Heap
		})
	}
	if !o.NoSnapshot {
		// Uncounted: it decodes the GC events the pause analysis already
		// counts, and what it loses of a heap dump the section itself
		// reports (heapgraph.Missing). Its events come with a snapshot's
		// own session (heapgraph.SessionProviders), not the page's.
		analysis.Add(s, analysis.Spec{Name: "heapgraph", Keep: heapgraph.Wants, Enable: wants(), Uncounted: true},
			func(h *nettrace.Header) *heapgraph.Builder {
				a.Snapshot = heapgraph.NewBuilder(h, nil)
				return a.Snapshot
			}) // after the pause analysis: it hands the dump GC's stop
	}
	return a
}

func wants(w ...func(*nettrace.Metadata) bool) []func(*nettrace.Metadata) bool {
	return append([]func(*nettrace.Metadata) bool{}, w...)
}

// Analyzers is what to feed: the page's Set (it sums the counted
// analyses' stats).
func (a *Analyses) Analyzers() []analysis.Analyzer { return []analysis.Analyzer{a.set} }

// Parts returns the results as page parts (Title, Input, Pid, Start and
// the time axis are the caller's). It is the end of the analyses: the
// large ones let go of their working state once their result is made, so
// the page is built without it (on a 1 GiB trace the lock analysis alone
// held ~35 MB); their Stats still answer.
func (a *Analyses) Parts() report.PageParts {
	pp := report.PageParts{Run: a.Run.Result(), GC: a.GC.Result(), RetiredGCs: a.retired, Timeline: a.Timeline, Stacks: a.Stacks}
	report.LocksSection.Page(&pp, a.Locks.Result())
	a.Locks.Release()
	report.ExceptionsSection.Page(&pp, a.Exceptions.Result())
	pp.PageThreadPool = report.PageThreadPoolOf(a.ThreadPool.Result(), a.ThreadPool.FirstNanos())
	pp.PageRequests = report.PageRequestsOf(a.Requests.Result())
	if t := a.heapTracker(); t != nil {
		r := t.Result()
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

func (a *Analyses) heapTracker() *heap.Tracker {
	if a.Heap == nil {
		return nil
	}
	return a.Heap.Tracker()
}
