package heap

import (
	"slices"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
)

// Addresses of heap-churn.nettrace.gz's GC 10 (testdata/traces): a region
// of each generation and the LOH, as its GCGenerationRange events gave them.
const (
	churnPOH  = 140538695122984
	churnGen2 = 140538728677416
	churnGen1 = 140538732871720
	churnGen0 = 140538737066024
	churnLOH  = 140538741260328
	regionLen = 4194264
)

// TestBackgroundGCRanBlocking replays the event sequence of heap-churn's GC
// 10: GCStart says Background, but the GC ends (GCEnd, GCHeapStats) before
// the pause that started it does, with a gen2 compaction (moved ranges in a
// gen2 region) and the LOH reported by surviving ranges. The runtime had
// reverted to a blocking gen2 GC (gc_heap::garbage_collect: the BGC thread
// was not running yet). The 100 KB LOH array sampled before it, beyond the
// LOH's surviving range, died there: a later sample on its address is no
// contradiction. Today's model replayed it as the ephemeral part of a
// background GC, so the LOH was never examined and the reuse was counted.
func TestBackgroundGCRanBlocking(t *testing.T) {
	tr := New(nil, Options{MaxObjects: -1})
	const deadLOH = churnLOH + 1700144 // the sample the trace reuses
	tr.Allocate(Alloc{Address: churnLOH + 32, Size: 100024, Kind: clrevents.AllocLarge, Type: "System.Byte[]", EstBytes: 1})
	tr.Allocate(Alloc{Address: deadLOH, Size: 100024, Kind: clrevents.AllocLarge, Type: "System.Byte[]", EstBytes: 1})
	tr.Allocate(Alloc{Address: churnGen0 + 256728, Size: 104, Type: "Node", EstBytes: 1})
	tr.Allocate(Alloc{Address: churnGen0 + 500000, Size: 104, Type: "Node", EstBytes: 1})

	tr.GCStart(974503124, 10, Gen2, gcTypeBackground)
	for _, g := range []clrevents.GenerationRange{
		{Generation: POH, Start: churnPOH, UsedLength: 8184},
		{Generation: LOH, Start: churnLOH, UsedLength: 2000280},
		{Generation: Gen2, Start: churnGen2, UsedLength: 3367384},
		{Generation: Gen1, Start: churnGen1, UsedLength: 3070680},
		{Generation: Gen0, Start: churnGen0, UsedLength: 4194200},
	} {
		tr.GenerationRange(g)
	}
	tr.Surviving([]clrevents.SurvivingRange{{Base: churnLOH + 32, Length: 1600024}})
	tr.Surviving([]clrevents.SurvivingRange{{Base: churnPOH, Length: 8184}})
	tr.Moved([]clrevents.MovedRange{
		{OldBase: churnGen2, NewBase: churnGen2, Length: 2358568},
		{OldBase: churnGen0 + 256728, NewBase: churnGen0 + 26432, Length: 104},
	})
	for _, g := range []clrevents.GenerationRange{
		{Generation: POH, Start: churnPOH, UsedLength: 8184},
		{Generation: LOH, Start: churnLOH, UsedLength: 1600056},
		{Generation: Gen2, Start: churnGen2, UsedLength: 4193960},
		{Generation: Gen2, Start: churnGen1, UsedLength: 1625744},
		{Generation: Gen1, Start: churnGen0, UsedLength: 642048},
	} {
		tr.GenerationRange(g)
	}
	tr.GCEnd(10)
	tr.Promoted([5]uint64{627432, 3012376, 2807328, 1600024, 0})
	tr.HeapStats()
	tr.RestartEEEnd()
	// GC 11's allocations: a new LOH array where the dead one was.
	tr.Allocate(Alloc{Address: deadLOH, Size: 100024, Kind: clrevents.AllocLarge, Type: "System.Byte[]", EstBytes: 1})
	tr.Finish()

	r := tr.Result()
	if c := r.Stats.Contradictions; c.Total() != 0 {
		t.Errorf("contradictions %+v", c)
	}
	o := r.Objects
	if len(o) != 5 {
		t.Fatalf("%d objects", len(o))
	}
	if !o[0].Alive || o[0].Gen != LOH || o[0].Survived != 1 {
		t.Errorf("covered LOH array %+v, want alive in the LOH, survived 1", o[0])
	}
	if o[1].Alive || o[1].Replaced || o[1].DeathGC != 10 || o[1].DeathGen != LOH {
		t.Errorf("uncovered LOH array %+v, want dead at GC 10 in the LOH", o[1])
	}
	if !o[2].Alive || o[2].Address != churnGen0+26432 || o[2].Gen != Gen1 {
		t.Errorf("moved gen0 object %+v, want alive at %#x in gen1", o[2], churnGen0+26432)
	}
	if o[3].Alive || o[3].DeathGC != 10 {
		t.Errorf("uncovered gen0 object %+v, want dead at GC 10", o[3])
	}
	if !o[4].Alive {
		t.Errorf("new LOH array %+v", o[4])
	}
	if g := r.GCs; len(g) != 1 || !g[0].Blocking || g[0].Type != gcTypeBackground || g[0].Examined != 4 {
		t.Errorf("GCs %+v, want one blocking GC examining 4 objects", g)
	}
}

