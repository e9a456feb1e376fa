package heap

import (
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
)

// replayer is a Tracker fed events described with tracegen (1 tick = 1
// ns) as soon as they are described: tests interleave them with calls of
// the Tracker's own methods, which must come after the events before them.
type replayer struct {
	*Tracker
	g     *tracegen.Trace
	th    *tracegen.Thread
	fed   int
	types map[string]uint64 // type ids by name, from 1
}

func newReplayer(opts Options) *replayer {
	g := tracegen.New()
	return &replayer{Tracker: New(g.Header(), opts), g: g, th: g.Thread(1), types: map[string]uint64{}}
}

// feed gives the tracker the events described since the last feed.
func (r *replayer) feed() {
	evs := r.g.Events()
	for ; r.fed < len(evs); r.fed++ {
		r.Event(&evs[r.fed])
	}
}

// alloc starts following a one-byte object of type typ at addr: an
// allocation tick of one object standing for itself.
func alloc(r *replayer, addr uint64, typ string) {
	id := r.types[typ]
	if id == 0 {
		id = uint64(len(r.types) + 1)
		r.types[typ] = id
	}
	r.th.AllocationTick(clrevents.AllocationTick{AllocationAmount: 1, TypeID: id, TypeName: typ, Address: addr, ObjectSize: 1})
	r.feed()
}

// gc writes GC count of generation depth at count µs: GCStart, the moved
// and surviving ranges when not nil (an empty list is an event with no
// range), GCEnd, RestartEEEnd.
func gc(r *replayer, count uint32, depth int, moved []clrevents.MovedRange, surv []clrevents.SurvivingRange) {
	r.th.Tick(int64(count)*1000).GCStart(count, uint32(depth), clrevents.ReasonAllocSmall, clrevents.GCNonConcurrent)
	if moved != nil {
		r.th.MovedRanges(0, moved...)
	}
	if surv != nil {
		r.th.SurvivingRanges(0, surv...)
	}
	r.th.GCEnd(count, uint32(depth)).RestartEEEnd()
	r.feed()
}

// byAddr returns the live objects keyed by their current address and the
// dead ones keyed by the address they died at.
func split(r *Result) (live, dead map[uint64]*Object) {
	live, dead = map[uint64]*Object{}, map[uint64]*Object{}
	for i := range r.Objects {
		o := &r.Objects[i]
		if o.Alive {
			live[o.Address] = o
		} else {
			dead[o.Address] = o
		}
	}
	return live, dead
}

// TestTenObjectExample replays the documented compaction example: ten
// objects at 08..19, three die, seven survivors slide down in three blocks.
func TestTenObjectExample(t *testing.T) {
	tr := newReplayer(Options{})
	for _, a := range []uint64{0x08, 0x09, 0x10, 0x12, 0x13, 0x15, 0x16, 0x17, 0x18, 0x19} {
		alloc(tr, a, "T")
	}
	gc(tr, 1, 0, []clrevents.MovedRange{
		{OldBase: 0x08, NewBase: 0x07, Length: 1},
		{OldBase: 0x10, NewBase: 0x08, Length: 3},
		{OldBase: 0x15, NewBase: 0x11, Length: 4},
	}, nil)
	tr.Finish()
	r := tr.Result()
	want := map[uint64]uint64{0x08: 0x07, 0x10: 0x08, 0x12: 0x0a, 0x15: 0x11, 0x16: 0x12, 0x17: 0x13, 0x18: 0x14}
	// Objects were allocated in address order, so ID i started at orig[i].
	orig := []uint64{0x08, 0x09, 0x10, 0x12, 0x13, 0x15, 0x16, 0x17, 0x18, 0x19}
	var deadAt []uint64
	for i, o := range r.Objects {
		from := orig[i]
		if !o.Alive {
			deadAt = append(deadAt, from)
			if o.DeathGC != 1 || o.DeathGen != Gen0 {
				t.Errorf("object at %#x: died at GC %d gen %d, want GC 1 gen 0", from, o.DeathGC, o.DeathGen)
			}
			continue
		}
		if to, ok := want[from]; !ok || o.Address != to {
			t.Errorf("object at %#x: now at %#x, want %#x (expected alive: %v)", from, o.Address, to, ok)
		}
		if o.Gen != Gen1 || o.Survived != 1 {
			t.Errorf("object at %#x: gen %d survived %d, want gen 1 survived 1", from, o.Gen, o.Survived)
		}
	}
	if len(deadAt) != 3 || deadAt[0] != 0x09 || deadAt[1] != 0x13 || deadAt[2] != 0x19 {
		t.Errorf("dead = %x, want [9 13 19]", deadAt)
	}
	g := r.GCs[0]
	if g.Remapped != 7 || g.Died != 3 || g.InPlace != 0 {
		t.Errorf("GC: remapped %d died %d in place %d, want 7 3 0", g.Remapped, g.Died, g.InPlace)
	}
	if n := r.Stats.Contradictions.Total(); n != 0 {
		t.Errorf("contradictions = %+v", r.Stats.Contradictions)
	}
}

