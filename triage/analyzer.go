package triage

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/hang"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/requests"
	"github.com/clrspy/clrspy/runinfo"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// Options configure an Analyzer.
type Options struct {
	// Target names the target in the next commands ("--pid 4242", a
	// file's path).
	Target string
	// CounterSessionID is the counters session the command opened ("":
	// any, for a file).
	CounterSessionID string
	// Symbols is a symbol table shared with other analyses of the stream,
	// fed by the caller (nil: the Analyzer has its own and feeds it).
	Symbols *stacks.Symbols
	// NoProfile leaves out the CPU samples' top methods (a caller that
	// profiles the stream itself, such as the report page).
	NoProfile bool
	// Contributors are further analyses run on the same stream that fill
	// the facts they know better (the seam for package threadpool and
	// package exceptions: they replace the counters' ThreadPool and
	// Exceptions facts).
	Contributors []Contributor
	// Refine adds the thread-pool and exception analyses, sharing the
	// Set's symbol table, and the requests analysis as contributors
	// (ThreadPool, Exceptions, Requests).
	Refine bool
	// Uncounted leaves the analyses' stats out of the Set's (Register):
	// other analyses of the Set decode and count the same events.
	Uncounted bool
}

// Contributor is an analysis that fills part of the facts: the Analyzer
// hands it every event and, when facts are gathered, calls Contribute
// after the facts from its own analyses are in, so a contributor's figures
// win.
type Contributor interface {
	analysis.Analyzer
	Contribute(f *Facts)
}

// maxThreads bounds the distinct threads counted for the lock share;
// threads past it are not counted (the share is then an upper bound).
const maxThreads = 1 << 14

// peekNanos: the counters are sampled for their peaks (queue length,
// thread count) at most this often, on the event clock. The runtime
// publishes them once a second.
const peekNanos = 500_000_000

// HeapPoint is the old generations' size (gen2+LOH+POH, MB) after one
// GC, at ns (its start, ns since the session start).
type HeapPoint struct {
	Nanos int64
	OldMB float64
}

// maxOldPoints bounds the memory trend's series.
const maxOldPoints = 2048

// Analyzer runs every analysis triage reads on one stream and gathers
// their results into Facts.
type Analyzer struct {
	hdr  *nettrace.Header
	opts Options
	sym  *stacks.Symbols
	// own is the Set New made (nil: the Analyzer is part of a caller's).
	own *analysis.Set
	gc  *gcpause.Analyzer
	lk  *locks.Analyzer
	// hang keeps the wait-for graph of the lock waits (owners moved on
	// as waiters take the lock): deadlocks and blocked threads.
	hang *hang.Analyzer
	// objectTypes names lock objects from a live target's memory.
	objectTypes func([]uint64) (map[uint64]string, string)
	ctr         *counters.Analyzer
	run         *runinfo.Analyzer
	prof        *stacks.Builder

	first, last int64
	seen        bool
	threads     map[uint64]struct{}

	tally GCTally

	lastPeek                 int64
	peeked                   bool
	queueMax, queueLast      float64
	threadsFirst, threadsMax float64
	tpSeen                   bool
	cpuSum                   float64
	cpuN                     int
	cpuLastUpdate            int64
	cores                    int
	demandPct                float64
	demandSet                bool
	extraExceptions          *ExceptionFacts
	extraThreadPool          *ThreadPoolFacts
	// marks: the GCs other sessions saw as a heap snapshot's
	// (MarkHeapDump), at most maxDumps.
	marks []uint32
	// sampled: the stream has the runtime sample profiler's samples
	// (each tick suspends the runtime).
	sampled bool
	// perfMethods: the top methods from a CPU sampler the caller ran
	// (SetTopMethods), used where the stream has no samples.
	perfMethods       []Method
	perfMethodsSource string
	// busiest: the busiest thread (SetBusiestThread).
	busiestPct  float64
	busiestTID  uint64
	busiestName string
}

