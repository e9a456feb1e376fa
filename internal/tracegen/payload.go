package tracegen

import (
	"encoding/binary"
	"math"
	"unicode/utf16"

	"github.com/clrspy/clrspy/clrevents"
)

// Payload builds an event payload field by field, little-endian as the
// runtime writes it: tracegen.Payload(nil).U32(1).String("x").
type Payload []byte

// U8 appends a byte.
func (p Payload) U8(v uint8) Payload { return append(p, v) }

// U16 appends a 16-bit integer.
func (p Payload) U16(v uint16) Payload { return binary.LittleEndian.AppendUint16(p, v) }

// U32 appends a 32-bit integer.
func (p Payload) U32(v uint32) Payload { return binary.LittleEndian.AppendUint32(p, v) }

// I32 appends a signed 32-bit integer.
func (p Payload) I32(v int32) Payload { return p.U32(uint32(v)) }

// U64 appends a 64-bit integer.
func (p Payload) U64(v uint64) Payload { return binary.LittleEndian.AppendUint64(p, v) }

// F32 appends a float.
func (p Payload) F32(v float32) Payload { return p.U32(math.Float32bits(v)) }

// F64 appends a double.
func (p Payload) F64(v float64) Payload { return p.U64(math.Float64bits(v)) }

// String appends s as UTF-16LE with its terminating NUL, the runtime's
// string field.
func (p Payload) String(s string) Payload {
	for _, u := range utf16.Encode([]rune(s)) {
		p = p.U16(u)
	}
	return p.U16(0)
}

// Zeros appends n zero bytes (a payload whose fields a test does not read).
func (p Payload) Zeros(n int) Payload { return append(p, make([]byte, n)...) }

// The appenders below write one runtime event's payload at the version
// clrevents' decoder reads; Large uses them on its reused buffer, so they
// take and return a plain slice and do not allocate beyond it.

// AppendGCStart writes GCStart v2.
func AppendGCStart(b []byte, e clrevents.GCStart) []byte {
	return Payload(b).U32(e.Count).U32(e.Depth).U32(uint32(e.Reason)).U32(uint32(e.Type)).U16(0).U64(e.ClientSequenceNumber)
}

// AppendGCEnd writes GCEnd v1.
func AppendGCEnd(b []byte, e clrevents.GCEnd) []byte {
	return Payload(b).U32(e.Count).U32(e.Depth).U16(0)
}

// AppendSuspendEEBegin writes GCSuspendEEBegin v1.
func AppendSuspendEEBegin(b []byte, e clrevents.GCSuspendEEBegin) []byte {
	return Payload(b).U32(uint32(e.Reason)).U32(e.Count).U16(0)
}

// AppendClrInstance writes the payload of the events that carry only the
// ClrInstanceID (SuspendEEEnd, RestartEEBegin, RestartEEEnd v1).
func AppendClrInstance(b []byte) []byte { return Payload(b).U16(0) }

// AppendGCHeapStats writes GCHeapStats v2.
func AppendGCHeapStats(b []byte, e clrevents.GCHeapStats) []byte {
	p := Payload(b)
	for g := 0; g < 4; g++ {
		p = p.U64(e.GenerationSize[g]).U64(e.TotalPromotedSize[g])
	}
	p = p.U64(e.FinalizationPromotedSize).U64(e.FinalizationPromotedCount)
	p = p.U32(e.PinnedObjectCount).U32(e.SinkBlockCount).U32(e.GCHandleCount).U16(0)
	return p.U64(e.GenerationSize[4]).U64(e.TotalPromotedSize[4])
}

// AppendGCTriggered writes GCTriggered v0.
func AppendGCTriggered(b []byte, e clrevents.GCTriggered) []byte {
	return Payload(b).U32(uint32(e.Reason)).U16(0)
}

// AppendAllocationTick writes GCAllocationTick v4 (64-bit pointers).
func AppendAllocationTick(b []byte, e clrevents.AllocationTick) []byte {
	p := Payload(b).U32(uint32(min(e.AllocationAmount, math.MaxUint32))).U32(e.AllocationKind).U16(0)
	p = p.U64(e.AllocationAmount).U64(e.TypeID).String(e.TypeName).U32(e.HeapIndex)
	return p.U64(e.Address).U64(e.ObjectSize)
}