// TestSweepingGC: a non-compacting GC reports survivors in place; what no
// range covers in the condemned generation is dead.
func TestSweepingGC(t *testing.T) {
	tr := newReplayer(Options{})
	for _, a := range []uint64{100, 110, 120, 130} {
		alloc(tr, a, "T")
	}
	gc(tr, 1, 0, nil, []clrevents.SurvivingRange{{Base: 100, Length: 10}, {Base: 125, Length: 10}})
	tr.Finish()
	live, dead := split(tr.Result())
	if len(live) != 2 || live[100] == nil || live[130] == nil {
		t.Fatalf("live = %v, want 100 and 130", keys(live))
	}
	if len(dead) != 2 || dead[110] == nil || dead[120] == nil {
		t.Fatalf("dead = %v, want 110 and 120", keys(dead))
	}
	if live[130].Gen != Gen1 {
		t.Errorf("survivor gen %d, want 1", live[130].Gen)
	}
	if g := tr.Result().GCs[0]; g.InPlace != 2 || g.Died != 2 || g.Remapped != 0 {
		t.Errorf("GC counts %+v", g)
	}
}

// TestGen0GCLeavesGen2Alone: objects promoted to gen2 survive a gen0 GC
// that reports no range for them; a fresh gen0 object without a range dies.
func TestGen0GCLeavesGen2Alone(t *testing.T) {
	tr := newReplayer(Options{})
	alloc(tr, 1000, "Old")
	gc(tr, 1, 1, []clrevents.MovedRange{{OldBase: 1000, NewBase: 500, Length: 8}}, nil)
	gc(tr, 2, 1, []clrevents.MovedRange{{OldBase: 500, NewBase: 200, Length: 8}}, nil)
	live, _ := split(tr.Result())
	if o := live[200]; o == nil || o.Gen != Gen2 || o.MaxGen != Gen2 {
		t.Fatalf("after two gen1 GCs: live %v, want gen2 object at 200", keys(live))
	}
	alloc(tr, 3000, "Young")
	alloc(tr, 3100, "Young")
	gc(tr, 3, 0, []clrevents.MovedRange{{OldBase: 3100, NewBase: 2000, Length: 8}}, nil)
	tr.Finish()
	r := tr.Result()
	live, dead := split(r)
	if o := live[200]; o == nil || o.Survived != 2 || o.GCsSeen != 3 {
		t.Fatalf("gen2 object disturbed: live %v", keys(live))
	}
	if o := dead[3000]; o == nil || o.DeathGC != 3 {
		t.Errorf("young object at 3000 should have died at GC 3; dead %v", keys(dead))
	}
	if o := live[2000]; o == nil || o.Gen != Gen1 {
		t.Errorf("young survivor should be gen1 at 2000; live %v", keys(live))
	}
	if g := r.GCs[2]; g.Examined != 2 || g.Died != 1 {
		t.Errorf("gen0 GC examined %d died %d, want 2 and 1", g.Examined, g.Died)
	}
}