// New returns an Analyzer for a stream with header hdr that feeds its
// analyses itself (a Set of its own: Register, started). With
// Options.Symbols the caller feeds that table.
func New(hdr *nettrace.Header, opts Options) *Analyzer {
	s := analysis.NewSet()
	if opts.Symbols != nil {
		// The caller's table: the Set shares it and leaves it unfed.
		analysis.Shared(s, analysis.Spec{Name: "symbols", External: true},
			func(*nettrace.Header) *stacks.Symbols { return opts.Symbols })
	}
	a := Register(s, opts)
	s.Start(hdr)
	a.own = s
	return a
}

// Register registers the analyses triage reads in s, after the Set's
// symbol table (stacks.SymbolsIn: shared with the other analyses of s), and
// returns the Analyzer that gathers their results once s started. The Set
// feeds them; the Analyzer's own Event is for one made by New.
// Contributors are the caller's, created with the stream's header: they
// are fed by the Analyzer. Their events and the counters' come with the
// command's own providers (Set.Providers asks for none of them).
func Register(s *analysis.Set, opts Options) *Analyzer {
	a := &Analyzer{opts: opts, threads: make(map[uint64]struct{}), cpuLastUpdate: -1}
	sym := stacks.SymbolsIn(s)
	none := []func(*nettrace.Metadata) bool{}
	spec := func(sp analysis.Spec) analysis.Spec {
		sp.Uncounted = sp.Uncounted || opts.Uncounted
		return sp
	}
	// The Set's one pause analysis (the page's, when triage opens a
	// page): triage hears of every GC (OnGC) and reads its rollups.
	gc := gcpause.In(s, gcpause.Options{MaxGCs: 64, OnGC: a.onGC})
	analysis.Add(s, spec(analysis.Spec{Name: "locks", Keep: locks.Wants, Enable: []func(*nettrace.Metadata) bool{locks.WantsContention}}),
		func(h *nettrace.Header) *locks.Analyzer {
			a.hdr, a.sym, a.gc = h, sym.Get(), gc.Get()
			a.lk = locks.New(h, locks.Options{Symbols: a.sym})
			return a.lk
		})
	analysis.Add(s, spec(analysis.Spec{Name: "hang", Keep: hang.WantsWaits, Enable: none, Uncounted: true}), func(h *nettrace.Header) *hang.Analyzer {
		a.hang = hang.New(h, hang.Options{})
		return a.hang
	})
	analysis.Add(s, spec(analysis.Spec{Name: "counters"}), func(h *nettrace.Header) *counters.Analyzer {
		a.ctr = counters.New(h, counters.Options{SessionID: opts.CounterSessionID})
		return a.ctr
	})
	analysis.Add(s, spec(analysis.Spec{Name: "runinfo", Enable: none}), func(h *nettrace.Header) *runinfo.Analyzer {
		a.run = runinfo.New(h)
		return a.run
	})
	if !opts.NoProfile {
		analysis.Add(s, spec(analysis.Spec{Name: "stacks", Keep: stacks.Wants, Enable: none}), func(h *nettrace.Header) *stacks.Builder {
			a.prof = stacks.New(h, stacks.Options{Symbols: a.sym})
			return a.prof
		})
	}
	if opts.Refine {
		analysis.Add(s, spec(analysis.Spec{Name: "threadpool", Keep: threadpool.Wants, Enable: none}), func(h *nettrace.Header) Contributor {
			c := ThreadPool(h, a.sym)
			a.opts.Contributors = append(a.opts.Contributors, c)
			return c
		})
		analysis.Add(s, spec(analysis.Spec{Name: "exceptions", Keep: exceptions.Wants, Enable: none}), func(h *nettrace.Header) Contributor {
			c := Exceptions(h, a.sym)
			a.opts.Contributors = append(a.opts.Contributors, c)
			return c
		})
		// After the pause and lock analyses, whose suspensions and waits
		// it observes.
		analysis.Add(s, spec(analysis.Spec{Name: "requests", Keep: requests.Wants, Enable: none}), func(h *nettrace.Header) Contributor {
			c := Requests(h)
			a.opts.Contributors = append(a.opts.Contributors, c)
			return c
		})
	}
	for _, c := range opts.Contributors {
		analysis.Add(s, spec(analysis.Spec{Name: "contributor", Enable: none}), func(*nettrace.Header) Contributor { return c })
	}
	// Last: the window, the threads and the counters' peaks, once every
	// analysis has seen the event.
	analysis.Add(s, spec(analysis.Spec{Name: "triage", Enable: none, Uncounted: true}), func(*nettrace.Header) *window { return &window{a} })
	return a
}

