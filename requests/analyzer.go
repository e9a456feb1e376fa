package requests

import (
	"cmp"
	"container/heap"
	"slices"
	"sort"
	"strconv"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// Options configure an Analyzer. Every field is optional.
type Options struct {
	// Slowest is how many of the slowest requests Result keeps whole
	// (0: DefaultSlowest).
	Slowest int
	// MaxOpen bounds the requests open at once (0: DefaultMaxOpen); a
	// start beyond it is counted in Result.Dropped and not followed.
	MaxOpen int
	// MaxRoutes bounds the routes kept apart (0: DefaultMaxRoutes); later
	// routes share OtherRoutes.
	MaxRoutes int
	// MaxGCs bounds the GCs whose damage is kept (0: DefaultMaxGCs); the
	// totals stay exact.
	MaxGCs int
	// OnRequest is handed every completed request (valid during the call).
	OnRequest func(*Request)
}

// Defaults of Options.
const (
	DefaultSlowest   = 10
	DefaultMaxOpen   = 1 << 16
	DefaultMaxRoutes = 1000
	DefaultMaxGCs    = 1 << 16
	// OtherRoutes is the route of requests beyond MaxRoutes.
	OtherRoutes = "[other routes]"
	// maxHitGCs bounds the GC numbers one request keeps.
	maxHitGCs = 16
)

// DurationBounds are the upper bounds of RouteStats.Durations: 1-2-5
// steps from 100 µs to 10 s (a Prometheus histogram's buckets, "le").
var DurationBounds = analysis.Steps125(100_000, 10_000_000_000)

// Request is one completed incoming request. Times are nanoseconds since
// the stream's start.
type Request struct {
	ID     string // Kestrel's request id (HttpContext.TraceIdentifier); "" from Hosting
	Method string
	Path   string
	Route  string
	// Status is the response's status (0: unknown): from Hosting's
	// HttpRequestIn.Stop forwarded by DiagnosticSource, which comes after
	// Kestrel's RequestStop (set on the slowest and open requests).
	Status     int
	StartNanos int64
	EndNanos   int64
	// GCPausedNanos is the overlap of the request with every GC's
	// stop-the-world pause; SuspendedNanos with the other suspensions.
	GCPausedNanos  int64
	SuspendedNanos int64
	// LockWaitNanos and BlockedNanos are the waits of the threads that ran
	// the request (lock contention; wait handles and blocked pool threads).
	LockWaitNanos int64
	BlockedNanos  int64
	// HTTPOutNanos is the time of its outgoing HttpClient calls (summed:
	// concurrent calls add up), HTTPOutCount their number.
	HTTPOutNanos int64
	HTTPOutCount int
	Exceptions   int
	// GCs are the numbers of the GCs whose pause hit it (at most 16).
	GCs []uint32
	// Segments are the parts of its interval the breakdown is made of, in
	// the order they were seen (at most MaxSegments; SegmentsDropped
	// counts the rest): its waterfall.
	Segments        []Segment
	SegmentsDropped int
}

// SegmentKind says what a Segment of a request's time was.
type SegmentKind uint8

// Segment kinds.
const (
	SegGCPaused SegmentKind = iota + 1
	SegSuspended
	SegLockWait
	SegBlocked
	SegHTTPOut
)

var segNames = [...]string{"", "gc_paused", "suspended", "lock_wait", "blocked", "http_out"}

// String is the kind's name in JSON (snake_case).
func (k SegmentKind) String() string {
	if int(k) < len(segNames) {
		return segNames[k]
	}
	return "unknown"
}

// Segment is one part of a request's interval: a GC pause or another
// suspension overlapping it, a lock wait or a blocked wait of a thread
// that ran it, an outgoing call it made. Times are nanoseconds since the
// stream's start, within the request's interval. GC is the GC of a
// gc_paused segment.
type Segment struct {
	Kind       SegmentKind
	GC         uint32
	BeginNanos int64
	EndNanos   int64
}

// MaxSegments bounds the segments one request keeps.
const MaxSegments = 32

func (r *Request) addSegment(k SegmentKind, gc uint32, begin, end int64) {
	if end <= begin {
		return
	}
	if len(r.Segments) >= MaxSegments {
		r.SegmentsDropped++
		return
	}
	r.Segments = append(r.Segments, Segment{Kind: k, GC: gc, BeginNanos: begin, EndNanos: end})
}

// DurationNanos is the request's wall time.
func (r *Request) DurationNanos() int64 { return r.EndNanos - r.StartNanos }

// open is a request in flight.
type open struct {
	Request
	key     string // the open table's key
	act     nettrace.GUID
	threads []uint64        // threads that ran it (for cleanup)
	outs    []nettrace.GUID // its outgoing calls in flight (for cleanup)
}

// pause is one stop-the-world interval.
type pause struct {
	gc         uint32
	begin, end int64
}

// gcDamage is what one GC did to the requests.
type gcDamage struct {
	GC                      uint32
	BeginNanos, PauseNanos  int64
	InFlight                int64
	RequestNanosLost        int64
	SlowestNanos            int64
	SlowestID, SlowestRoute string
}

// outgoing is an HttpClient call in flight.
type outgoing struct {
	req   *open
	start int64
}

type routeAcc struct {
	method, route          string
	all, hit, notHit       sketch
	hist                   analysis.Histogram
	pausedNanos, totalNano int64
	first, last            int64
}

// Analyzer is the state machine. Create it with New, call Event for every
// event in stream order (Stopped and Wait as the owning analyses hand them
// on), then Result.
type Analyzer struct {
	hdr     *nettrace.Header
	ptrSize int
	opts    Options

	open     map[string]*open        // by Kestrel request id, or by activity id (Hosting)
	byAct    map[nettrace.GUID]*open // activity ids of requests and their children
	onThread map[uint64]*open        // the request each thread runs
	out      map[nettrace.GUID]outgoing
	pauses   analysis.Ring[pause] // recent GC pauses, by end
	susps    analysis.Ring[pause] // recent other suspensions, by end
	// gcs is the damage of the latest MaxGCs GCs, in the order their
	// first stop ended.
	gcs     analysis.Ring[gcDamage]
	maxGC   uint32 // the highest GC number in gcs ever
	routes  map[string]*routeAcc
	slow    slowHeap
	kestrel bool // Kestrel events seen: Hosting's are then not requests of their own
	flow    bool // an event carried an activity id

	requests, hitByGC      int64
	totalNanos, pausedNano int64
	stopsNoStart           int64
	dropped                int64
	openAtEnd              int64
	httpUnpaired           int64
	httpUntimed            int64
	gcsDropped             int64
	used                   uint64
	openList               []Request
	slowIDs                map[string]struct{} // the ids in slow (a late status finds its request)
	statusStops            int64               // HttpRequestIn.Stop events with clrspy's arguments
	statusForeign          int64               // DiagnosticSource events of another session's specs
	statusTakenOver        int64               // times another session's specs replaced clrspy's
	specsSeen, specsOther  bool                // DiagnosticSource (re)enabled; specs not clrspy's since
	specs                  uint8               // clrspy's specs enabled since (clrevents.DiagSourceRequestSpec)
	suspended              map[uint64]struct{} // threads with a suspension begun and not ended
	deferred               []*open             // stopped during a suspension
	stats                  analysis.Stats
}

// New returns an Analyzer for a stream with header hdr.
func New(hdr *nettrace.Header, opts Options) *Analyzer {
	if opts.Slowest <= 0 {
		opts.Slowest = DefaultSlowest
	}
	if opts.MaxOpen <= 0 {
		opts.MaxOpen = DefaultMaxOpen
	}
	if opts.MaxRoutes <= 0 {
		opts.MaxRoutes = DefaultMaxRoutes
	}
	if opts.MaxGCs <= 0 {
		opts.MaxGCs = DefaultMaxGCs
	}
	ps := hdr.PointerSize
	if ps != 4 {
		ps = 8
	}
	return &Analyzer{hdr: hdr, ptrSize: ps, opts: opts,
		pauses: analysis.NewRing[pause](maxPauses), susps: analysis.NewRing[pause](maxPauses), gcs: analysis.NewRing[gcDamage](opts.MaxGCs),
		open: map[string]*open{}, byAct: map[nettrace.GUID]*open{}, onThread: map[uint64]*open{},
		out: map[nettrace.GUID]outgoing{}, slowIDs: map[string]struct{}{}, suspended: map[uint64]struct{}{}, routes: map[string]*routeAcc{}}
}

// Wants reports whether the analysis reads events of m: the request
// events, the runtime's exception throws (counted per request), and the
// bounds of its suspensions (a request that stops while the runtime
// restarts completes once that stop is handed on).
func Wants(m *nettrace.Metadata) bool {
	if m.Runtime == nettrace.Runtime {
		switch m.EventID {
		case clrevents.IDExceptionThrown, clrevents.IDGCSuspendEEBegin, clrevents.IDGCRestartEEEnd:
			return true
		}
		return false
	}
	return clrevents.WebKind(m) != clrevents.WebNone
}

// Stats are the events used and the payloads that did not decode.
func (a *Analyzer) Stats() analysis.Stats {
	s := a.stats
	s.Events = a.used
	return s
}

// Event feeds one event.
func (a *Analyzer) Event(ev *nettrace.Event) {
	m := ev.Meta
	if m.Runtime == nettrace.Runtime {
		switch m.EventID {
		case clrevents.IDGCSuspendEEBegin:
			a.used++
			a.suspended[ev.ThreadID] = struct{}{}
		case clrevents.IDGCRestartEEEnd:
			a.used++
			delete(a.suspended, ev.ThreadID)
			if len(a.suspended) == 0 {
				a.flush()
			}
		}
		if m.EventID == clrevents.IDExceptionThrown {
			a.used++
			if r := a.runner(ev); r != nil {
				r.Exceptions++
			}
		}
		return
	}
	k := clrevents.WebKind(m)
	if k == clrevents.WebNone {
		return
	}
	a.used++
	if !ev.ActivityID.IsZero() {
		a.flow = true
	}
	ts := a.hdr.Nanos(ev.Timestamp)
	switch k {
	case clrevents.KestrelRequestStart:
		e, err := clrevents.DecodeKestrelRequest(m, ev.Payload, a.ptrSize)
		if a.stats.Failed(err) {
			return
		}
		a.sawKestrel()
		a.start(ev, "k"+e.RequestID, e.RequestID, e.Method, e.Path, ts)
	case clrevents.KestrelRequestStop:
		e, err := clrevents.DecodeKestrelRequest(m, ev.Payload, a.ptrSize)
		if a.stats.Failed(err) {
			return
		}
		a.sawKestrel()
		a.stop(ev, "k"+e.RequestID, ts)
	case clrevents.HostingRequestStart:
		if a.kestrel || ev.ActivityID.IsZero() {
			return // Kestrel's own events pair the request; without an activity id the stop cannot be paired
		}
		e, err := clrevents.DecodeHostingRequest(m, ev.Payload, a.ptrSize)
		if a.stats.Failed(err) {
			return
		}
		a.start(ev, "h"+ev.ActivityID.String(), "", e.Method, e.Path, ts)
	case clrevents.HostingRequestStop:
		if a.kestrel || ev.ActivityID.IsZero() {
			return
		}
		a.stop(ev, "h"+ev.ActivityID.String(), ts)
	case clrevents.HTTPRequestStart:
		r := a.parentOf(ev)
		if r == nil {
			return // not made while serving a request
		}
		r.HTTPOutCount++
		if ev.ActivityID.IsZero() {
			a.httpUntimed++
			return
		}
		if len(r.outs) >= 64 {
			a.httpUntimed++ // more calls in flight under one request than are followed
			return
		}
		a.out[ev.ActivityID] = outgoing{req: r, start: ts}
		a.byAct[ev.ActivityID] = r
		r.outs = append(r.outs, ev.ActivityID)
	case clrevents.HTTPRequestStop:
		o, ok := a.out[ev.ActivityID]
		if ev.ActivityID.IsZero() || !ok {
			return
		}
		delete(a.out, ev.ActivityID)
		delete(a.byAct, ev.ActivityID)
		if i := slices.Index(o.req.outs, ev.ActivityID); i >= 0 {
			o.req.outs = slices.Delete(o.req.outs, i, i+1)
		}
		o.req.HTTPOutNanos += max(ts-o.start, 0)
		o.req.addSegment(SegHTTPOut, 0, o.start, ts)
	case clrevents.HTTPRequestFailed, clrevents.HTTPRequestLeftQueue:
		a.runner(ev) // the thread runs the call's request
	case clrevents.DiagSourceEvent:
		e, err := clrevents.DecodeDiagSource(m, ev.Payload, a.ptrSize)
		if a.stats.Failed(err) || e.Kind == "NewDiagnosticListener" {
			return
		}
		a.diagSource(&e)
	case clrevents.DiagSourceMessage:
		msg, err := clrevents.DecodeDiagSourceMessage(m, ev.Payload, a.ptrSize)
		if a.stats.Failed(err) {
			return
		}
		if spec := clrevents.DiagSourceEnabling(msg); spec != "" {
			if b := clrevents.DiagSourceRequestSpec(spec); b != 0 {
				a.specs |= b
			} else {
				a.specsOther = true
			}
		}
	case clrevents.DiagSourceVersion:
		// A session's command: the specs named next replace the ones in
		// force (they are process-wide).
		a.statusTakenOver += a.specsForeign()
		a.specsSeen, a.specs, a.specsOther = true, 0, false
	case clrevents.KestrelConnectionStart, clrevents.KestrelConnectionStop:
	}
}

// specsForeign is 1 when the specs DiagnosticSource enabled last are not
// clrspy's (another session's replaced them), else 0.
func (a *Analyzer) specsForeign() int64 {
	if a.specsSeen && (a.specs != clrevents.DiagSourceRequestSpecsAll || a.specsOther) {
		return 1
	}
	return 0
}

// diagSource takes one event DiagnosticSource forwarded: Hosting's
// HttpRequestIn.Stop with clrspy's arguments gives its request's status;
// any other is another session's specs (they are process-wide).
func (a *Analyzer) diagSource(e *clrevents.DiagSource) {
	if e.SourceName == clrevents.DiagSourceAspNetCore && e.EventName == clrevents.DiagSourceRequestStart && len(e.Args) == 0 {
		return // clrspy's own start (it makes Hosting write the stop)
	}
	// A transform's key is the last name of its property path.
	id, st := e.Arg("TraceIdentifier"), e.Arg("StatusCode")
	code, err := strconv.Atoi(st)
	if e.SourceName != clrevents.DiagSourceAspNetCore || e.EventName != clrevents.DiagSourceRequestStop || id == "" || err != nil {
		a.statusForeign++
		return
	}
	a.statusStops++
	a.setStatus(id, code)
}

// setStatus gives the request with Kestrel id its status: the stop comes
// after Kestrel's, so the request is usually complete by then, and kept
// only if it is one of the slowest.
func (a *Analyzer) setStatus(id string, code int) {
	if r := a.open["k"+id]; r != nil {
		r.Status = code
		return
	}
	for _, r := range a.deferred {
		if r.ID == id {
			r.Status = code
			return
		}
	}
	if _, ok := a.slowIDs[id]; !ok {
		return
	}
	for i := range a.slow {
		if a.slow[i].ID == id {
			a.slow[i].Status = code
			return
		}
	}
}

// sawKestrel notes that Kestrel writes its own request events: Hosting's
// then describe the same requests, and the ones opened from them before
// the first Kestrel event (Hosting's RequestStart comes first) are given up.
func (a *Analyzer) sawKestrel() {
	if a.kestrel {
		return
	}
	a.kestrel = true
	for _, r := range a.open {
		a.forget(r)
	}
}

// runner is the request the event's thread runs, updating the thread's
// request from the event's activity id when it names one.
func (a *Analyzer) runner(ev *nettrace.Event) *open {
	if !ev.ActivityID.IsZero() {
		if r := a.byAct[ev.ActivityID]; r != nil {
			a.run(ev.ThreadID, r)
			return r
		}
	}
	return a.onThread[ev.ThreadID]
}

// parentOf is the request an outgoing call starts under: the one its
// related (parent) activity id names, else the one its thread runs.
func (a *Analyzer) parentOf(ev *nettrace.Event) *open {
	if !ev.RelatedActivityID.IsZero() {
		if r := a.byAct[ev.RelatedActivityID]; r != nil {
			a.run(ev.ThreadID, r)
			return r
		}
	}
	return a.runner(ev)
}

func (a *Analyzer) run(thread uint64, r *open) {
	if a.onThread[thread] == r {
		return
	}
	a.onThread[thread] = r
	if len(r.threads) < 64 {
		r.threads = append(r.threads, thread)
	}
}

func (a *Analyzer) start(ev *nettrace.Event, key, id, method, path string, ts int64) {
	if old := a.open[key]; old != nil {
		a.forget(old) // a second start: the first one's stop was lost
		a.dropped++
	}
	if len(a.open) >= a.opts.MaxOpen {
		a.dropped++
		return
	}
	r := &open{key: key, act: ev.ActivityID}
	r.ID, r.Method, r.Path, r.StartNanos = id, method, path, ts
	a.open[key] = r
	if !ev.ActivityID.IsZero() {
		a.byAct[ev.ActivityID] = r
	}
	a.run(ev.ThreadID, r)
}

// forget drops r from the tables that point at it.
func (a *Analyzer) forget(r *open) {
	delete(a.open, r.key)
	if !r.act.IsZero() && a.byAct[r.act] == r {
		delete(a.byAct, r.act)
	}
	for _, t := range r.threads {
		if a.onThread[t] == r {
			delete(a.onThread, t)
		}
	}
	// Calls still in flight when their request ends are not followed.
	for _, g := range r.outs {
		delete(a.out, g)
		delete(a.byAct, g)
		a.httpUnpaired++
	}
	r.outs = nil
}

func (a *Analyzer) stop(ev *nettrace.Event, key string, ts int64) {
	r := a.open[key]
	if r == nil {
		a.stopsNoStart++
		return
	}
	a.forget(r)
	r.EndNanos = max(ts, r.StartNanos)
	if len(a.suspended) > 0 {
		// The runtime is restarting: threads run again before its
		// RestartEEEnd (on a loaded machine, milliseconds before), so a
		// request can stop inside the stop that is not yet handed on.
		// It completes once the stop is.
		a.deferred = append(a.deferred, r)
		return
	}
	a.overlap(r)
	a.complete(&r.Request)
}

// flush completes the requests that stopped while the runtime was stopped.
func (a *Analyzer) flush() {
	for _, r := range a.deferred {
		a.overlap(r)
		a.complete(&r.Request)
	}
	clear(a.deferred)
	a.deferred = a.deferred[:0]
}

// overlap adds every pause and suspension that overlapped r, and r to the
// damage of each GC that hit it.
func (a *Analyzer) overlap(r *open) {
	for i := range a.pauses.Len() {
		p := a.pauses.Back(i)
		if p.end <= r.StartNanos {
			break
		}
		b, e := max(p.begin, r.StartNanos), min(p.end, r.EndNanos)
		ov := e - b
		if ov <= 0 {
			continue
		}
		r.GCPausedNanos += ov
		r.addSegment(SegGCPaused, p.gc, b, e)
		if g := a.damage(p.gc); g != nil {
			g.RequestNanosLost += ov
			if !hasGC(r.GCs, p.gc) {
				g.InFlight++
				if d := r.DurationNanos(); d > g.SlowestNanos {
					g.SlowestNanos, g.SlowestID, g.SlowestRoute = d, r.ID, r.Method+" "+Route(r.Path)
				}
			}
		}
		if !hasGC(r.GCs, p.gc) && len(r.GCs) < maxHitGCs {
			r.GCs = append(r.GCs, p.gc)
		}
	}
	for i := range a.susps.Len() {
		p := a.susps.Back(i)
		if p.end <= r.StartNanos {
			break
		}
		b, e := max(p.begin, r.StartNanos), min(p.end, r.EndNanos)
		if ov := e - b; ov > 0 {
			r.SuspendedNanos += ov
			r.addSegment(SegSuspended, 0, b, e)
		}
	}
	// GC numbers were collected newest first; segments are shown in time order.
	sort.Slice(r.GCs, func(i, j int) bool { return r.GCs[i] < r.GCs[j] })
	slices.SortStableFunc(r.Segments, func(x, y Segment) int { return cmp.Compare(x.BeginNanos, y.BeginNanos) })
}

func hasGC(gcs []uint32, n uint32) bool {
	for _, g := range gcs {
		if g == n {
			return true
		}
	}
	return false
}

func (a *Analyzer) complete(r *Request) {
	r.Route = Route(r.Path)
	a.requests++
	d := r.DurationNanos()
	a.totalNanos += d
	a.pausedNano += r.GCPausedNanos
	if r.GCPausedNanos > 0 {
		a.hitByGC++
	}
	key := r.Method + " " + r.Route
	ra := a.routes[key]
	if ra == nil {
		if len(a.routes) >= a.opts.MaxRoutes {
			key = OtherRoutes
			ra = a.routes[key]
		}
		if ra == nil {
			ra = &routeAcc{method: r.Method, route: r.Route, first: r.StartNanos,
				hist: analysis.NewHistogram(DurationBounds, false)}
			if key == OtherRoutes {
				ra.method, ra.route = "", OtherRoutes
			}
			a.routes[key] = ra
		}
	}
	ra.all.add(d)
	ra.hist.Add(d)
	if r.GCPausedNanos > 0 {
		ra.hit.add(d)
	} else {
		ra.notHit.add(d)
	}
	ra.pausedNanos += r.GCPausedNanos
	ra.totalNano += d
	ra.first, ra.last = min(ra.first, r.StartNanos), max(ra.last, r.EndNanos)
	if a.opts.OnRequest != nil {
		a.opts.OnRequest(r)
	}
	if a.slow.Len() < a.opts.Slowest {
		heap.Push(&a.slow, *r)
		a.slowIDs[r.ID] = struct{}{}
	} else if d > a.slow[0].DurationNanos() {
		delete(a.slowIDs, a.slow[0].ID)
		a.slow[0] = *r
		heap.Fix(&a.slow, 0)
		a.slowIDs[r.ID] = struct{}{}
	}
}

// maxPauses bounds the GC pauses and the other suspensions kept for the
// requests open (each kind): a request open across more of them misses
// the oldest.
const maxPauses = 4096

// damage is GC gc's damage (nil: not kept), found from the newest: the GCs
// a request overlaps are recent, and a GC numbered above every one kept
// (the runtime numbers them in order) is new.
func (a *Analyzer) damage(gc uint32) *gcDamage {
	if gc > a.maxGC {
		return nil
	}
	for i := range a.gcs.Len() {
		if g := a.gcs.Back(i); g.GC == gc {
			return g
		}
	}
	return nil
}

// Stopped takes one runtime suspension (analysis.StoppedObserver).
func (a *Analyzer) Stopped(s *analysis.Stopped) {
	p := pause{gc: s.GC, begin: s.BeginNanos, end: s.EndNanos}
	if s.GC == 0 {
		a.susps.Push(p)
		return
	}
	a.pauses.Push(p)
	g := a.damage(s.GC)
	if g == nil {
		if a.gcs.Len() == a.gcs.Max {
			a.gcsDropped++
		}
		g = a.gcs.Push(gcDamage{GC: s.GC, BeginNanos: s.BeginNanos})
		a.maxGC = max(a.maxGC, s.GC)
	}
	g.PauseNanos += s.EndNanos - s.BeginNanos
}

// Wait takes one thread's wait (analysis.WaitObserver): it counts for the
// request that thread runs, clipped to the request's start.
func (a *Analyzer) Wait(w *analysis.Wait) {
	r := a.onThread[w.Thread]
	if r == nil {
		return
	}
	b := max(w.BeginNanos, r.StartNanos)
	d := w.EndNanos - b
	if d <= 0 {
		return
	}
	if w.Kind == analysis.WaitLock {
		r.LockWaitNanos += d
		r.addSegment(SegLockWait, 0, b, w.EndNanos)
	} else {
		r.BlockedNanos += d
		r.addSegment(SegBlocked, 0, b, w.EndNanos)
	}
}

// Finish completes the requests that stopped in a suspension that never
// ended, and counts the requests still open at the end of the stream.
// The oldest of them (at most Slowest) are kept for Result.Open.
func (a *Analyzer) Finish() {
	a.flush()
	a.openAtEnd = int64(len(a.open))
	a.openList = a.openList[:0]
	for _, r := range a.open {
		q := r.Request
		q.Route = Route(q.Path)
		a.openList = append(a.openList, q)
	}
	sort.Slice(a.openList, func(i, j int) bool { return a.openList[i].StartNanos < a.openList[j].StartNanos })
	if len(a.openList) > a.opts.Slowest {
		a.openList = a.openList[:a.opts.Slowest]
	}
}

// slowHeap is a min-heap of requests by duration.
type slowHeap []Request

func (h slowHeap) Len() int           { return len(h) }
func (h slowHeap) Less(i, j int) bool { return h[i].DurationNanos() < h[j].DurationNanos() }
func (h slowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *slowHeap) Push(x any)        { *h = append(*h, x.(Request)) }
func (h *slowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Frozen is how many requests GC gc's pause has frozen so far: those it
// hit that completed, and those open (or stopped while the runtime
// restarts) that started before its last stop ended. endNanos is that
// end where the analysis has not been handed the stop yet (a pause log
// line written as the GC ends). A live pause log reads it.
func (a *Analyzer) Frozen(gc uint32, endNanos int64) int64 {
	for i := range a.pauses.Len() {
		if p := a.pauses.Back(i); p.gc == gc {
			endNanos = max(endNanos, p.end)
			break
		}
	}
	var n int64
	if g := a.damage(gc); g != nil {
		n = g.InFlight
	}
	for _, r := range a.open {
		if r.StartNanos < endNanos {
			n++
		}
	}
	for _, r := range a.deferred {
		if r.StartNanos < endNanos {
			n++
		}
	}
	return n
}

// FrozenSeen is Frozen once request events came (false: none yet, or a
// nil analyzer): the pause log's requests_frozen.
func (a *Analyzer) FrozenSeen(gc uint32, endNanos int64) (int64, bool) {
	if a == nil || !a.Seen() {
		return 0, false
	}
	return a.Frozen(gc, endNanos), true
}

// Seen reports whether request events came.
func (a *Analyzer) Seen() bool { return a.kestrel || a.requests > 0 || len(a.open) > 0 }
