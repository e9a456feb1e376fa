package locks

import (
	"math"
	"sort"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// HistogramBounds are the upper bounds (exclusive, nanoseconds) of each
// lock's wait histogram's buckets; a last bucket holds everything longer.
var HistogramBounds = []int64{10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000}

// WaitBounds are the bounds of the stream's wait histogram
// (Summary.WaitHistogram, exported to Prometheus and OTLP): 1-2-5 steps
// from 10 µs to 10 s.
var WaitBounds = analysis.Steps125(10_000, 10_000_000_000)

// HistogramLabels names the buckets of HistogramBounds plus the overflow.
var HistogramLabels = []string{"<10µs", "<100µs", "<1ms", "<10ms", "<100ms", "<1s", ">=1s"}

// maxObjects bounds the object-address map fed by allocation events, so a
// long session with allocation events on holds flat memory: the most recent
// 262,144 sampled allocations are kept (AllocationTick samples one per
// ~100 KB allocated, so ~25 GB of allocation history); a lock whose object
// was allocated before them is shown without its type.
const maxObjects = 1 << 18

// TopStacks is how many waiting stacks and owners a lock lists.
const TopStacks = 5

// Analyzer accumulates contention state. Create it with New, feed every
// event with Add, then call Result.
type Analyzer struct {
	hdr     *nettrace.Header
	ptrSize int
	sym     *stacks.Symbols
	used    uint64
	onWait  func(*analysis.Wait)

	open    map[uint64]pending  // by waiting OS thread id (values: no allocation per wait)
	locks   map[uint64]*lockAcc // by lock id (0: the runtime did not say)
	threads map[uint64]*threadAcc
	// samples holds the sums inline: no pointers for the collector to
	// walk, no object per triple (a quarter of a million here is common).
	samples map[sampleKey]sampleSum

	lockObject map[uint64]uint64     // lock id → object, from LockCreated / Start v2
	lockType   map[uint64]objectInfo // lock id → the object's type, once known
	typeNames  map[uint64]string     // type id → name
	objects    *addrMap              // object address → the type id of its last sampled allocation (the most recent maxObjects)
	allocNames map[uint64]string     // type id → the name allocation events gave it

	threadObj *fifoMap[uint64, clrevents.Thread] // Thread* → thread
	managed   *fifoMap[uint32, uint32]           // managed thread id → OS thread id
	osManaged *fifoMap[uint64, uint32]           // OS thread id → managed thread id
	osThreads *fifoMap[uint64, bool]             // OS thread ids seen in the stream

	maxThreads    int
	noSamples     bool
	foldedWaits   int64 // waits of threads past maxThreads
	foldedTriples int64 // waits whose (stack, lock, thread) sample was past maxSamples

	maxLocks, maxStacks int
	waitHist            analysis.Histogram // every completed wait
	noObjectTypes       bool
	objectTypes         func([]uint64) (map[uint64]string, string)
	foldedLockWaits     int64 // waits on locks past maxLocks
	otherStack          int   // the "[other stacks]" stack's index (0: none yet)

	stk stacks.Table // [0] is the empty stack

	lastTS         int64
	lastTID        uint64
	seen           seenThreads
	decodeErrors   int
	firstErr       error
	stopsNoStart   int
	stopsNoStartNs int64
	lostStarts     int // a second Start on a thread whose first never stopped
	lockCreated    int
	hasV2          bool
	anyStart       bool
}

type pending struct {
	ts     int64
	lock   uint64
	object uint64
	owner  uint64
	stack  int
	hasV2  bool
}

type sampleSum struct{ contentions, delayNs int64 }

type sampleKey struct {
	lock   uint64
	thread uint64
	stack  int32
}

// Sample is one aggregated contention sample: waits with the same stack,
// lock and thread. It is what a pprof contention profile holds.
type Sample struct {
	Stack       int // index into Result.Stacks
	LockID      uint64
	Thread      uint64 // waiting OS thread id
	Contentions int64
	DelayNs     int64
}

type lockAcc struct {
	id      uint64
	count   int64
	totalNs int64
	maxNs   int64
	hist    analysis.Histogram
	stacks  map[int]*agg
	owners  map[uint64]*agg
}

type agg struct {
	count   int64
	totalNs int64
}

type threadAcc struct {
	count   int64
	totalNs int64
	maxNs   int64
}

// Options configure an Analyzer.
type Options struct {
	// Symbols names the waiting stacks (the profiler's symbol table, fed
	// by the caller with the same stream); nil leaves them as addresses.
	Symbols *stacks.Symbols
	// MaxThreads bounds the waiting threads kept apart (0:
	// DefaultMaxThreads); later ones share an "[other threads]" entry.
	MaxThreads int
	// NoSamples keeps no (stack, lock, thread) samples: Result.Samples,
	// what a pprof contention profile is made of, stays empty. For callers
	// that show locks, their stacks, owners and threads only (a report
	// page: a quarter of a million triples cost it ~25 MB).
	NoSamples bool
	// MaxLocks bounds the locks kept apart (0: no bound); waits on later
	// locks share one "[other locks]" entry (FoldedLockID). MaxStacks
	// bounds the distinct waiting stacks (0: no bound); later stacks share
	// one "[other stacks]" stack. A live view that runs for days sets both.
	MaxLocks, MaxStacks int
	// NoObjectTypes ignores allocation and type events: locks are not
	// matched to their object's type, and the object table (the
	// analyzer's largest, 1<<18 addresses) stays empty. For live views.
	NoObjectTypes bool
	// ObjectTypes, when set, names lock objects the stream did not (a
	// live target's memory: cdac.Namer.Names), with why the others are
	// not; Result calls it with those objects.
	ObjectTypes func(objs []uint64) (map[uint64]string, string)
	// OnWait is handed every paired contention (ContentionStart to its
	// ContentionStop on one thread) when it ends, as the analysis.Wait
	// other analyses observe (analysis.WaitObserver). Valid during the
	// call only.
	OnWait func(*analysis.Wait)
}

// New returns an analyzer for a stream with header hdr (for the clock and
// the pointer size).
func New(hdr *nettrace.Header, opts Options) *Analyzer {
	ps := hdr.PointerSize
	if ps != 4 {
		ps = 8
	}
	if opts.MaxThreads <= 0 {
		opts.MaxThreads = DefaultMaxThreads
	}
	return &Analyzer{
		hdr:           hdr,
		sym:           opts.Symbols,
		ptrSize:       ps,
		open:          make(map[uint64]pending),
		locks:         make(map[uint64]*lockAcc),
		threads:       make(map[uint64]*threadAcc),
		samples:       make(map[sampleKey]sampleSum),
		lockObject:    make(map[uint64]uint64),
		lockType:      make(map[uint64]objectInfo),
		typeNames:     make(map[uint64]string),
		objects:       newAddrMap(maxObjects),
		allocNames:    make(map[uint64]string),
		threadObj:     newFIFOMap[uint64, clrevents.Thread](maxThreadFacts),
		managed:       newFIFOMap[uint32, uint32](maxThreadFacts),
		osManaged:     newFIFOMap[uint64, uint32](maxThreadFacts),
		osThreads:     newFIFOMap[uint64, bool](maxThreadFacts),
		maxThreads:    opts.MaxThreads,
		noSamples:     opts.NoSamples,
		maxLocks:      opts.MaxLocks,
		maxStacks:     opts.MaxStacks,
		waitHist:      analysis.NewHistogram(WaitBounds, false),
		noObjectTypes: opts.NoObjectTypes,
		objectTypes:   opts.ObjectTypes,
		onWait:        opts.OnWait,
	}
}

// Len is how many locks and distinct waiting stacks the analyzer holds
// (for tests of its bounds).
func (a *Analyzer) Len() (locks, stacks int) { return len(a.locks), len(a.stk.Stacks) }

// Stats implements analysis.Analyzer.
func (a *Analyzer) Stats() analysis.Stats {
	st := analysis.Stats{Events: a.used, DecodeErrors: uint64(a.decodeErrors), FirstError: a.firstErr}
	return st
}

// Event feeds one event. Events the analysis does not use are ignored; a
// payload that does not decode is counted (Stats, Result.DecodeErrors) and
// skipped.
func (a *Analyzer) Event(ev *nettrace.Event) {
	m := ev.Meta
	// The rundown (and the EventPipe provider's process info) come after the
	// session stopped: a wait still open then is known to last only until
	// the last event before them.
	if ev.Timestamp > a.lastTS && m.Runtime != nettrace.Rundown && m.Runtime != nettrace.EventPipe {
		a.lastTS = ev.Timestamp
	}
	// Every thread that wrote an event is a known OS thread id, so an owner
	// that never waited itself can still be recognised as one.
	if ev.ThreadID != a.lastTID {
		a.lastTID = ev.ThreadID
		a.sawThread(ev.ThreadID)
	}
	switch m.Runtime {
	case nettrace.Runtime:
		switch m.EventID {
		case clrevents.IDContentionStart, clrevents.IDContentionStop, clrevents.IDContentionLockCreated, clrevents.IDThreadCreated,
			clrevents.IDBulkType, clrevents.IDGCAllocationTick, clrevents.IDAllocationSampled,
			clrevents.IDGCSampledObjectAllocHigh, clrevents.IDGCSampledObjectAllocLow:
			a.used++
		}
		switch m.EventID {
		case clrevents.IDContentionStart:
			a.start(ev)
		case clrevents.IDContentionStop:
			a.stop(ev)
		case clrevents.IDContentionLockCreated:
			e, err := clrevents.DecodeContentionLockCreated(ev.Payload, m.Version, a.ptrSize)
			if a.check(err) {
				a.lockCreated++
				a.setObject(e.LockID, e.AssociatedObjectID)
			}
		case clrevents.IDThreadCreated:
			a.thread(ev)
		case clrevents.IDBulkType, clrevents.IDGCAllocationTick, clrevents.IDAllocationSampled,
			clrevents.IDGCSampledObjectAllocHigh, clrevents.IDGCSampledObjectAllocLow:
			if !a.noObjectTypes {
				a.objectEvent(ev)
			}
		}
	case nettrace.Rundown:
		if m.EventID == clrevents.IDRundownThreadDC {
			a.used++
			a.thread(ev)
		}
	}
}

// objectEvent records what allocation and type events say of objects and
// type names, to name a lock's object type.
func (a *Analyzer) objectEvent(ev *nettrace.Event) {
	m := ev.Meta
	switch m.EventID {
	case clrevents.IDBulkType:
		e, err := clrevents.DecodeBulkType(ev.Payload, m.Version, a.ptrSize)
		if a.check(err) {
			for _, t := range e.Types {
				// Without GCHeapAndTypeNames the runtime sends empty
				// names: they must not erase a name already known.
				if t.Name != "" || a.typeNames[t.TypeID] == "" {
					a.typeNames[t.TypeID] = t.Name
				}
			}
		}
	case clrevents.IDGCAllocationTick:
		e, name, err := clrevents.DecodeAllocationTickRaw(ev.Payload, m.Version, a.ptrSize)
		if a.check(err) && e.HasType && e.HasAddress {
			a.allocated(e.Address, e.TypeID, name)
		}
	case clrevents.IDAllocationSampled:
		e, name, err := clrevents.DecodeAllocationSampledRaw(ev.Payload, m.Version, a.ptrSize)
		if a.check(err) {
			a.allocated(e.Address, e.TypeID, name)
		}
	case clrevents.IDGCSampledObjectAllocHigh, clrevents.IDGCSampledObjectAllocLow:
		e, err := clrevents.DecodeSampledObjectAllocation(ev.Payload, m.Version, a.ptrSize)
		if a.check(err) {
			a.allocated(e.Address, e.TypeID, nil)
		}
	}
}

// Release lets go of the analysis' state once its last Result was made
// (only Stats still answers): a caller that builds more from the result,
// such as a report page, does so without it.
func (a *Analyzer) Release() {
	a.open, a.locks, a.threads, a.samples = nil, nil, nil, nil
	a.lockObject, a.lockType, a.typeNames, a.objects, a.allocNames = nil, nil, nil, nil, nil
	a.threadObj, a.managed, a.osManaged, a.osThreads = nil, nil, nil, nil
	a.stk = stacks.Table{}
}

func (a *Analyzer) check(err error) bool {
	if err != nil {
		a.decodeErrors++
		if a.firstErr == nil {
			a.firstErr = err
		}
		return false
	}
	return true
}

func (a *Analyzer) thread(ev *nettrace.Event) {
	e, err := clrevents.DecodeThreadCreated(ev.Payload, ev.Meta.Version, a.ptrSize)
	if !a.check(err) {
		return
	}
	a.threadObj.set(e.ThreadObject, e)
	if e.OSThreadID != 0 {
		a.osThreads.set(uint64(e.OSThreadID), true)
		a.managed.set(e.ManagedID, e.OSThreadID)
		a.osManaged.set(uint64(e.OSThreadID), e.ManagedID)
	}
}

func (a *Analyzer) start(ev *nettrace.Event) {
	e, err := clrevents.DecodeContentionStart(ev.Payload, ev.Meta.Version, a.ptrSize)
	if !a.check(err) {
		return
	}
	a.anyStart = true
	a.osThreads.set(ev.ThreadID, true)
	if _, ok := a.open[ev.ThreadID]; ok {
		// A thread waits for one lock at a time: the earlier start's stop
		// was lost.
		a.lostStarts++
	}
	p := pending{ts: ev.Timestamp, stack: a.intern(ev.Stack, ev.Timestamp)}
	if e.HasLock {
		a.hasV2 = true
		p.hasV2 = true
		p.lock = e.LockID
		p.object = e.AssociatedObjectID
		p.owner = e.LockOwnerThreadID
		if e.AssociatedObjectID != 0 {
			a.setObject(e.LockID, e.AssociatedObjectID)
		}
	}
	a.open[ev.ThreadID] = p
}

func (a *Analyzer) stop(ev *nettrace.Event) {
	e, err := clrevents.DecodeContentionStop(ev.Payload, ev.Meta.Version, a.ptrSize)
	if !a.check(err) {
		return
	}
	a.osThreads.set(ev.ThreadID, true)
	p, ok := a.open[ev.ThreadID]
	var d int64
	if e.HasDuration {
		d = int64(math.Round(e.DurationNs))
	}
	if !ok {
		// The wait began before the session did.
		a.stopsNoStart++
		a.stopsNoStartNs += d
		return
	}
	delete(a.open, ev.ThreadID)
	if !e.HasDuration {
		d = a.hdr.DurationNanos(ev.Timestamp - p.ts)
		if d < 0 {
			d = 0
		}
	}
	a.record(ev.ThreadID, &p, d)
	if a.onWait != nil {
		begin := a.hdr.Nanos(p.ts)
		a.onWait(&analysis.Wait{Thread: ev.ThreadID, Kind: analysis.WaitLock, Object: p.lock, Owner: p.owner,
			BeginNanos: begin, EndNanos: begin + d})
	}
}

// setObject records the object a lock belongs to and, while the lock's type
// is unknown, looks the object up among the allocations seen so far. The
// lookup happens now, at the address the object has now: a compacting GC
// may move it later and another object may take the address.
func (a *Analyzer) setObject(lock, obj uint64) {
	prev, had := a.lockObject[lock]
	a.lockObject[lock] = obj
	if _, ok := a.lockType[lock]; ok {
		return
	}
	if t, ok := a.objects.get(obj); ok {
		a.lockType[lock] = objectInfo{typeID: t, name: a.allocNames[t]}
		return
	}
	if a.objectTypes != nil && obj != 0 && (!had || prev != obj) {
		// The target's memory, while the object is still where the event
		// says (and the process still runs: a launched one may be gone
		// by the Result). Once per lock and address, not per event.
		if names, _ := a.objectTypes([]uint64{obj}); names[obj] != "" {
			a.lockType[lock] = objectInfo{name: names[obj]}
		}
	}
}

// objectInfo is the type of an allocated object: a name when the event
// gave one, else the type id for BulkType to name.
type objectInfo struct {
	typeID uint64
	name   string
}

// allocated records an object allocation event; the latest allocation at
// an address replaces older ones (the earlier object died or moved). name
// is the event's UTF-16 type name (nil when it has none): a type id names
// one type, so the name is decoded once per type, not per event, and
// objects hold only the type id.
func (a *Analyzer) allocated(addr, typeID uint64, name []byte) {
	if len(name) > 2 && len(a.allocNames) < maxObjects {
		if _, ok := a.allocNames[typeID]; !ok {
			a.allocNames[typeID], _, _ = nettrace.DecodeUTF16Z(name)
		}
	}
	a.objects.set(addr, typeID)
}

func (a *Analyzer) lock(id uint64) *lockAcc {
	l := a.locks[id]
	if l == nil && a.maxLocks > 0 && len(a.locks) >= a.maxLocks {
		a.foldedLockWaits++
		id = FoldedLockID
		l = a.locks[id]
	}
	if l == nil {
		l = &lockAcc{id: id, hist: analysis.NewHistogram(HistogramBounds, true),
			stacks: make(map[int]*agg), owners: make(map[uint64]*agg)}
		a.locks[id] = l
	}
	return l
}

func (a *Analyzer) record(tid uint64, p *pending, d int64) {
	a.waitHist.Add(d)
	l := a.lock(p.lock)
	l.count++
	l.totalNs += d
	if d > l.maxNs {
		l.maxNs = d
	}
	l.hist.Add(d)
	addAgg(l.stacks, p.stack, d)
	if p.hasV2 {
		owner := p.owner
		if _, ok := l.owners[owner]; !ok && len(l.owners) >= maxOwners {
			owner = FoldedThreadID
		}
		addAgg(l.owners, owner, d)
	}
	tid = a.foldThread(tid)
	t := a.threads[tid]
	if t == nil {
		t = &threadAcc{}
		a.threads[tid] = t
	}
	t.count++
	t.totalNs += d
	if d > t.maxNs {
		t.maxNs = d
	}
	if a.noSamples {
		return
	}
	k := sampleKey{lock: p.lock, thread: tid, stack: int32(p.stack)}
	s, ok := a.samples[k]
	if !ok && len(a.samples) >= maxSamples {
		// Past the bound the stack and lock stay exact, the thread folds.
		a.foldedTriples++
		k.thread = FoldedThreadID
		s = a.samples[k]
	}
	s.contentions++
	s.delayNs += d
	a.samples[k] = s
}

func addAgg[K comparable](m map[K]*agg, k K, d int64) {
	g := m[k]
	if g == nil {
		g = &agg{}
		m[k] = g
	}
	g.count++
	g.totalNs += d
}

// intern stores a copy of stack once and returns its index; index 0 is the
// empty stack.
func (a *Analyzer) intern(stack []uint64, ts int64) int {
	if len(a.stk.Stacks) == 0 {
		a.stk.Reserve()
	}
	if len(stack) == 0 {
		return 0
	}
	limit := 0
	if a.maxStacks > 0 {
		limit = a.maxStacks + 1
	}
	id, ok := a.stk.Intern(stack, ts, limit)
	if !ok {
		if a.otherStack == 0 {
			a.otherStack = int(a.stk.Reserve())
		}
		return a.otherStack
	}
	return int(id)
}

// sortedKeys returns m's keys ordered by total wait, then count, then key.
func topAggs[K comparable](m map[K]*agg, less func(a, b K) bool) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		x, y := m[keys[i]], m[keys[j]]
		if x.totalNs != y.totalNs {
			return x.totalNs > y.totalNs
		}
		if x.count != y.count {
			return x.count > y.count
		}
		return less(keys[i], keys[j])
	})
	return keys
}

