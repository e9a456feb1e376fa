package gcpause

import (
	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// Options configure an Analyzer. Every field is optional.
type Options struct {
	// OnGC is called once per GC when it is complete, or when it is given
	// up as incomplete (GC.Complete false) because a later GC began or
	// events were missing. Called from Event; the GC must not be changed.
	OnGC func(*GC)
	// OnSuspension is called for each runtime suspension that is not a
	// GC's and not SuspendOther (debugger, profiler, shutdown, ReJIT, ...),
	// and for GC suspensions during which no GC started.
	OnSuspension func(*Suspension)
	// OnStop is called for each stop of the runtime that a GC is credited
	// with, when it ends (RestartEEEnd): a blocking GC's one pause, a
	// background GC's initial and later stops. Samplers use it to label
	// what threads did while the runtime was stopped. Called from Handle.
	OnStop func(*Stop)
	// MaxGCs bounds how many GC records Result returns (the most recent
	// ones); 0 keeps all. Counts, percentiles and the histogram stay exact.
	MaxGCs int
	// MaxSuspensions bounds the individually kept suspensions the same way.
	MaxSuspensions int
	// OnRetire, with MaxGCs, is handed the GC records that leave the kept
	// ones, oldest first, once they are final: a writer spools them so
	// that a file's every row is written while memory stays bounded.
	// Result's GCs then continue where the retired ones end.
	OnRetire func(*GC)
	// OnGCStart is called once per GC when its GCStart is read (after the
	// record has its number, generation, type, reason and pause start):
	// consumers that act when a GC begins read the decoded start here
	// instead of decoding the payload again.
	OnGCStart func(*GC)
	// OnStopped is called for every suspension that ended with its
	// RestartEEEnd, whatever its reason: the pairing consumers read
	// instead of pairing SuspendEEBegin with RestartEEEnd themselves. In
	// an analysis.Set the same value also goes to the Set's
	// StoppedObservers (Publish).
	OnStopped func(*analysis.Stopped)
}

// Analyzer is the state machine. Create it with New, call Event for every
// event in stream order, then Result.
type Analyzer struct {
	hdr  *nettrace.Header
	opts Options

	active map[uint64]*susp // open suspensions by thread
	free   []*susp

	gcs        []*GC // kept records (bounded by MaxGCs)
	last       *GC   // most recently started GC
	currentBGC *GC
	nGC        int // GCs started
	prevPause  int64
	prevGen0   uint64 // gen0 object size after the previous GC with per-heap data
	hasPrevGen bool

	susps   []*Suspension
	reasons map[clrevents.SuspendReason]*ReasonRollup

	roll rolling

	first, lastTS int64
	seen          bool
	lost          uint64

	// UnmatchedRestarts counts RestartEEEnd events on a thread with no open
	// suspension (the suspension began before the session, or was lost).
	unmatchedRestarts int
	decodeErrors      int
	firstErr          error
	used              uint64
	orphanHeapStats   int

	flavor flavorState

	bus     *analysis.Bus
	stopped analysis.Stopped // reused: observers copy what they keep
}

// Publish implements analysis.Publisher: every ended suspension goes to
// the Set's StoppedObservers.
func (a *Analyzer) Publish(b *analysis.Bus) { a.bus = b }

// publish hands suspension s, ended by a RestartEEEnd at ts, to its
// observers.
func (a *Analyzer) publish(s *susp, ts int64) {
	if a.opts.OnStopped == nil && !a.bus.Observes() {
		return
	}
	st := &a.stopped
	*st = analysis.Stopped{Thread: s.thread, Reason: uint32(s.reason), BeginNanos: a.nanos(s.begin), EndNanos: a.nanos(ts)}
	switch bgc := a.currentBGC; {
	case s.gc != nil:
		st.GC, st.HeapDump = s.gc.Number, s.gc.HeapDump
	case s.reason == clrevents.SuspendForGCPrep && bgc != nil && !bgc.done():
		st.GC = bgc.Number
	case s.reason.IsGC():
		// A GC suspension no GC started in: the open GC it stops for, as
		// closeSusp credits it.
		if g := a.current(); g != nil {
			st.GC = g.Number
		}
	}
	if a.opts.OnStopped != nil {
		a.opts.OnStopped(st)
	}
	a.bus.Stopped(st)
}

// OpenSince is the earliest start (ns since the stream's start) of the
// suspensions still open, of GC reasons only with gcOnly (-1: none).
func (a *Analyzer) OpenSince(gcOnly bool) int64 {
	t := int64(-1)
	for _, s := range a.active {
		if gcOnly && !s.reason.IsGC() {
			continue
		}
		if b := a.nanos(s.begin); t < 0 || b < t {
			t = b
		}
	}
	return t
}

// susp is one open suspension.
type susp struct {
	reason       clrevents.SuspendReason
	thread       uint64
	begin, end   int64
	hasEnd       bool
	gc           *GC // first GC that started inside it
	restartBegin int64
}

// New returns an Analyzer for a stream with header hdr (time conversion
// and pointer size).
func New(hdr *nettrace.Header, opts Options) *Analyzer {
	return &Analyzer{
		hdr:     hdr,
		opts:    opts,
		active:  make(map[uint64]*susp),
		reasons: make(map[clrevents.SuspendReason]*ReasonRollup),
	}
}

func (a *Analyzer) nanos(ts int64) int64 { return a.hdr.Nanos(ts) }
func (a *Analyzer) dur(d int64) int64 {
	if d < 0 {
		return 0
	}
	return a.hdr.DurationNanos(d)
}

// Wants reports whether the analysis uses events of m for more than the
// session's time span and lost-event accounting: the runtime's GC and
// suspension events. A file source may skip the others (source.Spec.Keep).
func Wants(m *nettrace.Metadata) bool {
	if m.Runtime != nettrace.Runtime {
		return false
	}
	switch m.EventID {
	case clrevents.IDGCSuspendEEBegin, clrevents.IDGCSuspendEEEnd, clrevents.IDGCRestartEEBegin,
		clrevents.IDGCRestartEEEnd, clrevents.IDGCStart, clrevents.IDGCEnd, clrevents.IDGCHeapStats,
		clrevents.IDGCGlobalHeapHistory, clrevents.IDGCPerHeapHistory:
		return true
	}
	return false
}

// Event feeds one event. Events Wants rejects are only used for the
// session's time span and lost-event accounting.
func (a *Analyzer) Event(ev *nettrace.Event) {
	if !a.seen {
		a.first = ev.Timestamp
		a.seen = true
	}
	if ev.Timestamp > a.lastTS {
		a.lastTS = ev.Timestamp
	}
	if ev.LostBefore > 0 {
		a.lost += uint64(ev.LostBefore)
		if g := a.current(); g != nil {
			g.LostEvents = true
		}
	}
	m := ev.Meta
	if m.Runtime == nettrace.Runtime && m.EventID == clrevents.IDGCBulkNode {
		if g := a.current(); g != nil {
			g.HeapDump = true
		}
		return
	}
	if m.Runtime == nettrace.Runtime && m.EventID == clrevents.IDGCTriggered {
		a.flavor.triggered(ev.ThreadID) // evidence for Flavor, not asked for
		return
	}
	if !Wants(m) {
		return
	}
	a.used++
	switch m.EventID {
	case clrevents.IDGCSuspendEEBegin:
		e, err := clrevents.DecodeGCSuspendEEBegin(ev.Payload, m.Version, a.hdr.PointerSize)
		if a.failed(err) {
			return
		}
		a.suspendBegin(ev, e.Reason)
	case clrevents.IDGCSuspendEEEnd:
		if s := a.active[ev.ThreadID]; s != nil && !s.hasEnd {
			s.end, s.hasEnd = ev.Timestamp, true
		}
	case clrevents.IDGCRestartEEBegin:
		if s := a.active[ev.ThreadID]; s != nil {
			s.restartBegin = ev.Timestamp
		}
	case clrevents.IDGCRestartEEEnd:
		a.restartEnd(ev)
	case clrevents.IDGCStart:
		e, err := clrevents.DecodeGCStart(ev.Payload, m.Version, a.hdr.PointerSize)
		if a.failed(err) {
			return
		}
		a.gcStart(ev, e)
	case clrevents.IDGCEnd:
		e, err := clrevents.DecodeGCEnd(ev.Payload, m.Version, a.hdr.PointerSize)
		if a.failed(err) {
			return
		}
		for _, g := range [2]*GC{a.last, a.currentBGC} {
			if g != nil && g.Number == e.Count && g.DurationNanos < 0 {
				g.DurationNanos = a.nanos(ev.Timestamp) - g.StartNanos
				g.rt.end, g.rt.endThread = ev.Timestamp, ev.ThreadID
				break
			}
		}
	case clrevents.IDGCHeapStats:
		e, err := clrevents.DecodeGCHeapStats(ev.Payload, m.Version, a.hdr.PointerSize)
		if a.failed(err) {
			return
		}
		a.heapStats(a.owner(ev.ThreadID), e)
	case clrevents.IDGCGlobalHeapHistory:
		e, err := clrevents.DecodeGCGlobalHeapHistory(ev.Payload, m.Version, a.hdr.PointerSize)
		if a.failed(err) {
			return
		}
		if g := a.owner(ev.ThreadID); g != nil {
			g.HasGlobal = true
			g.NumHeaps = int(e.NumHeaps)
			g.GlobalMechanisms = e.GlobalMechanisms
			g.PauseMode, g.HasPauseMode = e.PauseMode, m.Version >= 1
		}
	case clrevents.IDGCPerHeapHistory:
		e, err := clrevents.DecodeGCPerHeapHistory(ev.Payload, m.Version, a.hdr.PointerSize)
		if a.failed(err) {
			return
		}
		if g := a.owner(ev.ThreadID); g != nil {
			g.HasPerHeap = true
			g.Heaps++
			g.rt.perHeap, g.rt.perHeapThread = ev.Timestamp, ev.ThreadID
			for i := range e.Gens {
				if i >= len(g.Gens) {
					break
				}
				d := &e.Gens[i]
				s := &g.Gens[i]
				s.SizeBefore += d.SizeBefore
				s.ObjSpaceBefore += d.ObjSpaceBefore()
				s.SizeAfter += d.SizeAfter
				s.ObjSizeAfter += d.ObjSizeAfter()
				s.Fragmentation += d.Fragmentation()
				s.Survived += d.Survived()
			}
		}
	}
}

// current is the GC that events without a GC number belong to: the most
// recent GC while it is open, else the running background GC.
func (a *Analyzer) current() *GC {
	if a.last != nil && !a.last.Complete && !a.last.done() {
		return a.last
	}
	if a.currentBGC != nil && !a.currentBGC.Complete {
		return a.currentBGC
	}
	return nil
}

// owner is the GC a heap statistics or history event written by thread
// belongs to. These events carry no GC number: they go to the current GC,
// except where they cannot be its own. A blocking or foreground GC writes
// its histories before its HeapStats, and all of them before it restarts
// the program; a background GC writes its own at the end of its sweep, on
// its BGC thread (known from its SuspendForGCPrep stop), while foreground
// GCs may run: it can write them inside a foreground GC's pause, most
// often while that GC restarts the program. So once a blocking or
// foreground GC has its HeapStats, and whenever the running BGC's thread
// writes while a GC begun on another thread is open, the event is the
// running BGC's, or no GC's when the BGC began before the session. Without
// this the foreground GC got a second heap and doubled per-generation sums
// (issue 26).
func (a *Analyzer) owner(thread uint64) *GC {
	g := a.current()
	if g == nil || g.Type == clrevents.GCBackground {
		return g
	}
	b := a.currentBGC
	if b != nil && b.done() {
		b = nil
	}
	if g.HasHeapStats || b != nil && b.bgcThread != 0 && thread == b.bgcThread && thread != g.ThreadID {
		return b
	}
	return g
}

// done reports whether a GC was already emitted (complete or given up).
func (g *GC) done() bool { return g.emitted }

func (a *Analyzer) getSusp() *susp {
	if n := len(a.free); n > 0 {
		s := a.free[n-1]
		a.free = a.free[:n-1]
		*s = susp{}
		return s
	}
	return &susp{}
}

func (a *Analyzer) suspendBegin(ev *nettrace.Event, reason clrevents.SuspendReason) {
	if old := a.active[ev.ThreadID]; old != nil {
		// A suspension on this thread never ended: its RestartEE was lost.
		a.closeSusp(old, ev.Timestamp, true)
	}
	if reason == clrevents.SuspendForGC {
		// Blocking GCs do not overlap: a new GC suspension gives up an
		// earlier foreground/blocking GC that never saw its end.
		if g := a.last; g != nil && !g.done() && g.Type != clrevents.GCBackground && g.pauseEnded() {
			a.finish(g)
		}
	}
	s := a.getSusp()
	s.reason = reason
	s.thread = ev.ThreadID
	s.begin = ev.Timestamp
	a.active[ev.ThreadID] = s
}

// pauseEnded reports whether the GC's pause was closed or can no longer be.
func (g *GC) pauseEnded() bool { return g.PauseEndNanos != 0 || g.orphaned }

func (a *Analyzer) restartEnd(ev *nettrace.Event) {
	s := a.active[ev.ThreadID]
	if s == nil {
		a.unmatchedRestarts++
		// A GC that began before the session (no suspension seen) ends its
		// pause on its own thread.
		if g := a.current(); g != nil && g.NoSuspension && g.ThreadID == ev.ThreadID && g.Type != clrevents.GCBackground && g.PauseEndNanos == 0 {
			a.endPause(g, ev.Timestamp, ev.Timestamp)
		}
		return
	}
	a.closeSusp(s, ev.Timestamp, false)
}

// closeSusp ends suspension s at ts; incomplete when no RestartEEEnd came.
func (a *Analyzer) closeSusp(s *susp, ts int64, incomplete bool) {
	delete(a.active, s.thread)
	defer func() { a.free = append(a.free, s) }()
	if !incomplete {
		a.publish(s, ts)
	}
	pause := a.dur(ts - s.begin)
	suspend := int64(-1)
	if s.hasEnd {
		suspend = a.dur(s.end - s.begin)
	}
	rs := a.reasons[s.reason]
	if rs == nil {
		rs = &ReasonRollup{Reason: s.reason}
		a.reasons[s.reason] = rs
	}
	rs.add(pause, suspend, incomplete)

	isGC := s.reason.IsGC() || s.gc != nil
	rb := s.restartBegin // the runtime reads its clock just before RestartEE
	if rb == 0 {
		rb = ts
	}
	if isGC && !incomplete {
		bgc := a.currentBGC
		if bgc != nil && bgc.done() {
			bgc = nil
		}
		g := a.current()
		switch {
		case bgc != nil && s.reason == clrevents.SuspendForGCPrep && s.gc == nil:
			bgc.bgcThread = s.thread // the BGC thread stops the program for its final mark
			a.stop(bgc, s, ts)
			// A background GC's later stop: add it whole.
			bgc.PauseNanos += pause
			if suspend > 0 {
				bgc.SuspendNanos += suspend
			}
			bgc.Pauses++
			bgc.PauseEndNanos = a.nanos(ts)
			start := a.nanos(s.begin)
			bgc.rt.stops = append(bgc.rt.stops, span{start, start + pause})
			if bgc.rt.prepStops == 0 {
				bgc.rt.final = a.dur(rb - s.begin) // the final-mark stop
			}
			bgc.rt.prepStops++
			return
		case g == nil:
		case g.Type == clrevents.GCBackground && s.gc == g:
			a.stop(g, s, ts)
			// The background GC's initial stop, with no ephemeral GC in it.
			g.PauseNanos = a.dur(ts - g.pauseStartTS)
			g.PauseEndNanos = a.nanos(ts)
			g.rt.bgcInit = g.PauseNanos
			g.rt.restart = rb
			if g.HasHeapStats {
				// It ran whole inside this stop (the runtime reports the
				// first GC of a process as Background before its BGC
				// thread exists, then falls back to a blocking GC).
				g.rt.wholeStop = true
				a.finish(g)
			}
			return
		case g.Type != clrevents.GCBackground && (s.gc == g || s.gc != nil && s.gc == bgc):
			// A blocking or foreground GC, or the ephemeral GC that ran in
			// a background GC's initial stop.
			if s.gc == bgc && bgc != nil {
				bgc.rt.restart, bgc.rt.eph = rb, g
			}
			a.stop(g, s, ts)
			a.endPause(g, ts, rb)
			return
		}
	}
	if isGC && s.gc != nil {
		// Lost RestartEE: the GC that ran in it can no longer be measured.
		if g := s.gc; !g.done() && g.Type != clrevents.GCBackground {
			g.orphaned = true
			if g.HasHeapStats {
				a.finish(g)
			}
		}
		return
	}
	if s.reason == clrevents.SuspendOther && !isGC {
		return // aggregated only: the sample profiler makes ~1000/s
	}
	// What remains: non-GC suspensions, and GC suspensions during which no
	// GC ran (reported so that every stop is accounted for).
	rec := &Suspension{
		Reason:       s.reason,
		ThreadID:     s.thread,
		StartNanos:   a.nanos(s.begin),
		StartUTC:     a.hdr.Time(s.begin),
		SuspendNanos: suspend,
		PauseNanos:   pause,
		Incomplete:   incomplete,
	}
	a.susps = append(a.susps, rec)
	if k := a.opts.MaxSuspensions; k > 0 && len(a.susps) > 2*k {
		a.susps = append(a.susps[:0], a.susps[len(a.susps)-k:]...)
	}
	if a.opts.OnSuspension != nil {
		a.opts.OnSuspension(rec)
	}
}

// stop reports suspension s, ending at ts, as a stop of g.
func (a *Analyzer) stop(g *GC, s *susp, ts int64) {
	if a.opts.OnStop == nil {
		return
	}
	st := Stop{GC: g, StartNanos: a.nanos(s.begin), SuspendEndNanos: -1, EndNanos: a.nanos(ts), ThreadID: s.thread}
	if s.hasEnd {
		st.SuspendEndNanos = a.nanos(s.end)
	}
	a.opts.OnStop(&st)
}

// endPause closes a blocking or foreground GC's pause at ts; rb is the
// RestartEEBegin of that stop.
func (a *Analyzer) endPause(g *GC, ts, rb int64) {
	g.rt.restart = rb
	g.PauseNanos = a.dur(ts - g.pauseStartTS)
	g.PauseEndNanos = a.nanos(ts)
	g.Pauses = 1
	if g.HasHeapStats {
		a.finish(g)
	}
}

func (a *Analyzer) gcStart(ev *nettrace.Event, e clrevents.GCStart) {
	if a.last != nil && a.last.Number == e.Count {
		return // some runtimes fire GCStart twice
	}
	bgcStarting := a.last != nil && a.last.Type == clrevents.GCBackground && !a.last.done() && !a.last.Complete
	if g := a.last; g != nil && !g.done() && !bgcStarting {
		// The previous GC never finished (lost events or cut stream).
		if g.Type != clrevents.GCBackground {
			g.orphaned = true
			a.finish(g)
		}
	}
	if e.Type == clrevents.GCBackground && a.currentBGC != nil && !a.currentBGC.done() {
		a.currentBGC.orphaned = true
		a.finish(a.currentBGC)
	}
	g := &GC{
		Index:         a.nGC,
		Number:        e.Count,
		Generation:    int(e.Depth),
		Type:          e.Type,
		Reason:        e.Reason,
		Induced:       e.Reason.IsInduced(),
		StartNanos:    a.nanos(ev.Timestamp),
		DurationNanos: -1,
		ThreadID:      ev.ThreadID,
		// Known once it completes.
		PauseRuntimeNanos: -1,
		rt:                rtMarks{start: ev.Timestamp, final: -1},
	}
	a.nGC++
	s := a.gcSuspension(ev.ThreadID)
	ephAtBGCStart := bgcStarting && e.Type == clrevents.GCNonConcurrent
	switch {
	case ephAtBGCStart || e.Reason == clrevents.ReasonPMFullGC:
		// PerfView: this GC's pause starts at its GCStart; the suspension
		// before it belongs to the background GC. The runtime counts it
		// from there too.
		g.pauseStartTS = ev.Timestamp
		g.rt.fromStart = true
	case s != nil:
		g.pauseStartTS = s.begin
		if s.hasEnd {
			g.SuspendNanos = a.dur(s.end - s.begin)
		} else {
			g.MissingSuspendEnd = true
			g.SuspendNanos = a.dur(ev.Timestamp - s.begin)
		}
		if s.gc == nil {
			s.gc = g
		}
	default:
		g.NoSuspension = true
		g.pauseStartTS = ev.Timestamp
	}
	g.StartSeen = !g.NoSuspension
	g.PauseStartNanos = a.nanos(g.pauseStartTS)
	g.PauseStartUTC = a.hdr.Time(g.pauseStartTS)
	if e.Type == clrevents.GCBackground {
		a.currentBGC = g
		g.PauseNanos = g.SuspendNanos
		g.rt.bgcInit = g.PauseNanos
		g.Pauses = 1
	}
	a.last = g
	a.gcs = append(a.gcs, g)
	a.flavor.gcStart(g.ThreadID, g.Type)
	if a.opts.OnGCStart != nil {
		a.opts.OnGCStart(g)
	}
	if k := a.opts.MaxGCs; k > 0 && len(a.gcs) > 2*k {
		if a.opts.OnRetire == nil {
			// Keep open GCs reachable through last/currentBGC; drop old rows.
			a.gcs = append(a.gcs[:0], a.gcs[len(a.gcs)-k:]...)
		} else if n := a.retire(len(a.gcs) - k); n > 0 {
			a.gcs = append(a.gcs[:0], a.gcs[n:]...)
		}
	}
}

// retire hands up to n of the oldest kept records to OnRetire, stopping at
// the first that is not final (a background GC still running: the rows
// after it wait, so they go out in start order), and returns how many went.
func (a *Analyzer) retire(n int) int {
	i := 0
	for i < n && a.gcs[i].done() {
		a.opts.OnRetire(a.gcs[i])
		i++
	}
	return i
}

// gcSuspension picks the open suspension a starting GC belongs to: a GC
// suspension (the starting thread's first), never the sampler's when a GC
// one is open.
func (a *Analyzer) gcSuspension(thread uint64) *susp {
	if s := a.active[thread]; s != nil && s.reason == clrevents.SuspendForGC {
		return s
	}
	if s := a.active[thread]; s != nil && len(a.active) == 1 {
		return s
	}
	var best *susp
	rank := func(s *susp) int {
		switch s.reason {
		case clrevents.SuspendForGC:
			return 3
		case clrevents.SuspendForGCPrep:
			return 2
		case clrevents.SuspendOther:
			// The sampler's stops never contain a GC; only trust one on
			// the GC's own thread (checked above).
			return -1
		}
		return 1
	}
	for _, s := range a.active {
		r := rank(s)
		if r < 0 {
			if s.thread != thread {
				continue
			}
			r = 0
		}
		if best == nil || r > rank(best) || r == rank(best) && s.begin > best.begin {
			best = s
		}
	}
	return best
}

func (a *Analyzer) heapStats(g *GC, e clrevents.GCHeapStats) {
	if g == nil {
		a.orphanHeapStats++
		return
	}
	g.HasHeapStats = true
	g.HeapStats = e
	if g.Type == clrevents.GCBackground {
		// A background GC ends with its heap statistics, unless they came
		// inside its initial stop (then the stop's end completes it;
		// PerfView ends it here and loses that stop).
		if g.PauseEndNanos != 0 || !a.inInitialStop(g) {
			a.finish(g)
		}
		return
	}
	if g.pauseEnded() {
		a.finish(g)
	}
}

// inInitialStop reports whether the suspension g started in is still open.
func (a *Analyzer) inInitialStop(g *GC) bool {
	for _, s := range a.active {
		if s.gc == g {
			return true
		}
	}
	return false
}

// finish emits g: complete when its pause ended and its heap statistics
// arrived, otherwise as given up.
func (a *Analyzer) finish(g *GC) {
	if g.done() {
		return
	}
	g.Complete = g.HasHeapStats && !g.orphaned && (g.PauseEndNanos != 0 || g.Type == clrevents.GCBackground)
	if g.Type == clrevents.GCBackground && a.currentBGC == g {
		a.currentBGC = nil
	}
	if g.Complete {
		g.PauseRuntimeNanos = a.runtimePause(g)
		end := g.PauseEndNanos
		if end == 0 {
			end = g.PauseStartNanos + g.PauseNanos
		}
		since := end - a.prevPause
		if a.prevPause == 0 {
			since = end - a.nanos(a.first)
		}
		if since > 0 {
			g.PausePercentSinceLastGC = float64(g.PauseNanos) * 100 / float64(since)
		}
		if end > a.prevPause {
			a.prevPause = end
		}
		if g.HasPerHeap {
			after := g.Gens[0].ObjSizeAfter
			before := g.Gens[0].ObjSpaceBefore
			if a.hasPrevGen && before > a.prevGen0 {
				g.Gen0Allocated = before - a.prevGen0
			} else if !a.hasPrevGen {
				g.Gen0Allocated = before
			}
			a.prevGen0, a.hasPrevGen = after, true
		}
		a.roll.add(g, a.horizon())
	} else {
		g.PauseRuntimeNanos = -1
		a.roll.incomplete++
	}
	g.emitted = true
	a.flavor.gc(g)
	if a.opts.OnGC != nil {
		a.opts.OnGC(g)
	}
}

// horizon is the earliest time a stop not yet added to the rollup can
// start: the pause start of an open GC or the start of an open suspension
// (a GC may yet start in it).
func (a *Analyzer) horizon() int64 {
	h := a.nanos(a.lastTS)
	for _, g := range [2]*GC{a.last, a.currentBGC} {
		if g != nil && !g.done() {
			h = min(h, g.PauseStartNanos)
		}
	}
	for _, s := range a.active {
		h = min(h, a.nanos(s.begin))
	}
	return h
}

// Spec is the pause analysis in an analysis.Set: it reads Wants.
var Spec = analysis.Spec{Name: "gcpause", Keep: Wants}

// In is the Set's one pause analysis, which pairs every suspension once
// and publishes it (analysis.Stopped), so each GC event of the stream is
// decoded once however many parts of a command read GCs. Every
// registration's callbacks are called, in registration order; the bounds
// (MaxGCs, MaxSuspensions, OnRetire) are the first registration's.
func In(s *analysis.Set, o Options) *analysis.Ref[*Analyzer] {
	regs := analysis.Slot[[]Options](s)
	*regs = append(*regs, o)
	return analysis.Shared(s, Spec, func(h *nettrace.Header) *Analyzer { return New(h, merged(*regs)) })
}

// merged is the first options with every later one's callbacks after its
// own.
func merged(os []Options) Options {
	m := os[0]
	for _, o := range os[1:] {
		m.OnGC = chain(m.OnGC, o.OnGC)
		m.OnSuspension = chain(m.OnSuspension, o.OnSuspension)
		m.OnStop = chain(m.OnStop, o.OnStop)
		m.OnGCStart = chain(m.OnGCStart, o.OnGCStart)
		m.OnStopped = chain(m.OnStopped, o.OnStopped)
	}
	return m
}

func chain[T any](a, b func(T)) func(T) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(x T) { a(x); b(x) }
}

// Open counts the suspensions still open (one a thread at most).
func (a *Analyzer) Open() int { return len(a.active) }
