package clrevents

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

const heapTraces = "../../shared/traces/"

// runtimePayloads returns copies of the payloads (and versions) of runtime
// event id in a real trace, up to limit (0: all).
func runtimePayloads(tb testing.TB, file string, id uint32, limit int) ([][]byte, []uint32) {
	tb.Helper()
	f, err := os.Open(heapTraces + file)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r, err := nettrace.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	var vers []uint32
	for limit == 0 || len(out) < limit {
		ev, err := r.Next()
		if err != nil {
			if err != io.EOF && !errors.Is(err, nettrace.ErrTruncated) {
				tb.Fatal(err)
			}
			break
		}
		if ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == id {
			out = append(out, append([]byte(nil), ev.Payload...))
			vers = append(vers, ev.Meta.Version)
		}
	}
	return out, vers
}

// TestAllocationTickV3Real: the first tick of the .NET Core 3.0 objver4
// trace (values cross-checked against the PerfView baseline's type names).
func TestAllocationTickV3Real(t *testing.T) {
	ps, vs := runtimePayloads(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", IDGCAllocationTick, 1)
	a, err := DecodeAllocationTick(ps[0], vs[0], 8)
	if err != nil || vs[0] != 3 {
		t.Fatal(err, vs[0])
	}
	if a.AllocationAmount != 104096 || a.AllocationKind != AllocSmall || a.TypeName != "System.Object[]" ||
		a.TypeID != 0x7ffea911ea28 || a.Address != 0x19a00017fe8 || !a.HasAddress || a.HasSize {
		t.Errorf("%+v", a)
	}
}

// TestAllocationTickV4Real checks the filtrace alloc trace against the
// facts CATALOG.md §8.3 gives: 254 ticks, 155 System.Byte[], 90
// System.String, all small-object heap, ΣAllocationAmount64 = 27,011,600.
func TestAllocationTickV4Real(t *testing.T) {
	ps, vs := runtimePayloads(t, "filtrace__alloc.nettrace", IDGCAllocationTick, 0)
	var sum uint64
	names := map[string]int{}
	for i, p := range ps {
		a, err := DecodeAllocationTick(p, vs[i], 8)
		if err != nil {
			t.Fatal(err)
		}
		if a.AllocationKind != AllocSmall || !a.HasSize || a.ObjectSize == 0 || a.Address == 0 {
			t.Errorf("tick %d: %+v", i, a)
		}
		sum += a.AllocationAmount
		names[a.TypeName]++
	}
	if len(ps) != 254 || sum != 27011600 || names["System.Byte[]"] != 155 || names["System.String"] != 90 {
		t.Errorf("%d ticks, Σ %d, %d Byte[], %d String", len(ps), sum, names["System.Byte[]"], names["System.String"])
	}
	first, _ := DecodeAllocationTick(ps[0], vs[0], 8)
	if first.TypeName != "System.Reflection.MethodInfo[]" || first.ObjectSize != 2064 || first.AllocationAmount != 110424 {
		t.Errorf("first tick %+v", first)
	}
}

// TestMovementReal: objver4 has one moved-ranges event per GC (478) and 8
// generation ranges per GC (3,824), CATALOG.md §8.1.
func TestMovementReal(t *testing.T) {
	const file = "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"
	ps, vs := runtimePayloads(t, file, IDGCBulkMovedObjectRanges, 0)
	if len(ps) != 478 {
		t.Fatalf("%d moved-range events, want 478", len(ps))
	}
	b, err := DecodeBulkMovedRanges(ps[0], vs[0], 8)
	if err != nil || b.Index != 0 || len(b.Ranges) != 142 || b.Ranges[0] != (MovedRange{0x19a00001048, 0x19a00001048, 0x330}) {
		t.Fatalf("%v %d %+v", err, len(b.Ranges), b.Ranges[:1])
	}
	gs, gv := runtimePayloads(t, file, IDGCGenerationRange, 0)
	if len(gs) != 3824 {
		t.Fatalf("%d generation ranges, want 3824", len(gs))
	}
	g, err := DecodeGenerationRange(gs[0], gv[0], 8)
	if err != nil || g != (GenerationRange{Generation: GenLOH, Start: 0x19a10001000, UsedLength: 0x8cb0, ReservedLength: 0x7fff000}) {
		t.Errorf("%v %+v", err, g)
	}
	ss, sv := runtimePayloads(t, "diagnostics__trace.nettrace", IDGCBulkSurvivingObjectRanges, 0)
	total := 0
	for i, p := range ss {
		s, err := DecodeBulkSurvivingRanges(p, sv[i], 8)
		if err != nil {
			t.Fatal(err)
		}
		total += len(s.Ranges)
	}
	if len(ss) != 23 || total != 88556 {
		t.Errorf("%d surviving events with %d ranges, want 23 and 88556", len(ss), total)
	}
}

// TestBulkTypeReal: filtrace wait has 50 BulkType events (CATALOG.md §8.5).
func TestBulkTypeReal(t *testing.T) {
	ps, vs := runtimePayloads(t, "filtrace__wait.nettrace", IDBulkType, 0)
	if len(ps) != 50 {
		t.Fatalf("%d BulkType events, want 50", len(ps))
	}
	for i, p := range ps {
		bt, err := DecodeBulkType(p, vs[i], 8)
		if err != nil || len(bt.Types) == 0 {
			t.Fatalf("event %d: %v", i, err)
		}
		if i == 0 && (bt.Types[0].Name != "System.Reflection.Emit.DynamicResolver" || bt.Types[0].TypeID != 0x7ffbcbda6508) {
			t.Errorf("first type %+v", bt.Types[0])
		}
	}
}

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
	ps, vs := runtimePayloads(f, file, id, n)
	for i, p := range ps {
		f.Add(p, vs[i])
	}
}

func FuzzAllocationTick(f *testing.F) {
	seedHeap(f, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", IDGCAllocationTick, 3)
	seedHeap(f, "filtrace__alloc.nettrace", IDGCAllocationTick, 3)
	f.Fuzz(func(t *testing.T, p []byte, v uint32) {
		_, _ = DecodeAllocationTick(p, v%6, 8)
		_, _ = DecodeAllocationSampled(p, 0, 8)
		_, _ = DecodeSampledObjectAllocation(p, 0, 4)
	})
}

func FuzzMovement(f *testing.F) {
	seedHeap(f, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", IDGCBulkMovedObjectRanges, 2)
	seedHeap(f, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", IDGCGenerationRange, 2)
	seedHeap(f, "filtrace__wait.nettrace", IDGCBulkSurvivingObjectRanges, 2)
	f.Fuzz(func(t *testing.T, p []byte, v uint32) {
		if b, err := DecodeBulkMovedRanges(p, v, 8); err == nil && 10+24*len(b.Ranges) > len(p) {
			t.Fatalf("%d ranges from %d bytes", len(b.Ranges), len(p))
		}
		_, _ = DecodeBulkSurvivingRanges(p, v, 4)
		_, _ = DecodeGenerationRange(p, v, 8)
	})
}

func FuzzBulkType(f *testing.F) {
	seedHeap(f, "filtrace__wait.nettrace", IDBulkType, 3)
	f.Fuzz(func(t *testing.T, p []byte, v uint32) {
		_, _ = DecodeBulkType(p, v, 8)
	})
}
