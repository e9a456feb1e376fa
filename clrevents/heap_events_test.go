package clrevents

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

type le []byte

func (b le) u16(v uint16) le { return binary.LittleEndian.AppendUint16(b, v) }
func (b le) u32(v uint32) le { return binary.LittleEndian.AppendUint32(b, v) }
func (b le) u64(v uint64) le { return binary.LittleEndian.AppendUint64(b, v) }
func (b le) wstr(s string) le {
	for _, c := range s {
		b = b.u16(uint16(c))
	}
	return b.u16(0)
}

func TestAllocationSampledAndSampledObject(t *testing.T) {
	p := le{}.u32(1).u16(7).u64(0x1234).wstr("Foo").u64(0xabc0).u64(90000).u64(512)
	a, err := DecodeAllocationSampled(p, 0, 8)
	if err != nil || a != (AllocationSampled{AllocationKind: AllocLarge, TypeID: 0x1234, TypeName: "Foo", Address: 0xabc0, ObjectSize: 90000, SampledByteOffset: 512}) {
		t.Errorf("%v %+v", err, a)
	}
	if _, err := DecodeAllocationSampled(p[:len(p)-1], 0, 8); !errors.Is(err, ErrShort) {
		t.Errorf("short: %v", err)
	}
	s := le{}.u32(0x1000).u32(0x2000).u32(3).u64(72).u16(0) // 4-byte pointers
	o, err := DecodeSampledObjectAllocation(s, 0, 4)
	if err != nil || o != (SampledObjectAllocation{Address: 0x1000, TypeID: 0x2000, ObjectCount: 3, TotalSize: 72}) {
		t.Errorf("%v %+v", err, o)
	}
}

func TestHeapEventsShort(t *testing.T) {
	// A Count that cannot fit must fail before allocating.
	huge := le{}.u32(0).u32(0xffffffff).u16(0)
	if _, err := DecodeBulkMovedRanges(huge, 0, 8); !errors.Is(err, ErrShort) {
		t.Errorf("moved: %v", err)
	}
	if _, err := DecodeBulkSurvivingRanges(huge, 0, 8); !errors.Is(err, ErrShort) {
		t.Errorf("surviving: %v", err)
	}
	if _, err := DecodeBulkType(le{}.u32(0xffffffff).u16(0), 0, 8); !errors.Is(err, ErrShort) {
		t.Errorf("bulktype: %v", err)
	}
	if _, err := DecodeGenerationRange(make([]byte, 26), 0, 8); !errors.Is(err, ErrShort) {
		t.Errorf("genrange: %v", err)
	}
	for v := uint32(0); v <= 4; v++ {
		if _, err := DecodeAllocationTick(make([]byte, 7), v, 8); !errors.Is(err, ErrShort) {
			t.Errorf("tick v%d: %v", v, err)
		}
	}
	if a, err := DecodeAllocationTick(le{}.u32(5).u32(1), 0, 8); err != nil || a.AllocationAmount != 5 || a.HasAddress || a.HasType {
		t.Errorf("tick v0: %v %+v", err, a)
	}
}

func seedHeap(f *testing.F, file string, id uint32, n int) {
	ps, vs := runtimePayloads(f, tracetest.Path(f, file), id, n)
	for i, p := range ps {
		f.Add(p, vs[i])
	}
}

func FuzzAllocationTick(f *testing.F) {
	seedHeap(f, "gc-induced.nettrace", IDGCAllocationTick, 3)
	seedHeap(f, "heap-alloc.nettrace", IDAllocationSampled, 3)
	f.Fuzz(func(t *testing.T, p []byte, v uint32) {
		_, _ = DecodeAllocationTick(p, v%6, 8)
		_, _ = DecodeAllocationSampled(p, 0, 8)
		_, _ = DecodeSampledObjectAllocation(p, 0, 4)
	})
}

func FuzzMovement(f *testing.F) {
	seedHeap(f, "gc-induced.nettrace", IDGCBulkMovedObjectRanges, 2)
	seedHeap(f, "gc-induced.nettrace", IDGCGenerationRange, 2)
	seedHeap(f, "gc-induced.nettrace", IDGCBulkSurvivingObjectRanges, 2)
	f.Fuzz(func(t *testing.T, p []byte, v uint32) {
		if b, err := DecodeBulkMovedRanges(p, v, 8); err == nil && 10+24*len(b.Ranges) > len(p) {
			t.Fatalf("%d ranges from %d bytes", len(b.Ranges), len(p))
		}
		_, _ = DecodeBulkSurvivingRanges(p, v, 4)
		_, _ = DecodeGenerationRange(p, v, 8)
	})
}

func FuzzBulkType(f *testing.F) {
	seedHeap(f, "heap-alloc.nettrace", IDBulkType, 3)
	f.Fuzz(func(t *testing.T, p []byte, v uint32) {
		_, _ = DecodeBulkType(p, v, 8)
	})
}
