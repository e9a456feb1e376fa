package clrevents

import (
	"fmt"

	"github.com/clrspy/clrspy/nettrace"
)

// GC event payloads (Microsoft-Windows-DotNETRuntime, keyword GC). Layouts
// follow the runtime's event manifest; every version only appends fields.

// GCReason is why a GC was triggered (GCStart, GCTriggered,
// GCGlobalHeapHistory).
type GCReason uint32

// GC reasons.
const (
	ReasonAllocSmall            GCReason = 0
	ReasonInduced               GCReason = 1
	ReasonLowMemory             GCReason = 2
	ReasonEmpty                 GCReason = 3
	ReasonAllocLarge            GCReason = 4
	ReasonOutOfSpaceSOH         GCReason = 5
	ReasonOutOfSpaceLOH         GCReason = 6
	ReasonInducedNotForced      GCReason = 7
	ReasonInternal              GCReason = 8
	ReasonInducedLowMemory      GCReason = 9
	ReasonInducedCompacting     GCReason = 10
	ReasonLowMemoryHost         GCReason = 11
	ReasonPMFullGC              GCReason = 12
	ReasonLowMemoryHostBlocking GCReason = 13
)

var gcReasonNames = [...]string{
	"AllocSmall", "Induced", "LowMemory", "Empty", "AllocLarge", "OutOfSpaceSOH",
	"OutOfSpaceLOH", "InducedNotForced", "Internal", "InducedLowMemory",
	"InducedCompacting", "LowMemoryHost", "PMFullGC", "LowMemoryHostBlocking",
	"BGCTuningSOH", "BGCTuningLOH", "BGCStepping", "InducedAggressive",
}

func (r GCReason) String() string {
	if int(r) < len(gcReasonNames) {
		return gcReasonNames[r]
	}
	return fmt.Sprintf("Reason%d", uint32(r))
}