// TestBackgroundGCRanBlockingGCEndLost: ranges reported under a background
// GCStart inside its first pause come only from a GC that ran blocking, so
// when its GCEnd is lost the end of the pause ends it, as a gen2 GC.
func TestBackgroundGCRanBlockingGCEndLost(t *testing.T) {
	tr := New(nil, Options{MaxObjects: -1})
	tr.Allocate(Alloc{Address: churnLOH + 32, Size: 100024, Kind: clrevents.AllocLarge, Type: "L", EstBytes: 1})
	tr.GCStart(1, 1, Gen2, gcTypeBackground)
	tr.Surviving([]clrevents.SurvivingRange{{Base: churnPOH, Length: 8184}})
	tr.RestartEEEnd()
	r := tr.Result() // no Finish: the pause ended the GC
	if o := r.Objects[0]; o.Alive || o.DeathGC != 1 || o.DeathGen != LOH {
		t.Errorf("uncovered LOH object %+v, want dead at GC 1", o)
	}
	if len(r.GCs) != 1 || !r.GCs[0].Blocking {
		t.Errorf("GCs %+v", r.GCs)
	}
}

// TestBackgroundGCWithEphemeralGC follows a real background GC of a server
// GC trace (two heaps): its first pause runs an ephemeral gen1 GC that has
// a GCStart of its own (Count+1, NonConcurrent) and moved ranges; the BGC
// goes on concurrently, and at its end walks every region's non-free
// objects (walk_survivors_for_bgc) as surviving ranges, one walk per heap,
// in a pause of its own, before its GCGenerationRange, GCEnd and
// GCHeapStats. The gen2 object the walk does not cover dies at the BGC; the
// gen0 object the ephemeral GC moved is promoted once, by that GC.
func TestBackgroundGCWithEphemeralGC(t *testing.T) {
	tr := newReplayer(Options{MaxObjects: -1})
	alloc(tr, 0x300, "Old")
	gc(tr, 1, 1, []clrevents.MovedRange{{OldBase: 0x300, NewBase: 0x900, Length: 8}}, nil)
	gc(tr, 2, 1, []clrevents.MovedRange{{OldBase: 0x900, NewBase: 0x900, Length: 8}}, nil) // now gen2
	alloc(tr, 0x100, "Young")
	alloc(tr, 0x200, "Young")
	alloc(tr, 0x50000, "Large")
	tr.objs[tr.pend[len(tr.pend)-1].idx].gen = LOH
	tr.pend[len(tr.pend)-1].gen = LOH

	tr.GCStart(3, 3, Gen2, gcTypeBackground)
	tr.GCStart(4, 4, Gen1, gcTypeBlocking)
	tr.Moved([]clrevents.MovedRange{{OldBase: 0x200, NewBase: 0x180, Length: 8}})
	tr.GCEnd(4)
	tr.HeapStats()
	tr.RestartEEEnd()
	// The concurrent phase; then the walk's pause, heap 0 and heap 1.
	tr.Surviving([]clrevents.SurvivingRange{{Base: 0x180, Length: 8}})
	tr.Surviving([]clrevents.SurvivingRange{{Base: 0x50000, Length: 0x20000}})
	tr.RestartEEEnd()
	tr.GenerationRange(clrevents.GenerationRange{Generation: Gen1, Start: 0x100, UsedLength: 0x100})
	tr.GenerationRange(clrevents.GenerationRange{Generation: Gen2, Start: 0x800, UsedLength: 0x200})
	tr.GenerationRange(clrevents.GenerationRange{Generation: LOH, Start: 0x50000, UsedLength: 0x20000})
	tr.GCEnd(3)
	tr.HeapStats()
	tr.Finish()
	r := tr.Result()
	o := r.Objects
	if o[0].Alive || o[0].DeathGC != 3 || o[0].DeathGen != Gen2 {
		t.Errorf("gen2 object %+v, want dead at GC 3 in gen2", o[0])
	}
	if o[1].Alive || o[1].DeathGC != 4 || o[1].DeathGen != Gen0 {
		t.Errorf("uncovered gen0 object %+v, want dead at GC 4", o[1])
	}
	if !o[2].Alive || o[2].Address != 0x180 || o[2].Gen != Gen1 || o[2].Survived != 1 || o[2].GCsSeen != 2 {
		t.Errorf("moved gen0 object %+v, want alive at 0x180 in gen1, survived 1, 2 GCs seen", o[2])
	}
	if !o[3].Alive || o[3].Gen != LOH || o[3].Survived != 1 {
		t.Errorf("LOH object %+v, want alive, survived the BGC", o[3])
	}
	if c := r.Stats.Contradictions; c.Total() != 0 {
		t.Errorf("contradictions %+v", c)
	}
	if len(r.GCs) != 4 || r.GCs[2].Count != 4 || r.GCs[3].Count != 3 || r.GCs[3].Blocking || r.GCs[3].Surviving != 2 {
		t.Errorf("GCs %+v", r.GCs)
	}
}

