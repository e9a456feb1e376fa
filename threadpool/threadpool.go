package threadpool

import (
	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// Bounds that keep a long session's memory flat.
const (
	// maxTimeline is the number of one-second timeline rows kept (a day);
	// later seconds are counted, not kept.
	maxTimeline = 86400
	// maxAdjustments bounds the adjustments listed one by one.
	maxAdjustments = 100000
	// maxEpisodes bounds the starvation episodes listed.
	maxEpisodes = 10000
	// maxStacks bounds the distinct blocking stacks kept; later new
	// stacks are charged to the empty stack.
	maxStacks = 1 << 16
	// maxSampleGapNs caps the time one stack sample stands for (a thread
	// the sampler skipped for a while is not charged the whole gap).
	maxSampleGapNs = 100_000_000
	// firstSampleNs is what a thread's first sample stands for: the
	// sampler's default period.
	firstSampleNs = 1_000_000
	// counterSettleNs: the runtime writes one interval's counters as a
	// burst; the snapshot is taken once the burst is this old.
	counterSettleNs = 100_000_000
	// idleQuietNs: an injection for blocked threads starts an episode only
	// if no worker parked this recently (a parked worker means the pool
	// had more threads than it wanted: it was not starving).
	idleQuietNs = 100_000_000
	// minEpisodeNs: an episode shorter than this (queued work waited less)
	// is counted as brief, not listed.
	minEpisodeNs = 100_000_000
	// endGraceNs: an episode's end (a worker parked, the queue read 0) is
	// final only if the pool injects no thread for blocked threads within
	// this long; otherwise the episode goes on. Measured on .NET 10 (the
	// starve workload, 2 cores): workers park now and then in the middle
	// of a burst, and the next cooperative-blocking injection follows
	// 125–180 ms later.
	endGraceNs = 500_000_000
)

// Wait kinds.
const (
	KindWaitHandle = iota // WaitHandleWaitStart/Stop (.NET 9+)
	KindMonitor           // ContentionStart/Stop: waiting to enter a lock
	KindSample            // sampler stacks in blocking frames (the .NET 8 fallback)
	numKinds
)

// Options configure an Analyzer.
type Options struct {
	// Symbols names the blocking stacks (fed by the caller with the same
	// stream); nil leaves them as addresses, so no site is named.
	Symbols *stacks.Symbols
	// OnEpisode is called once a starvation episode has lasted 100 ms
	// (shorter ones are not starvation; from Event, on its goroutine),
	// with the episode as it stands: its end and totals are not known yet.
	OnEpisode func(Episode)
	// Counters are the runtime's counters (a counters.Analyzer): the
	// analysis reads the queue length, the thread count and the completed
	// work items from them. Nil: none (the pool's events alone).
	Counters analysis.Counters
	// FeedCounters: the analysis feeds Counters its events and counts
	// their Stats as its own; otherwise the caller feeds them with the same
	// stream before this analysis (a live view's, shared).
	FeedCounters bool
}

// Analyzer follows the pool. Create it with New, feed every event to
// Event, then call Result (at any time).
type Analyzer struct {
	hdr     *nettrace.Header
	sym     *stacks.Symbols
	onEp    func(Episode)
	ctr     analysis.Counters // nil: no counters
	ownCtr  bool              // ctr is fed and counted here
	ctrVals [len(counterNames)]analysis.CounterValue
	ctrSeen uint64 // ctr's events at the last look
	used    uint64
	st      analysis.Stats
	firstTS int64 // first event, ticks
	lastTS  int64 // last event before the rundown, ticks
	seenAny bool

	poolThreads map[uint64]struct{} // OS thread ids that raised worker events

	// Current state.
	threads    int // the pool's worker count (last event that told it)
	hasThreads bool
	// The last adjustment's target per family: hill climbing (and the
	// gate thread's starvation injections) moves one count, cooperative
	// blocking another.
	target     [2]int
	hasTarget  [2]bool
	queue      float64
	hasQueue   bool
	prevQueue  float64
	prevQTS    int64 // ns of the previous queue sample
	lastIdleNs int64 // last ThreadPoolWorkerThreadWait (a worker parked), ns
	hasIdle    bool
	throughput float64

	minMax       clrevents.ThreadPoolMinMaxThreads
	hasMinMax    bool
	threadsMax   int
	queueMax     float64
	workerStarts int
	workerStops  int
	workerWaits  int
	samples      int // AdjustmentSample events
	stats        int // AdjustmentStats events

	adjustments     []Adjustment
	droppedAdjust   int
	injections      int
	injectByReason  map[clrevents.AdjustmentReason]int
	episodes        []Episode
	open            *Episode // the last of episodes while it lasts
	droppedEpisodes int
	briefEpisodes   int
	announced       bool // the open episode was counted in confirmed
	// The open episode's tentative end (endGraceNs).
	hasPendingEnd  bool
	pendingEnd     int64
	pendingThreads int
	pendingWhy     string
	confirmed      int // episodes that lasted minEpisodeNs

	timeline        []Point
	droppedTimeline int

	ctrDirty   bool
	ctrLastNs  int64
	hasCounter bool
	completed  float64 // completed items per second (counters)
	hasCompl   bool

	// Blocking waits.
	openWaits [numKinds - 1]map[uint64]openWait // per kind (not samples), by thread
	aggs      map[aggKey]agg
	stk       stacks.Table     // [0] is the empty stack
	lastSamp  map[uint64]int64 // thread → last sample, ticks
	waitsSeen [numKinds]int
	unpaired  int
	// poolBlockedNs sums the waits (not samples) of threads known as pool
	// workers when they waited: Totals' cheap figure.
	poolBlockedNs int64
}

type openWait struct {
	ts    int64
	stack int32
	pool  bool
}

type aggKey struct {
	stack int32
	kind  uint8
	pool  bool // the thread had raised thread-pool worker events
}

type agg struct {
	count int64
	ns    int64
}

// New returns an analyzer for a stream with header hdr.
func New(hdr *nettrace.Header, opts Options) *Analyzer {
	a := &Analyzer{
		hdr:            hdr,
		sym:            opts.Symbols,
		onEp:           opts.OnEpisode,
		ctr:            opts.Counters,
		ownCtr:         opts.Counters != nil && opts.FeedCounters,
		poolThreads:    make(map[uint64]struct{}),
		injectByReason: make(map[clrevents.AdjustmentReason]int),
		aggs:           make(map[aggKey]agg),
		lastSamp:       make(map[uint64]int64),
	}
	a.stk.Reserve() // the empty stack
	for i := range a.openWaits {
		a.openWaits[i] = make(map[uint64]openWait)
	}
	return a
}

// Stats implements analysis.Analyzer.
func (a *Analyzer) Stats() analysis.Stats {
	st := a.st
	st.Events = a.used
	if a.ownCtr {
		st.Add(a.ctr.Stats())
	}
	return st
}

func (a *Analyzer) ptrSize() int {
	if a.hdr.PointerSize == 4 {
		return 4
	}
	return 8
}

// Event feeds one event.
func (a *Analyzer) Event(ev *nettrace.Event) {
	m := ev.Meta
	if m.Runtime != nettrace.Rundown && m.Runtime != nettrace.EventPipe {
		if !a.seenAny {
			a.seenAny, a.firstTS = true, ev.Timestamp
		}
		if ev.Timestamp > a.lastTS {
			a.lastTS = ev.Timestamp
		}
	}
	if a.ctrDirty && a.ns(ev.Timestamp)-a.ctrLastNs > counterSettleNs {
		a.counterSnapshot()
	}
	if a.open != nil {
		ns := a.ns(ev.Timestamp)
		if a.hasPendingEnd && ns-a.pendingEnd > endGraceNs {
			a.closeEpisode(a.pendingEnd, a.pendingWhy)
		} else if !a.announced && ns-a.open.StartNs >= minEpisodeNs && !a.hasPendingEnd {
			a.announce()
		}
	}
	switch m.Runtime {
	case nettrace.NotRuntime:
		if a.ctr == nil {
			break
		}
		if a.ownCtr {
			a.ctr.Event(ev)
		}
		if n := a.ctr.Stats().Events; n != a.ctrSeen {
			a.ctrSeen = n
			a.ctrDirty, a.ctrLastNs = true, a.ns(ev.Timestamp)
		}
	case nettrace.SampleProfiler:
		if m.EventID == clrevents.IDThreadSample {
			a.sample(ev)
		}
	case nettrace.Runtime:
		a.runtime(ev)
	}
}

func (a *Analyzer) runtime(ev *nettrace.Event) {
	m := ev.Meta
	ps := a.ptrSize()
	switch m.EventID {
	case clrevents.IDThreadPoolWorkerThreadStart, clrevents.IDThreadPoolWorkerThreadStop, clrevents.IDThreadPoolWorkerThreadWait:
		e, err := clrevents.DecodeThreadPoolWorker(ev.Payload, m.Version, ps)
		if a.st.Failed(err) {
			return
		}
		a.used++
		a.poolThreads[ev.ThreadID] = struct{}{}
		switch m.EventID {
		case clrevents.IDThreadPoolWorkerThreadStart:
			a.workerStarts++
		case clrevents.IDThreadPoolWorkerThreadStop:
			a.workerStops++
			delete(a.poolThreads, ev.ThreadID)
		default:
			a.workerWaits++
			ns := a.ns(ev.Timestamp)
			a.lastIdleNs, a.hasIdle = ns, true
			a.tentativeEnd(ns, "a worker parked (more threads than the pool's target)")
		}
		a.setThreads(int(e.ActiveWorkerThreadCount), ev.Timestamp)
	case clrevents.IDThreadPoolAdjustmentSample:
		e, err := clrevents.DecodeThreadPoolAdjustmentSample(ev.Payload, m.Version, ps)
		if a.st.Failed(err) {
			return
		}
		a.used++
		a.samples++
		a.throughput = e.Throughput
		a.point(ev.Timestamp).Throughput = e.Throughput
	case clrevents.IDThreadPoolAdjustmentAdjustment:
		e, err := clrevents.DecodeThreadPoolAdjustment(ev.Payload, m.Version, ps)
		if a.st.Failed(err) {
			return
		}
		a.used++
		a.adjust(ev.Timestamp, e)
	case clrevents.IDThreadPoolAdjustmentStats:
		if _, err := clrevents.DecodeThreadPoolAdjustmentStats(ev.Payload, m.Version, ps); a.st.Failed(err) {
			return
		}
		a.used++
		a.stats++
	case clrevents.IDThreadPoolMinMaxThreads:
		e, err := clrevents.DecodeThreadPoolMinMaxThreads(ev.Payload, m.Version, ps)
		if a.st.Failed(err) {
			return
		}
		a.used++
		a.minMax, a.hasMinMax = e, true
	case clrevents.IDWaitHandleWaitStart:
		if _, err := clrevents.DecodeWaitHandleWaitStart(ev.Payload, m.Version, ps); a.st.Failed(err) {
			return
		}
		a.used++
		a.waitStart(KindWaitHandle, ev)
	case clrevents.IDWaitHandleWaitStop:
		if _, err := clrevents.DecodeWaitHandleWaitStop(ev.Payload, m.Version, ps); a.st.Failed(err) {
			return
		}
		a.used++
		a.waitStop(KindWaitHandle, ev, -1)
	case clrevents.IDContentionStart:
		if _, err := clrevents.DecodeContentionStart(ev.Payload, m.Version, ps); a.st.Failed(err) {
			return
		}
		a.used++
		a.waitStart(KindMonitor, ev)
	case clrevents.IDContentionStop:
		e, err := clrevents.DecodeContentionStop(ev.Payload, m.Version, ps)
		if a.st.Failed(err) {
			return
		}
		a.used++
		d := int64(-1)
		if e.HasDuration {
			d = int64(e.DurationNs)
		}
		a.waitStop(KindMonitor, ev, d)
	}
}

func (a *Analyzer) ns(ts int64) int64 { return a.hdr.DurationNanos(ts - a.firstTS) }

// setThreads records the pool's worker count at ts.
func (a *Analyzer) setThreads(n int, ts int64) {
	a.threads, a.hasThreads = n, true
	if n > a.threadsMax {
		a.threadsMax = n
	}
	if a.open != nil && n > a.open.ThreadsMax {
		a.open.ThreadsMax = n
	}
	p := a.point(ts)
	if n > p.Threads {
		p.Threads = n
	}
}

func (a *Analyzer) adjust(ts int64, e clrevents.ThreadPoolAdjustment) {
	fam := 0
	if e.Reason == clrevents.AdjustCooperativeBlocking {
		fam = 1
	}
	from := a.target[fam]
	if !a.hasTarget[fam] {
		from = a.threads
	}
	to := int(e.NewWorkerThreadCount)
	a.target[fam], a.hasTarget[fam] = to, true
	ns := a.ns(ts)
	inject := to > from
	if inject {
		a.injections++
		a.injectByReason[e.Reason]++
		a.point(ts).Injections++
		blocked := e.Reason == clrevents.AdjustStarvation || e.Reason == clrevents.AdjustCooperativeBlocking
		if blocked && a.open != nil {
			a.hasPendingEnd = false // still starving: the end was not one
		}
		if blocked && a.open == nil && (!a.hasIdle || ns-a.lastIdleNs > idleQuietNs) {
			a.openEpisode(ns, ts, a.threads, e.Reason.String()+" injection")
		}
		if a.open != nil {
			a.open.Injections++
		}
	}
	if len(a.adjustments) >= maxAdjustments {
		a.droppedAdjust++
		return
	}
	a.adjustments = append(a.adjustments, Adjustment{AtNs: ns, From: from, To: to, Reason: e.Reason.String(),
		Code: uint32(e.Reason), AverageThroughput: e.AverageThroughput})
}

func (a *Analyzer) openEpisode(ns, ts int64, before int, why string) {
	if len(a.episodes) >= maxEpisodes {
		a.droppedEpisodes++
		return
	}
	a.episodes = append(a.episodes, Episode{StartNs: ns, ThreadsBefore: before, ThreadsMax: max(before, a.threads), Trigger: why})
	a.open = &a.episodes[len(a.episodes)-1]
	if a.hasQueue {
		a.open.QueueMax = a.queue
	}
	_ = ts
	a.announced = false
}

// announce counts the open episode once it has lasted minEpisodeNs (or
// ended after that long) and tells OnEpisode.
func (a *Analyzer) announce() {
	a.announced = true
	a.confirmed++
	if a.onEp != nil {
		a.onEp(*a.open)
	}
}

// tentativeEnd marks the open episode's end, final after endGraceNs
// without an injection for blocked threads.
func (a *Analyzer) tentativeEnd(ns int64, why string) {
	if a.open == nil {
		return
	}
	if !a.hasPendingEnd {
		a.hasPendingEnd, a.pendingEnd, a.pendingThreads, a.pendingWhy = true, ns, a.threads, why
	}
	// With WaitHandle events in the stream (.NET 9+: every Task.Wait,
	// Monitor.Wait, WaitOne), a pool with no thread blocked now has
	// recovered: the end is final without the grace. Lock contention alone
	// (.NET 8) does not see a thread blocked in Task.Wait.
	if a.waitsSeen[KindWaitHandle] > 0 && a.poolBlockedNow() == 0 {
		a.closeEpisode(a.pendingEnd, a.pendingWhy)
	}
}

// poolBlockedNow counts the pool threads in a wait now (a few dozen
// entries at most; called when a worker parks).
func (a *Analyzer) poolBlockedNow() int {
	n := 0
	for _, m := range a.openWaits {
		for tid, w := range m {
			if w.pool || a.isPool(tid) {
				n++
			}
		}
	}
	return n
}

func (a *Analyzer) closeEpisode(ns int64, why string) {
	a.hasPendingEnd = false
	if !a.announced && ns-a.open.StartNs >= minEpisodeNs {
		a.announce()
	}
	e := a.open
	a.open = nil
	if ns-e.StartNs < minEpisodeNs {
		a.episodes = a.episodes[:len(a.episodes)-1]
		a.briefEpisodes++
		return
	}
	e.EndNs, e.Ended, e.EndedBy = ns, true, why
	e.ThreadsAfter = a.pendingThreads
}

// point is the timeline row of the second ts falls in.
func (a *Analyzer) point(ts int64) *Point {
	sec := int(a.ns(ts) / 1e9)
	if sec < 0 {
		sec = 0
	}
	if sec >= maxTimeline {
		a.droppedTimeline++
		var scratch Point
		return &scratch
	}
	for len(a.timeline) <= sec {
		p := Point{Second: len(a.timeline), Threads: a.threads, Queue: -1, Throughput: -1, Completed: -1}
		if !a.hasThreads {
			p.Threads = -1
		}
		a.timeline = append(a.timeline, p)
	}
	return &a.timeline[sec]
}

// counterSnapshot reads the counters once an interval's burst is over.
func (a *Analyzer) counterSnapshot() {
	a.ctrDirty = false
	v := &a.ctrVals
	a.ctr.Read(counterNames[:], v[:])
	ts := a.lastTS
	if q := v[ctrQueue]; q.OK {
		a.hasCounter = true
		a.queueSample(q.Value, a.ctrLastNs, ts)
	}
	if c := v[ctrThreads]; c.OK {
		n := c.Value
		a.hasCounter = true
		if int(n) > a.threadsMax {
			a.threadsMax = int(n)
		}
		if !a.hasThreads || a.workerStarts+a.workerWaits+a.workerStops == 0 {
			a.setThreads(int(n), ts)
		}
	}
	if m := v[ctrCompleted]; m.OK && m.HasRate {
		a.completed, a.hasCompl = m.Rate, true
		a.point(ts).Completed = m.Rate
	}
}

// The counters the analysis reads (counterSnapshot).
var counterNames = [...]string{ctrQueue: "dotnet.thread_pool.queue.length", ctrThreads: "dotnet.thread_pool.thread.count", ctrCompleted: "dotnet.thread_pool.work_item.count"}

const (
	ctrQueue = iota
	ctrThreads
	ctrCompleted
)

func (a *Analyzer) queueSample(q float64, ns, ts int64) {
	growing := a.hasQueue && q > a.prevQueue && a.prevQueue > 0 && (!a.hasIdle || a.lastIdleNs < a.prevQTS)
	a.prevQueue, a.prevQTS = q, ns
	a.queue, a.hasQueue = q, true
	if q > a.queueMax {
		a.queueMax = q
	}
	p := a.point(ts)
	if q > p.Queue {
		p.Queue = q
	}
	if a.open != nil {
		if q > a.open.QueueMax {
			a.open.QueueMax = q
		}
		if q == 0 {
			a.tentativeEnd(ns, "the queue emptied")
		}
		return
	}
	if growing {
		a.openEpisode(ns, ts, a.threads, "the queue grew while no worker parked")
	}
}

// intern keeps one copy of each distinct stack; 0 is the empty stack.
func (a *Analyzer) intern(stack []uint64, ts int64) int32 {
	if len(stack) == 0 {
		return 0
	}
	id, _ := a.stk.Intern(stack, ts, maxStacks) // 0 past the bound
	return id
}

func (a *Analyzer) isPool(tid uint64) bool {
	_, ok := a.poolThreads[tid]
	return ok
}

func (a *Analyzer) waitStart(kind int, ev *nettrace.Event) {
	m := a.openWaits[kind]
	if _, ok := m[ev.ThreadID]; ok {
		a.unpaired++ // the earlier start's stop was lost
	}
	m[ev.ThreadID] = openWait{ts: ev.Timestamp, stack: a.intern(ev.Stack, ev.Timestamp), pool: a.isPool(ev.ThreadID)}
}

// waitStop closes the thread's open wait; d < 0: measure it from the
// timestamps.
func (a *Analyzer) waitStop(kind int, ev *nettrace.Event, d int64) {
	m := a.openWaits[kind]
	w, ok := m[ev.ThreadID]
	if !ok {
		return // began before the session
	}
	delete(m, ev.ThreadID)
	if d < 0 {
		d = max(a.hdr.DurationNanos(ev.Timestamp-w.ts), 0)
	}
	a.charge(aggKey{stack: w.stack, kind: uint8(kind), pool: w.pool || a.isPool(ev.ThreadID)}, d)
}

func (a *Analyzer) charge(k aggKey, d int64) {
	if k.pool && k.kind != KindSample {
		a.poolBlockedNs += d
	}
	g := a.aggs[k]
	g.count++
	g.ns += d
	a.aggs[k] = g
	a.waitsSeen[k.kind]++
}

// sample charges a stack sample with the time since the thread's last
// one; whether it shows a blocked thread is decided on its stack when the
// Result is made.
func (a *Analyzer) sample(ev *nettrace.Event) {
	if len(ev.Stack) == 0 {
		return
	}
	a.used++
	d := int64(firstSampleNs)
	if last, ok := a.lastSamp[ev.ThreadID]; ok {
		d = min(a.hdr.DurationNanos(ev.Timestamp-last), maxSampleGapNs)
	}
	a.lastSamp[ev.ThreadID] = ev.Timestamp
	a.charge(aggKey{stack: a.intern(ev.Stack, ev.Timestamp), kind: KindSample, pool: a.isPool(ev.ThreadID)}, d)
}

// Totals are the running figures a live view shows, cheap to take (no
// stack is named, nothing is copied).
type Totals struct {
	Threads    int     // the pool's worker count now (-1: unknown)
	ThreadsMax int     // the most it had
	Queue      float64 // the queue-length counter's last value (-1: none)
	// Injections counts the injections per reason (AdjustmentReason as
	// index; reasons past the manifest's are not counted here).
	Injections [AdjustmentReasonCount]int
	Episodes   int  // starvation episodes that lasted 100 ms (the open one too, once it has)
	Starving   bool // an episode is open
	// StarvingSinceNs is when the open episode began (ns since the first
	// event).
	StarvingSinceNs int64
	// BlockedNs sums the finished waits (WaitHandle, lock contention) of
	// threads known as pool workers (they had raised worker events).
	BlockedNs int64
}

// AdjustmentReasonCount is the number of adjustment reasons the manifest
// defines.
const AdjustmentReasonCount = 9

// Totals returns the running figures.
func (a *Analyzer) Totals() Totals {
	t := Totals{Threads: -1, ThreadsMax: a.threadsMax, Queue: -1, BlockedNs: a.poolBlockedNs,
		Episodes: a.confirmed}
	if a.hasThreads {
		t.Threads = a.threads
	}
	if a.hasQueue {
		t.Queue = a.queue
	}
	for r, n := range a.injectByReason {
		if int(r) < AdjustmentReasonCount {
			t.Injections[r] = n
		}
	}
	if a.open != nil && a.announced {
		t.Starving, t.StarvingSinceNs = true, a.open.StartNs
	}
	return t
}

// FirstNanos is the stream time of the first event (ns since the session
// start, nettrace.Header.Nanos): the Result's times count from it.
func (a *Analyzer) FirstNanos() int64 { return a.hdr.Nanos(a.firstTS) }

// Wants reports whether the analysis reads events of m: the pool's worker
// and adjustment events, blocking waits (WaitHandleWait, Contention), the
// sample profiler's samples and the counters' EventSource events (every
// event of a provider that is not the runtime's). Sessions derive their
// runtime keywords from it (clrevents.ProvidersFor).
func Wants(m *nettrace.Metadata) bool {
	switch m.Runtime {
	case nettrace.NotRuntime:
		return true
	case nettrace.SampleProfiler:
		return m.EventID == clrevents.IDThreadSample
	case nettrace.Runtime:
		switch m.EventID {
		case clrevents.IDThreadPoolWorkerThreadStart, clrevents.IDThreadPoolWorkerThreadStop, clrevents.IDThreadPoolWorkerThreadWait,
			clrevents.IDThreadPoolAdjustmentSample, clrevents.IDThreadPoolAdjustmentAdjustment, clrevents.IDThreadPoolAdjustmentStats,
			clrevents.IDThreadPoolMinMaxThreads, clrevents.IDWaitHandleWaitStart, clrevents.IDWaitHandleWaitStop,
			clrevents.IDContentionStart, clrevents.IDContentionStop:
			return true
		}
	}
	return false
}

// WantsWaits reports whether m is one of the blocking waits the analysis
// reads: WaitHandleWaitStart/Stop (.NET 9+) and ContentionStart/Stop.
func WantsWaits(m *nettrace.Metadata) bool {
	if m.Runtime != nettrace.Runtime {
		return false
	}
	switch m.EventID {
	case clrevents.IDWaitHandleWaitStart, clrevents.IDWaitHandleWaitStop, clrevents.IDContentionStart, clrevents.IDContentionStop:
		return true
	}
	return false
}
