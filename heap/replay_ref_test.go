package heap

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// refObj is an object of the reference replay: the per-object lookups the
// tracker replaced with one sorted walk, written as plainly as possible.
type refObj struct {
	addr              uint64
	gen, maxGen, surv int
	alive             bool
	deathGC, seen     int
}

type refCounts struct {
	corrections, confirmed, mappedTwice, unplaced, overlaps, destOverlaps int
	remapped, inPlace, died, examined                                     int
}

// refGen is the generation that ranges (any order) give addr: a range
// starting at addr, else the one starting last before it, if it covers it.
func refGen(rs []clrevents.GenerationRange, addr uint64) (int, bool) {
	g := slices.Clone(rs)
	slices.SortStableFunc(g, func(a, b clrevents.GenerationRange) int { return cmp.Compare(a.Start, b.Start) })
	for _, r := range g {
		if r.Start == addr {
			return int(r.Generation), true
		}
	}
	best := -1
	for i, r := range g {
		if r.Start < addr {
			best = i
		}
	}
	if best >= 0 && addr-g[best].Start < g[best].UsedLength {
		return int(g[best].Generation), true
	}
	return 0, false
}

// refCovering returns, for ranges sorted by base, the new address from the
// last range starting at or below addr and how many consecutive ranges
// (going down from it) cover addr.
func refCovering(bases, lens, news []uint64, addr uint64) (uint64, int) {
	last := -1
	for i, b := range bases {
		if b <= addr {
			last = i
		}
	}
	var out uint64
	hits := 0
	for j := last; j >= 0 && addr-bases[j] < lens[j]; j-- {
		if hits == 0 {
			out = news[j] + addr - bases[j]
		}
		hits++
	}
	return out, hits
}

