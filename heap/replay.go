package heap

import (
	"cmp"
	"slices"

	"github.com/clrspy/clrspy/clrevents"
)

// obj is one followed object in its slot.
type obj struct {
	addr     uint64 // while alive, its entry's address is the current one
	size     uint64
	allocNs  int64
	deathNs  int64
	estBytes float64
	estCount float64
	prio     float64 // reservoir priority
	tau      float64 // highest reservoir threshold it passed
	id       int
	ty       int32 // index into tables.types
	stack    int32
	tally    int32
	ageBase  uint32
	gcsSeen  int32 // frozen at death
	deathGC  int32
	// survived, maxGen and gen are current once the object is dead; while
	// it is alive, its entry holds them.
	survived              int32
	gen, maxGen, deathGen int8
	source                Source
	state                 uint8
}

// Object states.
const (
	alive    = iota
	dead     // a GC found it dead
	replaced // a new sample landed on its address
	evicted  // the reservoir dropped it
)

// ent is a live object in address order: what a GC's walk reads and
// writes. What a GC changes lives here, not in the slot, so the walk reads
// and writes memory in order and touches a slot only to bury the object.
type ent struct {
	addr        uint64
	idx         int32
	survived    int32
	rank        int32 // during a GC: destination rank of its range
	gen, maxGen int8
	moved       bool // during a GC: moved to addr
}

// scratch is the tracker's per-GC working memory, reused across GCs.
type scratch struct {
	moved     []clrevents.MovedRange
	surviving []clrevents.SurvivingRange
	spareLive []ent
	mv        []ent
	mvSorted  []ent
	counts    []int32
	rank      []int32
	pairs     []keyIdx
	pairsTmp  []keyIdx
	movedTmp  []clrevents.MovedRange
	survTmp   []clrevents.SurvivingRange
}

func (t *Tracker) newSlot() int32 {
	if n := len(t.free); n > 0 {
		i := t.free[n-1]
		t.free = t.free[:n-1]
		return i
	}
	t.objs = append(t.objs, obj{})
	return int32(len(t.objs) - 1)
}

func cmpEnt(a, b ent) int { return cmp.Compare(a.addr, b.addr) }

// merge sorts the pending entries into live and drops the entries of
// objects no longer alive, freeing their slots.
func (t *Tracker) merge() {
	if len(t.pend) == 0 && t.tombs == 0 {
		return
	}
	slices.SortFunc(t.pend, cmpEnt)
	out := t.spareLive[:0]
	a, b := t.live, t.pend
	for len(a) > 0 || len(b) > 0 {
		var e ent
		if len(b) == 0 || len(a) > 0 && a[0].addr <= b[0].addr {
			e, a = a[0], a[1:]
		} else {
			e, b = b[0], b[1:]
		}
		if t.objs[e.idx].state != alive {
			t.free = append(t.free, e.idx)
			continue
		}
		out = append(out, e)
	}
	t.spareLive = t.live[:0]
	t.live = out
	t.pend = t.pend[:0]
	clear(t.pendAt)
	clear(t.pendBits[:])
	t.addrsOK = false
	t.tombs = 0
}

// pendBits is 16 KB: pend holds at most 1/8 of the followed set between
// merges in the bounded mode (thin merges), 12,500 entries by default, so
// about one lookup in ten that finds nothing still goes to the map.
const pendBitWords = 2048

func pendHash(addr uint64) uint64 { return (addr * 0x9e3779b97f4a7c15) >> (64 - 17) }

// findLive returns the entry of an alive object at addr in live, or nil.
// It searches addrs, live's addresses alone (8 bytes an entry, not 24: the
// search's last steps touch a third of the cache lines), rebuilt on the
// first search after live changed: a copy, cheaper than the replay or
// merge that changed it.
func (t *Tracker) findLive(addr uint64) *ent {
	if !t.addrsOK {
		t.addrs = t.addrs[:0]
		for i := range t.live {
			t.addrs = append(t.addrs, t.live[i].addr)
		}
		t.addrsOK = true
	}
	i, _ := slices.BinarySearch(t.addrs, addr)
	for ; i < len(t.addrs) && t.addrs[i] == addr; i++ {
		if t.objs[t.live[i].idx].state == alive {
			return &t.live[i]
		}
	}
	return nil
}