// AppendContentionStart writes ContentionStart v2 (64-bit pointers).
func AppendContentionStart(b []byte, e clrevents.ContentionStart) []byte {
	return Payload(b).U8(e.Flags).U16(e.ClrInstanceID).U64(e.LockID).U64(e.AssociatedObjectID).U64(e.LockOwnerThreadID)
}

// AppendContentionStop writes ContentionStop v1.
func AppendContentionStop(b []byte, e clrevents.ContentionStop) []byte {
	return Payload(b).U8(e.Flags).U16(e.ClrInstanceID).F64(e.DurationNs)
}

// AppendThread writes ThreadCreated v0 (and rundown ThreadDC, which shares
// the layout).
func AppendThread(b []byte, e clrevents.Thread) []byte {
	return Payload(b).U64(e.ThreadObject).U64(e.AppDomainID).U32(e.Flags).U32(e.ManagedID).U32(e.OSThreadID).U16(e.ClrInstanceID)
}

// AppendMethodVerbose writes MethodLoadVerbose v2 (and the rundown's
// MethodDCEndVerbose, which shares the layout).
func AppendMethodVerbose(b []byte, m clrevents.Method) []byte {
	p := Payload(b).U64(m.MethodID).U64(m.ModuleID).U64(m.StartAddress).U32(m.Size).U32(m.Token).U32(m.Flags)
	return p.String(m.Namespace).String(m.Name).String(m.Signature).U16(m.ClrInstanceID).U64(m.ReJITID)
}

// AppendThreadSample writes the sample profiler's ThreadSample v0.
func AppendThreadSample(b []byte, e clrevents.ThreadSample) []byte {
	return Payload(b).U32(uint32(e.Type))
}

// AppendBulkMovedRanges writes GCBulkMovedObjectRanges v0 (64-bit
// pointers): the index of the event in its heap walk, then the ranges.
func AppendBulkMovedRanges(b []byte, index uint32, rs []clrevents.MovedRange) []byte {
	p := Payload(b).U32(index).U32(uint32(len(rs))).U16(0)
	for _, r := range rs {
		p = p.U64(r.OldBase).U64(r.NewBase).U64(r.Length)
	}
	return p
}

// AppendBulkSurvivingRanges writes GCBulkSurvivingObjectRanges v0.
func AppendBulkSurvivingRanges(b []byte, index uint32, rs []clrevents.SurvivingRange) []byte {
	p := Payload(b).U32(index).U32(uint32(len(rs))).U16(0)
	for _, r := range rs {
		p = p.U64(r.Base).U64(r.Length)
	}
	return p
}

// AppendGenerationRange writes GCGenerationRange v0.
func AppendGenerationRange(b []byte, g clrevents.GenerationRange) []byte {
	return Payload(b).U8(g.Generation).U64(g.Start).U64(g.UsedLength).U64(g.ReservedLength).U16(0)
}

// AppendBulkType writes BulkType v0.
func AppendBulkType(b []byte, types ...clrevents.BulkTypeEntry) []byte {
	p := Payload(b).U32(uint32(len(types))).U16(0)
	for _, t := range types {
		p = p.U64(t.TypeID).U64(t.ModuleID).U32(t.TypeNameID).U32(t.Flags).U8(t.CorElementType).String(t.Name)
		p = p.U32(uint32(len(t.TypeParameters)))
		for _, a := range t.TypeParameters {
			p = p.U64(a)
		}
	}
	return p
}

// AppendSampledObjectAllocation writes GCSampledObjectAllocationHigh/Low
// v0.
func AppendSampledObjectAllocation(b []byte, s clrevents.SampledObjectAllocation) []byte {
	return Payload(b).U64(s.Address).U64(s.TypeID).U32(s.ObjectCount).U64(s.TotalSize).U16(0)
}

// AppendAllocationSampled writes AllocationSampled v0 (.NET 10).
func AppendAllocationSampled(b []byte, a clrevents.AllocationSampled) []byte {
	return Payload(b).U32(a.AllocationKind).U16(0).U64(a.TypeID).String(a.TypeName).U64(a.Address).U64(a.ObjectSize).U64(a.SampledByteOffset)
}