func refOverlaps(lo, n []uint64) int {
	type span struct{ lo, n uint64 }
	s := make([]span, len(lo))
	for i := range lo {
		s[i] = span{lo[i], n[i]}
	}
	slices.SortStableFunc(s, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	c := 0
	var end uint64
	for i, x := range s {
		if i > 0 && x.lo < end {
			c++
		}
		end = max(end, x.lo+x.n)
	}
	return c
}

// refGC replays one blocking GC over objs.
func refGC(objs []*refObj, count, depth int, moved []clrevents.MovedRange, surv []clrevents.SurvivingRange,
	start, end []clrevents.GenerationRange, rangeSeen bool) refCounts {
	var c refCounts
	m := slices.Clone(moved)
	slices.SortStableFunc(m, func(a, b clrevents.MovedRange) int { return cmp.Compare(a.OldBase, b.OldBase) })
	s := slices.Clone(surv)
	slices.SortStableFunc(s, func(a, b clrevents.SurvivingRange) int { return cmp.Compare(a.Base, b.Base) })
	var mb, ml, mn, sb, sl, all, alln, db, dl []uint64
	for _, r := range m {
		mb, ml, mn = append(mb, r.OldBase), append(ml, r.Length), append(mn, r.NewBase)
		all, alln = append(all, r.OldBase), append(alln, r.Length)
		db, dl = append(db, r.NewBase), append(dl, r.Length)
	}
	for _, r := range s {
		sb, sl = append(sb, r.Base), append(sl, r.Length)
		all, alln = append(all, r.Base), append(alln, r.Length)
	}
	c.overlaps, c.destOverlaps = refOverlaps(all, alln), refOverlaps(db, dl)
	for _, o := range objs {
		if !o.alive {
			continue
		}
		o.seen++
		gen := o.gen
		if g, ok := refGen(start, o.addr); ok {
			if g != gen {
				c.corrections++
				gen = g
			} else {
				c.confirmed++
			}
		}
		cond := condemned(gen, depth, false)
		na, hits := refCovering(mb, ml, mn, o.addr)
		_, sh := refCovering(sb, sl, sb, o.addr)
		if hits+sh > 1 {
			c.mappedTwice++
		}
		switch {
		case hits > 0:
			if na != o.addr {
				c.remapped++
			} else {
				c.inPlace++
			}
			o.addr = na
		case sh > 0:
			c.inPlace++
		case cond && rangeSeen:
			o.alive, o.deathGC, o.gen = false, count, gen
			c.died++
			c.examined++
			continue
		default:
			o.gen = gen
			continue
		}
		if cond {
			c.examined++
			o.surv++
			if gen < Gen2 {
				gen++
			}
		}
		if g, ok := refGen(end, o.addr); ok {
			gen = g
		} else if len(end) > 0 {
			c.unplaced++
		}
		o.gen, o.maxGen = gen, max(o.maxGen, gen)
	}
	return c
}

// TestReplayMatchesReference drives the tracker and the reference through
// random GCs: objects in three address areas, moved ranges sending blocks
// to random places (in order, shuffled, sometimes onto each other or over
// one another, or all sliding down in order), surviving ranges, generation
// ranges before and after, GCs of every depth and some without ranges, new
// samples between GCs. Every object's fate and every count must agree
// after every GC, as long as no two live objects share an address (then
// the two disagree by design on which one a later sample replaces).
func TestReplayMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	// What the compared GCs exercised: every path of the replay.
	var compared, slides, unordered, destOverlap, twice, unplaced, corrected, died, noRanges int
	defer func() {
		t.Logf("%d GCs: %d slides, %d with destinations out of order, %d landing on each other, %d mapping an object twice, "+
			"%d with unplaced survivors, %d with corrected generations, %d killing, %d without ranges",
			compared, slides, unordered, destOverlap, twice, unplaced, corrected, died, noRanges)
		if min(slides, unordered, destOverlap, twice, unplaced, corrected, died, noRanges) < 10 {
			t.Errorf("a path of the replay was exercised fewer than 10 times")
		}
	}()
	for scenario := range 300 {
		tr := New(nil, Options{MaxObjects: -1})
		var ref []*refObj
		used := map[uint64]bool{}
		newAddr := func() uint64 {
			for {
				a := 0x10000*uint64(1+rng.IntN(3)) + uint64(rng.IntN(0x800))*16
				if !used[a] {
					return a
				}
			}
		}
		alloc := func() {
			a := newAddr()
			used[a] = true
			tr.Allocate(Alloc{Address: a, Size: 16, TypeID: 1, Type: "T", EstBytes: 16, EstCount: 1})
			ref = append(ref, &refObj{addr: a, alive: true})
		}
		for range 20 + rng.IntN(200) {
			alloc()
		}
		gcs := 1 + rng.IntN(8)
		for n := 1; n <= gcs; n++ {
			depth := rng.IntN(3)
			var moved []clrevents.MovedRange
			var surv []clrevents.SurvivingRange
			var start, end []clrevents.GenerationRange
			rangeSeen := rng.IntN(8) != 0
			// A slide moves every range 8 bytes down: the objects keep
			// their order among themselves and those that stay.
			slide := rng.IntN(3) == 0
			if rangeSeen {
				dest := uint64(0x40000 + rng.IntN(4)*0x10000)
				for range rng.IntN(40) {
					base := 0x10000*uint64(1+rng.IntN(3)) + uint64(rng.IntN(0x800))*16
					length := uint64(16 * (1 + rng.IntN(20)))
					if rng.IntN(3) == 0 {
						surv = append(surv, clrevents.SurvivingRange{Base: base, Length: length})
						continue
					}
					to := dest
					switch {
					case slide:
						to = base - 8
					case rng.IntN(4) == 0:
						to = 0x40000 + uint64(rng.IntN(0x4000))*16 // anywhere: out of order, maybe onto another
					}
					moved = append(moved, clrevents.MovedRange{OldBase: base, NewBase: to, Length: length})
					dest += length + uint64(16*rng.IntN(3))
				}
			}
			if rng.IntN(3) == 0 {
				for range 1 + rng.IntN(4) {
					start = append(start, clrevents.GenerationRange{Generation: uint8(rng.IntN(3)),
						Start: 0x10000 * uint64(1+rng.IntN(3)), UsedLength: uint64(rng.IntN(0x8000))})
				}
			}
			if rng.IntN(3) == 0 {
				for range 1 + rng.IntN(4) {
					end = append(end, clrevents.GenerationRange{Generation: uint8(rng.IntN(3)),
						Start: 0x10000 * uint64(1+rng.IntN(7)), UsedLength: uint64(rng.IntN(0x10000))})
				}
			}
			before := tr.stats
			tr.GCStart(int64(n), uint32(n), depth, 0)
			for _, g := range start {
				tr.GenerationRange(g)
			}
			// One range per event: ranges of different events may overlap
			// (a contradiction, counted), within one event they may not.
			for i := range moved {
				tr.Moved([]clrevents.MovedRange{moved[i]})
			}
			for i := range surv {
				tr.Surviving([]clrevents.SurvivingRange{surv[i]})
			}
			if rangeSeen && len(moved)+len(surv) == 0 {
				tr.Moved([]clrevents.MovedRange{})
			}
			tr.GCEnd(uint32(n))
			for _, g := range end {
				tr.GenerationRange(g)
			}
			tr.RestartEEEnd()
			rc := refGC(ref, n, depth, moved, surv, start, end, rangeSeen)
			g := tr.lastGC()
			got := refCounts{tr.stats.GenCorrections - before.GenCorrections, tr.stats.GenConfirmed - before.GenConfirmed,
				tr.stats.Contradictions.MappedTwice - before.Contradictions.MappedTwice,
				tr.stats.Contradictions.Unplaced - before.Contradictions.Unplaced,
				tr.stats.Contradictions.OverlappingRanges - before.Contradictions.OverlappingRanges,
				tr.stats.Contradictions.OverlappingDest - before.Contradictions.OverlappingDest,
				g.Remapped, g.InPlace, g.Died, g.Examined}
			compared++
			if slide && len(moved) > 0 {
				slides++
			}
			if !slices.IsSortedFunc(moved, func(a, b clrevents.MovedRange) int {
				return cmp.Or(cmp.Compare(a.OldBase, b.OldBase), cmp.Compare(a.NewBase, b.NewBase))
			}) || func() bool {
				m := slices.Clone(moved)
				slices.SortFunc(m, func(a, b clrevents.MovedRange) int { return cmp.Compare(a.OldBase, b.OldBase) })
				return !slices.IsSortedFunc(m, func(a, b clrevents.MovedRange) int { return cmp.Compare(a.NewBase, b.NewBase) })
			}() {
				unordered++
			}
			for i, v := range []int{rc.destOverlaps, rc.mappedTwice, rc.unplaced, rc.corrections, rc.died} {
				if v > 0 {
					*[]*int{&destOverlap, &twice, &unplaced, &corrected, &died}[i]++
				}
			}
			if !rangeSeen {
				noRanges++
			}
			if got != rc {
				t.Fatalf("scenario %d GC %d: counts %+v, reference %+v\nmoved %x\nsurv %x", scenario, n, got, rc, moved, surv)
			}
			// Two live objects on one address end the comparison.
			clear(used)
			shared := false
			for _, o := range ref {
				if o.alive {
					shared = shared || used[o.addr]
					used[o.addr] = true
				}
			}
			r := tr.Result()
			for i, o := range ref {
				x := r.Objects[i]
				if x.Alive != o.alive || x.Gen != o.gen || x.MaxGen != o.maxGen || x.Survived != o.surv ||
					x.GCsSeen != o.seen || (o.alive && x.Address != o.addr) || (!o.alive && x.DeathGC != o.deathGC) {
					t.Fatalf("scenario %d GC %d object %d: tracker %+v, reference %+v", scenario, n, i, x, *o)
				}
			}
			if shared {
				break
			}
			for range rng.IntN(30) {
				alloc()
			}
		}
	}
}

