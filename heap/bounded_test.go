package heap

import (
	"cmp"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// stream is a synthetic endless event stream built from encoded payloads
// that are rewritten in place, so producing an event allocates nothing:
// allocation ticks (v4, with a type name and a stack) at increasing
// addresses and, every perGC ticks, a GC. With movement, a GC moves the
// last 64 samples to a new region (they survive, promoted) and, every
// fourth GC, condemns gen2 so what was promoted before dies; without, GCs
// carry no range (the keyword off: nothing dies).
type stream struct {
	tick, start, moved, end, restart *nettrace.Event
	addrOff                          int
	n, gcs                           int
	perGC                            int
	movement                         bool
	stacks                           [][]uint64
	types                            int // distinct type ids cycled through
}

func newStream(movement bool, perGC int) *stream {
	s := &stream{perGC: perGC, movement: movement, types: 3}
	// One of each event, built by tracegen; next patches their payloads in
	// place (the layouts' offsets: a tick's type id at 18, its address 16
	// bytes from the end; a GC's count and depth at 0 and 4; a moved
	// range at 10).
	g := tracegen.New()
	g.Thread(1).AllocationTick(clrevents.AllocationTick{AllocationAmount: 102400, TypeID: 0xabc, TypeName: "Foo", ObjectSize: 64}).
		GCStart(0, 0, 0, 0).MovedRanges(0, clrevents.MovedRange{}).GCEnd(0, 0).RestartEEEnd()
	evs := g.Events()
	s.tick, s.start, s.moved, s.end, s.restart = &evs[0], &evs[1], &evs[2], &evs[3], &evs[4]
	s.addrOff = len(s.tick.Payload) - 16
	for i := range 8 {
		s.stacks = append(s.stacks, []uint64{0x1000 + uint64(i), 0x2000, 0x3000})
	}
	return s
}

const streamBase = 0x10_0000_0000

// next feeds one allocation tick and, when it is time, a GC.
func (s *stream) next(tr *Tracker) {
	s.n++
	p := s.tick.Payload
	binary.LittleEndian.PutUint64(p[s.addrOff:], streamBase+uint64(s.n)*64)
	binary.LittleEndian.PutUint64(p[18:], 0xabc+uint64(s.n%s.types)*0x100) // TypeID
	s.tick.Timestamp = int64(s.n)
	s.tick.Stack = s.stacks[s.n%len(s.stacks)]
	tr.Event(s.tick)
	if s.n%s.perGC != 0 {
		return
	}
	s.gcs++
	count, depth := uint32(s.gcs), uint32(0)
	if s.gcs%4 == 0 {
		depth = 2
	}
	binary.LittleEndian.PutUint32(s.start.Payload[0:], count)
	binary.LittleEndian.PutUint32(s.start.Payload[4:], depth)
	binary.LittleEndian.PutUint32(s.end.Payload[0:], count)
	tr.Event(s.start)
	if s.movement {
		m := s.moved.Payload[10:]
		binary.LittleEndian.PutUint64(m[0:], streamBase+uint64(s.n-63)*64)
		binary.LittleEndian.PutUint64(m[8:], 0x70_0000_0000+uint64(s.gcs)*64*64)
		binary.LittleEndian.PutUint64(m[16:], 64*64)
		tr.Event(s.moved)
	}
	tr.Event(s.end)
	tr.Event(s.restart)
}

// TestEventNoAllocs: once its buffers have grown, the tracker allocates
// nothing per event: allocation ticks with names and stacks already seen,
// GCs that move, promote and kill, the reservoir thinning (MaxObjects 200,
// below the 256–512 samples the stream keeps alive with movement, all of
// them without) and the rings of dead objects and GC records turning over.
func TestEventNoAllocs(t *testing.T) {
	for _, movement := range []bool{true, false} {
		tr := New(nil, Options{MaxObjects: 200, MaxGCs: 50})
		s := newStream(movement, 256)
		for range 200_000 {
			s.next(tr)
		}
		if tr.stats.Evicted == 0 || tr.stats.GCRecordsDropped == 0 || movement && tr.stats.DeadDropped == 0 {
			t.Fatalf("movement %v: the limits were not reached: %+v", movement, tr.stats)
		}
		if movement && (tr.stats.Died == 0 || tr.stats.Remapped == 0) {
			t.Fatalf("nothing died or moved: %+v", tr.stats)
		}
		allocs := testing.AllocsPerRun(20, func() {
			for range 1024 { // four GCs
				s.next(tr)
			}
		})
		if allocs != 0 {
			t.Errorf("movement %v: %.1f allocations per 1,024 ticks and 4 GCs, want 0", movement, allocs)
		}
	}
}

// TestBoundedMemory: over an endless stream the tracker's memory is flat:
// every table and buffer is as large after 1.2 M samples as after 200 k,
// and within its bound, with and without movement events (without them
// nothing dies and the followed set only grows: the reservoir holds it).
func TestBoundedMemory(t *testing.T) {
	for _, movement := range []bool{true, false} {
		const maxObjects = 1000
		tr := New(nil, Options{MaxObjects: maxObjects, MaxGCs: 100, MaxStacks: 4, MaxTypes: 8})
		s := newStream(movement, 200)
		s.types = 20 // more than MaxTypes
		sizes := func() [10]int {
			return [10]int{cap(tr.objs), cap(tr.live), cap(tr.pend), cap(tr.spareLive), len(tr.dead), len(tr.gcs),
				len(tr.stacks), len(tr.types), len(tr.tallies), len(tr.names)}
		}
		for range 200_000 {
			s.next(tr)
		}
		before := sizes()
		for range 1_000_000 {
			s.next(tr)
		}
		after := sizes()
		if before != after {
			t.Errorf("movement %v: sizes grew from %v to %v", movement, before, after)
		}
		// Slots: the followed set, tombstones of one merge, and the
		// headroom before the reservoir thins.
		if cap(tr.objs) > 4*maxObjects || cap(tr.live) > 4*maxObjects || len(tr.dead) > maxObjects || len(tr.gcs) != 100 {
			t.Errorf("movement %v: sizes %v exceed the bounds", movement, after)
		}
		st := tr.stats
		if st.Tracked-st.Evicted-st.Died-st.Contradictions.AddressReused != tr.liveN || tr.liveN > maxObjects {
			t.Errorf("movement %v: %d alive, stats %+v", movement, tr.liveN, st)
		}
		if st.GCs != 6000 || st.GCRecordsDropped != 5900 || len(tr.stacks) != 4 || st.StacksNotKept == 0 || st.TypesNotKept == 0 {
			t.Errorf("movement %v: stats %+v, %d stacks", movement, st, len(tr.stacks))
		}
		r := tr.Result()
		if r.GCs[99].Count != 6000 || r.GCs[0].Count != 5901 {
			t.Errorf("GC records %d..%d, want the last 100 (5901..6000)", r.GCs[0].Count, r.GCs[99].Count)
		}
		sum := Summarize(r, nil)
		if !hasGroup(sum.Sites, SiteStackNotKept) || !hasGroup(sum.Types, typeNotKeptName) {
			t.Errorf("tables lack the not-kept rows: sites %v types %v", keysOf(sum.Sites), keysOf(sum.Types))
		}
		// Weighted, the followed samples stand for every sample.
		if est := sum.Total.W.Sampled; est < 0.8*float64(s.n) || est > 1.2*float64(s.n) {
			t.Errorf("movement %v: %.0f samples estimated, %d sent", movement, est, s.n)
		}
	}
}

func hasGroup(gs []Group, key string) bool {
	return slices.ContainsFunc(gs, func(g Group) bool { return g.Key == key })
}

func keysOf(gs []Group) []string {
	var k []string
	for _, g := range gs {
		k = append(k, g.Key)
	}
	return k
}

// TestReservoirRelaxes: when the followed set dies down to less than half
// the bound, the threshold falls back so that new samples are all followed
// again, and the objects followed keep their weights.
func TestReservoirRelaxes(t *testing.T) {
	tr := newReplayer(Options{MaxObjects: 100})
	for i := range 1000 {
		tr.Allocate(Alloc{Address: uint64(0x1000 + i*16), Size: 16, TypeID: 1, EstBytes: 1000, EstCount: 60})
	}
	if tr.liveN > 100 || tr.thresh == 0 || tr.stats.NotFollowed+tr.stats.Evicted != 1000-tr.liveN {
		t.Fatalf("alive %d threshold %v stats %+v", tr.liveN, tr.thresh, tr.stats)
	}
	r := tr.Result()
	if r.Complete() || r.Objects[0].Weight <= 1 {
		t.Fatalf("complete %v, weight %v: thinned objects must stand for the dropped ones", r.Complete(), r.Objects[0].Weight)
	}
	w := Summarize(r, nil).Total.W.Sampled
	if w < 800 || w > 1200 {
		t.Errorf("followed objects stand for %.0f samples, 1000 sent", w)
	}
	// A gen0 GC that covers nothing kills every followed object; the
	// threshold halves at each GC while the set is under half full.
	for n := uint32(1); n <= 64 && tr.thresh > 0; n++ {
		gc(tr, n, 0, []clrevents.MovedRange{}, nil)
	}
	if tr.thresh != 0 || tr.liveN != 0 {
		t.Fatalf("threshold %v with %d alive, want 0 after the set died", tr.thresh, tr.liveN)
	}
	notFollowed := tr.stats.NotFollowed
	for i := range 50 {
		tr.Allocate(Alloc{Address: uint64(0x9000_0000 + i*16), Size: 16, TypeID: 1, EstBytes: 1000, EstCount: 60})
	}
	if tr.stats.NotFollowed != notFollowed || tr.liveN != 50 {
		t.Errorf("after relaxing: %d not followed, %d alive, want every new sample followed", tr.stats.NotFollowed-notFollowed, tr.liveN)
	}
}

// TestTableLimits: types, stacks and BulkType names beyond their bounds are
// counted and named as not kept, never attributed to another; dead records
// past MaxObjects leave Result.Objects but not the tallies.
func TestTableLimits(t *testing.T) {
	tr := newReplayer(Options{MaxTypes: 2, MaxStacks: 1})
	for i, ty := range []string{"A", "B", "C", "A"} {
		tr.Allocate(Alloc{Address: uint64(0x100 * (i + 1)), Size: 8, TypeID: uint64(i%3 + 1), Type: ty, EstBytes: 1, EstCount: 1,
			Stack: []uint64{uint64(0x10 * (i%2 + 1))}})
	}
	tr.nameType(7, "G") // the names of A and B fill the name table
	sum := Summarize(tr.Result(), nil)
	want := map[string]int{"A": 2, "B": 1, typeNotKeptName: 1}
	for _, g := range sum.Types {
		if want[g.Key] != g.Sampled {
			t.Errorf("type %q: %d samples, want %d", g.Key, g.Sampled, want[g.Key])
		}
	}
	sites := map[string]int{}
	for _, g := range sum.Sites {
		sites[g.Key] = g.Sampled
	}
	// Not kept: two objects on the second stack (stack table full) and the
	// third type's (its (type, stack) pair over the 2·MaxStacks tallies).
	if len(sites) != 2 || sites[SiteStackNotKept] != 3 {
		t.Errorf("sites %v, want one object on the kept stack and three not kept", sites)
	}
	st := tr.stats
	if st.TypesNotKept != 1 || st.StacksNotKept != 3 || st.TypeNamesNotKept != 1 {
		t.Errorf("stats %+v", st)
	}
	// Four objects die in two GCs: 3 records kept, the tallies count 4.
	tr = newReplayer(Options{MaxObjects: 3})
	for i := range 3 {
		alloc(tr, uint64(0x100*(i+1)), "T")
	}
	gc(tr, 1, 0, []clrevents.MovedRange{}, nil)
	alloc(tr, 0x900, "T")
	gc(tr, 2, 0, []clrevents.MovedRange{}, nil)
	r := tr.Result()
	if len(r.Objects) != 3 || r.Objects[0].ID != 1 || r.Stats.DeadDropped != 1 || r.Complete() {
		t.Errorf("%d objects from ID %d, %d dropped: want the last 3 deaths", len(r.Objects), r.Objects[0].ID, r.Stats.DeadDropped)
	}
	if s := Summarize(r, nil); s.Total.Sampled != 4 || s.Total.Decided != 4 || s.Ages[0].Objects != 4 {
		t.Errorf("total %+v ages %+v, want 4 dead objects at age 1", s.Total, s.Ages)
	}
}

// TestRadixSort compares the range sort with a stable library sort on
// random keys with many duplicates, at sizes around the cut-over.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type kv struct{ k, seq uint64 }
	var tmp []kv
	var s scratch
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 50_000} {
		for _, spread := range []uint64{4, 1 << 20, 1 << 62} {
			a := make([]kv, n)
			for i := range a {
				a[i] = kv{0x7f00_0000_0000 + rng.Uint64N(spread)*8, uint64(i)}
			}
			want := slices.Clone(a)
			slices.SortStableFunc(want, func(x, y kv) int { return cmp.Compare(x.k, y.k) })
			radixSort(a, &tmp, &s, func(x *kv) uint64 { return x.k })
			if !slices.Equal(a, want) {
				t.Fatalf("n %d spread %d: radix sort differs from a stable sort", n, spread)
			}
		}
	}
}

