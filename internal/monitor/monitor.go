package monitor

import (
	"sync"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/hang"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/requests"
	"github.com/clrspy/clrspy/runinfo"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
	"github.com/clrspy/clrspy/triage"
)

// Options configure a Monitor. The zero value monitors GCs, suspensions,
// lock contention totals and the runtime's counters.
type Options struct {
	// MaxGCs bounds the GC rows kept (0: 256); counts and histograms
	// cover every GC.
	MaxGCs int
	// MaxSuspensions bounds the non-GC suspension rows kept (0: 128).
	MaxSuspensions int
	// TopLocks is how many locks Snapshot lists (0: 10). Lock totals and the
	// wait histogram are kept whenever contention events arrive.
	TopLocks int
	// Locks asks the session for contention events (Providers).
	Locks bool
	// ObjectTypes names the lock objects the events do not (a live
	// target's memory: cdac.Namer.Names); nil leaves them unnamed.
	ObjectTypes func(objs []uint64) (map[uint64]string, string)
	// CPU asks for the sample profiler and keeps the samples of the last
	// CPUWindow for top methods and a flame graph.
	CPU bool
	// CPUWindow is the time the top methods and the flame graph cover
	// (0: 10 s; at most 5 min).
	CPUWindow time.Duration
	// TopMethods is how many methods Snapshot lists (0: 25).
	TopMethods int
	// Mappings, when set, gives the target's file mappings now (a live
	// target's /proc/PID/maps, source.ProcWatcher.Mappings): native frames
	// no event names are shown as module+offset instead of unknown. It is
	// called when a CPU profile is built, not per event.
	Mappings func() []stacks.Mapping
	// ImageNames, when set, names the ReadyToRun method at a file offset
	// of a managed image (source.ProcWatcher.ImageNames): frames the
	// mappings would show as module+offset get the method's name.
	ImageNames func(path string, off uint64) string
	// FlameMaxNodes bounds the flame graph (0: 5000 nodes); the lightest
	// subtrees are cut first.
	FlameMaxNodes int
	// Exceptions asks for the exception events with their stacks and the
	// method events that name them, and keeps the top types and throw
	// sites (TopExceptionTypes, TopThrowSites): the session then needs
	// stacks (serve's is otherwise stackless).
	Exceptions bool
	// TopExceptionTypes (0: 10) and TopThrowSites per type (0: 5) bound
	// Snapshot.Exceptions.
	TopExceptionTypes, TopThrowSites int
	// NoCounters leaves out the runtime's counters.
	NoCounters bool
	// Counters configure the counters (interval, meter session).
	Counters counters.Options

	// OnGC is called for each GC once it is complete, or given up as
	// incomplete (GC.Complete false). OnSuspension is called for each
	// runtime suspension that is not a GC's (except the sample profiler's).
	// Both run on the goroutine that calls Event, after the monitor's
	// state includes the GC (Snapshot may be called from them); the record
	// must not be changed, and stays valid (it is not reused).
	OnGC func(*gcpause.GC)
	// OnGCStart is called for each GC as it begins (gcpause's decoded
	// start), like OnGC on the reader goroutine, unlocked, before the
	// analyzers after the monitor see the GCStart event.
	OnGCStart    func(*gcpause.GC)
	OnSuspension func(*gcpause.Suspension)

	// ThreadPool asks for the thread-pool events (Threading keyword) and
	// follows the pool with package threadpool (Snapshot.ThreadPool).
	ThreadPool bool
	// OnStarvation is called when a thread-pool starvation episode has
	// lasted 100 ms (ThreadPool), like OnGC: on the reader goroutine, the
	// lock released.
	OnStarvation func(threadpool.Episode)
	// OnDeadlock is called when a lock wait closes a cycle of the
	// wait-for graph (Locks: each waiter waits for a lock the next one
	// holds), once per cycle, on the reader goroutine with the monitor's
	// lock held: it may log, not take a Snapshot.
	OnDeadlock func(hang.Cycle)

	// Requests asks for Kestrel's request events (informational, no
	// stacks) and follows the requests with package requests
	// (Snapshot.Requests): per route counts, durations and the GC pauses
	// that hit them.
	Requests bool
}

