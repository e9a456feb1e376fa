package clrevents

import (
	"fmt"

	"github.com/clrspy/clrspy/nettrace"
)

// MovedRange is one element of GCBulkMovedObjectRanges: the bytes
// [OldBase, OldBase+Length) now live at [NewBase, NewBase+Length).
type MovedRange struct {
	OldBase uint64
	NewBase uint64
	Length  uint64
}

// SurvivingRange is one element of GCBulkSurvivingObjectRanges: live bytes
// that a sweeping (non-compacting) GC left in place.
type SurvivingRange struct {
	Base   uint64
	Length uint64
}

// BulkMovedRanges is GCBulkMovedObjectRanges (id 22). Index numbers the bulk
// events of one heap walk from 0; under server GC each heap restarts it, so
// it identifies nothing across heaps.
type BulkMovedRanges struct {
	Index  uint32
	Ranges []MovedRange
}

// BulkSurvivingRanges is GCBulkSurvivingObjectRanges (id 21).
type BulkSurvivingRanges struct {
	Index  uint32
	Ranges []SurvivingRange
}

// bulkHeader reads Index, Count and ClrInstanceID and checks that Count
// elements of elem bytes fit, so a hostile Count cannot make us allocate.
func bulkHeader(r *nettrace.Cursor, event string, version uint32, elem int) (index, count uint32, err error) {
	index = r.U32()
	count = r.U32()
	r.U16() // ClrInstanceID
	if !r.OK() {
		return 0, 0, short(event, version, r.Pos()+r.Rest())
	}
	if uint64(count)*uint64(elem) > uint64(r.Rest()) {
		return 0, 0, fmt.Errorf("%s v%d: %w (Count %d needs %d bytes, %d left)", event, version, ErrShort, count, uint64(count)*uint64(elem), r.Rest())
	}
	return index, count, nil
}

// DecodeBulkMovedRanges decodes GCBulkMovedObjectRanges v0. The returned
// slice is freshly allocated.
func DecodeBulkMovedRanges(payload []byte, version uint32, ptrSize int) (BulkMovedRanges, error) {
	return decodeBulkMoved(payload, version, ptrSize, nil)
}

// AppendBulkMovedRanges decodes like DecodeBulkMovedRanges but appends the
// ranges to dst, so a consumer collecting a GC's ranges does not allocate
// per event.
func AppendBulkMovedRanges(dst []MovedRange, payload []byte, version uint32, ptrSize int) ([]MovedRange, uint32, error) {
	b, err := decodeBulkMoved(payload, version, ptrSize, dst)
	if err != nil {
		return dst, 0, err
	}
	return b.Ranges, b.Index, nil
}

func decodeBulkMoved(payload []byte, version uint32, ptrSize int, dst []MovedRange) (BulkMovedRanges, error) {
	const event = "GCBulkMovedObjectRanges"
	r := nettrace.NewCursor(payload)
	index, count, err := bulkHeader(&r, event, version, 2*ptrSize+8)
	if err != nil {
		return BulkMovedRanges{}, err
	}
	out := dst
	if out == nil {
		out = make([]MovedRange, 0, count)
	}
	for i := uint32(0); i < count; i++ {
		m := MovedRange{OldBase: r.Ptr(ptrSize), NewBase: r.Ptr(ptrSize), Length: r.U64()}
		out = append(out, m)
	}
	if !r.OK() {
		return BulkMovedRanges{}, short(event, version, len(payload))
	}
	return BulkMovedRanges{Index: index, Ranges: out}, nil
}

// DecodeBulkSurvivingRanges decodes GCBulkSurvivingObjectRanges v0.
func DecodeBulkSurvivingRanges(payload []byte, version uint32, ptrSize int) (BulkSurvivingRanges, error) {
	return decodeBulkSurviving(payload, version, ptrSize, nil)
}

// AppendBulkSurvivingRanges is the appending form of
// DecodeBulkSurvivingRanges.
func AppendBulkSurvivingRanges(dst []SurvivingRange, payload []byte, version uint32, ptrSize int) ([]SurvivingRange, uint32, error) {
	b, err := decodeBulkSurviving(payload, version, ptrSize, dst)
	if err != nil {
		return dst, 0, err
	}
	return b.Ranges, b.Index, nil
}

func decodeBulkSurviving(payload []byte, version uint32, ptrSize int, dst []SurvivingRange) (BulkSurvivingRanges, error) {
	const event = "GCBulkSurvivingObjectRanges"
	r := nettrace.NewCursor(payload)
	index, count, err := bulkHeader(&r, event, version, ptrSize+8)
	if err != nil {
		return BulkSurvivingRanges{}, err
	}
	out := dst
	if out == nil {
		out = make([]SurvivingRange, 0, count)
	}
	for i := uint32(0); i < count; i++ {
		out = append(out, SurvivingRange{Base: r.Ptr(ptrSize), Length: r.U64()})
	}
	if !r.OK() {
		return BulkSurvivingRanges{}, short(event, version, len(payload))
	}
	return BulkSurvivingRanges{Index: index, Ranges: out}, nil
}

// Generations as GCGenerationRange and the allocation events number them.
const (
	GenLOH = 3 // large object heap
	GenPOH = 4 // pinned object heap
)

// GenerationRange is GCGenerationRange (id 23): one generation's segment
// or region, fired at the start and at the end of a GC. On regions-based
// GCs (.NET 7+ 64-bit) a generation has many.
type GenerationRange struct {
	Generation     uint8 // 0, 1, 2, GenLOH, GenPOH
	Start          uint64
	UsedLength     uint64
	ReservedLength uint64
}

// DecodeGenerationRange decodes GCGenerationRange v0.
func DecodeGenerationRange(payload []byte, version uint32, ptrSize int) (GenerationRange, error) {
	var g GenerationRange
	r := nettrace.NewCursor(payload)
	g.Generation = r.U8()
	g.Start = r.Ptr(ptrSize)
	g.UsedLength = r.U64()
	g.ReservedLength = r.U64()
	r.U16() // ClrInstanceID
	if !r.OK() {
		return GenerationRange{}, short("GCGenerationRange", version, len(payload))
	}
	return g, nil
}