// TestSeveralRangeEventsOutOfOrder: under server GC each heap sends its own
// bulk events (Index restarting at 0) in any order; the union applies.
func TestSeveralRangeEventsOutOfOrder(t *testing.T) {
	tr := newReplayer(Options{})
	addrs := []uint64{0x1000, 0x1100, 0x9000, 0x9100, 0x5000}
	for _, a := range addrs {
		alloc(tr, a, "T")
	}
	tr.GCStart(10, 1, 0, 0)
	// heap 1 first, then heap 0, each with ranges in descending order
	tr.Moved([]clrevents.MovedRange{{OldBase: 0x9100, NewBase: 0x8100, Length: 0x10}, {OldBase: 0x9000, NewBase: 0x8000, Length: 0x10}})
	tr.Moved([]clrevents.MovedRange{{OldBase: 0x1100, NewBase: 0x0100, Length: 0x10}})
	tr.Surviving([]clrevents.SurvivingRange{{Base: 0x1000, Length: 0x10}})
	tr.GCEnd(1)
	tr.RestartEEEnd()
	tr.Finish()
	r := tr.Result()
	live, dead := split(r)
	for _, a := range []uint64{0x1000, 0x0100, 0x8000, 0x8100} {
		if live[a] == nil {
			t.Errorf("no live object at %#x; live %x", a, keys(live))
		}
	}
	if len(dead) != 1 || dead[0x5000] == nil {
		t.Errorf("dead %x, want only 0x5000", keys(dead))
	}
	if r.GCs[0].RangeEvents != 3 || r.GCs[0].Moved != 3 || r.GCs[0].Surviving != 1 {
		t.Errorf("GC %+v", r.GCs[0])
	}
	if r.Stats.Contradictions.Total() != 0 {
		t.Errorf("contradictions %+v", r.Stats.Contradictions)
	}
}

// TestLargeObjectsGoWithGen2: LOH objects ignore gen0/gen1 GCs and die in
// the first gen2 GC that does not report them.
func TestLargeObjectsGoWithGen2(t *testing.T) {
	tr := newReplayer(Options{})
	tr.Allocate(Alloc{Address: 0x10000, Size: 100000, Kind: clrevents.AllocLarge, Type: "Big"})
	tr.Allocate(Alloc{Address: 0x20000, Size: 100000, Type: "Big"}) // size alone says LOH
	gc(tr, 1, 1, []clrevents.MovedRange{}, nil)
	gc(tr, 2, 2, nil, []clrevents.SurvivingRange{{Base: 0x20000, Length: 100000}})
	tr.Finish()
	live, dead := split(tr.Result())
	if o := dead[0x10000]; o == nil || o.DeathGC != 2 || o.DeathGen != LOH {
		t.Errorf("LOH object should die at GC 2 in LOH; dead %x", keys(dead))
	}
	if o := live[0x20000]; o == nil || o.Gen != LOH {
		t.Errorf("LOH survivor missing; live %x", keys(live))
	}
}

// TestContradictions: ranges of two heaps that overlap, a sample on a live
// address and a range outside any GC are counted, not silently accepted; an
// event overlapping itself is dropped as corrupt and its GC kills nothing.
func TestContradictions(t *testing.T) {
	tr := newReplayer(Options{})
	alloc(tr, 0x118, "T") // covered by both ranges below
	alloc(tr, 0x900, "T")
	tr.GCStart(1, 1, 0, 0)
	tr.Moved([]clrevents.MovedRange{{OldBase: 0x100, NewBase: 0x50, Length: 0x20}})
	tr.Moved([]clrevents.MovedRange{{OldBase: 0x110, NewBase: 0x80, Length: 0x20}})
	tr.GCEnd(1)
	tr.RestartEEEnd()
	alloc(tr, 0x88, "T") // lands on the survivor: its death was missed
	tr.Moved([]clrevents.MovedRange{{OldBase: 1, NewBase: 2, Length: 1}})
	alloc(tr, 0x2000, "T")
	gc(tr, 2, 0, []clrevents.MovedRange{{OldBase: 0x50, NewBase: 0x40, Length: 0x20}, {OldBase: 0x60, NewBase: 0x10, Length: 0x8}}, nil)
	tr.Finish()
	r := tr.Result()
	c := r.Stats.Contradictions
	if c.OverlappingRanges != 1 || c.AddressReused != 1 || c.LateRanges != 1 || c.MappedTwice != 1 {
		t.Errorf("contradictions %+v, want 1 overlap, 1 reuse, 1 late range, 1 mapped twice", c)
	}
	if r.Stats.CorruptRangeEvents != 1 || !r.GCs[1].Incomplete || r.GCs[1].Died != 0 || !r.Objects[3].Alive {
		t.Errorf("corrupt events %d, GC 2 %+v: the self-overlapping event must be dropped and kill nothing", r.Stats.CorruptRangeEvents, r.GCs[1])
	}
	if r.Objects[1].Alive || r.Objects[1].DeathGC != 1 {
		t.Errorf("object at 0x900 should have died at GC 1")
	}
}

