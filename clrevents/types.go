package clrevents

import "fmt"

// BulkTypeFlags bits.
const (
	TypeFlagDelegate    = 0x1
	TypeFlagFinalizable = 0x2
	TypeFlagCOM         = 0x4
	TypeFlagArray       = 0x8
)

// BulkTypeEntry is one type of a BulkType event.
type BulkTypeEntry struct {
	TypeID         uint64 // MethodTable address, the id allocation events give
	ModuleID       uint64
	TypeNameID     uint32 // metadata token
	Flags          uint32
	CorElementType uint8
	Name           string
	TypeParameters []uint64 // type ids of generic arguments
}

// BulkType is the BulkType event (id 15, task Type): names for type ids.
type BulkType struct {
	Types []BulkTypeEntry
}

// minBulkTypeEntry is the smallest encoded entry: ids, token, flags,
// element type, an empty name and a zero parameter count.
const minBulkTypeEntry = 8 + 8 + 4 + 4 + 1 + 2 + 4

// DecodeBulkType decodes BulkType v0. TypeID and ModuleID are 64-bit in
// every pointer size (the manifest declares them UInt64).
func DecodeBulkType(payload []byte, version uint32, ptrSize int) (BulkType, error) {
	r := reader{b: payload}
	count := r.u32()
	r.u16() // ClrInstanceID
	if !r.ok() {
		return BulkType{}, short("BulkType", version, len(payload))
	}
	if uint64(count)*minBulkTypeEntry > uint64(r.remaining()) {
		return BulkType{}, fmt.Errorf("BulkType v%d: %w (Count %d cannot fit in %d bytes)", version, ErrShort, count, r.remaining())
	}
	bt := BulkType{Types: make([]BulkTypeEntry, 0, count)}
	for i := uint32(0); i < count; i++ {
		var e BulkTypeEntry
		e.TypeID = r.u64()
		e.ModuleID = r.u64()
		e.TypeNameID = r.u32()
		e.Flags = r.u32()
		e.CorElementType = r.u8()
		e.Name = r.str()
		n := r.u32()
		if !r.ok() || uint64(n)*8 > uint64(r.remaining()) {
			return BulkType{}, fmt.Errorf("BulkType v%d: %w (type %d of %d)", version, ErrShort, i, count)
		}
		if n > 0 {
			e.TypeParameters = make([]uint64, n)
			for j := range e.TypeParameters {
				e.TypeParameters[j] = r.u64()
			}
		}
		bt.Types = append(bt.Types, e)
	}
	if !r.ok() {
		return BulkType{}, short("BulkType", version, len(payload))
	}
	return bt, nil
}
