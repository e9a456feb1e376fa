package tracegen_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
)

// TestRoundTrip: every typed method writes an event that the reader gives
// back at its time, on its thread, with its stack and lost count, and that
// clrevents decodes to the values given (the runtime's layouts). Threads
// write at distinct times: the reader orders events of different threads
// at one timestamp as it likes, as it does the runtime's.
func TestRoundTrip(t *testing.T) {
	g := tracegen.New()
	gc, app := g.Thread(100), g.Thread(200)
	app.At(time.Millisecond).Stack(0x10, 0x20).GCTriggered(clrevents.ReasonInduced)
	gc.At(2*time.Millisecond).SuspendEE(clrevents.SuspendForGC, 7).SuspendEEEnd().
		GCStart(7, 2, clrevents.ReasonInduced, clrevents.GCBackground).
		After(time.Millisecond).GCEnd(7, 2).
		HeapStats(clrevents.GCHeapStats{GenerationSize: [5]uint64{1, 2, 3, 4, 5}, GCHandleCount: 9, HasPOH: true}).
		Restart()
	app.After(time.Microsecond).Lost(3).AllocationTick(clrevents.AllocationTick{AllocationAmount: 100_000, TypeID: 0xAB, TypeName: "T[]", Address: 0x5000, ObjectSize: 24})
	app.After(time.Microsecond).ContentionStart(0xA, 0xB, 0xC).After(time.Microsecond).ContentionStop(1000)
	g.Thread(900).After(time.Microsecond).Stack(0x30).Sample(200, clrevents.SampleManaged)
	hdr := g.Header()
	want := []struct {
		v       any
		ns      int64
		thread  uint64
		stack   []uint64
		lost    uint32
		version uint32
	}{
		{clrevents.GCTriggered{Reason: clrevents.ReasonInduced}, 1e6, 200, []uint64{0x10, 0x20}, 0, 0},
		{clrevents.GCSuspendEEBegin{Reason: clrevents.SuspendForGC, Count: 7}, 2e6, 100, nil, 0, 1},
		{nil, 2e6, 100, nil, 0, 1}, // SuspendEEEnd
		{clrevents.GCStart{Count: 7, Depth: 2, Reason: clrevents.ReasonInduced, Type: clrevents.GCBackground}, 2e6, 100, nil, 0, 2},
		{clrevents.GCEnd{Count: 7, Depth: 2}, 3e6, 100, nil, 0, 1},
		{clrevents.GCHeapStats{GenerationSize: [5]uint64{1, 2, 3, 4, 5}, GCHandleCount: 9, HasPOH: true}, 3e6, 100, nil, 0, 2},
		{nil, 3e6, 100, nil, 0, 1}, // RestartEEBegin
		{nil, 3e6, 100, nil, 0, 1}, // RestartEEEnd
		{clrevents.AllocationTick{AllocationAmount: 100_000, TypeID: 0xAB, TypeName: "T[]", Address: 0x5000, ObjectSize: 24,
			HasType: true, HasAddress: true, HasSize: true}, 3.001e6, 200, nil, 3, 4},
		{clrevents.ContentionStart{ClrInstanceID: 1, HasLock: true, LockID: 0xA, AssociatedObjectID: 0xB, LockOwnerThreadID: 0xC}, 3.002e6, 200, nil, 0, 2},
		{clrevents.ContentionStop{ClrInstanceID: 1, HasDuration: true, DurationNs: 1000}, 3.003e6, 200, nil, 0, 1},
		{clrevents.ThreadSample{Type: clrevents.SampleManaged}, 3.004e6, 200, []uint64{0x30}, 0, 0},
	}
	i := 0
	g.Run(t, func(ev *nettrace.Event) {
		if i >= len(want) {
			t.Fatalf("event %d: more events than written", i)
		}
		w := want[i]
		i++
		if got := hdr.Nanos(ev.Timestamp); got != w.ns || ev.ThreadID != w.thread || !reflect.DeepEqual(ev.Stack, w.stack) && len(w.stack)+len(ev.Stack) > 0 ||
			ev.LostBefore != w.lost || ev.Meta.Version != w.version {
			t.Errorf("event %d: at %d ns on thread %d, stack %x, %d lost, version %d; want %+v", i-1, got, ev.ThreadID, ev.Stack, ev.LostBefore, ev.Meta.Version, w)
		}
		if w.v == nil {
			return
		}
		v, err := clrevents.Decode(ev, hdr.PointerSize)
		if err != nil || !reflect.DeepEqual(v, w.v) {
			t.Errorf("event %d: decoded %+v (%v), want %+v", i-1, v, err, w.v)
		}
	})
	if i != len(want) {
		t.Errorf("read %d events, wrote %d", i, len(want))
	}
}