// TestHeapChurnBackgroundGCs replays heap-churn.nettrace.gz, whose four
// background GCStarts are GC 10 (ran blocking) and 18, 28, 46 (real
// background GCs): the replay marks exactly the GC the runtime's own
// GCMemoryInfo calls its last full blocking GC (compacted, not concurrent)
// as blocking, and finds no contradiction.
func TestHeapChurnBackgroundGCs(t *testing.T) {
	info := tracetest.Workload(t, "heap-churn.nettrace").GCInfo
	full := info["FullBlocking"]
	if full.Concurrent || !full.Compacted || info["Background"].Index != 46 {
		t.Fatalf("workload gcInfo %+v", info)
	}
	r, _ := loadTrace(t, tracetest.Path(t, heapChurn)).replay(t, Options{MaxObjects: -1})
	if c := r.Stats.Contradictions; c.Total() != 0 {
		t.Errorf("contradictions %+v", c)
	}
	var bg, blocking []uint32
	for _, g := range r.GCs {
		if g.Type == gcTypeBackground {
			bg = append(bg, g.Count)
		}
		if g.Blocking {
			blocking = append(blocking, g.Count)
		}
	}
	if !slices.Equal(bg, []uint32{10, 18, 28, 46}) || !slices.Equal(blocking, []uint32{uint32(full.Index)}) {
		t.Errorf("background GCs %v, run blocking %v; the runtime's last full blocking GC: %d", bg, blocking, full.Index)
	}
}