// TestNoRangesKillsNothing: a GC without any range event (keyword off or
// events lost) declares nothing dead.
func TestNoRangesKillsNothing(t *testing.T) {
	tr := newReplayer(Options{})
	alloc(tr, 0x100, "T")
	gc(tr, 1, 2, nil, nil)
	tr.Finish()
	r := tr.Result()
	if !r.Objects[0].Alive || r.Stats.GCsWithoutRanges != 1 || !r.GCs[0].NoRanges {
		t.Errorf("object alive %v, GCs without ranges %d", r.Objects[0].Alive, r.Stats.GCsWithoutRanges)
	}
}

// TestGenerationRangeCorrectsModel: GCGenerationRange at GC start says which
// generation an address is in, overriding the promotion model.
func TestGenerationRangeCorrectsModel(t *testing.T) {
	tr := newReplayer(Options{})
	alloc(tr, 0x5000, "T") // modelled gen0, but the runtime says gen1 region
	tr.GCStart(1, 1, 0, 0)
	tr.GenerationRange(clrevents.GenerationRange{Generation: 1, Start: 0x4000, UsedLength: 0x2000})
	tr.GenerationRange(clrevents.GenerationRange{Generation: 0, Start: 0x8000, UsedLength: 0x1000})
	tr.Moved([]clrevents.MovedRange{{OldBase: 0x8000, NewBase: 0x8000, Length: 0x10}})
	tr.GCEnd(1)
	tr.RestartEEEnd()
	tr.Finish()
	r := tr.Result()
	if !r.Objects[0].Alive || r.Objects[0].Gen != Gen1 || r.Stats.GenCorrections != 1 {
		t.Errorf("object %+v corrections %d: a gen1 object must survive a gen0 GC untouched", r.Objects[0], r.Stats.GenCorrections)
	}
}

func keys(m map[uint64]*Object) []uint64 {
	var out []uint64
	for k := range m {
		out = append(out, k)
	}
	return out
}

// tick is an AllocationTick v4 of one 24-byte object of type name at
// addr standing for 102,400 bytes.
func tick(addr uint64, name string) clrevents.AllocationTick {
	return clrevents.AllocationTick{AllocationAmount: 102400, TypeID: 0xabc, TypeName: name, Address: addr, ObjectSize: 24}
}

// TestEventDispatch drives the tracker through a stream (package
// tracegen): an AllocationTick v4 object moved by one GC and a second one
// dying.
func TestEventDispatch(t *testing.T) {
	g := tracegen.New()
	g.Thread(1).Tick(10).AllocationTick(tick(0x1000, "Foo")).
		Tick(20).AllocationTick(tick(0x2000, "Foo")).
		Tick(25).Runtime(clrevents.IDGCAllocationTick, 2, tracegen.Payload(nil).U32(1).U32(0).U16(0).U64(1).U64(1).String("X").U32(0)).
		Tick(30).GCStart(1, 0, 0, 0).
		Tick(40).MovedRanges(0, clrevents.MovedRange{OldBase: 0x2000, NewBase: 0x100, Length: 0x18}).
		Tick(50).GCEnd(1, 0).
		Tick(60).RestartEEEnd()
	tr := New(g.Header(), Options{})
	g.Run(t, tr.Event)
	tr.Finish()
	r := tr.Result()
	if r.Stats.DecodeErrors != 0 || r.Stats.Untracked != 1 || r.Stats.Tracked != 2 || r.Stats.AllocationTicks != 3 {
		t.Fatalf("stats %+v", r.Stats)
	}
	a, b := r.Objects[0], r.Objects[1]
	if a.Alive || a.DeathGC != 1 || a.Type != "Foo" {
		t.Errorf("first object %+v, want dead at GC 1", a)
	}
	if !b.Alive || b.Address != 0x100 || b.EstBytes != 102400 || b.EstCount != 102400.0/24 {
		t.Errorf("second object %+v, want alive at 0x100 standing for 102400 bytes", b)
	}
}