// SetTarget names the target in the next commands (Options.Target), for
// a caller that registered the Analyzer before its stream was open.
func (a *Analyzer) SetTarget(target string) { a.opts.Target = target }

// Symbols is the symbol table the analyses share.
func (a *Analyzer) Symbols() *stacks.Symbols { return a.sym }

// Locks is the lock analysis (a caller names its threads).
func (a *Analyzer) Locks() *locks.Analyzer { return a.lk }

// SetCPU gives what only the operating system knows: the machine's cores
// and the share of them the process's threads spent running or runnable
// over the window (-1: unknown, the runtime's cpu-usage counter is used).
func (a *Analyzer) SetCPU(cores int, demandPct float64) {
	a.cores = cores
	if demandPct >= 0 {
		a.demandPct, a.demandSet = demandPct, true
	}
}

// SetBusiestThread gives the thread that asked for the most CPU over the
// window (running or runnable, from /proc) as a share of one core.
func (a *Analyzer) SetBusiestThread(tid uint64, name string, pct float64) {
	a.busiestTID, a.busiestName, a.busiestPct = tid, name, pct
}

// SetTopMethods gives the top methods (leaf frames, share of samples)
// from a CPU sampler the caller ran beside the session (source "perf":
// Linux perf_event, which needs no stacks in the stream); they name the
// CPU findings when the stream has no samples of its own.
func (a *Analyzer) SetTopMethods(source string, ms []Method) {
	a.perfMethods, a.perfMethodsSource = ms, source
}

// SetThreadPool replaces the counters' thread-pool facts with a
// thread-pool analysis's (the seam for package threadpool).
func (a *Analyzer) SetThreadPool(f ThreadPoolFacts) { a.extraThreadPool = &f }

// SetExceptions replaces the counters' exception facts with an exception
// analysis's (the seam for package exceptions).
func (a *Analyzer) SetExceptions(f ExceptionFacts) { a.extraExceptions = &f }

// Event hands ev to every analysis (an Analyzer made by New; one made by
// Register is fed by its Set).
func (a *Analyzer) Event(ev *nettrace.Event) {
	if a.own == nil {
		panic("triage: Event on an Analyzer of a Set (the Set feeds it)")
	}
	a.own.Event(ev)
}

// window follows what triage reads of the stream itself: its time span,
// its threads and the counters' peaks.
type window struct{ a *Analyzer }

// Event implements analysis.Analyzer.
func (w *window) Event(ev *nettrace.Event) {
	a := w.a
	if !a.seen {
		a.first, a.seen = ev.Timestamp, true
	}
	if ev.Timestamp > a.last {
		a.last = ev.Timestamp
	}
	if ev.ThreadID != 0 && len(a.threads) < maxThreads {
		a.threads[ev.ThreadID] = struct{}{} // no allocation once the thread is known
	}
	if ev.Meta.Runtime == nettrace.SampleProfiler {
		a.sampled = true
	}
	if ev.Meta.Provider == counters.RuntimeSource || ev.Meta.Provider == counters.MetricsSource {
		if ns := a.hdr.Nanos(ev.Timestamp); !a.peeked || ns-a.lastPeek >= peekNanos {
			a.lastPeek, a.peeked = ns, true
			a.peek() // allocates a Result: twice a second at most
		}
	}
}

// Stats implements analysis.Analyzer: the window decodes nothing.
func (w *window) Stats() analysis.Stats { return analysis.Stats{} }

// Stats sums the analyses' stats.
func (a *Analyzer) Stats() analysis.Stats {
	var s analysis.Stats
	s.Add(a.gc.Stats())
	s.Add(a.lk.Stats())
	s.Add(a.ctr.Stats())
	s.Add(a.run.Stats())
	if a.prof != nil {
		s.Add(a.prof.Stats())
	}
	for _, c := range a.opts.Contributors {
		s.Add(c.Stats())
	}
	return s
}

