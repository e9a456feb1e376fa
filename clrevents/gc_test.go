package clrevents

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

// firstPayloads returns the first payload of each (runtime event id,
// version) in a real trace.
func firstPayloads(t testing.TB, name string) (map[[2]uint32][]byte, int) {
	t.Helper()
	f, err := os.Open("../../shared/traces/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := nettrace.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[[2]uint32][]byte{}
	for {
		ev, err := r.Next()
		if err != nil {
			if err != io.EOF && !errors.Is(err, nettrace.ErrTruncated) {
				t.Fatal(err)
			}
			break
		}
		if ev.Meta.Runtime != nettrace.Runtime {
			continue
		}
		k := [2]uint32{ev.Meta.EventID, ev.Meta.Version}
		if _, ok := out[k]; !ok {
			out[k] = append([]byte(nil), ev.Payload...)
		}
	}
	return out, r.Header().PointerSize
}

// TestGCDecodersObjver4 checks the first payloads against PerfView's
// baseline (golden/perfview/...objver4.nettrace.baseline.txt).
func TestGCDecodersObjver4(t *testing.T) {
	p, ptr := firstPayloads(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")
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
	p, ptr := firstPayloads(t, "filtrace__alloc.nettrace")
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

func TestGCDecodersShort(t *testing.T) {
	for name, fn := range map[string]func([]byte) error{
		"GCStart":    func(b []byte) error { _, err := DecodeGCStart(b, 2, 8); return err },
		"GCEnd":      func(b []byte) error { _, err := DecodeGCEnd(b, 1, 8); return err },
		"Suspend":    func(b []byte) error { _, err := DecodeGCSuspendEEBegin(b, 1, 8); return err },
		"HeapStats":  func(b []byte) error { _, err := DecodeGCHeapStats(b, 2, 8); return err },
		"Global":     func(b []byte) error { _, err := DecodeGCGlobalHeapHistory(b, 4, 8); return err },
		"PerHeap":    func(b []byte) error { _, err := DecodeGCPerHeapHistory(b, 3, 8); return err },
		"Mark":       func(b []byte) error { _, err := DecodeGCMarkWithType(b, 0, 8); return err },
		"Triggered":  func(b []byte) error { _, err := DecodeGCTriggered(b, 0, 8); return err },
		"DynamicEvt": func(b []byte) error { _, err := DecodeGCDynamicEvent(b, 0, 8); return err },
	} {
		if err := fn([]byte{1, 0, 0}); err == nil {
			t.Errorf("%s: 3-byte payload accepted", name)
		}
	}
	if _, err := DecodeGCStart([]byte{1, 0, 0, 0, 2, 0, 0, 0}, 0, 8); err != nil {
		t.Errorf("GCStart v0: %v", err)
	}
	// A hostile generation count must not allocate or read past the end.
	b := make([]byte, 86)
	b[82] = 0xFF
	if _, err := DecodeGCPerHeapHistory(b, 3, 8); err == nil {
		t.Error("PerHeapHistory with 255 generations in 86 bytes accepted")
	}
}

func FuzzGCDecoders(f *testing.F) {
	for _, name := range []string{"perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", "filtrace__alloc.nettrace"} {
		p, _ := firstPayloads(f, name)
		for k, b := range p {
			switch k[0] {
			case IDGCStart, IDGCEnd, IDGCSuspendEEBegin, IDGCHeapStats, IDGCGlobalHeapHistory, IDGCPerHeapHistory,
				IDGCMarkWithType, IDGCTriggered, IDGCDynamicEvent:
				f.Add(b, uint8(k[1]), true)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, version uint8, ptr8 bool) {
		ptr := 4
		if ptr8 {
			ptr = 8
		}
		v := uint32(version % 6)
		DecodeGCStart(b, v, ptr)
		DecodeGCEnd(b, v, ptr)
		DecodeGCSuspendEEBegin(b, v, ptr)
		DecodeGCHeapStats(b, v, ptr)
		DecodeGCGlobalHeapHistory(b, v, ptr)
		DecodeGCPerHeapHistory(b, v, ptr)
		DecodeGCMarkWithType(b, v, ptr)
		DecodeGCTriggered(b, v, ptr)
		if e, err := DecodeGCDynamicEvent(b, v, ptr); err == nil && len(e.Data) > len(b) {
			t.Fatal("dynamic event data longer than the payload")
		}
	})
}
