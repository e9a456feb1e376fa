package heapgraph

import (
	"slices"
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
// beyond the types a report shows (measured: about 8 ms per type per
// million objects, see docs/PERFORMANCE.md).
const DefaultExactBudget = 2 * time.Second

const defaultTop = 30

// retainedScratch is reused across the types of one graph: a visited
// bitset and a DFS stack.
type retainedScratch struct {
	seen  []uint64
	stack []uint32
}

// retainedWithout returns the bytes of the objects the virtual root no
// longer reaches when the objects of type t are removed (t's own objects
// included: they are never reached).
func (g *Graph) retainedWithout(t uint32, s *retainedScratch) uint64 {
	if s.seen == nil {
		s.seen = make([]uint64, (g.N+1+63)/64)
	} else {
		clear(s.seen)
	}
	seen, stack := s.seen, s.stack[:0]
	root := g.Root()
	seen[root/64] |= 1 << (root % 64)
	stack = append(stack, root)
	var reached uint64
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range g.Dst[g.Off[v]:g.Off[v+1]] {
			if seen[w/64]&(1<<(w%64)) != 0 || g.Type[w] == t {
				continue
			}
			seen[w/64] |= 1 << (w % 64)
			reached += g.Size[w]
			stack = append(stack, w)
		}
	}
	s.stack = stack
	return g.Bytes - reached
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
	var s retainedScratch
	start := time.Now()
	for k, i := range order {
		if k >= must && (budget < 0 || time.Since(start) > budget) {
			break
		}
		t := &ts[i]
		if t.RetainedExact {
			continue
		}
		if t.Count == 1 || t.Retained == g.Bytes {
			// One object: its dominator subtree is exactly what it
			// keeps alive. A type retaining everything already can't
			// retain more.
			t.RetainedExact = true
			continue
		}
		t.Retained = g.retainedWithout(typeIdx[t.Type], &s)
		t.RetainedExact = true
	}
}