func (o *Options) keepGCs() int         { return def(o.MaxGCs, 256) }
func (o *Options) keepSuspensions() int { return def(o.MaxSuspensions, 128) }
func (o *Options) topLocks() int        { return def(o.TopLocks, 10) }
func (o *Options) topMethods() int      { return def(o.TopMethods, 25) }
func (o *Options) flameMaxNodes() int   { return def(o.FlameMaxNodes, 5000) }
func (o *Options) topExcTypes() int     { return def(o.TopExceptionTypes, 10) }
func (o *Options) topThrowSites() int   { return def(o.TopThrowSites, 5) }
func (o *Options) cpuWindowSec() int {
	s := int(o.CPUWindow / time.Second)
	if s <= 0 {
		return 10
	}
	return min(s, maxCPUWindowSec)
}

func def(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// Providers returns what a session must enable for a Monitor with these
// options: the Set of its analyses' (register: gcpause's GC events,
// GCTriggered among them, which tells server from workstation GC; with
// Locks, locks' contention events and the thread events that name owners;
// with Exceptions, exceptions' events and the method events that name
// their stacks; with ThreadPool, the thread-pool events an informational
// session gets (threadpool's verbose ones, wait handles and work items,
// are too frequent for a monitor that runs for days); with CPU, the sample
// profiler and the method events that name its frames), then the
// counters' providers (with Counters.Meter, which sets Counters.SessionID
// when empty: give the same Options to New).
func Providers(opts *Options) []ipc.Provider {
	s := analysis.NewSet()
	(&Monitor{opts: *opts}).register(s)
	ps := s.Providers()
	if opts.Requests {
		// The request events only: the runtime's events package requests
		// also reads are gcpause's (GC suspensions) and the exceptions'
		// (Options.Exceptions).
		ps = append(ps, ipc.Provider{Name: clrevents.ProviderKestrel, Level: clrevents.LevelInformational})
	}
	if !opts.NoCounters {
		ps = append(ps, counters.Providers(&opts.Counters)...)
	}
	return ps
}

// informational narrows wants to the events an informational session
// gets.
func informational(wants func(*nettrace.Metadata) bool) func(*nettrace.Metadata) bool {
	return func(m *nettrace.Metadata) bool { return m.Level <= clrevents.LevelInformational && wants(m) }
}

// Monitor is the live model of one target, fed one stream. Event must be
// called from one goroutine (the reader's); Snapshot and the setters may
// be called from any goroutine at any time.
type Monitor struct {
	mu   sync.Mutex
	hdr  *nettrace.Header
	opts Options

	// set feeds the analyses below, in the order register gives.
	set *analysis.Set
	// threads are the distinct threads the stream showed (any event, at
	// most triage's bound), sampled whether it had the runtime sample
	// profiler's samples: triage's lock share and its word on the
	// profiler's suspensions, as triage counts them.
	threads map[uint64]struct{}
	sampled bool
	// tally counts every GC as triage counts a stream's (blocking gen2,
	// LOH-triggered, the memory trend, the heap snapshots' GCs).
	tally triage.GCTally
	// sym is the one symbol table of the CPU window, the exceptions, the
	// thread pool and the locks (nil unless one of the first three is on).
	sym  *stacks.Symbols
	gc   *gcpause.Analyzer
	run  *runinfo.Analyzer
	ctr  *counters.Analyzer
	cpu  *cpuWindow
	exc  *exceptions.Analyzer // nil unless Options.Exceptions
	lock *lockState
	tp   *threadpool.Analyzer
	req  *requests.Analyzer // nil unless Options.Requests
	// The last results built for a snapshot and what they were built
	// from: a snapshot reuses them while nothing they show has changed.
	tpRes  *threadpool.Result
	tpKey  [4]int64
	excRes *exceptions.Result
	excKey [2]int64

	// Filled by gcpause's callbacks during Event (under mu), handed to the
	// caller's callbacks after mu is released (reader goroutine only).
	pendingGCs   []*gcpause.GC
	pendingStart []*gcpause.GC
	pendingSusps []*gcpause.Suspension
	pendingEps   []threadpool.Episode

	gcs      analysis.Ring[gcpause.GCRow]
	susps    analysis.Ring[gcpause.SuspensionRow]
	last     gcpause.GCRow
	hasLast  bool
	promoted [5]uint64
	// heapAfter is each generation's size after the latest GC that
	// reported it (its heap statistics), bytes: gen0, gen1, gen2, LOH, POH.
	heapAfter [5]gcpause.Opt
	// gen0Alloc is the gen0 allocation of the latest 256 GCs (at their
	// pause's end), for a rate.
	gen0Alloc analysis.Ring[allocAt]

	// Every runtime suspension that ended (gcpause pairs them: OnStopped;
	// the open ones are gcpause's OpenSince).
	gcStopped  *stopped // suspensions for a GC (reasons GC and GCPrep)
	anyStopped *stopped // every suspension

	// started counts the GCs whose GCStart the session saw, resolved
	// those of them that ended (complete or given up), by the generation
	// they collected: the difference is the GCs in flight (seeding needs
	// them).
	started, resolved [3]int
	seed              seedState
	num               numbering
	lastRaw           int64 // the latest event's raw timestamp

	proc Process
	sess sessionState

	first, now int64 // ns since the session start: first and latest event
	seen       bool
	events     uint64
	lost       uint64
	stats      analysis.Stats
}

// allocAt is what one GC allocated in gen0 before it, at ns.
type allocAt struct {
	ns    int64
	bytes uint64
}

// windowKeep is how far back the stopped-time windows reach.
const windowKeep = int64(60 * time.Second)

// maxStopIntervals bounds each stopped-time union: 1<<16 intervals of 24
// bytes (1.5 MB), a minute of the sample profiler's 1 kHz suspensions.
const maxStopIntervals = 1 << 16

// New returns a Monitor for a stream with header hdr.
func New(hdr *nettrace.Header, opts Options) *Monitor {
	m := &Monitor{
		hdr:        hdr,
		opts:       opts,
		gcs:        analysis.NewRing[gcpause.GCRow](opts.keepGCs()),
		susps:      analysis.NewRing[gcpause.SuspensionRow](opts.keepSuspensions()),
		gen0Alloc:  analysis.NewRing[allocAt](256),
		gcStopped:  newStopped(windowKeep, maxStopIntervals),
		anyStopped: newStopped(windowKeep, maxStopIntervals),
		heapAfter:  [5]gcpause.Opt{gcpause.Unknown, gcpause.Unknown, gcpause.Unknown, gcpause.Unknown, gcpause.Unknown},
	}
	m.set = analysis.NewSet()
	m.register(m.set)
	m.set.Start(hdr)
	m.proc.Pid = hdr.ProcessID
	m.sess.state = StateRunning
	return m
}

// register registers the monitor's analyses in s in the order they are
// fed: the one symbol table (when the CPU window, the exceptions or the
// thread pool name stacks), gcpause, locks, the monitor's own events
// (flavour, runtime and process information), the counters, the thread
// pool (after the counters: it reads the queue length from them), the CPU
// window and the exceptions. Each part's spec says what it asks of the
// session (Providers); registration needs no header, so Providers builds
// the same Set.
func (m *Monitor) register(s *analysis.Set) {
	o := &m.opts
	none := []func(*nettrace.Metadata) bool{}
	var sym *analysis.Ref[*stacks.Symbols]
	if o.CPU || o.Exceptions || o.ThreadPool {
		// The method events that name stacks are asked for by the
		// exceptions and the CPU window (the sampler's providers), not by
		// a thread pool alone (its session is informational).
		enable := none
		if o.Exceptions {
			enable = nil
		}
		sym = analysis.Shared(s, analysis.Spec{Name: "symbols", Keep: stacks.SymbolsWant, Enable: enable}, stacks.NewSymbols)
	}
	symbols := func() *stacks.Symbols {
		if sym == nil {
			return nil
		}
		return sym.Get()
	}
	gc := gcpause.In(s, gcpause.Options{
		// gcpause keeps twice this between trims; the monitor's rows are
		// its own, gcpause's only need to outlive a running GC.
		MaxGCs: 8, MaxSuspensions: 8,
		OnGC:         m.onGC,
		OnSuspension: m.onSuspension,
		OnStopped:    m.onStopped,
		OnGCStart:    m.onGCStart,
	})
	lockEnable := none
	if o.Locks {
		lockEnable = []func(*nettrace.Metadata) bool{locks.WantsContention}
	}
	analysis.Add(s, analysis.Spec{Name: "locks", Keep: locks.Wants, Enable: lockEnable}, func(h *nettrace.Header) *lockState {
		m.sym, m.gc = symbols(), gc.Get()
		m.lock = newLockState(h, m.sym, m.opts.OnDeadlock, m.opts.ObjectTypes)
		return m.lock
	})
	analysis.Add(s, analysis.Spec{Name: "monitor", Enable: none, Uncounted: true}, func(*nettrace.Header) own { return own{m} })
	analysis.Add(s, analysis.Spec{Name: "runinfo", Enable: none, Uncounted: true}, func(h *nettrace.Header) *runinfo.Analyzer {
		m.run = runinfo.New(h)
		return m.run
	})
	if !o.NoCounters {
		analysis.Add(s, analysis.Spec{Name: "counters", Enable: none}, func(h *nettrace.Header) *counters.Analyzer {
			m.ctr = counters.New(h, o.Counters)
			return m.ctr
		})
	}
	if o.ThreadPool {
		analysis.Add(s, analysis.Spec{Name: "threadpool", Keep: threadpool.Wants, Enable: []func(*nettrace.Metadata) bool{informational(threadpool.Wants)}},
			func(h *nettrace.Header) *threadpool.Analyzer {
				// The monitor's counters when it has them (fed before this
				// analysis), else the pool analysis' own.
				var ctr analysis.Counters = m.ctr
				if m.ctr == nil {
					ctr = counters.New(h, counters.Options{})
				}
				m.tp = threadpool.New(h, threadpool.Options{Counters: ctr, FeedCounters: m.ctr == nil, Symbols: m.sym,
					OnEpisode: func(e threadpool.Episode) { m.pendingEps = append(m.pendingEps, e) }})
				return m.tp
			})
	}
	if o.CPU {
		analysis.Add(s, analysis.Spec{Name: "cpu", Keep: stacks.Wants, Enable: none, Providers: stacks.SamplerProviders()},
			func(h *nettrace.Header) *cpuWindow {
				m.cpu = newCPUWindow(h, m.sym, o.cpuWindowSec())
				m.cpu.mappings = o.Mappings
				if o.ImageNames != nil {
					m.sym.SetImageNamer(o.ImageNames)
				}
				return m.cpu
			})
	}
	if o.Exceptions {
		analysis.Add(s, analysis.Spec{Name: "exceptions", Keep: exceptions.Wants}, func(h *nettrace.Header) *exceptions.Analyzer {
			m.exc = exceptions.New(h, exceptions.Options{Symbols: m.sym})
			return m.exc
		})
	}
	if o.Requests {
		// After gcpause: the Set hands it every suspension (it observes
		// analysis.Stopped) before the event that follows. The GC damage
		// kept per GC is bounded as the monitor's rows are; the totals stay
		// exact. Its providers are added by Providers (Kestrel's).
		analysis.Add(s, analysis.Spec{Name: "requests", Keep: requests.Wants, Enable: none}, func(h *nettrace.Header) *requests.Analyzer {
			m.req = requests.New(h, requests.Options{MaxGCs: o.keepGCs()})
			return m.req
		})
	}
}

// maxThreads bounds the distinct threads counted (triage's bound).
const maxThreads = 1 << 14

// own is the monitor's part of its Set: what triage reads of a stream
// beside its analyses (its threads, whether it has samples).
type own struct{ m *Monitor }

func (o own) Stats() analysis.Stats { return analysis.Stats{} }

func (o own) Event(ev *nettrace.Event) {
	m := o.m
	if ev.ThreadID != 0 && len(m.threads) < maxThreads {
		if m.threads == nil {
			m.threads = make(map[uint64]struct{})
		}
		m.threads[ev.ThreadID] = struct{}{} // no allocation once the thread is known
	}
	if ev.Meta.Runtime == nettrace.SampleProfiler {
		m.sampled = true
	}
}

// Stats implements analysis.Analyzer: every event the monitor's analyses
// used, and payloads that did not decode.
func (m *Monitor) Stats() analysis.Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.statsLocked()
}