const mb = 1 << 20

// MarkHeapDump says GC number n was a heap snapshot's (gcpause's HeapDump
// mark, in another session of the same process: serve's snapshots run
// beside the session triage reads, whose stream does not carry the heap
// dump). Before or after the GC's events: it is then kept out of the
// application's induced GCs, pauses and stopped time as a snapshot in the
// stream is (GCTally).
func (a *Analyzer) MarkHeapDump(n uint32) {
	if n != 0 && !slices.Contains(a.marks, n) && len(a.marks) < maxDumps {
		a.marks = append(a.marks, n)
	}
}

func (a *Analyzer) onGC(g *gcpause.GC) { a.tally.Add(g) }

// Gen2Blocking says whether a GC of generation gen and type typ counts
// among GCFacts.Gen2Blocking (a non-concurrent gen2 GC), LOHTriggered
// whether its reason counts among GCFacts.LOHTriggered: the rules the
// Analyzer and a live model's GC rows count by.
func Gen2Blocking(gen int, typ clrevents.GCType) bool {
	return gen == 2 && typ == clrevents.GCNonConcurrent
}

// LOHTriggered: see Gen2Blocking.
func LOHTriggered(reason clrevents.GCReason) bool {
	return reason == clrevents.ReasonAllocLarge || reason == clrevents.ReasonOutOfSpaceLOH
}

// peek samples the counters whose peaks matter (the runtime publishes
// only the current value).
func (a *Analyzer) peek() {
	r := a.ctr.Result()
	if v, ok := r.Value("dotnet.thread_pool.queue.length"); ok {
		a.queueMax, a.queueLast, a.tpSeen = max(a.queueMax, v), v, true
	}
	if v, ok := r.Value("dotnet.thread_pool.thread.count"); ok {
		if a.threadsMax == 0 && a.threadsFirst == 0 {
			a.threadsFirst = v
		}
		a.threadsMax, a.tpSeen = max(a.threadsMax, v), true
	}
	if m, ok := r.Get("cpu-usage"); ok && m.UpdatedNanos != a.cpuLastUpdate {
		a.cpuLastUpdate = m.UpdatedNanos
		a.cpuSum += m.Value
		a.cpuN++
	}
}

// WindowNanos is the time from the first to the last event.
func (a *Analyzer) WindowNanos() int64 {
	if !a.seen {
		return 0
	}
	return a.hdr.DurationNanos(a.last - a.first)
}

// Runtime is what the stream said about the runtime.
func (a *Analyzer) Runtime() runinfo.Info { return a.run.Result() }

// Facts gathers the analyses' results (callable mid-stream), as
// FactsFrom gathers a live model's, then the contributors' and the
// caller's refinements.
func (a *Analyzer) Facts() *Facts {
	if a.seen {
		a.peek()
	}
	if a.objectTypes != nil {
		a.lk.SetObjectTypes(a.objectTypes)
	}
	in := &Inputs{Target: a.opts.Target, WindowNanos: a.WindowNanos(), Pauses: a.gc.Result(), GCs: &a.tally, HeapDumps: a.marks,
		Sampled: a.sampled, Locks: a.lk.Result(), Threads: len(a.threads), OpenWaits: a.hang.OpenLockWaits(a.last), Counters: a.ctr.Result(),
		Peaks:   CounterPeaks{Seen: a.tpSeen, QueueMax: a.queueMax, QueueLast: a.queueLast, ThreadsFirst: a.threadsFirst, ThreadsMax: a.threadsMax, CPUUsagePct: -1},
		CPU:     Readings{Cores: a.cores, DemandPct: -1, BusiestTID: a.busiestTID, BusiestName: a.busiestName, BusiestPct: a.busiestPct},
		Methods: a.perfMethods, MethodsSource: a.perfMethodsSource}
	// Contention events come only with the contention keyword: a session
	// without them says nothing about locks; one with them and no waits
	// is calm.
	in.LocksSeen = a.lk.Stats().Events > 0 || len(a.threads) > 0
	if a.cpuN > 0 {
		in.Peaks.CPUUsagePct = a.cpuSum / float64(a.cpuN)
	}
	if a.demandSet {
		in.CPU.DemandPct = a.demandPct
	}
	if a.prof != nil && a.sampled {
		in.Profile = a.prof.Result()
	}
	f := FactsFrom(in)
	for _, c := range a.opts.Contributors {
		c.Contribute(f)
	}
	if a.extraThreadPool != nil {
		f.ThreadPool = *a.extraThreadPool
	}
	if a.extraExceptions != nil {
		f.Exceptions = *a.extraExceptions
	}
	return f
}

