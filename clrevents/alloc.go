package clrevents

import "github.com/clrspy/clrspy/nettrace"

// Allocation kinds of GCAllocationTick and AllocationSampled: which heap the
// object went to.
const (
	AllocSmall  = 0 // small object heap
	AllocLarge  = 1 // large object heap (objects of 85,000 bytes or more)
	AllocPinned = 2 // pinned object heap (.NET 5+)
)

// AllocationTick is GCAllocationTick (id 10), fired by the GC roughly every
// 100 KB allocated per heap for the object that crossed the threshold.
//
// v0 has only the 32-bit amount and kind; v2 adds the type and heap; v3 the
// object's address; v4 its size. HasType, HasAddress and HasSize say which
// fields the version carried, since zero is a legal value of none of them
// in practice but a consumer must still tell "absent" from "zero".
type AllocationTick struct {
	AllocationAmount uint64 // bytes allocated since the previous tick (AllocationAmount64 from v2)
	AllocationKind   uint32 // AllocSmall, AllocLarge or AllocPinned
	TypeID           uint64 // MethodTable address (v2+)
	TypeName         string // (v2+)
	HeapIndex        uint32 // (v2+)
	Address          uint64 // the object that crossed the threshold (v3+)
	ObjectSize       uint64 // its size in bytes (v4+)

	HasType    bool
	HasAddress bool
	HasSize    bool
}

// DecodeAllocationTick decodes GCAllocationTick v0–v4.
func DecodeAllocationTick(payload []byte, version uint32, ptrSize int) (AllocationTick, error) {
	a, name, err := DecodeAllocationTickRaw(payload, version, ptrSize)
	if err == nil && a.HasType {
		a.TypeName, _, _ = nettrace.DecodeUTF16Z(name)
	}
	return a, err
}

// DecodeAllocationTickRaw is DecodeAllocationTick without the name's
// conversion: TypeName stays empty and name is the UTF-16LE type name with
// its terminating NUL, a slice of payload (nil before v2). A consumer that
// caches names by type decodes one only when it is new, so the event costs
// no allocation.
func DecodeAllocationTickRaw(payload []byte, version uint32, ptrSize int) (a AllocationTick, name []byte, err error) {
	r := nettrace.NewCursor(payload)
	a.AllocationAmount = uint64(r.U32())
	a.AllocationKind = r.U32()
	if version >= 1 {
		r.U16() // ClrInstanceID
	}
	if version >= 2 {
		a.AllocationAmount = r.U64()
		a.TypeID = r.Ptr(ptrSize)
		name = r.RawUTF16Z()
		a.HeapIndex = r.U32()
		a.HasType = true
	}
	if version >= 3 {
		a.Address = r.Ptr(ptrSize)
		a.HasAddress = true
	}
	if version >= 4 {
		a.ObjectSize = r.U64()
		a.HasSize = true
	}
	if !r.OK() {
		return AllocationTick{}, nil, short("GCAllocationTick", version, len(payload))
	}
	return a, name, nil
}

// AllocationSampled is the .NET 10 AllocationSampled event (id 303): a
// Poisson-sampled allocation (mean distance 100 KB between samples).
type AllocationSampled struct {
	AllocationKind uint32
	TypeID         uint64
	TypeName       string
	Address        uint64
	ObjectSize     uint64
	// SampledByteOffset is where in the allocation context the sampling
	// point fell; it lets a consumer correct for the bytes before it.
	SampledByteOffset uint64
}

// DecodeAllocationSampled decodes AllocationSampled v0.
func DecodeAllocationSampled(payload []byte, version uint32, ptrSize int) (AllocationSampled, error) {
	a, name, err := DecodeAllocationSampledRaw(payload, version, ptrSize)
	if err == nil {
		a.TypeName, _, _ = nettrace.DecodeUTF16Z(name)
	}
	return a, err
}

// DecodeAllocationSampledRaw is DecodeAllocationSampled leaving TypeName
// empty and returning the UTF-16LE name with its NUL, a slice of payload
// (see DecodeAllocationTickRaw).
func DecodeAllocationSampledRaw(payload []byte, version uint32, ptrSize int) (a AllocationSampled, name []byte, err error) {
	r := nettrace.NewCursor(payload)
	a.AllocationKind = r.U32()
	r.U16() // ClrInstanceID
	a.TypeID = r.Ptr(ptrSize)
	name = r.RawUTF16Z()
	a.Address = r.Ptr(ptrSize)
	a.ObjectSize = r.U64()
	a.SampledByteOffset = r.U64()
	if !r.OK() {
		return AllocationSampled{}, nil, short("AllocationSampled", version, len(payload))
	}
	return a, name, nil
}

// SampledObjectAllocation is GCSampledObjectAllocationHigh (id 20) or Low
// (id 32): one sampled object that stands for ObjectCount objects of its
// type totalling TotalSize bytes since the previous sample of that type.
// Only a type id is given; its name comes from BulkType.
type SampledObjectAllocation struct {
	Address     uint64
	TypeID      uint64
	ObjectCount uint32
	TotalSize   uint64
}

// DecodeSampledObjectAllocation decodes GCSampledObjectAllocationHigh/Low v0.
func DecodeSampledObjectAllocation(payload []byte, version uint32, ptrSize int) (SampledObjectAllocation, error) {
	var s SampledObjectAllocation
	r := nettrace.NewCursor(payload)
	s.Address = r.Ptr(ptrSize)
	s.TypeID = r.Ptr(ptrSize)
	s.ObjectCount = r.U32()
	s.TotalSize = r.U64()
	r.U16() // ClrInstanceID
	if !r.OK() {
		return SampledObjectAllocation{}, short("GCSampledObjectAllocation", version, len(payload))
	}
	return s, nil
}