// statsLocked is Stats with m.mu held (Snapshot's decode errors too).
func (m *Monitor) statsLocked() analysis.Stats {
	st := m.stats
	st.Add(m.set.Stats())
	return st
}

// Event feeds one event (analysis.Analyzer). Call it from one goroutine.
func (m *Monitor) Event(ev *nettrace.Event) {
	m.mu.Lock()
	m.event(ev)
	if len(m.pendingEps) > 0 {
		// Starvation episodes, as GCs below: the callback runs unlocked.
		eps := m.pendingEps
		m.pendingEps = nil
		m.mu.Unlock()
		if f := m.opts.OnStarvation; f != nil {
			for _, e := range eps {
				f(e)
			}
		}
		clear(eps)
		m.mu.Lock()
		m.pendingEps = eps[:0]
	}
	if len(m.pendingGCs) == 0 && len(m.pendingSusps) == 0 && len(m.pendingStart) == 0 {
		m.mu.Unlock()
		return
	}
	gcs, susps, starts := m.pendingGCs, m.pendingSusps, m.pendingStart
	m.pendingGCs, m.pendingSusps, m.pendingStart = nil, nil, nil
	m.mu.Unlock()
	// The callbacks run unlocked (they may take a Snapshot); the slices
	// are this goroutine's alone until handed back.
	if f := m.opts.OnGCStart; f != nil {
		for _, g := range starts {
			f(g)
		}
	}
	if f := m.opts.OnGC; f != nil {
		for _, g := range gcs {
			f(g)
		}
	}
	if f := m.opts.OnSuspension; f != nil {
		for _, s := range susps {
			f(s)
		}
	}
	clear(gcs)
	clear(susps)
	clear(starts)
	m.mu.Lock()
	m.pendingGCs, m.pendingSusps, m.pendingStart = gcs[:0], susps[:0], starts[:0]
	m.mu.Unlock()
}