// MarshalText writes the reason by name (String): the JSON of a GC row.
func (r GCReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads what MarshalText writes (a name, or Reason17).
func (r *GCReason) UnmarshalText(b []byte) error {
	s := string(b)
	for i, n := range gcReasonNames {
		if n == s {
			*r = GCReason(i)
			return nil
		}
	}
	var v uint32
	if _, err := fmt.Sscanf(s, "Reason%d", &v); err != nil || fmt.Sprintf("Reason%d", v) != s {
		return fmt.Errorf("clrevents: unknown GC reason %q", s)
	}
	*r = GCReason(v)
	return nil
}

// IsInduced reports whether the GC was asked for by the application
// (GC.Collect and friends) rather than by the allocator.
func (r GCReason) IsInduced() bool {
	switch r {
	case ReasonInduced, ReasonInducedNotForced, ReasonInducedLowMemory, ReasonInducedCompacting, 17:
		return true
	}
	return false
}

// GCType is the kind of a GC.
type GCType uint32

// GC types.
const (
	GCNonConcurrent GCType = 0 // blocking
	GCBackground    GCType = 1 // background (concurrent) gen2
	GCForeground    GCType = 2 // ephemeral GC while a background GC runs
)

func (t GCType) String() string {
	switch t {
	case GCNonConcurrent:
		return "NonConcurrent"
	case GCBackground:
		return "Background"
	case GCForeground:
		return "Foreground"
	}
	return fmt.Sprintf("Type%d", uint32(t))
}

// MarshalText writes the type by name (String): the JSON of a GC row.
func (t GCType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads what MarshalText writes (a name, or Type3).
func (t *GCType) UnmarshalText(b []byte) error {
	s := string(b)
	for v := GCNonConcurrent; v <= GCForeground; v++ {
		if v.String() == s {
			*t = v
			return nil
		}
	}
	var v uint32
	if _, err := fmt.Sscanf(s, "Type%d", &v); err != nil || fmt.Sprintf("Type%d", v) != s {
		return fmt.Errorf("clrevents: unknown GC type %q", s)
	}
	*t = GCType(v)
	return nil
}

// SuspendReason is why the runtime suspended managed threads
// (GCSuspendEEBegin).
type SuspendReason uint32

// Suspend reasons (the runtime's ThreadSuspend::SUSPEND_REASON).
const (
	SuspendOther            SuspendReason = 0 // sample profiler, tiering, ...
	SuspendForGC            SuspendReason = 1
	SuspendForAppDomainShut SuspendReason = 2
	SuspendForCodePitching  SuspendReason = 3 // ReJIT
	SuspendForShutdown      SuspendReason = 4
	SuspendForDebugger      SuspendReason = 5
	SuspendForGCPrep        SuspendReason = 6 // inside a background GC
	SuspendForDebuggerSweep SuspendReason = 7
	SuspendForProfiler      SuspendReason = 8
)

var suspendReasonNames = [...]string{
	"SuspendOther", "SuspendForGC", "SuspendForAppDomainShutdown", "SuspendForReJIT",
	"SuspendForShutdown", "SuspendForDebugger", "SuspendForGCPrep",
	"SuspendForDebuggerSweep", "SuspendForProfiler",
}

func (r SuspendReason) String() string {
	if int(r) < len(suspendReasonNames) {
		return suspendReasonNames[r]
	}
	return fmt.Sprintf("Suspend%d", uint32(r))
}

// MarshalText writes the reason by name (String): the JSON of a
// suspension row.
func (r SuspendReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads what MarshalText writes (a name, or Suspend9).
func (r *SuspendReason) UnmarshalText(b []byte) error {
	s := string(b)
	for i, n := range suspendReasonNames {
		if n == s {
			*r = SuspendReason(i)
			return nil
		}
	}
	var v uint32
	if _, err := fmt.Sscanf(s, "Suspend%d", &v); err != nil || fmt.Sprintf("Suspend%d", v) != s {
		return fmt.Errorf("clrevents: unknown suspend reason %q", s)
	}
	*r = SuspendReason(v)
	return nil
}

// IsGC reports whether the suspension is for a GC (blocking, or a
// background GC's internal stop).
func (r SuspendReason) IsGC() bool { return r == SuspendForGC || r == SuspendForGCPrep }

// GCStart is event 1. V0 has only Count and Reason.
type GCStart struct {
	Count                uint32 // GC index, 1-based, monotonic
	Depth                uint32 // condemned generation
	Reason               GCReason
	Type                 GCType
	ClientSequenceNumber uint64 // V2: non-zero for GCs forced by GCHeapCollect
}

// DecodeGCStart decodes GCStart v0–v2.
func DecodeGCStart(p []byte, version uint32, _ int) (GCStart, error) {
	gcStartDecodes.Add(1)
	r := nettrace.NewCursor(p)
	var e GCStart
	e.Count = r.U32()
	if version == 0 {
		e.Reason = GCReason(r.U32())
	} else {
		e.Depth = r.U32()
		e.Reason = GCReason(r.U32())
		e.Type = GCType(r.U32())
		r.U16()
		if version >= 2 {
			e.ClientSequenceNumber = r.U64()
		}
	}
	if !r.OK() {
		return GCStart{}, short("GCStart", version, len(p))
	}
	return e, nil
}

// GCEnd is event 2.
type GCEnd struct {
	Count uint32
	Depth uint32
}

// DecodeGCEnd decodes GCEnd v0 (u16 depth) and v1.
func DecodeGCEnd(p []byte, version uint32, _ int) (GCEnd, error) {
	r := nettrace.NewCursor(p)
	var e GCEnd
	e.Count = r.U32()
	if version == 0 {
		e.Depth = uint32(r.U16())
	} else {
		e.Depth = r.U32()
	}
	if !r.OK() {
		return GCEnd{}, short("GCEnd", version, len(p))
	}
	return e, nil
}

// GCSuspendEEBegin is event 9.
type GCSuspendEEBegin struct {
	Reason SuspendReason
	// Count is the GC count for GC suspensions and 0xFFFFFFFF otherwise
	// (V1); not reliable for matching a GCStart.
	Count uint32
}

// DecodeGCSuspendEEBegin decodes v0 (u16 reason) and v1.
func DecodeGCSuspendEEBegin(p []byte, version uint32, _ int) (GCSuspendEEBegin, error) {
	r := nettrace.NewCursor(p)
	var e GCSuspendEEBegin
	if version == 0 {
		e.Reason = SuspendReason(r.U16())
		e.Count = 0xFFFFFFFF
	} else {
		e.Reason = SuspendReason(r.U32())
		e.Count = r.U32()
	}
	if !r.OK() {
		return GCSuspendEEBegin{}, short("GCSuspendEEBegin", version, len(p))
	}
	return e, nil
}

// GCHeapStats is event 4: sizes after the GC, fragmentation included.
// Index 3 is the large object heap, 4 the pinned object heap (V2 only).
type GCHeapStats struct {
	GenerationSize            [5]uint64
	TotalPromotedSize         [5]uint64
	FinalizationPromotedSize  uint64
	FinalizationPromotedCount uint64
	PinnedObjectCount         uint32
	SinkBlockCount            uint32
	GCHandleCount             uint32
	HasPOH                    bool // V2: index 4 is valid
}

// TotalHeapSize is the sum of the generation sizes.
func (h *GCHeapStats) TotalHeapSize() uint64 {
	var t uint64
	for _, s := range h.GenerationSize {
		t += s
	}
	return t
}

// TotalPromoted is the sum of the promoted sizes.
func (h *GCHeapStats) TotalPromoted() uint64 {
	var t uint64
	for _, s := range h.TotalPromotedSize {
		t += s
	}
	return t
}

// DecodeGCHeapStats decodes GCHeapStats v0–v2 (92, 94 and 110 bytes).
func DecodeGCHeapStats(p []byte, version uint32, _ int) (GCHeapStats, error) {
	r := nettrace.NewCursor(p)
	var e GCHeapStats
	for g := 0; g < 4; g++ {
		e.GenerationSize[g] = r.U64()
		e.TotalPromotedSize[g] = r.U64()
	}
	e.FinalizationPromotedSize = r.U64()
	e.FinalizationPromotedCount = r.U64()
	e.PinnedObjectCount = r.U32()
	e.SinkBlockCount = r.U32()
	e.GCHandleCount = r.U32()
	if version >= 1 {
		r.U16()
	}
	if version >= 2 {
		e.GenerationSize[4] = r.U64()
		e.TotalPromotedSize[4] = r.U64()
		e.HasPOH = true
	}
	if !r.OK() {
		return GCHeapStats{}, short("GCHeapStats", version, len(p))
	}
	return e, nil
}

// GCTriggered is event 35, fired on the thread that triggered the GC.
type GCTriggered struct {
	Reason GCReason
}

// DecodeGCTriggered decodes GCTriggered v0.
func DecodeGCTriggered(p []byte, version uint32, _ int) (GCTriggered, error) {
	r := nettrace.NewCursor(p)
	e := GCTriggered{Reason: GCReason(r.U32())}
	if !r.OK() {
		return GCTriggered{}, short("GCTriggered", version, len(p))
	}
	return e, nil
}

// Global mechanism flags of GCGlobalHeapHistory.
const (
	GlobalConcurrent  = 0x1
	GlobalCompaction  = 0x2
	GlobalPromotion   = 0x4
	GlobalDemotion    = 0x8
	GlobalCardBundles = 0x10
)

// GCGlobalHeapHistory is event 205, one per GC.
type GCGlobalHeapHistory struct {
	FinalYoungestDesired uint64
	NumHeaps             int32
	CondemnedGeneration  uint32
	Gen0ReductionCount   uint32
	Reason               GCReason
	GlobalMechanisms     uint32
	PauseMode            uint32 // V1+: 0 Batch, 1 Interactive, 2 LowLatency, 3 SustainedLowLatency, 4 NoGC
	MemoryPressure       uint32 // V1+
	CondemnReasons0      uint32 // V3+
	CondemnReasons1      uint32 // V3+
	// Times are the V4 per-phase timings, as the runtime writes them.
	Times []uint32
}

// maxGlobalTimes bounds the V4 timing array so a hostile count cannot make
// the decoder allocate much.
const maxGlobalTimes = 64

// DecodeGCGlobalHeapHistory decodes v0–v4.
func DecodeGCGlobalHeapHistory(p []byte, version uint32, _ int) (GCGlobalHeapHistory, error) {
	r := nettrace.NewCursor(p)
	var e GCGlobalHeapHistory
	e.FinalYoungestDesired = r.U64()
	e.NumHeaps = int32(r.U32())
	e.CondemnedGeneration = r.U32()
	e.Gen0ReductionCount = r.U32()
	e.Reason = GCReason(r.U32())
	e.GlobalMechanisms = r.U32()
	r.U16()
	if version >= 1 {
		e.PauseMode = r.U32()
		e.MemoryPressure = r.U32()
	}
	if version >= 3 {
		e.CondemnReasons0 = r.U32()
		e.CondemnReasons1 = r.U32()
	}
	if version >= 4 {
		n := r.U32()
		if r.OK() && (n > maxGlobalTimes || int(n)*4 > r.Rest()) {
			return GCGlobalHeapHistory{}, fmt.Errorf("GCGlobalHeapHistory v%d: %d phase times do not fit in %d bytes", version, n, len(p))
		}
		if r.OK() && n > 0 {
			e.Times = make([]uint32, n)
			for i := range e.Times {
				e.Times[i] = r.U32()
			}
		}
	}
	if !r.OK() {
		return GCGlobalHeapHistory{}, short("GCGlobalHeapHistory", version, len(p))
	}
	return e, nil
}

// GenData is one generation's entry of GCPerHeapHistory (bytes).
type GenData struct {
	SizeBefore     uint64
	FreeListBefore uint64
	FreeObjBefore  uint64
	SizeAfter      uint64
	FreeListAfter  uint64
	FreeObjAfter   uint64
	In             uint64
	PinnedSurv     uint64
	NonePinnedSurv uint64
	NewAllocation  uint64
}

// ObjSpaceBefore is the space taken by objects before the GC.
func (g *GenData) ObjSpaceBefore() uint64 {
	return sub(g.SizeBefore, g.FreeListBefore+g.FreeObjBefore)
}

// ObjSizeAfter is the space taken by objects after the GC.
func (g *GenData) ObjSizeAfter() uint64 {
	return sub(g.SizeAfter, g.FreeListAfter+g.FreeObjAfter)
}

// Fragmentation is the free space left in the generation after the GC.
func (g *GenData) Fragmentation() uint64 { return g.FreeListAfter + g.FreeObjAfter }

// Survived is what survived the GC in this generation.
func (g *GenData) Survived() uint64 { return g.PinnedSurv + g.NonePinnedSurv }

func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// GCPerHeapHistory is event 204 (V3), one per heap per GC.
type GCPerHeapHistory struct {
	FreeListAllocated         uint64
	FreeListRejected          uint64
	EndOfSegAllocated         uint64
	CondemnedAllocated        uint64
	PinnedAllocated           uint64
	PinnedAllocatedAdvance    uint64
	RunningFreeListEfficiency uint32
	CondemnReasons0           uint32
	CondemnReasons1           uint32
	CompactMechanisms         uint32
	ExpandMechanisms          uint32
	HeapIndex                 uint32
	ExtraGen0Commit           uint64
	// Gens holds gen0, gen1, gen2, LOH and (newer runtimes) POH.
	Gens []GenData
}

// maxGenData bounds the per-generation count (the runtime writes 4 or 5).
const maxGenData = 16

// DecodeGCPerHeapHistory decodes GCPerHeapHistory v3 (earlier versions
// carry no per-generation data usable here and return an error).
func DecodeGCPerHeapHistory(p []byte, version uint32, ptrSize int) (GCPerHeapHistory, error) {
	if version < 3 {
		return GCPerHeapHistory{}, fmt.Errorf("GCPerHeapHistory v%d: unsupported version", version)
	}
	r := nettrace.NewCursor(p)
	var e GCPerHeapHistory
	r.U16()
	e.FreeListAllocated = r.Ptr(ptrSize)
	e.FreeListRejected = r.Ptr(ptrSize)
	e.EndOfSegAllocated = r.Ptr(ptrSize)
	e.CondemnedAllocated = r.Ptr(ptrSize)
	e.PinnedAllocated = r.Ptr(ptrSize)
	e.PinnedAllocatedAdvance = r.Ptr(ptrSize)
	e.RunningFreeListEfficiency = r.U32()
	e.CondemnReasons0 = r.U32()
	e.CondemnReasons1 = r.U32()
	e.CompactMechanisms = r.U32()
	e.ExpandMechanisms = r.U32()
	e.HeapIndex = r.U32()
	e.ExtraGen0Commit = r.Ptr(ptrSize)
	n := r.U32()
	if !r.OK() {
		return GCPerHeapHistory{}, short("GCPerHeapHistory", version, len(p))
	}
	ps := ptrSize
	if ps != 4 {
		ps = 8
	}
	if n > maxGenData || int(n)*10*ps > r.Rest() {
		return GCPerHeapHistory{}, fmt.Errorf("GCPerHeapHistory v%d: %d generations do not fit in %d bytes", version, n, len(p))
	}
	e.Gens = make([]GenData, n)
	for i := range e.Gens {
		g := &e.Gens[i]
		g.SizeBefore = r.Ptr(ptrSize)
		g.FreeListBefore = r.Ptr(ptrSize)
		g.FreeObjBefore = r.Ptr(ptrSize)
		g.SizeAfter = r.Ptr(ptrSize)
		g.FreeListAfter = r.Ptr(ptrSize)
		g.FreeObjAfter = r.Ptr(ptrSize)
		g.In = r.Ptr(ptrSize)
		g.PinnedSurv = r.Ptr(ptrSize)
		g.NonePinnedSurv = r.Ptr(ptrSize)
		g.NewAllocation = r.Ptr(ptrSize)
	}
	if !r.OK() {
		return GCPerHeapHistory{}, short("GCPerHeapHistory", version, len(p))
	}
	return e, nil
}

// MarkType names the root kind of GCMarkWithType.
var markTypeNames = [...]string{"Stack", "FinalizeQueue", "Handles", "Older", "SizedRef", "Overflow",
	"DependentHandles", "NewFQ", "Steal", "BGCRoots"}

// GCMarkWithType is event 202: bytes marked from one root kind on one heap.
type GCMarkWithType struct {
	HeapNum uint32
	Type    uint32
	Bytes   uint64
}

// TypeName names the root kind.
func (m GCMarkWithType) TypeName() string {
	if int(m.Type) < len(markTypeNames) {
		return markTypeNames[m.Type]
	}
	return fmt.Sprintf("Type%d", m.Type)
}

// DecodeGCMarkWithType decodes GCMarkWithType v0.
func DecodeGCMarkWithType(p []byte, version uint32, _ int) (GCMarkWithType, error) {
	r := nettrace.NewCursor(p)
	var e GCMarkWithType
	e.HeapNum = r.U32()
	r.U16()
	e.Type = r.U32()
	e.Bytes = r.U64()
	if !r.OK() {
		return GCMarkWithType{}, short("GCMarkWithType", version, len(p))
	}
	return e, nil
}

// GCDynamicEvent is event 39: a named, versioned blob (HeapCountTuning,
// HeapCountSample, CommittedUsage, ...). Data aliases the payload.
type GCDynamicEvent struct {
	Name string
	Data []byte
}

// DecodeGCDynamicEvent decodes the GCDynamicEvent envelope.
func DecodeGCDynamicEvent(p []byte, version uint32, _ int) (GCDynamicEvent, error) {
	r := nettrace.NewCursor(p)
	var e GCDynamicEvent
	e.Name = r.UTF16Z()
	n := r.U32()
	if r.OK() && int64(n) > int64(r.Rest()) {
		return GCDynamicEvent{}, fmt.Errorf("GCDynamicEvent v%d: data size %d exceeds the %d-byte payload", version, n, len(p))
	}
	e.Data = r.Bytes(int(n))
	if !r.OK() {
		return GCDynamicEvent{}, short("GCDynamicEvent", version, len(p))
	}
	return e, nil
}