// Snapshot is a heap snapshot's own GC (gcpause's HeapDump mark): its
// number (0: none), its pause by the runtime's count and its stop. Count
// is the number of such GCs when more than one (a live model's since its
// start; the pauses then sum theirs).
type Snapshot struct {
	GC                    uint32
	PauseNanos, StopNanos int64
	Count                 int
}

// PauseFacts fills g from a pause analysis's result over a window of win
// ns, the code the Analyzer judges its own stream with: GC count, pause
// time and share, the longest pause (from r.Longest), the induced GCs,
// the non-GC suspensions by reason and the stopped time, the heap
// snapshot's GC kept out of the application's figures. A live model that
// keeps a pause analysis (serve's monitor) is judged by it as
// `clrspy triage` judges a stream. Gen2Blocking, LOHTriggered and
// ProfilerInStream are the caller's (counted per GC).
func PauseFacts(g *GCFacts, r *gcpause.Result, win int64, snap Snapshot) {
	g.Count = r.All.Count
	g.Seen = win > 0 // every triage session asks for GC events: none is calm
	// The heap snapshot's own GC is the tool's: out of the application's
	// pause time and share (its pause stays in the longest pause, which
	// says whose it is).
	paused := max(r.All.RuntimeNanos-snap.PauseNanos, 0)
	if win > 0 {
		g.PausePct = float64(paused) * 100 / float64(win)
	}
	g.PausedMs = float64(paused) / 1e6
	g.SnapshotPauseMs = float64(snap.PauseNanos) / 1e6
	g.MaxPauseMs = float64(r.All.MaxNanos) / 1e6
	if len(r.Longest) > 0 {
		l := r.Longest[0]
		g.MaxPauseGC, g.MaxPauseReason, g.MaxPauseType, g.MaxPauseGen = l.Number, l.Reason.String(), l.Type.String(), l.Generation
	}
	g.Induced = r.All.Induced
	if snap.GC != 0 {
		g.SnapshotGC = snap.GC
		g.Induced = max(g.Induced-max(snap.Count, 1), 0)
	}
	g.MaxSuspendMs = float64(r.All.MaxSuspend) / 1e6
	var other, top int64
	for _, rr := range r.ByReason {
		if rr.Reason.IsGC() {
			continue
		}
		g.OtherSuspensions += rr.Count
		other += rr.TotalNanos
		g.OtherMaxMs = max(g.OtherMaxMs, float64(rr.MaxNanos)/1e6)
		if rr.TotalNanos > top {
			top, g.OtherTopReason = rr.TotalNanos, rr.Reason.String()
		}
	}
	g.OtherStoppedMs = float64(other) / 1e6
	stopped := max(r.All.TotalNanos-snap.StopNanos, 0) + other
	g.StoppedMs = float64(stopped) / 1e6
	if win > 0 {
		g.OtherPct = float64(other) * 100 / float64(win)
		g.StoppedPct = float64(stopped) * 100 / float64(win)
	}
}

// MemoryFrom fills x's trend from the old generations after each of gcs
// GCs with heap statistics, pts their series in time order (its first and
// last the first and the latest GC's; the ones between may be thinned):
// first to last, and the judged trend from the heap's settling
// (HeapTrend). The Analyzer's memory facts and a live model's alike.
func MemoryFrom(x *MemoryFacts, gcs int, pts []HeapPoint) {
	x.Seen, x.GCs = gcs > 0, gcs
	if len(pts) == 0 {
		return
	}
	first, last := pts[0], pts[len(pts)-1]
	x.FirstOldMB, x.LastOldMB = first.OldMB, last.OldMB
	x.SpanSec = float64(last.Nanos-first.Nanos) / 1e9
	if x.SpanSec > 0 {
		x.OldGrowthMBMin = (last.OldMB - first.OldMB) * 60 / x.SpanSec
	}
	settle(x, pts)
}