func (m *Monitor) event(ev *nettrace.Event) {
	ts := m.hdr.Nanos(ev.Timestamp)
	if !m.seen {
		m.first, m.seen = ts, true
	}
	if ts > m.now {
		m.now = ts
	}
	m.events++
	if ev.Timestamp > m.lastRaw {
		m.lastRaw = ev.Timestamp
	}
	if p := m.num.pending; p != nil && m.lastRaw >= p.at {
		m.applySideSeed()
	}
	if ev.LostBefore > 0 {
		m.lost += uint64(ev.LostBefore)
	}
	m.set.Event(ev)
	if m.ctr != nil && !m.seed.done && m.ctr.SawMeter() {
		m.trySeed()
	}
}

// onGCStart runs inside gcpause.Event (m.mu held) when a GC begins: the
// start gcpause decoded, not decoded again.
func (m *Monitor) onGCStart(g *gcpause.GC) {
	m.started[min(max(g.Generation, 0), 2)]++
	m.noteNumber(g.Number)
	if m.opts.OnGCStart != nil {
		m.pendingStart = append(m.pendingStart, g)
	}
}

// onStopped runs inside gcpause.Event (m.mu held) for every suspension
// that ended: the stopped-time windows. (Counts by reason are gcpause's:
// reasonSummary.)
func (m *Monitor) onStopped(s *analysis.Stopped) {
	m.anyStopped.add(s.BeginNanos, s.EndNanos, m.now)
	if clrevents.SuspendReason(s.Reason).IsGC() {
		m.gcStopped.add(s.BeginNanos, s.EndNanos, m.now)
	}
}