// sortMoved sorts ranges by old base: usually they are already (the
// runtime walks the heap in address order), else a radix sort.
func (s *scratch) sortMoved(r []clrevents.MovedRange) {
	if !slices.IsSortedFunc(r, func(a, b clrevents.MovedRange) int { return cmp.Compare(a.OldBase, b.OldBase) }) {
		radixSort(r, &s.movedTmp, s, func(x *clrevents.MovedRange) uint64 { return x.OldBase })
	}
}

func (s *scratch) sortSurviving(r []clrevents.SurvivingRange) {
	if !slices.IsSortedFunc(r, func(a, b clrevents.SurvivingRange) int { return cmp.Compare(a.Base, b.Base) }) {
		radixSort(r, &s.survTmp, s, func(x *clrevents.SurvivingRange) uint64 { return x.Base })
	}
}

func sortGens(r []clrevents.GenerationRange) {
	slices.SortFunc(r, func(a, b clrevents.GenerationRange) int { return cmp.Compare(a.Start, b.Start) })
}

// replay applies p's collected ranges as a GC condemning depth (gen2 only
// when background) and adds its counts to gc; every GC ages the objects.
//
// The live entries are walked in address order against the ranges sorted
// by old address: a pointer into each list, no search per object.
// Survivors are written back in place with their new address. When the
// ranges kept the objects' order (compaction sliding within a region, the
// common case) that is the new order and the GC is over; otherwise the
// moved ones are taken out, ordered by a counting sort on the destination
// rank of their range (a range keeps its objects' order) and merged back.
func (t *Tracker) replay(p *pendingGC, gc *GC, depth int, background bool) {
	gc.Moved += len(p.moved)
	gc.Surviving += len(p.surviving)
	c := &t.stats.Contradictions

	t.sortMoved(p.moved)
	t.sortSurviving(p.surviving)
	ov := countOverlaps(p.moved, p.surviving)
	dov, inOrder := t.rankDestinations(p.moved)
	gc.Overlaps += ov + dov
	c.OverlappingRanges += ov
	c.OverlappingDest += dov
	t.ageClock++
	noRanges := !p.rangeSeen
	if noRanges && len(p.genStart) == 0 {
		// Nothing moves, dies or changes generation: only the age, which
		// the clock gave every object at once.
		return
	}
	kill := !noRanges && !gc.Incomplete

	t.merge()
	t.addrsOK = false // addresses change below
	sortGens(p.genStart)
	sortGens(p.genEnd)
	start := genWalker{g: p.genStart}
	endStay := genWalker{g: p.genEnd}
	mw := movedWalker{rs: p.moved}
	sw := survivingWalker{rs: p.surviving}
	w := 0 // survivors are written back in place (w ≤ i)
	inPlaceSorted := true
	for i := range t.live {
		e := &t.live[i] // updated in place, then moved down to w
		gen := int(e.gen)
		if len(start.g) > 0 {
			if g, ok := start.lookup(e.addr); ok {
				if g != gen {
					t.stats.GenCorrections++
					gen = g
				} else {
					t.stats.GenConfirmed++
				}
			}
		}
		isCondemned := condemned(gen, depth, background)
		newAddr, hits, ri := mw.find(e.addr)
		survHits := sw.find(e.addr)
		if hits+survHits > 1 {
			c.MappedTwice++
		}
		moved := false
		switch {
		case hits > 0:
			if newAddr != e.addr {
				moved = true
				gc.Remapped++
			} else {
				gc.InPlace++
			}
		case survHits > 0:
			gc.InPlace++
		case isCondemned && kill:
			gc.Died++
			gc.Examined++
			t.die(e, gen, gc)
			continue
		default:
			// Not condemned (or no data): untouched.
			e.gen = int8(gen)
			inPlaceSorted = inPlaceSorted && (w == 0 || t.live[w-1].addr <= e.addr)
			if w != i {
				t.live[w] = *e
			}
			w++
			continue
		}
		// A survivor: promoted if its generation was condemned.
		if isCondemned {
			gc.Examined++
			e.survived++
			if gen < Gen2 {
				gen++
			}
		}
		e.gen = int8(gen)
		if moved {
			// Its generation at the end is looked up once the objects
			// are in new-address order.
			e.addr, e.moved = newAddr, true
			if !inOrder {
				e.rank = t.rank[ri]
			}
		} else {
			e.gen = int8(t.placed(&endStay, e.addr, gen))
		}
		if !moved || len(p.genEnd) == 0 {
			e.maxGen = max(e.maxGen, e.gen)
		}
		inPlaceSorted = inPlaceSorted && (w == 0 || t.live[w-1].addr <= e.addr)
		if w != i {
			t.live[w] = *e
		}
		w++
	}
	live := t.live[:w]
	if inPlaceSorted {
		t.live = live
		t.settleMoved(live, p.genEnd, true)
		return
	}
	// Take the moved ones out (the others keep their order), order them
	// and merge.
	n := 0
	mv := t.mv[:0]
	for i := range live {
		if live[i].moved {
			mv = append(mv, live[i])
			continue
		}
		if n != i {
			live[n] = live[i]
		}
		n++
	}
	stay := live[:n]
	t.mv = mv
	moved, sorted := mv, false
	switch {
	case dov > 0:
		// Ranges overlap at their destination: the rank order says
		// nothing, sort.
		radixSort(moved, &t.mvSorted, &t.scratch, func(e *ent) uint64 { return e.addr })
	case !inOrder:
		moved, sorted = t.orderMoved(mv, len(p.moved)), true
	}
	t.settleMoved(moved, p.genEnd, false)
	switch {
	case len(moved) == 0:
		t.live = stay
	case len(stay) == 0:
		// Everything that survived moved: the moved list becomes the
		// live one and the old live buffer takes its place.
		for i := 1; i < len(moved); i++ {
			if moved[i].addr == moved[i-1].addr {
				c.Collisions++
			}
		}
		old := t.live[:0]
		t.live = moved
		if sorted {
			t.mvSorted = old
		} else {
			t.mv = old
		}
	default:
		t.live = t.mergeMoved(stay, moved)
	}
}

