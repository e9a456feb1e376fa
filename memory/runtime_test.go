package memory

import (
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// rangeStarts collects the GCGenerationRange starts of a trace, and the
// last GCHeapStats, decoded on their own.
type rangeStarts struct {
	ptr    int
	starts []uint64
	last   clrevents.GCHeapStats
	stats  int
}

func (r *rangeStarts) Event(ev *nettrace.Event) {
	m := ev.Meta
	if m.Runtime != nettrace.Runtime {
		return
	}
	switch m.EventID {
	case clrevents.IDGCGenerationRange:
		if g, err := clrevents.DecodeGenerationRange(ev.Payload, m.Version, r.ptr); err == nil && g.Start != 0 {
			r.starts = append(r.starts, g.Start)
		}
	case clrevents.IDGCHeapStats:
		if h, err := clrevents.DecodeGCHeapStats(ev.Payload, m.Version, r.ptr); err == nil {
			r.last = h
			r.stats++
		}
	}
}

// TestRuntimeTrace feeds a real trace (heap-alloc: a net10.0 workload's
// session with the movement keyword, 253 GCGenerationRange and 25
// GCHeapStats events, as `clrspy stat` counts them): every region the
// ranges name gives one heap address, each inside a range the runtime
// reported, and the heap stats are the last GC's.
func TestRuntimeTrace(t *testing.T) {
	st, err := source.Open(source.Spec{File: "../testdata/traces/heap-alloc.nettrace", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rt := NewRuntime(st.Header())
	ref := &rangeStarts{ptr: st.Header().PointerSize}
	if _, err := st.Run(rt, analyzerOf(ref)); err != nil {
		t.Fatal(err)
	}
	if len(ref.starts) != 253 || ref.stats != 25 {
		t.Fatalf("the trace has %d ranges and %d heap stats, want 253 and 25", len(ref.starts), ref.stats)
	}
	regions := map[uint64]bool{}
	for _, s := range ref.starts {
		regions[s&^(regionAlign-1)] = true
	}
	addrs := rt.Addresses()
	if len(addrs) != len(regions) || len(addrs) == 0 {
		t.Errorf("%d heap addresses, want one per region: %d", len(addrs), len(regions))
	}
	for _, a := range addrs {
		if !regions[a&^(regionAlign-1)] {
			t.Errorf("address %#x in no reported region", a)
		}
	}
	h, n := rt.HeapStats()
	if h == nil || n != 25 || *h != ref.last {
		t.Errorf("heap stats %+v after %d GCs, want %+v after 25", h, n, ref.last)
	}
	if rt.Stats().DecodeErrors != 0 || rt.Stats().Events != 253+25 {
		t.Errorf("stats %+v, want 278 events used, no decode errors", rt.Stats())
	}
}

type refAnalyzer struct{ r *rangeStarts }

func (a refAnalyzer) Event(ev *nettrace.Event) { a.r.Event(ev) }
func (a refAnalyzer) Stats() analysis.Stats    { return analysis.Stats{} }

func analyzerOf(r *rangeStarts) refAnalyzer { return refAnalyzer{r} }