// FuzzTracker feeds arbitrary payloads under every event id the tracker
// handles: it must never panic, whatever the bytes.
func FuzzTracker(f *testing.F) {
	f.Add(uint8(0), []byte{}, uint32(0))
	f.Add(uint8(1), []byte(tracegen.Payload(nil).U32(0).U32(1).U16(0).U64(0x100).U64(0x80).U64(0x10)), uint32(0))
	f.Add(uint8(2), []byte(tracegen.Payload(nil).U32(100000).U32(0).U16(0).U64(102400).U64(0xabc).String("Foo").U32(0).U64(0x100).U64(24)), uint32(4))
	ids := []uint32{clrevents.IDGCStart, clrevents.IDGCBulkMovedObjectRanges, clrevents.IDGCAllocationTick,
		clrevents.IDGCBulkSurvivingObjectRanges, clrevents.IDGCGenerationRange, clrevents.IDBulkType,
		clrevents.IDAllocationSampled, clrevents.IDGCSampledObjectAllocHigh, clrevents.IDGCEnd, clrevents.IDGCRestartEEEnd}
	f.Fuzz(func(t *testing.T, which uint8, p []byte, v uint32) {
		g := tracegen.New()
		th := g.Thread(1)
		for i, id := range ids {
			// Each id once in a fixed order, then the fuzzed one again.
			th.Tick(int64(i)).Runtime(id, v%5, p)
		}
		th.Tick(99).Runtime(ids[int(which)%len(ids)], v%5, p)
		tr := New(g.Header(), Options{})
		g.Run(t, tr.Event)
		tr.Finish()
		r := tr.Result()
		if err := r.CheckValid(); err != nil {
			t.Fatal(err)
		}
		_ = Summarize(r, nil)
	})
}

// TestBackgroundGCLeavesEphemeralAlone: a background GC condemns gen2 only;
// a gen0 object it does not report is neither dead nor promoted.
func TestBackgroundGCLeavesEphemeralAlone(t *testing.T) {
	tr := newReplayer(Options{})
	alloc(tr, 0x100, "Young")
	alloc(tr, 0x200, "Young")
	tr.GCStart(1, 1, 2, gcTypeBackground)
	tr.RestartEEEnd() // the BGC's initial pause ends; it goes on concurrently
	tr.Surviving([]clrevents.SurvivingRange{{Base: 0x200, Length: 8}})
	tr.GCEnd(1)
	tr.HeapStats()
	tr.Finish()
	r := tr.Result()
	for _, o := range r.Objects {
		if !o.Alive || o.Gen != Gen0 || o.Survived != 0 {
			t.Errorf("object at %#x: alive %v gen %d survived %d; a BGC must not touch gen0", o.Address, o.Alive, o.Gen, o.Survived)
		}
	}
	if len(r.GCs) != 1 || r.GCs[0].Type != gcTypeBackground {
		t.Errorf("GCs %+v", r.GCs)
	}
}

// TestBackgroundGCEndingInFirstPause: a background GC that ends (GCEnd,
// GCHeapStats) before its first RestartEEEnd ran as a blocking gen2 GC
// (bgc_test.go says why), so an uncovered gen0 object dies even though a
// background GC condemns only gen2.
func TestBackgroundGCEndingInFirstPause(t *testing.T) {
	tr := newReplayer(Options{})
	alloc(tr, 0x100, "Dead")
	alloc(tr, 0x200, "Moved")
	tr.GCStart(1, 1, 2, gcTypeBackground)
	tr.Moved([]clrevents.MovedRange{{OldBase: 0x200, NewBase: 0x100, Length: 8}})
	tr.GCEnd(1)
	tr.HeapStats()
	tr.RestartEEEnd()
	tr.Finish()
	o := tr.Result().Objects
	if o[0].Alive || o[0].DeathGC != 1 {
		t.Errorf("uncovered gen0 object %+v, want dead at GC 1", o[0])
	}
	if !o[1].Alive || o[1].Address != 0x100 || o[1].Gen != Gen1 {
		t.Errorf("moved object %+v, want alive in gen1 at 0x100", o[1])
	}
	if c := tr.Result().Stats.Contradictions; c.Total() != 0 {
		t.Errorf("contradictions %+v", c)
	}
}