// TestHeapEventsRoundTrip: the heap events decode to the values given.
func TestHeapEventsRoundTrip(t *testing.T) {
	g := tracegen.New()
	th := g.Thread(1)
	moved := []clrevents.MovedRange{{OldBase: 0x100, NewBase: 0x80, Length: 0x10}, {OldBase: 0x200, NewBase: 0x90, Length: 8}}
	surv := []clrevents.SurvivingRange{{Base: 0x300, Length: 0x20}}
	th.Tick(1).MovedRanges(3, moved...).
		Tick(2).SurvivingRanges(4, surv...).
		Tick(3).GenerationRange(clrevents.GenerationRange{Generation: 1, Start: 0x4000, UsedLength: 0x100, ReservedLength: 0x1000}).
		Tick(4).BulkType(clrevents.BulkTypeEntry{TypeID: 0x77, ModuleID: 1, TypeNameID: 0x02000001, CorElementType: 0x12, Name: "A.B", TypeParameters: []uint64{0x78}}).
		Tick(5).SampledObjectAllocation(clrevents.SampledObjectAllocation{Address: 0x5000, TypeID: 0x77, ObjectCount: 10, TotalSize: 320}).
		Tick(6).AllocationSampled(clrevents.AllocationSampled{TypeID: 0x88, TypeName: "C", Address: 0x6000, ObjectSize: 32, SampledByteOffset: 5})
	want := []any{
		clrevents.BulkMovedRanges{Index: 3, Ranges: moved},
		clrevents.BulkSurvivingRanges{Index: 4, Ranges: surv},
		clrevents.GenerationRange{Generation: 1, Start: 0x4000, UsedLength: 0x100, ReservedLength: 0x1000},
		clrevents.BulkType{Types: []clrevents.BulkTypeEntry{{TypeID: 0x77, ModuleID: 1, TypeNameID: 0x02000001, CorElementType: 0x12, Name: "A.B", TypeParameters: []uint64{0x78}}}},
		clrevents.SampledObjectAllocation{Address: 0x5000, TypeID: 0x77, ObjectCount: 10, TotalSize: 320},
		clrevents.AllocationSampled{TypeID: 0x88, TypeName: "C", Address: 0x6000, ObjectSize: 32, SampledByteOffset: 5},
	}
	i := 0
	g.Run(t, func(ev *nettrace.Event) {
		v, err := clrevents.Decode(ev, 8)
		if i >= len(want) || err != nil || !reflect.DeepEqual(v, want[i]) {
			t.Errorf("event %d: %+v (%v)", i, v, err)
		}
		i++
	})
	if i != len(want) {
		t.Errorf("read %d events, wrote %d", i, len(want))
	}
}

// TestFormats: the same description read back from a V4 and a V6 stream
// gives the same events.
func TestFormats(t *testing.T) {
	var got [2][]string
	for i, format := range []int{nettrace.FormatNetTraceV4, nettrace.FormatNetTraceV6} {
		g := tracegen.NewOptions(tracegen.Options{Format: format, QPCFrequency: 10_000_000})
		g.Thread(7).At(time.Millisecond).Stack(1, 2).ContentionStart(0xA, 0xB, 0xC).
			After(time.Millisecond).Lost(2).ContentionStop(1e6)
		g.Thread(8).At(5*time.Millisecond).Sample(7, clrevents.SampleExternal)
		hdr := g.Run(t, func(ev *nettrace.Event) {
			got[i] = append(got[i], fmt.Sprintf("%d %d %d %x %d % x", ev.Meta.EventID, ev.Timestamp, ev.ThreadID, ev.Stack, ev.LostBefore, ev.Payload))
		})
		if hdr.FormatVersion != format || hdr.QPCFrequency != 10_000_000 {
			t.Errorf("header %+v", hdr)
		}
	}
	if len(got[0]) != 3 || !strings.HasPrefix(got[0][1], "91 20000 7 [] 2 ") || !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("V4 %q\nV6 %q", got[0], got[1])
	}
}
