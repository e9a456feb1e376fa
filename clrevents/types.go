package clrevents

import (
	"fmt"

	"github.com/clrspy/clrspy/nettrace"
)

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
	r := nettrace.NewCursor(payload)
	count := r.U32()
	r.U16() // ClrInstanceID
	if !r.OK() {
		return BulkType{}, short("BulkType", version, len(payload))
	}
	if uint64(count)*minBulkTypeEntry > uint64(r.Rest()) {
		return BulkType{}, fmt.Errorf("BulkType v%d: %w (Count %d cannot fit in %d bytes)", version, ErrShort, count, r.Rest())
	}
	bt := BulkType{Types: make([]BulkTypeEntry, 0, count)}
	for i := uint32(0); i < count; i++ {
		var e BulkTypeEntry
		e.TypeID = r.U64()
		e.ModuleID = r.U64()
		e.TypeNameID = r.U32()
		e.Flags = r.U32()
		e.CorElementType = r.U8()
		e.Name = r.UTF16Z()
		n := r.U32()
		if !r.OK() || uint64(n)*8 > uint64(r.Rest()) {
			return BulkType{}, fmt.Errorf("BulkType v%d: %w (type %d of %d)", version, ErrShort, i, count)
		}
		if n > 0 {
			e.TypeParameters = make([]uint64, n)
			for j := range e.TypeParameters {
				e.TypeParameters[j] = r.U64()
			}
		}
		bt.Types = append(bt.Types, e)
	}
	if !r.OK() {
		return BulkType{}, short("BulkType", version, len(payload))
	}
	return bt, nil
}