// TestNothingSurvived: with movement events on, a GC without ranges whose
// heap stats show zero promoted bytes killed every condemned object; with
// promoted bytes it is missing data and kills nothing.
func TestNothingSurvived(t *testing.T) {
	tr := newReplayer(Options{})
	alloc(tr, 0x100, "T")
	gc(tr, 1, 0, []clrevents.MovedRange{{OldBase: 0x100, NewBase: 0x100, Length: 8}}, nil) // movement on; now gen1
	alloc(tr, 0x200, "T")
	tr.GCStart(2, 2, 0, 0)
	tr.GCEnd(2)
	tr.Promoted([5]uint64{0, 4096, 0, 0, 0}) // gen0 promoted nothing
	tr.RestartEEEnd()
	alloc(tr, 0x300, "T")
	tr.GCStart(3, 3, 0, 0)
	tr.GCEnd(3)
	tr.Promoted([5]uint64{64, 0, 0, 0, 0}) // something survived: ranges missing
	tr.RestartEEEnd()
	tr.Finish()
	r := tr.Result()
	o := r.Objects
	if !o[0].Alive || o[1].Alive || o[1].DeathGC != 2 || !o[2].Alive {
		t.Errorf("alive: gen1 %v, gen0 at GC 2 %v (death %d), gen0 at GC 3 %v", o[0].Alive, o[1].Alive, o[1].DeathGC, o[2].Alive)
	}
	if r.Stats.GCsNothingSurvived != 1 || r.Stats.GCsWithoutRanges != 1 || !r.GCs[1].NothingSurvived || !r.GCs[2].NoRanges {
		t.Errorf("stats %+v", r.Stats)
	}
}

// TestSampledObjectsNamedByBulkType: GCSampledObjectAllocation gives only a
// type id, named by a BulkType event (even one arriving later); once
// AllocationSampled is seen, AllocationTicks are no longer followed.
func TestSampledObjectsNamedByBulkType(t *testing.T) {
	g := tracegen.New()
	g.Thread(1).Tick(1).Runtime(clrevents.IDGCSampledObjectAllocLow, 0,
		tracegen.AppendSampledObjectAllocation(nil, clrevents.SampledObjectAllocation{Address: 0x5000, TypeID: 0x77, ObjectCount: 10, TotalSize: 320})).
		Tick(2).AllocationSampled(clrevents.AllocationSampled{TypeID: 0x88, TypeName: "Other", Address: 0x6000, ObjectSize: 32}).
		Tick(3).AllocationTick(tick(0x7000, "Foo")).
		Tick(4).BulkType(clrevents.BulkTypeEntry{TypeID: 0x77, ModuleID: 0x1, TypeNameID: 0x02000001, CorElementType: 0x12, Name: "My.Type"})
	tr := New(g.Header(), Options{})
	i := 0
	g.Run(t, func(ev *nettrace.Event) {
		tr.Event(ev)
		if tr.stats.DecodeErrors != 0 {
			t.Fatalf("event %d: %s", i, tr.stats.FirstDecodeError)
		}
		i++
	})
	tr.Finish()
	r := tr.Result()
	if len(r.Objects) != 2 || r.Stats.IgnoredTicks != 1 {
		t.Fatalf("%d objects, %d ignored ticks; want 2 and 1", len(r.Objects), r.Stats.IgnoredTicks)
	}
	a, b := r.Objects[0], r.Objects[1]
	if a.Type != "My.Type" || a.Size != 32 || a.EstCount != 10 || a.EstBytes != 320 || a.Source != FromSampledObjectAllocation {
		t.Errorf("sampled object %+v", a)
	}
	// 32 bytes sampled with mean 100 KiB stands for 1/(1-exp(-32/102400)) objects.
	if b.Type != "Other" || b.EstCount < 3200 || b.EstCount > 3201 || b.Source != FromAllocationSampled {
		t.Errorf("AllocationSampled object %+v", b)
	}
}