// TestRemapOrders: a GC whose ranges land in an order unrelated to their
// old one (and one where two land on the same bytes) leaves the live
// objects sorted by address with the right addresses.
func TestRemapOrders(t *testing.T) {
	tr := newReplayer(Options{})
	for i := range 100 {
		alloc(tr, uint64(0x10000+i*0x10), "T")
	}
	// Ten ranges of ten objects, sent to slots in reverse order.
	var m []clrevents.MovedRange
	for r := range 10 {
		m = append(m, clrevents.MovedRange{OldBase: uint64(0x10000 + r*0xa0), NewBase: uint64(0x90000 + (9-r)*0x1000), Length: 0xa0})
	}
	gc(tr, 1, 0, m, nil)
	check := func(when string) {
		t.Helper()
		if !slices.IsSortedFunc(tr.live, cmpEnt) {
			t.Fatalf("%s: live entries out of order", when)
		}
	}
	check("reversed ranges")
	r := tr.Result()
	for i, o := range r.Objects {
		want := uint64(0x90000 + (9-i/10)*0x1000 + (i%10)*0x10)
		if !o.Alive || o.Address != want {
			t.Fatalf("object %d at %#x, want %#x", i, o.Address, want)
		}
	}
	// Two ranges landing on the same bytes: counted, still sorted.
	gc(tr, 2, 1, []clrevents.MovedRange{
		{OldBase: 0x90000, NewBase: 0x5000, Length: 0xa0},
		{OldBase: 0x91000, NewBase: 0x5050, Length: 0xa0},
	}, nil)
	check("overlapping destinations")
	r = tr.Result()
	if c := r.Stats.Contradictions; c.OverlappingDest != 1 || c.Collisions != 5 {
		t.Errorf("contradictions %+v, want 1 overlapping destination and 5 collisions", c)
	}
	if r.Stats.Died != 80 {
		t.Errorf("%d died, want the 80 objects no range covered", r.Stats.Died)
	}
}

// TestSkipObjects: without the object list the tables are the same, and
// no dead record is kept.
func TestSkipObjects(t *testing.T) {
	lt := loadTrace(t, tracetest.Path(t, heapChurn))
	full, _ := lt.replay(t, Options{})
	bare, _ := lt.replay(t, Options{SkipObjects: true})
	if len(bare.Objects) != 0 || !bare.NoObjects || bare.Complete() || !full.Complete() {
		t.Fatalf("skip: %d objects, complete %v; full complete %v", len(bare.Objects), bare.Complete(), full.Complete())
	}
	a, b := Summarize(full, nil), Summarize(bare, nil)
	if a.Total != b.Total || !slices.Equal(a.Types, b.Types) || !slices.Equal(a.Ages, b.Ages) || len(a.Sites) != len(b.Sites) {
		t.Errorf("tables differ:\n%+v\n%+v", a.Total, b.Total)
	}
}