// openSince is the earliest begin of the suspensions in progress that
// match gcOnly (-1: none).
func (m *Monitor) openSince(gcOnly bool) int64 { return m.gc.OpenSince(gcOnly) }

// onGC runs inside gcpause.Event (m.mu held).
func (m *Monitor) onGC(g *gcpause.GC) {
	row := gcpause.NewGCRow(g)
	m.gcs.Push(row)
	m.last, m.hasLast = row, true
	if g.StartSeen {
		m.resolved[min(max(g.Generation, 0), 2)]++
	}
	m.noteNumber(g.Number)
	m.tally.Add(g)
	if g.HasHeapStats {
		for i := range m.heapAfter {
			m.heapAfter[i] = gcpause.Unknown
			if i < 4 || g.HeapStats.HasPOH {
				m.heapAfter[i] = gcpause.Opt(g.HeapStats.GenerationSize[i])
			}
		}
	}
	if g.Complete {
		m.noteCounted(g.Number, g.Generation, g.PauseRuntimeNanos)
		if g.HasHeapStats {
			for i := range m.promoted {
				m.promoted[i] += g.HeapStats.TotalPromotedSize[i]
			}
		}
		if g.HasPerHeap {
			m.gen0Alloc.Push(allocAt{g.PauseEndNanos, g.Gen0Allocated})
		}
	}
	if m.opts.OnGC != nil {
		m.pendingGCs = append(m.pendingGCs, g)
	}
}