// A sample on the address of a followed object retires it, whether that
// object is still pending (allocated since the last merge) or in the
// sorted live set: 5,000 objects (merges at 1,024 pending entries and at
// half the live set), then a sample on every seventh address, and on as
// many addresses nothing was allocated at.
func TestAddressReusedPendingAndLive(t *testing.T) {
	tr := newReplayer(Options{})
	const n = 5000
	for i := range n {
		alloc(tr, 0x10000+uint64(i)*0x40, "T")
	}
	if len(tr.pend) == 0 || len(tr.live) == 0 {
		t.Fatalf("%d pending, %d live: the test wants both", len(tr.pend), len(tr.live))
	}
	reused := 0
	for i := 0; i < n; i += 7 {
		alloc(tr, 0x10000+uint64(i)*0x40, "T")
		alloc(tr, 0x10000+uint64(i)*0x40+0x20, "T") // between two objects
		reused++
	}
	tr.Finish()
	r := tr.Result()
	if c := r.Stats.Contradictions.AddressReused; c != reused {
		t.Fatalf("%d addresses reused, want %d", c, reused)
	}
	alive := 0
	for _, o := range r.Objects {
		if o.Alive {
			alive++
		}
	}
	if want := n + reused; alive != want || tr.liveN != want {
		t.Fatalf("%d alive (%d counted), want %d", alive, tr.liveN, want)
	}
}

// A background GC sweeps gen0 and gen1 in its last pause without reporting
// ranges: a sample on the address of an object allocated before it ended,
// with no GC since, means the sweep freed it (it dies at that GC, no
// contradiction). The same sample after another GC, or on an object
// allocated after the background GC ended, is still a contradiction.
func TestSweptByBackgroundGC(t *testing.T) {
	tr := newReplayer(Options{})
	alloc(tr, 0x1000, "T")
	tr.GCStart(1000, 1, 2, gcTypeBackground)
	tr.RestartEEEnd() // the first pause ends
	tr.GCEnd(1)
	tr.HeapStats() // the background GC ends and is applied
	tr.lastNs = 1500
	tr.Allocate(Alloc{Ns: 2000, Address: 0x3000, Size: 1, Type: "T", TypeID: 1, EstBytes: 1, EstCount: 1})
	alloc(tr, 0x1000, "T") // swept
	tr.Allocate(Alloc{Ns: 2100, Address: 0x3000, Size: 1, Type: "T", TypeID: 1, EstBytes: 1, EstCount: 1})
	st := tr.Result().Stats
	if st.SweptByBackgroundGC != 1 || st.Contradictions.AddressReused != 1 {
		t.Fatalf("swept %d, reused %d: want the object of before the background GC swept, the one after it a contradiction",
			st.SweptByBackgroundGC, st.Contradictions.AddressReused)
	}
	alloc(tr, 0x2000, "T")
	gc(tr, 2, 0, nil, []clrevents.SurvivingRange{{Base: 0x1000, Length: 0x10}, {Base: 0x2000, Length: 0x10}, {Base: 0x3000, Length: 0x10}})
	alloc(tr, 0x2000, "T") // a GC since the background one: contradiction
	tr.Finish()
	r := tr.Result()
	if r.Stats.SweptByBackgroundGC != 1 || r.Stats.Contradictions.AddressReused != 2 {
		t.Fatalf("after a blocking GC: swept %d, reused %d, want 1 and 2", r.Stats.SweptByBackgroundGC, r.Stats.Contradictions.AddressReused)
	}
	var first *Object
	for i := range r.Objects {
		if o := &r.Objects[i]; o.ID == 0 {
			first = o
		}
	}
	if first == nil || first.Alive || first.Replaced || first.DeathGC != 1 || first.DeathNs != 1000 || first.DeathGen != 0 {
		t.Fatalf("the swept object: %+v, want dead at background GC 1 (1000 ns) in gen0", first)
	}
}