// settleMoved finishes the moved entries of es, in address order: their
// generation from the end-of-GC ranges, and the moved mark cleared. With
// collisions (es holds every survivor) it counts a moved object landing on
// the address of another.
func (t *Tracker) settleMoved(es []ent, genEnd []clrevents.GenerationRange, collisions bool) {
	end := genWalker{g: genEnd}
	prevMoved := false
	for i := range es {
		e := &es[i]
		m := e.moved
		if collisions && i > 0 && es[i-1].addr == e.addr && (m || prevMoved) {
			t.stats.Contradictions.Collisions++
		}
		prevMoved = m
		if !m {
			continue
		}
		e.moved = false
		if len(genEnd) > 0 {
			e.gen = int8(t.placed(&end, e.addr, int(e.gen)))
			e.maxGen = max(e.maxGen, e.gen)
		}
	}
}

// mergeMoved merges the entries that kept their address with the moved
// ones, both in address order, into the spare buffer. A moved object on
// the address of another is a collision (those that stayed were counted
// when they met).
func (t *Tracker) mergeMoved(stay, moved []ent) []ent {
	out := slices.Grow(t.spareLive[:0], len(stay)+len(moved))[:len(stay)+len(moved)]
	i, j := 0, 0
	fromMoved := false
	for k := range out {
		m := i == len(stay) || j < len(moved) && moved[j].addr < stay[i].addr
		if m {
			out[k] = moved[j]
			j++
		} else {
			out[k] = stay[i]
			i++
		}
		if k > 0 && out[k-1].addr == out[k].addr && (m || fromMoved) {
			t.stats.Contradictions.Collisions++
		}
		fromMoved = m
	}
	t.spareLive = t.live[:0]
	return out
}