// findLive through addrs finds what a scan of live finds: the first alive
// entry at the address, with repeated addresses (dead entries stay until a
// merge), addresses before the first and past the last, and after live
// changed (addrs is rebuilt).
func TestFindLiveAddrs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 63, 1000, 20_000} {
		tr := New(&nettrace.Header{PointerSize: 8, QPCFrequency: 1_000_000_000}, Options{})
		for round := range 3 {
			tr.live, tr.objs = tr.live[:0], tr.objs[:0]
			for i := range n {
				addr := 0x1000 + uint64(rng.IntN(4*n+1))*8
				st := uint8(alive)
				if rng.IntN(4) == 0 {
					st = replaced
				}
				tr.objs = append(tr.objs, obj{state: st})
				tr.live = append(tr.live, ent{addr: addr, idx: int32(i)})
			}
			slices.SortStableFunc(tr.live, cmpEnt)
			tr.addrsOK = false // what merge, replay and thin do
			scan := func(addr uint64) *ent {
				for i := range tr.live {
					if e := &tr.live[i]; e.addr == addr && tr.objs[e.idx].state == alive {
						return e
					}
				}
				return nil
			}
			found := 0
			for q := range 4*n + 20 {
				addr := 0x1000 + uint64(q)*8 - 64
				got, want := tr.findLive(addr), scan(addr)
				if got != want {
					t.Fatalf("n %d round %d: findLive(%#x) = %p, scan %p", n, round, addr, got, want)
				}
				if got != nil {
					found++
				}
			}
			if n > 1 && (found == 0 || !tr.addrsOK || len(tr.addrs) != n) {
				t.Fatalf("n %d: %d addresses found, addrs built %v (%d)", n, found, tr.addrsOK, len(tr.addrs))
			}
		}
	}
}