// HeapTrend judges x's trend from the heap's settling on, over pts (one
// point per GC with heap statistics, in time order): the GCs of the first
// third of the span are the warm-up (a heap growing from nothing at
// start-up, caches filling), the rest the trend (OldGrowthMBMin, 0 when
// not Settled). A live model judges its GC rows with it as triage judges
// a stream.
func HeapTrend(x *MemoryFacts, pts []HeapPoint) { settle(x, pts) }

func settle(x *MemoryFacts, pts []HeapPoint) {
	if len(pts) < 2 {
		return
	}
	first, last := pts[0], pts[len(pts)-1]
	from := first.Nanos + (last.Nanos-first.Nanos)/3
	i, _ := slices.BinarySearchFunc(pts, from, func(p HeapPoint, ns int64) int { return cmp.Compare(p.Nanos, ns) })
	i = min(i, len(pts)-1)
	s := pts[i]
	x.SettledGCs, x.SettledOldMB, x.SettledSec = len(pts)-i, s.OldMB, float64(last.Nanos-s.Nanos)/1e9
	x.WarmupMB = s.OldMB - first.OldMB
	x.Settled = x.SettledGCs >= MinSettledGCs && x.SettledSec > 0
	x.OldGrowthMBMin = 0
	if x.Settled {
		x.OldGrowthMBMin = (last.OldMB - s.OldMB) * 60 / x.SettledSec
	}
}

// SetObjectTypes names the lock objects the events do not (a live
// target's memory: cdac.Namer.Names), when the lock facts are gathered.
func (a *Analyzer) SetObjectTypes(fn func(objs []uint64) (map[uint64]string, string)) {
	a.objectTypes = fn
	if a.lk != nil {
		a.lk.SetObjectTypes(fn) // as contention begins, while it runs
	}
}

// LocksFrom fills l (but Seen) from package locks' result over a window
// of win ns in which threads threads ran, and the lock waits still open
// at its end (package hang's; nil: none known): the Analyzer's lock facts
// and a live model's alike.
func LocksFrom(l *LockFacts, r *locks.Result, threads int, win int64, open []hang.OpenLockWait) {
	l.Contentions = r.Summary.Contentions
	l.WaitMs = float64(r.Summary.TotalNs) / 1e6
	l.Threads = threads
	if win > 0 && l.Threads > 0 {
		l.WaitPct = float64(r.Summary.TotalNs) * 100 / (float64(win) * float64(l.Threads))
	}
	blockedFacts(l, r, open)
	if len(r.Locks) == 0 {
		return
	}
	top := &r.Locks[0]
	l.TopLock = lockName(top)
	l.TopWaitMs, l.TopCount = float64(top.TotalNs)/1e6, top.Contentions
	if len(top.Stacks) > 0 && top.Stacks[0].Stack >= 0 && top.Stacks[0].Stack < len(r.Stacks) {
		fr := r.Stacks[top.Stacks[0].Stack].Frames
		l.TopStack = slices.Clone(fr[:min(len(fr), 8)])
	}
}

func lockName(lk *locks.Lock) string {
	switch {
	case lk.ObjectType != "":
		return lk.ObjectType
	case lk.ID != 0:
		return fmt.Sprintf("lock 0x%x", lk.ID)
	}
	return "a Monitor"
}

