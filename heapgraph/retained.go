package heapgraph

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// A type's retained bytes are the bytes of the objects that become
// unreachable when every object of the type goes (its own objects
// included): what a collection would free without the type. The
// dominator tree gives each object to one dominator, so the union of the
// dominator subtrees of a type's objects is only a lower bound: an object
// two objects of the type share, neither dominating it, is retained by
// the type as a set but dominated by neither. The exact figure needs one
// walk of the graph without the type: O(objects + references) per type,
// which Types spends on the types a report shows (and on all of them
// when they fit in the time budget), marking the others.

// TypeOptions says which types get exact retained bytes.
type TypeOptions struct {
	// Top: the types ranked first by the lower bound and by own bytes
	// (Top of each) are made exact first (0: the default, 30; negative:
	// none, and with no Also and a negative Budget, no exact figure at
	// all: the lower bound only, in one walk of the dominator tree).
	Top int
	// Also names types made exact whatever their rank (a --why's type,
	// the types of the other side of a diff).
	Also []string
	// Budget bounds the time spent on exact figures beyond the Top and
	// Also types (0: DefaultExactBudget; negative: none beyond them).
	// Types left over keep the lower bound, marked RetainedExact false.
	Budget time.Duration
}

// DefaultExactBudget is the time Types spends making retained bytes exact
// beyond the types a report shows (measured: about 10 ms per type per
// million objects and references, see docs/PERFORMANCE.md).
const DefaultExactBudget = 2 * time.Second

const defaultTop = 30

// retainedScratch is reused across the types of one graph: a visited
// bitset and a DFS stack (a frame per node on the path, not per
// reference waiting: see markFrom).
type retainedScratch struct {
	seen  []uint64
	stack []dfsFrame
}

// domIndex numbers the dominator tree in preorder: each node's subtree
// is the interval [pre, pre+size), which also says whether a node
// dominates another (two nodes' nearest common dominator is found by
// climbing from one until it does).
type domIndex struct {
	pre, size []uint32
}

func (g *Graph) domIndex() domIndex {
	nn := g.N + 1
	off, kids := g.domChildren()
	// In the graph's store, as its other per-object arrays (8 bytes per
	// object; in the Go heap with a depth array they were a third of it at
	// a 1 M-object report's peak).
	d := domIndex{pre: makeArr[uint32](g.mem, nn), size: makeArr[uint32](g.mem, nn)}
	root := g.Root()
	stack := []dfsFrame{{root, off[root]}}
	n := uint32(1)
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.pos == off[f.v+1] {
			d.size[f.v] = n - d.pre[f.v]
			stack = stack[:len(stack)-1]
			continue
		}
		w := kids[f.pos]
		f.pos++
		d.pre[w] = n
		n++
		stack = append(stack, dfsFrame{w, off[w]})
	}
	return d
}

// free frees d's arrays.
func (d *domIndex) free(g *Graph) {
	freeArr(g.mem, d.pre)
	freeArr(g.mem, d.size)
	*d = domIndex{}
}

// commonDominator is the nearest node dominating both a and b.
// The root's interval holds every node: the climb ends there at the latest.
func (g *Graph) commonDominator(d *domIndex, a, b uint32) uint32 {
	for d.pre[b] < d.pre[a] || d.pre[b] >= d.pre[a]+d.size[a] {
		a = g.Idom[a]
	}
	return a
}