func (m *Monitor) onSuspension(s *gcpause.Suspension) {
	m.susps.Push(gcpause.NewSuspensionRow(s))
	if m.opts.OnSuspension != nil {
		m.pendingSusps = append(m.pendingSusps, s)
	}
}

// SymbolEvent feeds the monitor's symbol table a
// method or module rundown event from another session on the same
// process: a live session only sees the methods compiled after it began,
// and a short rundown session (started and stopped at once) names those
// compiled before.
func (m *Monitor) SymbolEvent(ev *nettrace.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ev.Meta.Runtime != nettrace.Rundown {
		return
	}
	if m.sym != nil {
		m.sym.Event(ev)
	}
}

// Finish implements analysis.Finisher: the stream ended (suspensions still
// open stay open; GCs still running stay unreported).
func (m *Monitor) Finish() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sess.state == StateRunning {
		m.sess.state = StateEnded
	}
	if m.req != nil {
		m.req.Finish()
	}
}

// RequestsFrozen is how many requests g's pause froze (requests.Analyzer
// .Frozen; ok false without Options.Requests or before a request event).
// Call it from OnGC: on the goroutine that feeds Event, unlocked.
func (m *Monitor) RequestsFrozen(g *gcpause.GC) (int64, bool) {
	if m.req == nil || !m.req.Seen() {
		return 0, false
	}
	return m.req.Frozen(g.Number, g.PauseStartNanos+g.PauseNanos), true
}
