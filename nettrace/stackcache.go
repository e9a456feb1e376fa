package nettrace

// The stack cache maps stack ids (valid until the next sequence point) to
// instruction pointers. It is bounded: a stream that defines stacks without
// sequence points (the runtime writes one every ~10 MB, other writers may
// not) would otherwise hold every stack it ever defined.
//
// It keeps two generations. New stacks go into the young one; when the
// young one holds half the budget it becomes the old one and the previous
// old one is evicted (counted in Stats.StacksEvicted). A lookup tries the
// young generation, then the old. An id whose stack was evicted resolves to
// nothing, never to another stack: the event keeps its StackID with an
// empty Stack and is counted in Stats.UnresolvedStacks.
//
// Decoders on other goroutines read a generation while the framer adds to
// it, so a generation only ever grows at its end (a new id right after the
// dense range, IPs in slab space no entry uses yet): a decoder holds a
// stackView, a copy of the slice headers taken when its block was handed
// over, and never looks past it. Every other change (an id redefined, an id
// outside the dense range) waits until no decoder runs (Reader.drain).

const (
	slabIPs = 32 << 10 // IPs per slab (256 KB)
	// bigStack is the depth from which a stack gets an array of its own
	// instead of slab space.
	bigStack = slabIPs / 4
	// entryBytes is what a stack costs besides its IPs: its slice header
	// in the dense table.
	entryBytes = 24
	// DefaultStackCacheBytes bounds the stack cache when Options leaves it
	// zero: three times what a runtime stream holds between two sequence
	// points (~10 MB of stack and event blocks). With a generation released
	// but not yet recycled the cache holds at most about 1.5 times it.
	DefaultStackCacheBytes = 32 << 20
)

// stackGen is one generation: a dense table of ids from base, a map for
// ids outside it, and the IPs in fixed-size slabs (no growth by copying:
// entries point into slabs that never move).
type stackGen struct {
	base    uint32
	entries [][]uint64
	// full[i] says entries[i] is not empty: what counting events with a
	// stack needs, 1 byte per id where entries take 24 (a run's events
	// look their stacks up at random: the table stays in cache).
	full  []bool
	extra map[uint32][]uint64
	slabs [][]uint64 // in use, the last one being filled
	used  int        // IPs used in the last slab
	// bytes is what the generation holds: slabs in use, big stacks and
	// table entries. It depends only on the stacks added (not on what a
	// recycled generation kept), so eviction is the same however the
	// reader runs.
	bytes int64
	count int // stacks defined
}

// stackView is what a decoder sees of a generation.
type stackView struct {
	base    uint32
	entries [][]uint64
	full    []bool // as stackGen.full: len(full) == len(entries)
	extra   map[uint32][]uint64
}

func (g *stackGen) view() stackView {
	if g == nil {
		return stackView{}
	}
	return stackView{g.base, g.entries, g.full, g.extra}
}

func (v *stackView) get(id uint32) []uint64 {
	if i := int(id) - int(v.base); uint(i) < uint(len(v.entries)) {
		return v.entries[i]
	}
	return v.extra[id] // a nil map reads as empty
}

// lookupStack resolves a stack id that missed the young generation's dense
// table (see the decoder's fast path): the young map, then the old
// generation. nil means undefined or evicted.
func lookupStack(vs *[2]stackView, id uint32) []uint64 {
	if id == 0 {
		return nil
	}
	if st, ok := vs[0].extra[id]; ok {
		return st
	}
	return vs[1].get(id)
}

// reset empties g for reuse: its slabs go to spare, its table stays
// unless it is large.
func (g *stackGen) reset(spare *slabPool) {
	for i, sl := range g.slabs {
		spare.put(sl)
		g.slabs[i] = nil
	}
	g.slabs = g.slabs[:0]
	if cap(g.entries) > 1<<17 {
		g.entries, g.full = nil, nil
	} else {
		clear(g.entries) // drop references to arrays of big stacks
		g.entries, g.full = g.entries[:0], g.full[:0]
	}
	g.extra = nil
	g.used, g.bytes, g.count, g.base = 0, 0, 0, 0
}

// slabPool keeps the slabs of recycled generations for new ones, up to a
// limit (the memory a cache on its budget would use anyway).
type slabPool struct {
	slabs [][]uint64
	max   int
}

func (p *slabPool) put(sl []uint64) {
	if len(p.slabs) < p.max {
		p.slabs = append(p.slabs, sl)
	}
}

func (p *slabPool) get() []uint64 {
	if n := len(p.slabs); n > 0 {
		sl := p.slabs[n-1]
		p.slabs[n-1] = nil
		p.slabs = p.slabs[:n-1]
		return sl
	}
	return make([]uint64, slabIPs)
}

// appendable reports whether id can be added without disturbing decoders
// that hold views of g: it extends the dense range.
func (g *stackGen) appendable(id uint32) bool {
	return len(g.entries) == 0 && g.extra == nil || int64(id)-int64(g.base) == int64(len(g.entries))
}

// ips returns space for n IPs that no entry uses; newSlab gives a slab.
func (g *stackGen) ips(n int, newSlab func() []uint64) []uint64 {
	if n >= bigStack {
		g.bytes += int64(n) * 8
		return make([]uint64, n)
	}
	if len(g.slabs) == 0 || g.used+n > slabIPs {
		g.slabs = append(g.slabs, newSlab())
		g.used = 0
		g.bytes += slabIPs * 8
	}
	s := g.slabs[len(g.slabs)-1][g.used : g.used+n : g.used+n]
	g.used += n
	return s
}

// add stores one stack of raw pointer-sized IPs under id.
func (g *stackGen) add(id uint32, raw []byte, ptr int, newSlab func() []uint64) {
	n := len(raw) / ptr
	st := g.ips(n, newSlab)
	if ptr == 8 {
		for i := range st {
			st[i] = le64(raw[i*8:])
		}
	} else {
		for i := range st {
			st[i] = uint64(le32(raw[i*4:]))
		}
	}
	g.count++
	if len(g.entries) == 0 && g.extra == nil {
		g.base = id
	}
	switch i := int64(id) - int64(g.base); {
	case i == int64(len(g.entries)):
		g.bytes += entryBytes
		g.entries = append(g.entries, st)
		g.full = append(g.full, n > 0)
	case i >= 0 && i < int64(len(g.entries)):
		g.entries[i] = st
		g.full[i] = n > 0
	default:
		if g.extra == nil {
			g.extra = make(map[uint32][]uint64)
		}
		g.extra[id] = st
		g.bytes += 2 * entryBytes
	}
}

// stackCache is the framer's side: the two generations and the budget.
type stackCache struct {
	young, old *stackGen
	max        int64 // bytes for both generations
	evicted    uint64
	// gen is Event.StackGen: it moves on whenever an id may come to name
	// other IPs (a reset, an eviction, a redefinition).
	gen uint32
}