// blockedFacts: the lock waits still open at the stream's end for
// MinBlockedSec or longer, as package hang's wait-for graph keeps them
// (each waiter to the lock's owner as last known): its cycles
// (hang.Cycles) and the lock with the most waiters, named as r names it.
func blockedFacts(l *LockFacts, r *locks.Result, open []hang.OpenLockWait) {
	waitsFor := map[uint64]uint64{}
	perLock := map[uint64]int{}
	owners := map[uint64]uint64{}
	for _, w := range open {
		if w.WaitingNs < MinBlockedSec*1e9 {
			continue
		}
		waitsFor[w.Waiter] = w.Owner
		if w.Lock != 0 {
			perLock[w.Lock]++
			owners[w.Lock] = w.Owner
		}
	}
	l.Deadlocks = hang.Cycles(waitsFor)
	var most uint64
	for _, id := range slices.Sorted(maps.Keys(perLock)) {
		if perLock[id] > l.MostBlocked {
			most, l.MostBlocked = id, perLock[id]
		}
	}
	if l.MostBlocked == 0 {
		return
	}
	l.BlockedOwnerTid = owners[most]
	l.BlockedLock = fmt.Sprintf("lock 0x%x", most)
	for i := range r.Locks {
		if r.Locks[i].ID == most {
			l.BlockedLock = lockName(&r.Locks[i])
		}
	}
}

func sumValue(r *counters.Result, name string) (total, rate float64, fromStart, ok bool) {
	for i := range r.Metrics {
		m := &r.Metrics[i]
		if m.Name == name {
			total += m.Value
			rate += m.Rate
			fromStart = fromStart || m.FromStart
			ok = true
		}
	}
	return
}

// CounterPeaks are the runtime counters' figures over the window that
// their latest values do not hold: whether the pool's counters arrived
// (Seen), the queue's peak and last length, the pool's first and peak
// thread count, and the mean of cpu-usage's updates (-1: none).
type CounterPeaks struct {
	Seen                                          bool
	QueueMax, QueueLast, ThreadsFirst, ThreadsMax float64
	CPUUsagePct                                   float64
}

// PeaksNow are a counters result's latest values standing for the
// window's peaks: what a live model that keeps no history of the counters
// knows (the queue's and the pool's peaks are then their values now).
func PeaksNow(r *counters.Result) CounterPeaks {
	p := CounterPeaks{CPUUsagePct: -1}
	if r == nil {
		return p
	}
	if v, ok := r.Value("dotnet.thread_pool.queue.length"); ok {
		p.QueueMax, p.QueueLast, p.Seen = v, v, true
	}
	if v, ok := r.Value("dotnet.thread_pool.thread.count"); ok {
		p.ThreadsFirst, p.ThreadsMax, p.Seen = v, v, true
	}
	if v, ok := r.Value("cpu-usage"); ok {
		p.CPUUsagePct = v
	}
	return p
}

// CountersFrom fills f's thread-pool and exception facts and the
// allocation rate from the runtime's counters over f.WindowSec (r: their
// result; nil: none arrived) and their peaks: the Analyzer's counter facts
// and a live model's alike. The analyses' results refine them after
// (ThreadPoolFrom, ExceptionsFrom). The CPU usage is p's, for CPUFrom.
func CountersFrom(f *Facts, r *counters.Result, p CounterPeaks) {
	win := f.WindowSec
	tp := &f.ThreadPool
	tp.Source, tp.Seen = "counters", p.Seen
	tp.QueueMax, tp.QueueLast, tp.ThreadsFirst, tp.ThreadsMax = p.QueueMax, p.QueueLast, p.ThreadsFirst, p.ThreadsMax
	x := &f.Exceptions
	x.Source = "counters"
	if r == nil {
		return
	}
	if t, rate, fromStart, ok := sumValue(r, "dotnet.thread_pool.work_item.count"); ok {
		tp.CompletedPerSec = perSec(t, rate, fromStart, win)
	}
	if t, rate, fromStart, ok := sumValue(r, "dotnet.exceptions"); ok {
		x.Seen = true
		x.PerSec = perSec(t, rate, fromStart, win)
		x.Count = x.PerSec * win
		if !fromStart {
			x.Count = t
		}
	} else if tp.Seen {
		x.Seen = true // counters arrived and no exception was counted
	}
	if t, rate, fromStart, ok := sumValue(r, "dotnet.gc.heap.total_allocated"); ok {
		f.GC.AllocMBPerSec, f.GC.HasAllocRate = perSec(t, rate, fromStart, win)/mb, true
	}
}

