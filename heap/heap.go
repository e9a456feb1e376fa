package heap

import (
	"math"
	"math/rand/v2"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// Generation numbers, as the runtime numbers them.
const (
	Gen0 = 0
	Gen1 = 1
	Gen2 = 2
	LOH  = clrevents.GenLOH // large object heap, collected with gen2
	POH  = clrevents.GenPOH // pinned object heap, collected with gen2
)

// LargeObjectSize is the size from which the runtime allocates on the LOH.
const LargeObjectSize = 85000

// SamplingMean is the mean distance in bytes between two AllocationSampled
// events (.NET 10 Poisson sampling); it turns a sample into an estimate.
const SamplingMean = 100 * 1024

// Source says which event an object was sampled from.
type Source uint8

// Sources of sampled objects.
const (
	FromAllocationTick Source = iota
	FromAllocationSampled
	FromSampledObjectAllocation
)

// StackNotKept is Object.Stack (and Tally.Stack) for an object whose stack
// was not kept because the stack table was full (Options.MaxStacks).
const StackNotKept = -2

// Object is one sampled object and what happened to it.
type Object struct {
	ID       int
	TypeID   uint64
	Type     string // resolved when the trace ends if only TypeID was given
	Size     uint64 // 0 when the event did not give it (AllocationTick v3)
	Source   Source
	AllocNs  int64 // allocation time, ns since session start
	Stack    int   // index into Result.Stacks; -1 without a stack, StackNotKept
	Address  uint64
	Gen      int // current generation (or the one it died in)
	MaxGen   int // highest generation reached
	Survived int // GCs that condemned its generation and found it alive
	// GCsSeen counts GCs that started while it was alive, the one that
	// killed it included: its age in GCs.
	GCsSeen int

	// EstBytes and EstCount are what the sample stands for: the bytes and
	// objects allocated that it represents.
	EstBytes float64
	EstCount float64
	// Weight is the reservoir's upscaling, 1/p for an object followed with
	// probability p (see the package documentation); 1 when nothing was
	// evicted. Estimates multiply EstBytes and EstCount by it.
	Weight float64

	Alive    bool
	DeathGC  int   // GCStart.Count of the GC that found it dead
	DeathNs  int64 // time of that GC's start
	DeathGen int   // generation it died in
	// Replaced is set when a later allocation landed on its address while
	// it was believed alive: its death was missed (lost events).
	Replaced bool
}

// Decided reports whether a GC has examined the object at least once, so
// its survival is known; objects allocated after the last GC of their
// generation are excluded from survival percentages.
func (o *Object) Decided() bool { return !o.Alive || o.Survived > 0 }

// GC is one replayed GC.
type GC struct {
	Count     uint32
	Depth     int // condemned generation
	Type      uint32
	StartNs   int64
	Moved     int // moved ranges reported
	Surviving int // surviving ranges reported
	// RangeEvents counts bulk range events (several per GC under server GC).
	RangeEvents int
	Remapped    int // tracked objects moved to a new address
	InPlace     int // tracked objects that survived at the same address
	Died        int // tracked objects declared dead
	Examined    int // tracked objects in a condemned generation
	// Overlaps counts reported ranges sharing bytes with another (old or
	// new side); it must be 0.
	Overlaps int
	// Incomplete is set when one of its range events was corrupt and
	// dropped: nothing is declared dead in it.
	Incomplete bool
	// NothingSurvived is set when the GC reported no range because its
	// heap stats say no byte of the condemned generations survived.
	NothingSurvived bool
	// NoRanges is set when the GC reported no range at all: nothing is
	// declared dead then, since the data is missing rather than empty.
	NoRanges bool
	// Blocking is set for a GC announced as background (Type 1) that ended
	// within its first pause: the runtime could not start the background
	// collection and ran a blocking, compacting GC of gen2 instead, LOH and
	// POH included (see GCEnd).
	Blocking bool
}

// Contradictions count replay results that cannot happen if the ranges and
// the replay are right. A real trace must give all zeros.
type Contradictions struct {
	OverlappingRanges int // two reported ranges of one GC share bytes (old side)
	OverlappingDest   int // two moved ranges land on shared bytes
	MappedTwice       int // an object covered by more than one range
	Collisions        int // two tracked objects ended at the same address
	AddressReused     int // a new sample landed on a live tracked object
	LateRanges        int // range events outside any GC
	// Unplaced counts survivors whose new address lies in no generation
	// range the runtime reported at the end of the GC.
	Unplaced int
}

// Total is the sum of all counts.
func (c Contradictions) Total() int {
	return c.OverlappingRanges + c.OverlappingDest + c.MappedTwice + c.Collisions + c.AddressReused + c.LateRanges + c.Unplaced
}

// Stats are the tracker's counters.
type Stats struct {
	AllocationTicks  int // every GCAllocationTick seen
	Untracked        int // samples without an address (AllocationTick v0–v2)
	IgnoredTicks     int // AllocationTicks not followed because AllocationSampled is on
	Tracked          int // objects followed (evicted ones included)
	RangeEvents      int
	MovedRanges      int
	SurvivingRanges  int
	GenerationRanges int
	GenCorrections   int // objects whose modelled generation disagreed with GCGenerationRange
	GenConfirmed     int // lookups where GCGenerationRange confirmed the modelled generation
	DecodeErrors     int
	FirstDecodeError string
	GCsWithoutRanges int
	// GCsNothingSurvived counts GCs without ranges whose heap stats
	// confirm that nothing survived (all condemned objects died).
	GCsNothingSurvived int
	// CorruptRangeEvents counts bulk range events dropped as impossible.
	CorruptRangeEvents int
	// SweptByBackgroundGC counts gen0/gen1 objects found dead because a
	// new sample landed on their address after a background GC ended and
	// before any other GC: the background GC sweeps the ephemeral
	// generations at its end (background_ephemeral_sweep in the runtime's
	// gc.cpp) and reports no range for it, so the sample is the only sign.
	// They die at that GC (not a contradiction).
	SweptByBackgroundGC int
	Contradictions      Contradictions
	HasMovementEvents   bool

	// GCs counts replayed GCs (Result.GCs keeps the last MaxGCs); Remapped,
	// InPlace and Died add up their counts.
	GCs      int
	Remapped int
	InPlace  int
	Died     int

	// What the limits of Options cost; all zero when nothing hit a limit.
	//
	// NotFollowed counts samples with an address that the reservoir did
	// not follow (priority at or below its threshold); Evicted counts
	// followed objects it dropped while they were alive. Neither enters
	// any table; the followed ones are weighted to stand for them.
	NotFollowed int
	Evicted     int
	// DeadDropped counts dead objects whose record Result.Objects no
	// longer lists (their tallies still count them).
	DeadDropped int
	// StacksNotKept counts followed objects whose stack was new when the
	// stack table was full (Object.Stack is StackNotKept).
	StacksNotKept int
	// TypesNotKept counts followed objects whose type was new when the
	// type table was full (named "[type not kept: table full]").
	TypesNotKept int
	// TypeNamesNotKept counts BulkType names not stored for that reason.
	TypeNamesNotKept int
	// GCRecordsDropped counts GCs no longer listed in Result.GCs.
	GCRecordsDropped int
}

// Result is everything the tracker learned.
type Result struct {
	// Objects lists the objects alive at the end and the last MaxObjects
	// to die, by ID; Complete says whether that is every followed object.
	Objects []Object
	// Tallies add up every followed object (evicted ones excepted) per
	// type and stack, weighted by the reservoir: what tables are made of.
	Tallies []Tally
	// Ages is the age-at-death histogram of objects killed by a GC (the
	// replaced ones excepted), buckets 1, 2, 3–4, 5–8, ..., 2049+ GCs,
	// weighted.
	Ages    []AgeBucket
	GCs     []GC // the last MaxGCs GCs, in order
	Stacks  [][]uint64
	Stats   Stats
	EndNs   int64 // time of the last event
	PtrSize int
	// MaxObjects is the reservoir size in force (0: unbounded).
	MaxObjects int
	// NoObjects is set when Objects was left empty (Options.SkipObjects).
	NoObjects bool
}

// Complete reports whether Objects lists every followed object with
// weight 1: no sample skipped or evicted, no dead record dropped.
func (r *Result) Complete() bool {
	s := &r.Stats
	return !r.NoObjects && s.NotFollowed == 0 && s.Evicted == 0 && s.DeadDropped == 0
}

// Tally is the weighted sum of the followed objects of one type allocated
// at one stack.
type Tally struct {
	TypeID uint64
	Stack  int // index into Result.Stacks; -1 without a stack, StackNotKept
	Group      // Key is the type's name
}

// Defaults of Options.
const (
	DefaultMaxObjects = 100_000
	DefaultMaxStacks  = 1 << 15
	DefaultMaxTypes   = 1 << 16
	DefaultMaxGCs     = 10_000
)

// Options bound the tracker's memory. The zero value gives the defaults; a
// negative limit means none.
type Options struct {
	// MaxObjects bounds the live objects followed at once (the reservoir,
	// see the package documentation) and, separately, the dead objects
	// Result.Objects lists. Default DefaultMaxObjects.
	MaxObjects int
	// MaxStacks bounds distinct allocation stacks (and per-(type, stack)
	// tallies at twice that). Default DefaultMaxStacks.
	MaxStacks int
	// MaxTypes bounds distinct types and BulkType names. Default
	// DefaultMaxTypes.
	MaxTypes int
	// MaxGCs bounds the GC records Result.GCs lists. Default DefaultMaxGCs.
	MaxGCs int
	// Seed seeds the reservoir's random keys: the same events and seed give
	// the same result.
	Seed uint64
	// SkipObjects leaves Result.Objects empty and keeps no dead records:
	// for reports and live views made of the tables only, it saves a copy
	// of every listed object per Result and MaxObjects dead records.
	SkipObjects bool
}

// limit resolves one Options limit: 0 → def, negative → 0 (none).
func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// Tracker replays a trace. Create it with New or NewWithOptions, feed every
// event to Event (or drive it through the typed methods), then call Finish.
type Tracker struct {
	hdr      *nettrace.Header
	ptrSize  int
	used     uint64
	firstErr error

	// limits (0: none)
	maxObjects, maxStacks, maxTypes, maxGCs int
	skipObjects                             bool

	// Object slots; freed slots are reused. An object's slot is freed when
	// its entry leaves live/pend (see replay.go).
	objs []obj
	free []int32
	// live holds entries sorted by address; pend those allocated since the
	// last merge, unsorted, with pendAt indexing them by address. Entries
	// of objects no longer alive (replaced, evicted) stay until the next
	// merge; tombs counts them.
	live   []ent
	pend   []ent
	pendAt map[uint64]int32
	tombs  int
	// Every allocation looks for a followed object at its address
	// (retireAt), and nearly always finds none. pendBits answers most of
	// those for pend without the map (a bit per hashed address, set for
	// every pending entry, cleared with pend); addrs is what findLive
	// searches in live. The map and a search of live itself cost 650 ns
	// per allocation on a 1 GiB generated trace, a third of heap's time.
	pendBits *[pendBitWords]uint64
	swept    sweptBy // the last background GC, while no GC followed it
	addrs    []uint64
	addrsOK  bool
	liveN    int // alive objects
	nextID   int

	// ageClock counts GCs that aged every live object; an object's age is
	// the clock now (or at its death) minus the clock at its allocation.
	ageClock uint32

	// reservoir
	rng    *rand.Rand
	thresh float64 // priority threshold T
	prios  []float64

	// dead records, a ring of the most recent maxObjects deaths
	dead     []obj
	deadNext int

	tables

	gcs     []GC // ring of the last maxGCs
	gcsNext int
	cur     *pendingGC // the blocking/foreground GC being collected
	bgc     *pendingGC // an unfinished background GC
	spare   []*pendingGC
	lastNs  int64

	stats Stats
	// sampledSeen is set by the first AllocationSampled event; later
	// AllocationTicks are then not followed.
	sampledSeen bool

	scratch
}

// pendingGC collects one GC's reports until it is over.
type pendingGC struct {
	gc        GC
	moved     []clrevents.MovedRange
	surviving []clrevents.SurvivingRange
	genStart  []clrevents.GenerationRange // before the first range event
	genEnd    []clrevents.GenerationRange // after it
	ended     bool                        // GCEnd seen
	rangeSeen bool                        // a range event since the last replay
	anyRanges bool                        // a range event at all
	// initial is set for a background GC until its first pause ends.
	initial bool
	// blocking is set for a background GC that ended within its first
	// pause: it ran as a blocking GC.
	blocking bool
	// promoted is GCHeapStats' TotalPromotedSize per generation.
	promoted    [5]uint64
	hasPromoted bool
}

// nothingSurvived reports whether GCHeapStats says no byte of a condemned
// generation survived, which is when the runtime sends no range at all.
func (p *pendingGC) nothingSurvived(depth int) bool {
	if !p.hasPromoted {
		return false
	}
	var n uint64
	for g := 0; g <= depth && g <= Gen2; g++ {
		n += p.promoted[g]
	}
	if depth >= Gen2 {
		n += p.promoted[LOH] + p.promoted[POH]
	}
	return n == 0
}

// New returns a tracker with the given limits (the zero Options: the
// defaults) for a trace with header h (nil: 64-bit pointers, nanosecond
// clock).
func New(h *nettrace.Header, o Options) *Tracker {
	t := &Tracker{
		hdr:         h,
		ptrSize:     8,
		maxObjects:  limit(o.MaxObjects, DefaultMaxObjects),
		maxStacks:   limit(o.MaxStacks, DefaultMaxStacks),
		maxTypes:    limit(o.MaxTypes, DefaultMaxTypes),
		maxGCs:      limit(o.MaxGCs, DefaultMaxGCs),
		skipObjects: o.SkipObjects,
		pendAt:      make(map[uint64]int32),
		pendBits:    new([pendBitWords]uint64),
		rng:         rand.New(rand.NewPCG(o.Seed, o.Seed^0x9E3779B97F4A7C15)),
	}
	t.tables.init()
	if h != nil && (h.PointerSize == 4 || h.PointerSize == 8) {
		t.ptrSize = h.PointerSize
	}
	return t
}

func (t *Tracker) nanos(ts int64) int64 {
	if t.hdr == nil {
		return ts
	}
	return t.hdr.Nanos(ts)
}

func (t *Tracker) decodeError(err error) {
	t.stats.DecodeErrors++
	if t.stats.FirstDecodeError == "" {
		t.stats.FirstDecodeError = err.Error()
		t.firstErr = err
	}
}

// Stats implements analysis.Analyzer.
func (t *Tracker) Stats() analysis.Stats {
	return analysis.Stats{Events: t.used, DecodeErrors: uint64(t.stats.DecodeErrors), FirstError: t.firstErr}
}

// Wants reports whether the tracker uses events of m: the runtime
// provider's (its clock is the last of them). A file source may skip the
// others (source.Spec.Keep).
func Wants(m *nettrace.Metadata) bool { return m.Runtime == nettrace.Runtime }

// WantsSession reports whether m is one of the events a live session asks
// for (clrevents.ProvidersFor), movement apart (WantsMovement): the GC's
// starts, ends and heap stats, allocation ticks (verbose: they carry
// addresses), .NET 10's sampled allocations and type names. The tracker
// also reads GCSampledObjectAllocationHigh/Low from traces that hold them;
// a session does not ask for them (an event per type every few
// milliseconds).
func WantsSession(m *nettrace.Metadata) bool {
	if m.Runtime != nettrace.Runtime {
		return false
	}
	switch m.EventID {
	case clrevents.IDGCStart, clrevents.IDGCEnd, clrevents.IDGCRestartEEEnd, clrevents.IDGCHeapStats,
		clrevents.IDGCAllocationTick, clrevents.IDAllocationSampled, clrevents.IDBulkType:
		return true
	}
	return false
}

// WantsMovement reports whether m is one of the survival and movement
// events that follow sampled objects across GCs (surviving and moved
// ranges, generation bounds). Their keyword makes every GC slower.
func WantsMovement(m *nettrace.Metadata) bool {
	if m.Runtime != nettrace.Runtime {
		return false
	}
	switch m.EventID {
	case clrevents.IDGCBulkMovedObjectRanges, clrevents.IDGCBulkSurvivingObjectRanges, clrevents.IDGCGenerationRange:
		return true
	}
	return false
}

// Event feeds one event. Undecodable payloads are counted (Stats.Decode-
// Errors) and skipped, so one bad event does not end an analysis.
func (t *Tracker) Event(ev *nettrace.Event) {
	m := ev.Meta
	if m == nil || m.Runtime != nettrace.Runtime {
		return
	}
	t.used++
	ns := t.nanos(ev.Timestamp)
	t.lastNs = ns
	switch m.EventID {
	case clrevents.IDGCStart:
		s, err := clrevents.DecodeGCStart(ev.Payload, m.Version, t.ptrSize)
		if err != nil {
			t.decodeError(err)
			return
		}
		t.GCStart(ns, s.Count, int(s.Depth), uint32(s.Type))
	case clrevents.IDGCEnd:
		e, err := clrevents.DecodeGCEnd(ev.Payload, m.Version, t.ptrSize)
		if err != nil {
			t.decodeError(err)
			return
		}
		t.GCEnd(e.Count)
	case clrevents.IDGCRestartEEEnd:
		t.RestartEEEnd()
	case clrevents.IDGCHeapStats:
		if hs, err := clrevents.DecodeGCHeapStats(ev.Payload, m.Version, t.ptrSize); err == nil {
			t.Promoted(hs.TotalPromotedSize)
		} else {
			t.decodeError(err)
		}
		t.HeapStats()
	case clrevents.IDGCAllocationTick:
		// The raw decoder leaves the name as bytes: the type table decodes
		// it only for a type it has not seen.
		a, name, err := clrevents.DecodeAllocationTickRaw(ev.Payload, m.Version, t.ptrSize)
		if err != nil {
			t.decodeError(err)
			return
		}
		t.stats.AllocationTicks++
		if t.sampledSeen {
			// .NET 10 sampling is on too: its samples are the unbiased
			// ones, and following both would sample some objects twice.
			t.stats.IgnoredTicks++
			return
		}
		if !a.HasAddress || a.Address == 0 {
			t.stats.Untracked++
			return
		}
		count := 1.0
		if a.HasSize && a.ObjectSize > 0 {
			count = math.Max(1, float64(a.AllocationAmount)/float64(a.ObjectSize))
		}
		t.allocate(&Alloc{Ns: ns, Address: a.Address, Size: a.ObjectSize, Kind: int(a.AllocationKind),
			TypeID: a.TypeID, Source: FromAllocationTick,
			EstBytes: float64(a.AllocationAmount), EstCount: count, Stack: ev.Stack}, name)
	case clrevents.IDAllocationSampled:
		a, name, err := clrevents.DecodeAllocationSampledRaw(ev.Payload, m.Version, t.ptrSize)
		if err != nil {
			t.decodeError(err)
			return
		}
		t.sampledSeen = true
		if a.Address == 0 {
			t.stats.Untracked++
			return
		}
		b, c := poissonWeight(a.ObjectSize)
		t.allocate(&Alloc{Ns: ns, Address: a.Address, Size: a.ObjectSize, Kind: int(a.AllocationKind),
			TypeID: a.TypeID, Source: FromAllocationSampled,
			EstBytes: b, EstCount: c, Stack: ev.Stack}, name)
	case clrevents.IDGCSampledObjectAllocHigh, clrevents.IDGCSampledObjectAllocLow:
		s, err := clrevents.DecodeSampledObjectAllocation(ev.Payload, m.Version, t.ptrSize)
		if err != nil {
			t.decodeError(err)
			return
		}
		if s.Address == 0 {
			t.stats.Untracked++
			return
		}
		var size uint64
		if s.ObjectCount > 0 {
			size = s.TotalSize / uint64(s.ObjectCount)
		}
		kind := clrevents.AllocSmall
		if size >= LargeObjectSize {
			kind = clrevents.AllocLarge
		}
		t.allocate(&Alloc{Ns: ns, Address: s.Address, Size: size, Kind: kind, TypeID: s.TypeID,
			Source: FromSampledObjectAllocation, EstBytes: float64(s.TotalSize),
			EstCount: float64(max(s.ObjectCount, 1)), Stack: ev.Stack}, nil)
	case clrevents.IDBulkType:
		bt, err := clrevents.DecodeBulkType(ev.Payload, m.Version, t.ptrSize)
		if err != nil {
			t.decodeError(err)
			return
		}
		for _, e := range bt.Types {
			if e.Name != "" {
				t.nameType(e.TypeID, e.Name)
			}
		}
	case clrevents.IDGCBulkMovedObjectRanges:
		var err error
		t.moved, _, err = clrevents.AppendBulkMovedRanges(t.moved[:0], ev.Payload, m.Version, t.ptrSize)
		if err != nil {
			t.decodeError(err)
			return
		}
		t.Moved(t.moved)
	case clrevents.IDGCBulkSurvivingObjectRanges:
		var err error
		t.surviving, _, err = clrevents.AppendBulkSurvivingRanges(t.surviving[:0], ev.Payload, m.Version, t.ptrSize)
		if err != nil {
			t.decodeError(err)
			return
		}
		t.Surviving(t.surviving)
	case clrevents.IDGCGenerationRange:
		g, err := clrevents.DecodeGenerationRange(ev.Payload, m.Version, t.ptrSize)
		if err != nil {
			t.decodeError(err)
			return
		}
		t.GenerationRange(g)
	}
}

// poissonWeight upscales one AllocationSampled sample of an object of size
// bytes: an object is sampled with probability 1-exp(-size/mean), so it
// stands for 1/p objects of its size.
func poissonWeight(size uint64) (bytes, count float64) {
	if size == 0 {
		return SamplingMean, 1
	}
	p := -math.Expm1(-float64(size) / SamplingMean)
	if p <= 0 {
		return SamplingMean, 1
	}
	return float64(size) / p, 1 / p
}

// Alloc is one sampled allocation.
type Alloc struct {
	Ns       int64
	Address  uint64
	Size     uint64
	Kind     int // clrevents.AllocSmall/AllocLarge/AllocPinned
	TypeID   uint64
	Type     string
	Source   Source
	EstBytes float64
	EstCount float64
	Stack    []uint64 // leaf first; copied
}

// Allocate starts following a sampled object (if the reservoir takes it).
func (t *Tracker) Allocate(a Alloc) { t.allocate(&a, nil) }

// allocate is Allocate with the type's name, when the event gave one, as
// raw UTF-16 (with its NUL) instead of a.Type.
func (t *Tracker) allocate(a *Alloc, rawName []byte) {
	t.retireAt(a.Address, a.Ns)
	// The reservoir's key is drawn for every sample, followed or not, so
	// the keys depend only on the order of the samples.
	w := max(a.EstBytes, 1)
	prio := w / (1 - t.rng.Float64()) // u in (0, 1]
	if t.maxObjects > 0 && prio <= t.thresh {
		t.stats.NotFollowed++
		return
	}
	gen := Gen0
	switch {
	case a.Kind == clrevents.AllocLarge || a.Size >= LargeObjectSize:
		gen = LOH
	case a.Kind == clrevents.AllocPinned:
		gen = POH
	}
	var ty int32
	if rawName != nil {
		ty = t.typeOfRaw(a.TypeID, rawName)
	} else {
		ty = t.typeOf(a.TypeID, a.Type)
	}
	stack := t.internStack(a.Stack)
	if stack == StackNotKept {
		t.stats.StacksNotKept++
	}
	if ty == typeNotKept {
		t.stats.TypesNotKept++
	}
	idx := t.newSlot()
	t.objs[idx] = obj{
		id: t.nextID, addr: a.Address, size: a.Size, allocNs: a.Ns,
		estBytes: a.EstBytes, estCount: a.EstCount, prio: prio, tau: t.thresh,
		ty: ty, stack: int32(stack), tally: t.tallyOf(ty, int32(stack)),
		ageBase: t.ageClock, gen: int8(gen), source: a.Source, state: alive,
	}
	t.nextID++
	t.pendAt[a.Address] = int32(len(t.pend))
	h := pendHash(a.Address)
	t.pendBits[h/64] |= 1 << (h % 64)
	t.pend = append(t.pend, ent{addr: a.Address, idx: idx, gen: int8(gen), maxGen: int8(gen)})
	t.liveN++
	t.stats.Tracked++
	switch {
	case t.maxObjects > 0 && t.liveN > t.maxObjects:
		t.thin()
	case len(t.pend) >= 1024 && len(t.pend) > len(t.live)/2:
		// Without GCs that merge them, pending entries (and the
		// tombstones among them) would grow without bound.
		t.merge()
	}
}

// retireAt handles a new sample on the address of an object believed
// alive: the runtime put a new object there, so the old one's death (or a
// move) was missed. It is retired so the replay stays sound.
func (t *Tracker) retireAt(addr uint64, ns int64) {
	var e *ent
	h := pendHash(addr)
	if t.pendBits[h/64]&(1<<(h%64)) != 0 {
		if i, ok := t.pendAt[addr]; ok && t.objs[t.pend[i].idx].state == alive {
			e = &t.pend[i]
		}
	}
	if e == nil {
		e = t.findLive(addr)
	}
	if e == nil {
		return
	}
	if s := &t.swept; e.gen <= 1 && s.clock == t.ageClock+1 && t.objs[e.idx].allocNs <= s.endNs {
		// Allocated before the background GC that was the last GC
		// ended: its ephemeral sweep freed this address (a CI run met
		// one in the lifetimes workload: gen0 reused 2 ms after the
		// background GC's end, no GCStart between).
		t.endLife(e, dead, int(e.gen), s.count, s.startNs)
		t.stats.SweptByBackgroundGC++
	} else {
		t.endLife(e, replaced, int(e.gen), 0, ns)
		t.stats.Contradictions.AddressReused++
	}
	t.tombs++
}

// sweptBy is a background GC applied as the last GC so far: clock is
// ageClock+1 then (0: none), endNs when it was applied.
type sweptBy struct {
	clock          uint32
	count          int32
	startNs, endNs int64
}

// GCStart begins a GC. A still-open blocking GC is applied first (its
// RestartEEEnd was lost or never comes, e.g. a trace that starts mid-GC).
func (t *Tracker) GCStart(ns int64, count uint32, depth int, typ uint32) {
	if t.cur != nil {
		t.done(t.cur)
		t.cur = nil
	}
	p := t.newPending()
	p.gc = GC{Count: count, Depth: depth, Type: typ, StartNs: ns}
	if typ == gcTypeBackground {
		if t.bgc != nil {
			t.done(t.bgc)
		}
		p.initial = true
		t.bgc = p
		return
	}
	t.cur = p
}

// newPending returns a cleared pendingGC, reusing a spare one so a GC
// allocates nothing once the range buffers have grown.
func (t *Tracker) newPending() *pendingGC {
	if n := len(t.spare); n > 0 {
		p := t.spare[n-1]
		t.spare = t.spare[:n-1]
		return p
	}
	return &pendingGC{}
}

// done applies a finished GC and keeps its buffers for the next one.
func (t *Tracker) done(p *pendingGC) {
	t.apply(p)
	*p = pendingGC{moved: p.moved[:0], surviving: p.surviving[:0], genStart: p.genStart[:0], genEnd: p.genEnd[:0]}
	t.spare = append(t.spare, p)
}

// GC types of GCStart.
const (
	gcTypeBlocking   = 0
	gcTypeBackground = 1
	gcTypeForeground = 2
)

// target is the GC that range and generation events belong to: the open
// blocking or foreground GC, else an unfinished background GC.
func (t *Tracker) target() *pendingGC {
	if t.cur != nil {
		return t.cur
	}
	return t.bgc
}

// GCEnd marks the end of the GC's work; its ranges are complete.
//
// A background GC that ends before its first pause does was not one: the
// runtime fires GCStart (do_pre_gc) before it decides, in garbage_collect,
// whether the background GC can run; when its BGC thread is not running
// yet (the first background GC of a process, typically) or the mark array
// cannot be committed, it clears settings.concurrent, sets compaction and
// runs gc1 as a blocking gen2 GC in the same pause. A real background GC
// ends on its own thread after the concurrent phase, never inside the
// pause that started it, and the ephemeral GC it may start with has a
// GCStart of its own. So such a GC is replayed as the blocking gen2 GC it
// was: gen2, LOH and POH condemned, not only what a background sweep
// touches.
func (t *Tracker) GCEnd(count uint32) {
	switch {
	case t.cur != nil && (t.cur.gc.Count == count || count == 0):
		t.cur.ended = true
	case t.bgc != nil && t.bgc.gc.Count == count:
		t.bgc.ended = true
		if t.bgc.initial {
			t.bgc.initial, t.bgc.blocking = false, true
			t.bgc.gc.Blocking = true
		}
	}
}

// RestartEEEnd ends the pause: an ended blocking GC is applied now.
func (t *Tracker) RestartEEEnd() {
	if t.cur != nil && t.cur.ended {
		t.done(t.cur)
		t.cur = nil
	}
	if t.cur == nil && t.bgc != nil && t.bgc.initial {
		t.endInitialPause(t.bgc)
		if t.bgc.blocking {
			// Its pause is over, so is the GC.
			t.done(t.bgc)
			t.bgc = nil
		}
	}
}

// Promoted records a GC's promoted bytes per generation (GCHeapStats). It
// tells a GC in which nothing survived, which reports no range at all,
// from one whose range events are missing.
func (t *Tracker) Promoted(bytes [5]uint64) {
	p := t.target()
	if p == nil {
		return
	}
	p.promoted, p.hasPromoted = bytes, true
}

// HeapStats marks the end of a background GC when no other GC is open
// (PerfView's rule); its surviving ranges have arrived by then.
func (t *Tracker) HeapStats() {
	if t.cur == nil && t.bgc != nil && t.bgc.ended {
		t.done(t.bgc)
		t.bgc = nil
	}
}

// Moved adds moved ranges to the current GC.
func (t *Tracker) Moved(r []clrevents.MovedRange) {
	t.stats.MovedRanges += len(r)
	p := t.rangeEvent()
	if p == nil {
		return
	}
	t.sortMoved(r)
	if !validMoved(r) {
		t.corrupt(p)
		return
	}
	p.moved = append(p.moved, r...)
}

// rangeEvent counts one bulk range event and returns the GC it belongs to;
// nil (counted as a late range event) when no GC is open.
func (t *Tracker) rangeEvent() *pendingGC {
	t.stats.HasMovementEvents = true
	t.stats.RangeEvents++
	p := t.target()
	if p == nil {
		t.stats.Contradictions.LateRanges++
		return nil
	}
	p.rangeSeen, p.anyRanges = true, true
	p.gc.RangeEvents++
	return p
}

// corrupt records a bulk event whose ranges cannot be real (zero length,
// wrapping past the address space, or overlapping each other within the
// event): seen only where a trace was cut mid-write. The GC it belongs to
// is then incomplete and declares nothing dead.
func (t *Tracker) corrupt(p *pendingGC) {
	t.stats.CorruptRangeEvents++
	p.gc.Incomplete = true
}

// validMoved checks one event's ranges, sorted by old base.
func validMoved(r []clrevents.MovedRange) bool {
	for i, x := range r {
		if x.Length == 0 || x.OldBase+x.Length < x.OldBase || x.NewBase+x.Length < x.NewBase {
			return false
		}
		if i > 0 && r[i-1].OldBase+r[i-1].Length > x.OldBase {
			return false
		}
	}
	return true
}

func validSurviving(r []clrevents.SurvivingRange) bool {
	for i, x := range r {
		if x.Length == 0 || x.Base+x.Length < x.Base {
			return false
		}
		if i > 0 && r[i-1].Base+r[i-1].Length > x.Base {
			return false
		}
	}
	return true
}

// Surviving adds surviving ranges to the current GC.
func (t *Tracker) Surviving(r []clrevents.SurvivingRange) {
	t.stats.SurvivingRanges += len(r)
	p := t.rangeEvent()
	if p == nil {
		return
	}
	t.sortSurviving(r)
	if !validSurviving(r) {
		t.corrupt(p)
		return
	}
	p.surviving = append(p.surviving, r...)
}

// GenerationRange records a generation's bounds. Those reported before a
// GC's first range event describe the heap at its start, later ones the
// heap after it.
func (t *Tracker) GenerationRange(g clrevents.GenerationRange) {
	t.stats.GenerationRanges++
	p := t.target()
	if p == nil {
		return
	}
	if p.rangeSeen || p.ended {
		p.genEnd = append(p.genEnd, g)
	} else {
		p.genStart = append(p.genStart, g)
	}
}

// Finish applies any GC still open at the end of the stream (the source
// calls it when the stream ends; a live snapshot does not).
func (t *Tracker) Finish() {
	if t.cur != nil {
		t.done(t.cur)
		t.cur = nil
	}
	if t.bgc != nil {
		t.done(t.bgc)
		t.bgc = nil
	}
}

// condemned reports whether generation gen is collected by a GC whose
// condemned generation is depth: the LOH and POH go with gen2. A background
// GC collects gen2 (and the LOH/POH) only; the ephemeral generations are
// left to the GCs that run beside it.
func condemned(gen, depth int, background bool) bool {
	if gen >= LOH {
		return depth >= Gen2
	}
	if background {
		return gen == Gen2
	}
	return gen <= depth
}

// apply replays one finished GC over every live tracked object.
func (t *Tracker) apply(p *pendingGC) {
	if p.initial {
		// Applied before its first pause ended (a GC began or the stream
		// ended): it ran blocking if it reported ranges.
		t.endInitialPause(p)
	}
	gc := p.gc
	background := gc.Type == gcTypeBackground && !p.blocking
	if !p.anyRanges && t.stats.HasMovementEvents && !background && p.nothingSurvived(gc.Depth) {
		// Movement events are on and nothing survived: the absence of
		// ranges is the answer, not missing data.
		p.rangeSeen, p.anyRanges = true, true
		gc.NothingSurvived = true
		t.stats.GCsNothingSurvived++
	}
	t.replay(p, &gc, gc.Depth, background)
	if background {
		t.swept = sweptBy{clock: t.ageClock + 1, count: int32(gc.Count), startNs: gc.StartNs, endNs: t.lastNs}
	}
	gc.NoRanges = !p.anyRanges
	if gc.NoRanges {
		t.stats.GCsWithoutRanges++
	}
	t.addGC(gc)
	t.relax()
}

// addGC records a GC, keeping the last maxGCs records.
func (t *Tracker) addGC(gc GC) {
	st := &t.stats
	st.GCs++
	st.Remapped += gc.Remapped
	st.InPlace += gc.InPlace
	st.Died += gc.Died
	if t.maxGCs == 0 || len(t.gcs) < t.maxGCs {
		t.gcs = append(t.gcs, gc)
		return
	}
	t.gcs[t.gcsNext] = gc
	t.gcsNext = (t.gcsNext + 1) % len(t.gcs)
	st.GCRecordsDropped++
}

// lastGC returns the most recent GC record (tests and benchmarks).
func (t *Tracker) lastGC() GC {
	if t.gcsNext > 0 {
		return t.gcs[t.gcsNext-1]
	}
	return t.gcs[len(t.gcs)-1]
}

// endInitialPause handles the end of a background GC's first pause. The
// runtime reports no range of a real background GC in it: the ephemeral GC
// a background GC may start with has a GCStart of its own (its ranges go to
// that GC), and the background GC's own survivors are walked at its end
// (walk_survivors_for_bgc, in a later pause). Ranges reported under the
// background GCStart in its first pause therefore come from a GC that ran
// blocking (see GCEnd) whose GCEnd was lost: it is marked so.
func (t *Tracker) endInitialPause(p *pendingGC) {
	p.initial = false
	if p.rangeSeen {
		p.blocking, p.gc.Blocking = true, true
	}
}
