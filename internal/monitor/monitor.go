package monitor

import (
	"sync"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/requests"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
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
// options, derived from the events its analyses read
// (clrevents.ProvidersFor): gcpause's GC events (GCTriggered among them,
// which tells server from workstation GC); with Locks, locks' contention
// events and the thread events that name owners; with Exceptions,
// exceptions' events and the method events that name their stacks; with
// ThreadPool, the thread-pool events an informational session gets
// (threadpool's verbose ones, wait handles and work items, are too
// frequent for a monitor that runs for days); with CPU, the sample
// profiler and the method events that name its frames; and the counters'
// providers (with Counters.Meter, which sets Counters.SessionID when
// empty: give the same Options to New).
func Providers(opts *Options) []ipc.Provider {
	wants := []func(*nettrace.Metadata) bool{gcpause.Wants}
	if opts.Locks {
		wants = append(wants, locks.WantsContention)
	}
	if opts.Exceptions {
		wants = append(wants, exceptions.Wants, stacks.SymbolsWant)
	}
	if opts.ThreadPool {
		wants = append(wants, informational(threadpool.Wants))
	}
	ps := clrevents.ProvidersFor(wants...)
	if opts.Requests {
		// The request events only: the runtime's events package requests
		// also reads are gcpause's (GC suspensions) and the exceptions'
		// (Options.Exceptions).
		ps = append(ps, ipc.Provider{Name: clrevents.ProviderKestrel, Level: clrevents.LevelInformational})
	}
	if opts.CPU {
		ps = ipc.Merge(ps, stacks.SamplerProviders())
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

	gc   *gcpause.Analyzer
	ctr  *counters.Analyzer
	cpu  *cpuWindow
	exc  *excState // nil unless Options.Exceptions
	lock *lockState
	tp   *threadpool.Analyzer
	req  *requests.Analyzer // nil unless Options.Requests
	// tpSym names the thread pool's blocking stacks when neither the CPU
	// window nor the exceptions have a symbol table to share.
	tpSym *stacks.Symbols
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

	gcs       ring[GCRow]
	susps     ring[SuspensionRow]
	last      GCRow
	hasLast   bool
	promoted  [5]uint64
	gen0Alloc allocWindow

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

	flavor flavorState
	proc   Process
	sess   sessionState

	first, now int64 // ns since the session start: first and latest event
	seen       bool
	events     uint64
	lost       uint64
	stats      analysis.Stats
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
		gcs:        newRing[GCRow](opts.keepGCs()),
		susps:      newRing[SuspensionRow](opts.keepSuspensions()),
		gcStopped:  newStopped(windowKeep, maxStopIntervals),
		anyStopped: newStopped(windowKeep, maxStopIntervals),
	}
	m.gc = gcpause.New(hdr, gcpause.Options{
		// gcpause keeps twice this between trims; the monitor's rows are
		// its own, gcpause's only need to outlive a running GC.
		MaxGCs: 8, MaxSuspensions: 8,
		OnGC:         m.onGC,
		OnSuspension: m.onSuspension,
		OnStopped:    m.onStopped,
		OnGCStart:    m.onGCStart,
	})
	if !opts.NoCounters {
		m.ctr = counters.New(hdr, opts.Counters)
	}
	if opts.Exceptions {
		m.exc = newExcState(hdr)
	}
	if opts.CPU {
		m.cpu = newCPUWindow(hdr, opts.cpuWindowSec())
		m.cpu.mappings = opts.Mappings
	}
	// Waiting stacks are named by the CPU window's symbol table when
	// there is one (the events that fill it are the same).
	var sym *stacks.Symbols
	if m.cpu != nil {
		sym = m.cpu.sym
	}
	m.lock = newLockState(hdr, sym)
	if opts.ThreadPool {
		// Blocking sites are named as a file's page names them: from a
		// symbol table fed the same stream (the CPU window's or the
		// exceptions', else one of its own).
		switch {
		case sym != nil:
		case m.exc != nil:
			sym = m.exc.sym
		default:
			m.tpSym = stacks.NewSymbols(hdr)
			sym = m.tpSym
		}
		m.tp = threadpool.New(hdr, threadpool.Options{Counters: m.ctr, Symbols: sym,
			OnEpisode: func(e threadpool.Episode) { m.pendingEps = append(m.pendingEps, e) }})
	}
	if opts.Requests {
		// The GC damage kept per GC is bounded as the monitor's rows are;
		// the totals stay exact.
		m.req = requests.New(hdr, requests.Options{MaxGCs: opts.keepGCs()})
	}
	m.proc.Pid = hdr.ProcessID
	m.sess.state = StateRunning
	return m
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
	st.Add(m.gc.Stats())
	st.Add(m.lock.an.Stats())
	if m.ctr != nil {
		st.Add(m.ctr.Stats())
	}
	if m.cpu != nil {
		st.Add(m.cpu.stats())
	}
	if m.exc != nil {
		st.Add(m.exc.a.Stats())
	}
	if m.tp != nil {
		st.Add(m.tp.Stats())
	}
	if m.req != nil {
		st.Add(m.req.Stats())
	}
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
	if ev.LostBefore > 0 {
		m.lost += uint64(ev.LostBefore)
	}
	m.gc.Event(ev)
	m.lock.event(ev)
	meta := ev.Meta
	if m.req != nil && requests.Wants(meta) {
		// After gcpause: the suspension that ended with this event is
		// handed on (onStopped) before it.
		m.req.Event(ev)
	}
	switch meta.Runtime {
	case nettrace.Runtime:
		m.runtimeEvent(ev, ts)
	case nettrace.Rundown:
		if meta.EventID == idRuntimeInformation {
			m.runtimeInformation(ev)
		}
	case nettrace.EventPipe:
		if meta.EventName == "ProcessInfo" {
			m.processInfoEvent(ev)
		}
	case nettrace.NotRuntime:
		if m.ctr != nil {
			m.ctr.Event(ev)
			if !m.seed.done && m.ctr.SawMeter() {
				m.trySeed()
			}
		}
		if m.tp != nil {
			m.tp.Event(ev) // after the counters: it reads the queue length from them
		}
		return
	}
	if m.tp != nil {
		m.tp.Event(ev)
		if m.tpSym != nil {
			m.tpSym.Event(ev)
		}
	}
	if m.cpu != nil {
		m.cpu.event(ev, ts)
	}
	if m.exc != nil {
		m.exc.event(ev)
	}
}

func (m *Monitor) runtimeEvent(ev *nettrace.Event, _ int64) {
	if ev.Meta.EventID == clrevents.IDGCTriggered {
		m.flavor.triggered(ev.ThreadID)
	}
}

// onGCStart runs inside gcpause.Event (m.mu held) when a GC begins: the
// start gcpause decoded, not decoded again.
func (m *Monitor) onGCStart(g *gcpause.GC) {
	m.flavor.gcStart(g.ThreadID, g.Type)
	m.started[min(max(g.Generation, 0), 2)]++
	if m.opts.OnGCStart != nil {
		m.pendingStart = append(m.pendingStart, g)
	}
}

// onStopped runs inside gcpause.Event (m.mu held) for every suspension
// that ended: the stopped-time windows. (Counts by reason are gcpause's:
// reasonSummary.)
func (m *Monitor) onStopped(s *analysis.Stopped) {
	m.anyStopped.add(s.BeginNanos, s.EndNanos, m.now)
	if m.req != nil {
		m.req.Stopped(s)
	}
	if clrevents.SuspendReason(s.Reason).IsGC() {
		m.gcStopped.add(s.BeginNanos, s.EndNanos, m.now)
	}
}

// openSince is the earliest begin of the suspensions in progress that
// match gcOnly (-1: none).
func (m *Monitor) openSince(gcOnly bool) int64 { return m.gc.OpenSince(gcOnly) }

// onGC runs inside gcpause.Event (m.mu held).
func (m *Monitor) onGC(g *gcpause.GC) {
	row := newGCRow(g)
	m.gcs.push(row)
	m.flavor.gc(g)
	m.last, m.hasLast = row, true
	if g.StartSeen {
		m.resolved[min(max(g.Generation, 0), 2)]++
	}
	if g.Complete {
		if g.HasHeapStats {
			for i := range m.promoted {
				m.promoted[i] += g.HeapStats.TotalPromotedSize[i]
			}
		}
		if g.HasPerHeap {
			m.gen0Alloc.add(g.PauseEndNanos, g.Gen0Allocated)
		}
	}
	if m.opts.OnGC != nil {
		m.pendingGCs = append(m.pendingGCs, g)
	}
}

func (m *Monitor) onSuspension(s *gcpause.Suspension) {
	m.susps.push(SuspensionRow{
		Reason: s.Reason.String(), Code: uint32(s.Reason), ThreadID: s.ThreadID,
		StartUTC: s.StartUTC.UTC(), StartMS: ms(s.StartNanos), PauseMS: ms(s.PauseNanos),
		SuspendMS: optNanos(s.SuspendNanos), Incomplete: s.Incomplete,
	})
	if m.opts.OnSuspension != nil {
		m.pendingSusps = append(m.pendingSusps, s)
	}
}

func optNanos(ns int64) Opt {
	if ns < 0 {
		return None
	}
	return Opt(ms(ns))
}

// SymbolEvent feeds the CPU window's and the exceptions' symbol tables a
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
	if m.cpu != nil {
		m.cpu.sym.Event(ev)
	}
	if m.exc != nil {
		m.exc.sym.Event(ev)
	}
	if m.tpSym != nil {
		m.tpSym.Event(ev)
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