// perSec is a counter's rate over the window: its total when the total
// runs from the session's start, else its last interval's rate.
func perSec(total, rate float64, fromStart bool, win float64) float64 {
	if fromStart || win <= 0 {
		return rate
	}
	return total / win
}

// Readings are what only the operating system knows of the target over
// the window (/proc): the machine's cores, the share of them the
// process's threads spent running or runnable (DemandPct, -1 unknown:
// procfs.DemandPct, the one demand formula) and the busiest thread as a
// share of one core (0: unknown).
type Readings struct {
	Cores       int
	DemandPct   float64
	BusiestTID  uint64
	BusiestName string
	BusiestPct  float64
}

// CPUFrom fills c from /proc's readings, the runtime's cpu-usage counter
// over the window (usagePct, -1: none) and the top methods of a sampler
// (source names it; none: nil): the demand when known, else the counter,
// else the methods alone. Every surface's CPU facts are made here.
func CPUFrom(c *CPUFacts, p Readings, usagePct float64, methods []Method, source string) {
	c.Cores, c.UsagePct = p.Cores, usagePct
	if p.BusiestPct > 0 {
		c.BusiestThreadPct, c.BusiestThreadID, c.BusiestThreadName = p.BusiestPct, p.BusiestTID, p.BusiestName
	}
	switch {
	case p.DemandPct >= 0:
		c.Source, c.Seen, c.Pct = "schedstat", true, p.DemandPct
	case usagePct >= 0:
		c.Source, c.Seen, c.Pct = "counters", true, usagePct
	}
	if len(methods) > 0 {
		c.TopMethods, c.MethodsSource = methods, source
	}
	if !c.Seen && len(c.TopMethods) > 0 {
		c.Source, c.Seen = "samples", true // no usage figure: the methods alone
	}
}

// topMethods is how many methods the CPU facts name.
const topMethods = 5

// TopLeafMethods is a profile's n methods with the most samples as the
// leaf frame, with their share of the samples on the CPU (argument lists
// dropped), heaviest first: perf's off-CPU samples and the runtime
// sampler's external ones (a thread in native code, waiting as often as
// not) are not time on the CPU, and a leaf no symbol names
// (stacks.KindUnknown) names no method. The one list of top methods:
// triage's own profile, the report page's and perf's beside a session
// (SetProfile) all give it.
func TopLeafMethods(p *stacks.Profile, n int) []Method {
	by := map[string]int64{}
	var total int64
	for _, s := range p.Samples {
		if s.OffCPU || s.Type == clrevents.SampleExternal || len(s.Stack) == 0 {
			continue
		}
		fr := p.Frames[s.Stack[0]]
		if fr.Kind == stacks.KindUnknown || fr.Name == stacks.NativeFrame {
			// No method: an unnamed leaf, or the [native code] leaf a
			// live model's window gives an external sample.
			continue
		}
		by[shortName(fr.Name)] += s.Count
		total += s.Count
	}
	var out []Method
	for name, c := range by {
		out = append(out, Method{Name: name, Pct: float64(c) * 100 / float64(total)})
	}
	slices.SortFunc(out, func(x, y Method) int {
		return cmp.Or(cmp.Compare(y.Pct, x.Pct), strings.Compare(x.Name, y.Name))
	})
	return out[:min(n, len(out))]
}

// SetProfile gives the CPU samples of the stream or of a sampler beside
// it, profiled by the caller (Options.NoProfile: the report page's
// profile, perf's): their top methods (TopLeafMethods) name the CPU
// findings as triage's own profile would. source says which sampler
// ("eventpipe", "perf").
func (a *Analyzer) SetProfile(source string, p *stacks.Profile) {
	if p == nil {
		return
	}
	if ms := TopLeafMethods(p, topMethods); len(ms) > 0 {
		a.SetTopMethods(source, ms)
	}
}

// shortName drops a method's argument list.
func shortName(n string) string {
	if i := strings.IndexByte(n, '('); i > 0 {
		return n[:i]
	}
	return n
}
