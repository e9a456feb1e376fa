package tracegen_test

import (
	"bytes"
	"io"
	"math"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
)

// TestGeneratedPayloads: every runtime event the generator writes decodes
// through its typed decoder (the runtime's layouts), and the decoded
// values add up to what the generator says it wrote: GC numbers in
// sequence with their generation, one stop per contention start with the
// waits' total, allocation ticks naming their type consistently, sampler
// suspensions for reason SuspendOther.
func TestGeneratedPayloads(t *testing.T) {
	var buf bytes.Buffer
	gs, err := tracegen.Large(&buf, 2<<20, 11)
	if err != nil {
		t.Fatal(err)
	}
	r, err := nettrace.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	ptr := r.Header().PointerSize
	var gcs, ends, allocs, starts, stops, otherSusp, gcSusp int64
	var waited float64
	typeOf := map[uint64]string{}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !clrevents.HasDecoder(ev.Meta) {
			continue
		}
		v, err := clrevents.Decode(ev, ptr)
		if err != nil {
			t.Fatalf("%s v%d: %v", ev.Meta.Name, ev.Meta.Version, err)
		}
		switch e := v.(type) {
		case clrevents.GCStart:
			gcs++
			if int64(e.Count) != gcs || e.Depth > 2 {
				t.Fatalf("GCStart %d: count %d depth %d", gcs, e.Count, e.Depth)
			}
		case clrevents.GCEnd:
			ends++
		case clrevents.GCSuspendEEBegin:
			switch e.Reason {
			case clrevents.SuspendOther:
				otherSusp++
			case clrevents.SuspendForGC:
				gcSusp++
			}
		case clrevents.AllocationTick:
			allocs++
			if n, ok := typeOf[e.TypeID]; ok && n != e.TypeName || e.TypeName == "" {
				t.Fatalf("type id %x named %q and %q", e.TypeID, n, e.TypeName)
			}
			typeOf[e.TypeID] = e.TypeName
		case clrevents.ContentionStart:
			starts++
			if e.LockID == 0 || e.LockOwnerThreadID == 0 || len(ev.Stack) == 0 {
				t.Fatalf("contention start %+v with %d frames", e, len(ev.Stack))
			}
		case clrevents.ContentionStop:
			stops++
			waited += e.DurationNs
		}
	}
	if gcs != gs.GCs || ends != gs.GCs || gcSusp != gs.GCs || allocs != gs.AllocTicks || starts != gs.Contentions || stops != gs.Contentions {
		t.Errorf("decoded %d GC starts, %d ends, %d GC suspensions, %d allocation ticks, %d/%d contention starts/stops; generator: %+v",
			gcs, ends, gcSusp, allocs, starts, stops, gs)
	}
	if math.Abs(waited-float64(gs.ContentionNanos)) > 1 || len(typeOf) < 10 || otherSusp < gs.Samples/32 {
		t.Errorf("waits %.0f ns (generator %d), %d types, %d sampler suspensions for %d samples", waited, gs.ContentionNanos, len(typeOf), otherSusp, gs.Samples)
	}
}
