//go:build compat

package clrevents

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// Tests on the compatibility suite: third-party traces (CATALOG.md and
// PerfView's baselines give the expected values).

// TestGCDecodersObjver4 checks the first payloads against PerfView's
// baseline (golden/perfview/...objver4.nettrace.baseline.txt).
func TestGCDecodersObjver4(t *testing.T) {
	p, ptr := firstPayloads(t, tracetest.CompatPath(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"))
	st, err := DecodeGCStart(p[[2]uint32{IDGCStart, 2}], 2, ptr)
	if err != nil || st != (GCStart{Count: 1, Depth: 0, Reason: ReasonAllocSmall, Type: GCNonConcurrent}) {
		t.Errorf("GCStart %+v %v", st, err)
	}
	end, err := DecodeGCEnd(p[[2]uint32{IDGCEnd, 1}], 1, ptr)
	if err != nil || end != (GCEnd{Count: 1}) {
		t.Errorf("GCEnd %+v %v", end, err)
	}
	// The first SuspendEEStart is the sampler's: SuspendOther, Count=-1.
	su, err := DecodeGCSuspendEEBegin(p[[2]uint32{IDGCSuspendEEBegin, 1}], 1, ptr)
	if err != nil || su.Reason != SuspendOther || su.Count != 0xFFFFFFFF || su.Reason.String() != "SuspendOther" {
		t.Errorf("SuspendEEBegin %+v %v", su, err)
	}
	hs, err := DecodeGCHeapStats(p[[2]uint32{IDGCHeapStats, 1}], 1, ptr)
	if err != nil || hs.GenerationSize[0] != 0x18 || hs.GenerationSize[1] != 0x331C8 || hs.GenerationSize[3] != 0x8CB0 ||
		hs.TotalPromotedSize[0] != 0x2AD90 || hs.PinnedObjectCount != 2 || hs.SinkBlockCount != 14 || hs.GCHandleCount != 55 ||
		hs.HasPOH || hs.TotalHeapSize() != 0x3BEA8 {
		t.Errorf("HeapStats %+v %v", hs, err)
	}
	gh, err := DecodeGCGlobalHeapHistory(p[[2]uint32{IDGCGlobalHeapHistory, 2}], 2, ptr)
	if err != nil || gh.FinalYoungestDesired != 0x358F40 || gh.NumHeaps != 1 || gh.Reason != ReasonAllocSmall ||
		gh.GlobalMechanisms != GlobalCompaction|GlobalPromotion|GlobalCardBundles {
		t.Errorf("GlobalHeapHistory %+v %v", gh, err)
	}
	ph, err := DecodeGCPerHeapHistory(p[[2]uint32{IDGCPerHeapHistory, 3}], 3, ptr)
	if err != nil || len(ph.Gens) != 4 || ph.HeapIndex != 0 || ph.ExtraGen0Commit != 3005960 {
		t.Fatalf("PerHeapHistory %+v %v", ph, err)
	}
	g0, g1 := ph.Gens[0], ph.Gens[1]
	if g0.SizeBefore != 3154608 || g0.SizeAfter != 24 || g0.ObjSpaceBefore() != 2386448 || g0.FreeObjBefore != 768160 ||
		g0.Survived() != 4936+170568 || g0.PinnedSurv != 4936 || g0.NewAllocation != 3510080 {
		t.Errorf("gen0 %+v", g0)
	}
	if g1.SizeAfter != 209352 || g1.Fragmentation() != 32888 || g1.ObjSizeAfter() != 176464 {
		t.Errorf("gen1 %+v", g1)
	}
	mk, err := DecodeGCMarkWithType(p[[2]uint32{IDGCMarkWithType, 0}], 0, ptr)
	if err != nil || mk.HeapNum != 0 || mk.Type != 0 || mk.Bytes != 104989 || mk.TypeName() != "Stack" {
		t.Errorf("MarkWithType %+v %v", mk, err)
	}
	tr, err := DecodeGCTriggered(p[[2]uint32{IDGCTriggered, 0}], 0, ptr)
	if err != nil || tr.Reason != ReasonAllocSmall {
		t.Errorf("Triggered %+v %v", tr, err)
	}
}

// TestGCDecodersNet10 covers the newer versions (HeapStats v2 with POH,
// GlobalHeapHistory v4, 5-generation PerHeapHistory, GCDynamicEvent).
func TestGCDecodersNet10(t *testing.T) {
	p, ptr := firstPayloads(t, tracetest.CompatPath(t, "filtrace__alloc.nettrace"))
	hs, err := DecodeGCHeapStats(p[[2]uint32{IDGCHeapStats, 2}], 2, ptr)
	if err != nil || !hs.HasPOH {
		t.Errorf("HeapStats v2 %+v %v", hs, err)
	}
	gh, err := DecodeGCGlobalHeapHistory(p[[2]uint32{IDGCGlobalHeapHistory, 4}], 4, ptr)
	if err != nil || gh.NumHeaps != 1 || (len(gh.Times) != 7 && len(gh.Times) != 8) {
		t.Errorf("GlobalHeapHistory v4 %+v %v", gh, err)
	}
	ph, err := DecodeGCPerHeapHistory(p[[2]uint32{IDGCPerHeapHistory, 3}], 3, ptr)
	if err != nil || len(ph.Gens) != 5 {
		t.Errorf("PerHeapHistory %+v %v", ph, err)
	}
	de, err := DecodeGCDynamicEvent(p[[2]uint32{IDGCDynamicEvent, 0}], 0, ptr)
	if err != nil || de.Name == "" || len(de.Data) == 0 {
		t.Errorf("GCDynamicEvent %+v %v", de, err)
	}
	st, err := DecodeGCStart(p[[2]uint32{IDGCStart, 2}], 2, ptr)
	if err != nil || st.Count != 1 {
		t.Errorf("GCStart %+v %v", st, err)
	}
}

// TestDecodeEveryCatalogEvent decodes every runtime event of every real
// trace that has a typed decoder, every version present, and requires no
// error. It also pins the set of (event, version) pairs decoded, so a
// decoder that stops covering a version the catalog has is noticed.
func TestDecodeEveryCatalogEvent(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(tracetest.CompatDir(t), "*.ne*"))
	if len(files) != 19 {
		t.Fatalf("want the 19 catalog traces, found %d", len(files))
	}
	decoded := map[string]int{}
	for _, f := range files {
		r := tracetest.OpenFile(t, f, nettrace.NewReader)
		readAll(t, r, func(ev *nettrace.Event) {
			if !HasDecoder(ev.Meta) {
				return
			}
			if _, err := Decode(ev, r.Header().PointerSize); err != nil {
				t.Errorf("%s: %s v%d (%d bytes): %v", filepath.Base(f), ev.Meta.FullName(), ev.Meta.Version, len(ev.Payload), err)
				return
			}
			decoded[fmt.Sprintf("%d/%d v%d", ev.Meta.Runtime, ev.Meta.EventID, ev.Meta.Version)]++
		})
	}
	var keys []string
	for k := range decoded {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	got := strings.Join(keys, ", ")
	// Runtime (1), rundown (2) and sample-profiler (4) events with their
	// versions, as present in the catalog (CATALOG.md §6).
	want := "1/1 v2, 1/10 v3, 1/10 v4, 1/11 v1, 1/12 v1, 1/14 v1, 1/142 v1, 1/142 v2, 1/143 v1, 1/143 v2, 1/144 v1, 1/144 v2, " +
		"1/15 v0, 1/151 v1, 1/152 v2, 1/153 v2, 1/16 v0, 1/18 v0, 1/19 v0, 1/2 v1, 1/202 v0, 1/204 v3, 1/205 v2, 1/205 v4, 1/21 v0, " +
		"1/22 v0, 1/23 v0, 1/250 v0, 1/251 v0, 1/256 v0, 1/3 v1, 1/301 v0, 1/302 v0, 1/35 v0, 1/36 v0, 1/37 v0, 1/38 v0, 1/39 v0, 1/4 v1, 1/4 v2, " +
		"1/50 v0, 1/51 v0, 1/54 v0, 1/55 v0, 1/56 v0, 1/57 v0, 1/59 v0, " + // the thread pool's
		"1/7 v1, 1/8 v1, 1/80 v1, 1/81 v1, 1/81 v2, 1/85 v0, 1/9 v1, 1/90 v0, 1/91 v1, 2/144 v1, 2/144 v2, 2/152 v1, 2/154 v2, 4/0 v0"
	if got != want {
		t.Errorf("decoded event versions:\n got %s\nwant %s", got, want)
	}
	if decoded["1/1 v2"] != 478+385+7+6*5+1 {
		t.Errorf("GCStart decoded %d times", decoded["1/1 v2"])
	}
}

// TestRealRundown decodes every method and module event of real traces:
// counts from CATALOG.md §8, and every method named and sized.
func TestRealRundown(t *testing.T) {
	for _, c := range []struct {
		name             string
		methods, modules int
		sampleTypes      [3]int
	}{
		// §8.12: 6,885 MethodDCEndVerbose (v1+v2), 69 ModuleDCEnd,
		// 82,934 External + 11 Managed samples.
		{"dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace", 6885, 69, [3]int{0, 82934, 11}},
		// §8.13: 483 methods, 12 modules, 2,427 External + 3,904 Managed.
		{"perfview__mixed_managed_external_samples.nettrace", 483, 12, [3]int{0, 2427, 3904}},
	} {
		var methods, modules int
		var types [3]int
		r := tracetest.OpenCompat(t, c.name, nettrace.NewReader)
		readAll(t, r, func(ev *nettrace.Event) {
			m := ev.Meta
			switch {
			case Is(m, nettrace.Rundown, IDRundownMethodDCEndVerbose):
				me, err := DecodeMethodVerbose(ev.Payload, m.Version, r.Header().PointerSize)
				if err != nil || me.Name == "" || me.Size == 0 || me.StartAddress == 0 {
					t.Fatalf("%s: %+v %v", c.name, me, err)
				}
				methods++
			case Is(m, nettrace.Rundown, IDRundownModuleDCEnd):
				mo, err := DecodeModule(ev.Payload, m.Version, r.Header().PointerSize)
				if err != nil || !strings.HasSuffix(mo.ILPath, ".dll") {
					t.Fatalf("%s: %+v %v", c.name, mo, err)
				}
				modules++
			case Is(m, nettrace.SampleProfiler, IDThreadSample):
				s, err := DecodeThreadSample(ev.Payload, m.Version, r.Header().PointerSize)
				if err != nil || s.Type > 2 {
					t.Fatalf("%s: sample %+v %v", c.name, s, err)
				}
				types[s.Type]++
			}
		})
		if methods != c.methods || modules != c.modules || types != c.sampleTypes {
			t.Errorf("%s: %d methods, %d modules, types %v", c.name, methods, modules, types)
		}
	}
}

// TestAllocationTickV3Real: the first tick of the .NET Core 3.0 objver4
// trace (values cross-checked against the PerfView baseline's type names).
func TestAllocationTickV3Real(t *testing.T) {
	ps, vs := runtimePayloads(t, tracetest.CompatPath(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"), IDGCAllocationTick, 1)
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
	ps, vs := runtimePayloads(t, tracetest.CompatPath(t, "filtrace__alloc.nettrace"), IDGCAllocationTick, 0)
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
	ps, vs := runtimePayloads(t, tracetest.CompatPath(t, file), IDGCBulkMovedObjectRanges, 0)
	if len(ps) != 478 {
		t.Fatalf("%d moved-range events, want 478", len(ps))
	}
	b, err := DecodeBulkMovedRanges(ps[0], vs[0], 8)
	if err != nil || b.Index != 0 || len(b.Ranges) != 142 || b.Ranges[0] != (MovedRange{0x19a00001048, 0x19a00001048, 0x330}) {
		t.Fatalf("%v %d %+v", err, len(b.Ranges), b.Ranges[:1])
	}
	gs, gv := runtimePayloads(t, tracetest.CompatPath(t, file), IDGCGenerationRange, 0)
	if len(gs) != 3824 {
		t.Fatalf("%d generation ranges, want 3824", len(gs))
	}
	g, err := DecodeGenerationRange(gs[0], gv[0], 8)
	if err != nil || g != (GenerationRange{Generation: GenLOH, Start: 0x19a10001000, UsedLength: 0x8cb0, ReservedLength: 0x7fff000}) {
		t.Errorf("%v %+v", err, g)
	}
	ss, sv := runtimePayloads(t, tracetest.CompatPath(t, "diagnostics__trace.nettrace"), IDGCBulkSurvivingObjectRanges, 0)
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
	ps, vs := runtimePayloads(t, tracetest.CompatPath(t, "filtrace__wait.nettrace"), IDBulkType, 0)
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
