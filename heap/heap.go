package heap

import (
	"fmt"
	"math"
	"slices"

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

// Object is one sampled object and what happened to it.
type Object struct {
	ID       int
	TypeID   uint64
	Type     string // resolved when the trace ends if only TypeID was given
	Size     uint64 // 0 when the event did not give it (AllocationTick v3)
	Source   Source
	AllocNs  int64 // allocation time, ns since session start
	Stack    int   // index into Result.Stacks; -1 without a stack
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
	Tracked          int // objects followed
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
	Contradictions     Contradictions
	HasMovementEvents  bool
}

// Result is everything the tracker learned.
type Result struct {
	Objects []Object
	GCs     []GC
	Stacks  [][]uint64
	Stats   Stats
	EndNs   int64 // time of the last event
	PtrSize int
}

// Tracker replays a trace. Create it with New, feed every event to Event
// (or drive it through the typed methods), then call Finish.
type Tracker struct {
	hdr      *nettrace.Header
	ptrSize  int
	used     uint64
	firstErr error

	objs  []Object
	live  []int32           // indices of objects believed alive
	byAdr map[uint64]int32  // live object by address
	types map[uint64]string // TypeID → name (BulkType and named samples)

	stacks   [][]uint64
	stackIdx map[string]int
	keyBuf   []byte

	gcs    []GC
	cur    *pendingGC // the blocking/foreground GC being collected
	bgc    *pendingGC // an unfinished background GC
	lastNs int64

	stats Stats
	// sampledSeen is set by the first AllocationSampled event; later
	// AllocationTicks are then not followed.
	sampledSeen bool

	// scratch reused across GCs
	moved     []clrevents.MovedRange
	surviving []clrevents.SurvivingRange
	newLive   []int32
	movedIDs  []int32
	movedOld  []uint64 // old address of movedIDs[i]
	deadIDs   []int32
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
	// aged is set once a replay counted this GC towards objects' ages.
	aged bool
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

// New returns a tracker for a trace with header h (nil: 64-bit pointers,
// nanosecond clock).
func New(h *nettrace.Header) *Tracker {
	t := &Tracker{
		hdr:      h,
		ptrSize:  8,
		byAdr:    make(map[uint64]int32),
		types:    make(map[uint64]string),
		stackIdx: make(map[string]int),
	}
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
		a, err := clrevents.DecodeAllocationTick(ev.Payload, m.Version, t.ptrSize)
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
		t.Allocate(Alloc{Ns: ns, Address: a.Address, Size: a.ObjectSize, Kind: int(a.AllocationKind),
			TypeID: a.TypeID, Type: a.TypeName, Source: FromAllocationTick,
			EstBytes: float64(a.AllocationAmount), EstCount: count, Stack: ev.Stack})
	case clrevents.IDAllocationSampled:
		a, err := clrevents.DecodeAllocationSampled(ev.Payload, m.Version, t.ptrSize)
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
		t.Allocate(Alloc{Ns: ns, Address: a.Address, Size: a.ObjectSize, Kind: int(a.AllocationKind),
			TypeID: a.TypeID, Type: a.TypeName, Source: FromAllocationSampled,
			EstBytes: b, EstCount: c, Stack: ev.Stack})
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
		t.Allocate(Alloc{Ns: ns, Address: s.Address, Size: size, Kind: kind, TypeID: s.TypeID,
			Source: FromSampledObjectAllocation, EstBytes: float64(s.TotalSize),
			EstCount: float64(max(s.ObjectCount, 1)), Stack: ev.Stack})
	case clrevents.IDBulkType:
		bt, err := clrevents.DecodeBulkType(ev.Payload, m.Version, t.ptrSize)
		if err != nil {
			t.decodeError(err)
			return
		}
		for _, e := range bt.Types {
			if e.Name != "" {
				t.types[e.TypeID] = e.Name
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

// Allocate starts following a sampled object.
func (t *Tracker) Allocate(a Alloc) {
	if i, ok := t.byAdr[a.Address]; ok {
		// The runtime put a new object where we believe a live one is: its
		// death (or a move) was missed. Retire it so replay stays sound.
		o := &t.objs[i]
		o.Alive = false
		o.Replaced = true
		o.DeathNs = a.Ns
		o.DeathGen = o.Gen
		t.stats.Contradictions.AddressReused++
		delete(t.byAdr, a.Address)
		t.live = slices.DeleteFunc(t.live, func(j int32) bool { return j == i })
	}
	gen := Gen0
	switch {
	case a.Kind == clrevents.AllocLarge || a.Size >= LargeObjectSize:
		gen = LOH
	case a.Kind == clrevents.AllocPinned:
		gen = POH
	}
	if a.Type != "" && a.TypeID != 0 {
		if _, ok := t.types[a.TypeID]; !ok {
			t.types[a.TypeID] = a.Type
		}
	}
	id := len(t.objs)
	t.objs = append(t.objs, Object{
		ID: id, TypeID: a.TypeID, Type: a.Type, Size: a.Size, Source: a.Source,
		AllocNs: a.Ns, Stack: t.internStack(a.Stack), Address: a.Address,
		Gen: gen, MaxGen: gen, EstBytes: a.EstBytes, EstCount: a.EstCount, Alive: true,
	})
	t.live = append(t.live, int32(id))
	t.byAdr[a.Address] = int32(id)
	t.stats.Tracked++
}

func (t *Tracker) internStack(s []uint64) int {
	if len(s) == 0 {
		return -1
	}
	t.keyBuf = t.keyBuf[:0]
	for _, ip := range s {
		t.keyBuf = append(t.keyBuf, byte(ip), byte(ip>>8), byte(ip>>16), byte(ip>>24),
			byte(ip>>32), byte(ip>>40), byte(ip>>48), byte(ip>>56))
	}
	if i, ok := t.stackIdx[string(t.keyBuf)]; ok {
		return i
	}
	i := len(t.stacks)
	t.stacks = append(t.stacks, slices.Clone(s))
	t.stackIdx[string(t.keyBuf)] = i
	return i
}

// GCStart begins a GC. A still-open blocking GC is applied first (its
// RestartEEEnd was lost or never comes, e.g. a trace that starts mid-GC).
func (t *Tracker) GCStart(ns int64, count uint32, depth int, typ uint32) {
	if t.cur != nil {
		t.apply(t.cur)
		t.cur = nil
	}
	p := &pendingGC{gc: GC{Count: count, Depth: depth, Type: typ, StartNs: ns}}
	if typ == gcTypeBackground {
		if t.bgc != nil {
			t.apply(t.bgc)
		}
		p.initial = true
		t.bgc = p
		return
	}
	t.cur = p
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
func (t *Tracker) GCEnd(count uint32) {
	switch {
	case t.cur != nil && (t.cur.gc.Count == count || count == 0):
		t.cur.ended = true
	case t.bgc != nil && t.bgc.gc.Count == count:
		t.bgc.ended = true
	}
}

// RestartEEEnd ends the pause: an ended blocking GC is applied now.
func (t *Tracker) RestartEEEnd() {
	if t.cur != nil && t.cur.ended {
		t.apply(t.cur)
		t.cur = nil
	}
	if t.cur == nil && t.bgc != nil && t.bgc.initial {
		t.endInitialPause(t.bgc)
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
		t.apply(t.bgc)
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
	slices.SortFunc(r, func(a, b clrevents.MovedRange) int { return cmpU64(a.OldBase, b.OldBase) })
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
	slices.SortFunc(r, func(a, b clrevents.SurvivingRange) int { return cmpU64(a.Base, b.Base) })
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
		t.apply(t.cur)
		t.cur = nil
	}
	if t.bgc != nil {
		t.apply(t.bgc)
		t.bgc = nil
	}
}

// Result returns the replay so far (GCs still open are not applied until
// Finish).
func (t *Tracker) Result() *Result {
	for i := range t.objs {
		o := &t.objs[i]
		if o.Type == "" {
			if n, ok := t.types[o.TypeID]; ok {
				o.Type = n
			} else {
				o.Type = fmt.Sprintf("type 0x%x", o.TypeID)
			}
		}
	}
	st := t.stats
	return &Result{Objects: t.objs, GCs: t.gcs, Stacks: t.stacks, Stats: st, EndNs: t.lastNs, PtrSize: t.ptrSize}
}

// genIndex answers "which generation holds this address" from one set of
// GCGenerationRange events, sorted by start.
type genIndex []clrevents.GenerationRange

func newGenIndex(rs []clrevents.GenerationRange) genIndex {
	if len(rs) == 0 {
		return nil
	}
	g := genIndex(slices.Clone(rs))
	slices.SortFunc(g, func(a, b clrevents.GenerationRange) int { return cmpU64(a.Start, b.Start) })
	return g
}

func (g genIndex) lookup(addr uint64) (int, bool) {
	i, _ := slices.BinarySearchFunc(g, addr, func(r clrevents.GenerationRange, a uint64) int { return cmpU64(r.Start, a) })
	// i is the first range starting after addr (or at it); step back to the
	// range that starts at or before addr.
	if i < len(g) && g[i].Start == addr {
		return int(g[i].Generation), true
	}
	if i == 0 {
		return 0, false
	}
	r := g[i-1]
	if addr-r.Start < r.UsedLength {
		return int(r.Generation), true
	}
	return 0, false
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
		// A background GC that ended within its first pause (or whose
		// restart was lost): what it reported is the ephemeral part.
		t.endInitialPause(p)
	}
	gc := p.gc
	if !p.anyRanges && t.stats.HasMovementEvents && gc.Type != gcTypeBackground && p.nothingSurvived(gc.Depth) {
		// Movement events are on and nothing survived: the absence of
		// ranges is the answer, not missing data.
		p.rangeSeen, p.anyRanges = true, true
		gc.NothingSurvived = true
		t.stats.GCsNothingSurvived++
	}
	t.replay(p, &gc, gc.Depth, gc.Type == gcTypeBackground, !p.aged)
	gc.NoRanges = !p.anyRanges
	if gc.NoRanges {
		t.stats.GCsWithoutRanges++
	}
	t.gcs = append(t.gcs, gc)
}

// endInitialPause handles the end of a background GC's first pause. The
// runtime collects the ephemeral generations (gen0 and gen1) in that pause
// and, on current runtimes, reports their ranges under the background GC's
// own GCStart; those are replayed now as the ephemeral GC they are, and
// what arrives later is the background sweep of gen2.
func (t *Tracker) endInitialPause(p *pendingGC) {
	p.initial = false
	if !p.rangeSeen {
		return
	}
	t.replay(p, &p.gc, Gen1, false, true)
	p.aged = true
	p.moved, p.surviving = p.moved[:0], p.surviving[:0]
	p.genStart, p.genEnd = p.genStart[:0], p.genEnd[:0]
	p.rangeSeen = false
}

// replay applies p's collected ranges as a GC condemning depth (gen2 only
// when background) and adds its counts to gc. age says whether this GC
// counts towards the objects' age (once per GC).
func (t *Tracker) replay(p *pendingGC, gc *GC, depth int, background, age bool) {
	gc.Moved += len(p.moved)
	gc.Surviving += len(p.surviving)
	c := &t.stats.Contradictions

	slices.SortFunc(p.moved, func(a, b clrevents.MovedRange) int { return cmpU64(a.OldBase, b.OldBase) })
	slices.SortFunc(p.surviving, func(a, b clrevents.SurvivingRange) int { return cmpU64(a.Base, b.Base) })
	ov, dov := countOverlaps(p.moved, p.surviving), countDestOverlaps(p.moved)
	gc.Overlaps += ov + dov
	c.OverlappingRanges += ov
	c.OverlappingDest += dov
	noRanges := !p.rangeSeen

	startIdx := newGenIndex(p.genStart)
	endIdx := newGenIndex(p.genEnd)

	// Objects are re-keyed only when they move or die, so a gen0 GC costs
	// a search per object, not a rebuild of the address index.
	newLive := t.newLive[:0]
	movedIDs := t.movedIDs[:0]
	t.movedOld = t.movedOld[:0]
	t.deadIDs = t.deadIDs[:0]
	for _, idx := range t.live {
		o := &t.objs[idx]
		if age {
			o.GCsSeen++
		}
		gen := o.Gen
		if g, ok := startIdx.lookup(o.Address); ok {
			if g != gen {
				t.stats.GenCorrections++
				gen = g
			} else {
				t.stats.GenConfirmed++
			}
		}
		isCondemned := condemned(gen, depth, background)
		newAddr, hits := lookupMoved(p.moved, o.Address)
		survHits := lookupSurviving(p.surviving, o.Address)
		if hits+survHits > 1 {
			c.MappedTwice++
		}
		switch {
		case hits > 0:
			if newAddr != o.Address {
				t.movedOld = append(t.movedOld, o.Address)
				o.Address = newAddr
				movedIDs = append(movedIDs, idx)
				gc.Remapped++
			} else {
				gc.InPlace++
			}
		case survHits > 0:
			gc.InPlace++
		case isCondemned && !noRanges && !gc.Incomplete:
			o.Alive = false
			o.DeathGC = int(gc.Count)
			o.DeathNs = gc.StartNs
			o.DeathGen = gen
			o.Gen = gen
			gc.Died++
			gc.Examined++
			t.deadIDs = append(t.deadIDs, idx)
			continue
		default:
			// Not condemned (or no data): untouched.
			o.Gen = gen
			newLive = append(newLive, idx)
			continue
		}
		// A survivor: promoted if its generation was condemned.
		if isCondemned {
			gc.Examined++
			o.Survived++
			if gen < Gen2 {
				gen++
			}
		}
		if g, ok := endIdx.lookup(o.Address); ok {
			gen = g
		} else if len(endIdx) > 0 {
			c.Unplaced++
		}
		o.Gen = gen
		o.MaxGen = max(o.MaxGen, gen)
		newLive = append(newLive, idx)
	}
	t.reindex(newLive, movedIDs)
	t.newLive = t.live
	t.live = newLive
}

// reindex brings the address index up to date after a GC. When most
// objects moved or died it is rebuilt from scratch: deleting and
// re-inserting most keys of a hash map every GC leaves it full of
// tombstones and makes every later probe slow.
func (t *Tracker) reindex(live, moved []int32) {
	c := &t.stats.Contradictions
	if len(moved)+len(t.deadIDs) > len(live)/4 {
		clear(t.byAdr)
		for _, idx := range live {
			a := t.objs[idx].Address
			if _, ok := t.byAdr[a]; ok {
				c.Collisions++
			}
			t.byAdr[a] = idx
		}
		t.movedIDs = moved
		return
	}
	for _, idx := range t.deadIDs {
		if a := t.objs[idx].Address; t.byAdr[a] == idx {
			delete(t.byAdr, a)
		}
	}
	for i, idx := range moved {
		if a := t.movedOld[i]; t.byAdr[a] == idx {
			delete(t.byAdr, a)
		}
	}
	for _, idx := range moved {
		a := t.objs[idx].Address
		if j, ok := t.byAdr[a]; ok && j != idx {
			c.Collisions++
		}
		t.byAdr[a] = idx
	}
	t.movedIDs = moved
}

// lookupMoved finds the moved range covering addr in ranges sorted by old
// base and returns the new address and how many ranges cover it (more than
// one only if ranges overlap).
func lookupMoved(rs []clrevents.MovedRange, addr uint64) (uint64, int) {
	// First range whose base is above addr; candidates are before it.
	i, _ := slices.BinarySearchFunc(rs, addr+1, func(r clrevents.MovedRange, a uint64) int { return cmpU64(r.OldBase, a) })
	var out uint64
	hits := 0
	for j := i - 1; j >= 0; j-- {
		r := rs[j]
		if addr-r.OldBase < r.Length {
			if hits == 0 {
				out = r.NewBase + (addr - r.OldBase)
			}
			hits++
			continue
		}
		// Ranges are sorted by base; an earlier range can still cover addr
		// only if ranges overlap, which countOverlaps reports. Stop at the
		// first miss to keep the search logarithmic.
		break
	}
	return out, hits
}

func lookupSurviving(rs []clrevents.SurvivingRange, addr uint64) int {
	i, _ := slices.BinarySearchFunc(rs, addr+1, func(r clrevents.SurvivingRange, a uint64) int { return cmpU64(r.Base, a) })
	hits := 0
	for j := i - 1; j >= 0; j-- {
		r := rs[j]
		if addr-r.Base >= r.Length {
			break
		}
		hits++
	}
	return hits
}

// countOverlaps counts pairs of adjacent (by old address) ranges that share
// bytes, over moved and surviving ranges together.
func countOverlaps(m []clrevents.MovedRange, s []clrevents.SurvivingRange) int {
	type span struct{ lo, n uint64 }
	all := make([]span, 0, len(m)+len(s))
	for _, r := range m {
		all = append(all, span{r.OldBase, r.Length})
	}
	for _, r := range s {
		all = append(all, span{r.Base, r.Length})
	}
	slices.SortFunc(all, func(a, b span) int { return cmpU64(a.lo, b.lo) })
	n := 0
	var end uint64
	for i, r := range all {
		if i > 0 && r.lo < end {
			n++
		}
		end = max(end, r.lo+r.n)
	}
	return n
}

func countDestOverlaps(m []clrevents.MovedRange) int {
	if len(m) < 2 {
		return 0
	}
	d := slices.Clone(m)
	slices.SortFunc(d, func(a, b clrevents.MovedRange) int { return cmpU64(a.NewBase, b.NewBase) })
	n := 0
	var end uint64
	for i, r := range d {
		if i > 0 && r.NewBase < end {
			n++
		}
		end = max(end, r.NewBase+r.Length)
	}
	return n
}