// placed returns a survivor's generation after the GC: the one the
// runtime's end-of-GC generation ranges put its address in, else the
// modelled one (an address in no reported range is a contradiction).
func (t *Tracker) placed(w *genWalker, addr uint64, gen int) int {
	if g, ok := w.lookup(addr); ok {
		return g
	}
	if len(w.g) > 0 {
		t.stats.Contradictions.Unplaced++
	}
	return gen
}

// orderMoved sorts the moved survivors by new address: a counting sort on
// their range's destination rank, stable, so each range's objects keep
// their order (ranges that do not overlap at their destination).
func (t *Tracker) orderMoved(mv []ent, ranges int) []ent {
	out := slices.Grow(t.mvSorted[:0], len(mv))[:len(mv)]
	t.mvSorted = out
	counts := slices.Grow(t.counts[:0], ranges+1)[:ranges+1]
	t.counts = counts
	clear(counts)
	for i := range mv {
		counts[mv[i].rank+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	for i := range mv {
		r := mv[i].rank
		out[counts[r]] = mv[i]
		counts[r]++
	}
	return out
}

// rankDestinations sets t.rank[i] to the position of moved range i in
// destination order. It returns how many moved ranges land on bytes of
// another and whether destination order is old-address order (a plain
// slide, the common case: then moved objects are in order already).
func (t *Tracker) rankDestinations(m []clrevents.MovedRange) (overlaps int, inOrder bool) {
	inOrder = true
	var end uint64
	for k := range m {
		if k > 0 && m[k].NewBase < m[k-1].NewBase {
			inOrder = false
			break
		}
		if k > 0 && m[k].NewBase < end {
			overlaps++
		}
		end = max(end, m[k].NewBase+m[k].Length)
	}
	if inOrder {
		return overlaps, true
	}
	d := slices.Grow(t.pairs[:0], len(m))[:len(m)]
	t.pairs = d
	for i, r := range m {
		d[i] = keyIdx{r.NewBase, int32(i)}
	}
	radixPairs(d, &t.pairsTmp)
	t.rank = slices.Grow(t.rank[:0], len(m))[:len(m)]
	overlaps, end = 0, 0
	for k, x := range d {
		r := &m[x.i]
		t.rank[x.i] = int32(k)
		if k > 0 && r.NewBase < end {
			overlaps++
		}
		end = max(end, r.NewBase+r.Length)
	}
	return overlaps, false
}

// countOverlaps counts ranges (moved and surviving together, in old-address
// order) that start before the end of an earlier one; both lists are
// sorted by base.
func countOverlaps(m []clrevents.MovedRange, s []clrevents.SurvivingRange) int {
	n := 0
	var end uint64
	for k := 0; len(m) > 0 || len(s) > 0; k++ {
		var lo, length uint64
		if len(s) == 0 || len(m) > 0 && m[0].OldBase <= s[0].Base {
			lo, length, m = m[0].OldBase, m[0].Length, m[1:]
		} else {
			lo, length, s = s[0].Base, s[0].Length, s[1:]
		}
		if k > 0 && lo < end {
			n++
		}
		end = max(end, lo+length)
	}
	return n
}

// movedWalker finds the moved range covering each of a non-decreasing
// sequence of addresses.
type movedWalker struct {
	rs []clrevents.MovedRange
	i  int // ranges with OldBase <= the last address
}

// find returns the new address of addr, how many ranges cover it (more
// than one only if ranges overlap) and the index of the range used.
func (w *movedWalker) find(addr uint64) (newAddr uint64, hits int, ri int) {
	for w.i < len(w.rs) && w.rs[w.i].OldBase <= addr {
		w.i++
	}
	// Ranges are sorted by base; an earlier range can still cover addr
	// only if ranges overlap, which countOverlaps reports. Stop at the
	// first one that does not.
	for j := w.i - 1; j >= 0; j-- {
		r := &w.rs[j]
		if addr-r.OldBase >= r.Length {
			break
		}
		if hits == 0 {
			newAddr, ri = r.NewBase+(addr-r.OldBase), j
		}
		hits++
	}
	return newAddr, hits, ri
}

type survivingWalker struct {
	rs []clrevents.SurvivingRange
	i  int
}

func (w *survivingWalker) find(addr uint64) int {
	for w.i < len(w.rs) && w.rs[w.i].Base <= addr {
		w.i++
	}
	hits := 0
	for j := w.i - 1; j >= 0; j-- {
		r := &w.rs[j]
		if addr-r.Base >= r.Length {
			break
		}
		hits++
	}
	return hits
}

// genWalker answers "which generation holds this address" from one set of
// GCGenerationRange events sorted by start, for non-decreasing addresses
// (a smaller one restarts the walk).
type genWalker struct {
	g    []clrevents.GenerationRange
	i    int // ranges starting below the last address
	last uint64
}

func (w *genWalker) lookup(addr uint64) (int, bool) {
	if len(w.g) == 0 {
		return 0, false
	}
	if addr < w.last {
		w.i = 0
	}
	w.last = addr
	for w.i < len(w.g) && w.g[w.i].Start < addr {
		w.i++
	}
	// A range starting at addr wins; else the last one starting before.
	if w.i < len(w.g) && w.g[w.i].Start == addr {
		return int(w.g[w.i].Generation), true
	}
	if w.i == 0 {
		return 0, false
	}
	r := &w.g[w.i-1]
	if addr-r.Start < r.UsedLength {
		return int(r.Generation), true
	}
	return 0, false
}

// keyIdx is a sort key and the index of what it belongs to.
type keyIdx struct {
	k uint64
	i int32
}

// radixPairs sorts a by key, stably, in passes of 11 bits over the key bits
// that differ (three or four for heap addresses): linear in len(a). tmp is
// scratch.
func radixPairs(a []keyIdx, tmp *[]keyIdx) {
	if len(a) < 64 {
		slices.SortStableFunc(a, func(x, y keyIdx) int { return cmp.Compare(x.k, y.k) })
		return
	}
	var or, and uint64 = 0, ^uint64(0)
	for i := range a {
		or |= a[i].k
		and &= a[i].k
	}
	varying := or ^ and
	*tmp = slices.Grow((*tmp)[:0], len(a))[:len(a)]
	src, dst := a, *tmp
	var count [1 << 11]int
	for shift := uint(0); shift < 64; shift += 11 {
		if (varying>>shift)&(1<<11-1) == 0 {
			continue
		}
		clear(count[:])
		for i := range src {
			count[(src[i].k>>shift)&(1<<11-1)]++
		}
		sum := 0
		for d, n := range count {
			count[d] = sum
			sum += n
		}
		for i := range src {
			d := (src[i].k >> shift) & (1<<11 - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}

// radixSort sorts a by key, stably, in linear time: the keys are sorted
// as pairs with radixPairs, then a is permuted through tmp.
func radixSort[T any](a []T, tmp *[]T, s *scratch, key func(*T) uint64) {
	p := slices.Grow(s.pairs[:0], len(a))[:len(a)]
	s.pairs = p
	for i := range a {
		p[i] = keyIdx{key(&a[i]), int32(i)}
	}
	radixPairs(p, &s.pairsTmp)
	*tmp = slices.Grow((*tmp)[:0], len(a))[:len(a)]
	out := *tmp
	for j, x := range p {
		out[j] = a[x.i]
	}
	copy(a, out)
}