// Wants reports whether the analysis reads events of m: the lock events
// and the thread events that name owners (WantsContention), and the
// allocation and type events that name locked objects (WantsObjectTypes).
// Sessions derive their keywords from these (clrevents.ProvidersFor).
func Wants(m *nettrace.Metadata) bool { return WantsContention(m) || WantsObjectTypes(m) }

// WantsContention reports whether m is a lock event (ContentionStart,
// ContentionStop, LockCreated) or a thread event that maps lock owners to
// OS threads (ThreadCreated, the rundown's ThreadDC).
func WantsContention(m *nettrace.Metadata) bool {
	switch m.Runtime {
	case nettrace.Runtime:
		switch m.EventID {
		case clrevents.IDContentionStart, clrevents.IDContentionStop, clrevents.IDContentionLockCreated, clrevents.IDThreadCreated:
			return true
		}
	case nettrace.Rundown:
		return m.EventID == clrevents.IDRundownThreadDC
	}
	return false
}

// WantsObjectTypes reports whether m is one of the allocation and type
// events the analysis reads to name a lock's object type (every one a
// trace may hold).
func WantsObjectTypes(m *nettrace.Metadata) bool {
	if m.Runtime != nettrace.Runtime {
		return false
	}
	switch m.EventID {
	case clrevents.IDBulkType, clrevents.IDGCAllocationTick, clrevents.IDAllocationSampled,
		clrevents.IDGCSampledObjectAllocHigh, clrevents.IDGCSampledObjectAllocLow:
		return true
	}
	return false
}

// WantsObjectNames reports whether m is one of the events a live session
// asks for to name lock objects (`clrspy locks --object-types`): the first
// allocation of every type with its address (SampledObjectAllocationHigh)
// and the types' names (BulkType). The other allocation events the
// analysis reads (ticks, .NET 10 sampling) cost more and name fewer types.
func WantsObjectNames(m *nettrace.Metadata) bool {
	return m.Runtime == nettrace.Runtime && (m.EventID == clrevents.IDBulkType || m.EventID == clrevents.IDGCSampledObjectAllocHigh)
}