// retainedWithout returns the bytes of the objects the virtual root no
// longer reaches when the objects of type t are removed (t's own objects
// included: they are never reached). c is a common dominator of t's
// objects: only c's dominator subtree can lose objects (a path that
// avoids c avoids every object of t), and an object in it is reached
// from the root only through c, by a path that stays inside (one leaving
// it could not come back without c), so the walk starts at c and stays
// in its subtree.
func (g *Graph) retainedWithout(t, c uint32, d *domIndex, s *retainedScratch) uint64 {
	if c != g.Root() && g.Type[c] == t {
		return g.Retained[c] // all of c's subtree goes with c
	}
	if s.seen == nil {
		s.seen = make([]uint64, (g.N+1+63)/64)
	} else {
		clear(s.seen)
	}
	seen, stack := s.seen, s.stack[:0]
	lo, hi := d.pre[c], d.pre[c]+d.size[c]
	seen[c/64] |= 1 << (c % 64)
	stack = append(stack, dfsFrame{c, g.Off[c]})
	var reached uint64
	if c != g.Root() {
		reached = g.Size[c]
	}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.pos == g.Off[f.v+1] {
			stack = stack[:len(stack)-1]
			continue
		}
		w := g.Dst[f.pos]
		f.pos++
		if seen[w/64]&(1<<(w%64)) != 0 || g.Type[w] == t || d.pre[w] < lo || d.pre[w] >= hi {
			continue
		}
		seen[w/64] |= 1 << (w % 64)
		reached += g.Size[w]
		stack = append(stack, dfsFrame{w, g.Off[w]})
	}
	s.stack = stack
	return g.Retained[c] - reached
}

// exactRetained makes ts' retained bytes exact: first the types o.Also
// names, then the Top first by the lower bound and by own bytes
// (interleaved), then the others by the lower bound while o.Budget
// lasts. ts is sorted by the lower bound.
func (g *Graph) exactRetained(ts []TypeStat, o TypeOptions) {
	top := o.Top
	switch {
	case top == 0:
		top = defaultTop
	case top < 0:
		top = 0
	}
	budget := o.Budget
	if budget == 0 {
		budget = DefaultExactBudget
	}
	byName := make(map[string]int, len(ts))
	for i := range ts {
		byName[ts[i].Type] = i
	}
	order := make([]int, 0, len(ts))
	queued := make([]bool, len(ts))
	add := func(i int) {
		if !queued[i] {
			queued[i] = true
			order = append(order, i)
		}
	}
	for _, n := range o.Also {
		if i, ok := byName[n]; ok {
			add(i)
		}
	}
	byOwn := make([]int, len(ts))
	for i := range byOwn {
		byOwn[i] = i
	}
	slices.SortStableFunc(byOwn, func(a, b int) int { return cmpDesc(ts[a].Bytes, ts[b].Bytes) })
	for i := 0; i < top && i < len(ts); i++ {
		add(i)
		add(byOwn[i])
	}
	must := len(order)
	for i := range ts {
		add(i)
	}

	typeIdx := make(map[string]uint32, len(g.TypeNames))
	for i, n := range g.TypeNames {
		typeIdx[n] = uint32(i)
	}
	// Each type's walk is confined to the dominator subtree of its
	// objects' nearest common dominator: the one of the objects first
	// and last in the tree's preorder.
	d := g.domIndex()
	defer d.free(g)
	g.dropDomChildren()
	g.mem.release() // parked: Idom and order, read by domIndex's tree
	none := ^uint32(0)
	first, last := make([]uint32, len(g.TypeNames)), make([]uint32, len(g.TypeNames))
	for i := range first {
		first[i], last[i] = none, none
	}
	for v := uint32(0); v < uint32(g.N); v++ {
		t := g.Type[v]
		if first[t] == none || d.pre[v] < d.pre[first[t]] {
			first[t] = v
		}
		if last[t] == none || d.pre[v] > d.pre[last[t]] {
			last[t] = v
		}
	}
	g.mem.release()
	// Walks run on every CPU (each with its own bitset and stack; each
	// writes its own types' entries).
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(order)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s retainedScratch
			for {
				k := int(next.Add(1) - 1)
				if k >= len(order) || k >= must && (budget < 0 || time.Since(start) > budget) {
					return
				}
				t := &ts[order[k]]
				if t.RetainedExact {
					continue
				}
				if t.Count == 1 || t.Retained == g.Bytes {
					// One object: its dominator subtree is exactly
					// what it keeps alive. A type retaining
					// everything already can't retain more.
					t.RetainedExact = true
					continue
				}
				ti := typeIdx[t.Type]
				c := g.commonDominator(&d, first[ti], last[ti])
				t.Retained = g.retainedWithout(ti, c, &d, &s)
				t.RetainedExact = true
			}
		}()
	}
	wg.Wait()
	g.mem.release() // parked: what the walks read
}
