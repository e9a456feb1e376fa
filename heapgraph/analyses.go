package heapgraph

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TypeStat is one type of a snapshot.
type TypeStat struct {
	Type  string
	Count uint64
	Bytes uint64 // own sizes
	// Retained is the bytes of the objects only objects of this type
	// keep alive, each counted once (the type's own objects included):
	// what the roots no longer reach once every object of the type is
	// gone, when RetainedExact. Otherwise it is the lower bound the
	// dominator tree gives: the union of the dominator subtrees of the
	// type's objects, which leaves out an object two objects of the type
	// share with neither dominating it (see retained.go).
	Retained      uint64
	RetainedExact bool
}

// domChildren is the dominator tree as CSR (children of each node).
// Computed once per graph, in the graph's store.
func (g *Graph) domChildren() (off, kids []uint32) {
	if g.domKids != nil {
		return g.domOff, g.domKids
	}
	defer func() { g.domOff, g.domKids = off, kids }()
	nn := g.N + 1
	off = makeArr[uint32](g.mem, nn+1)
	for v := 0; v < nn; v++ {
		if uint32(v) != g.Root() {
			off[g.Idom[v]+1]++
		}
	}
	for i := 1; i <= nn; i++ {
		off[i] += off[i-1]
	}
	kids = makeArr[uint32](g.mem, nn-1)
	fill := makeArr[uint32](g.mem, nn)
	copy(fill, off[:nn])
	defer freeArr(g.mem, fill)
	// In DFS preorder, so a node's children come out in the graph's
	// order.
	for _, v := range g.order {
		if v == g.Root() {
			continue
		}
		d := g.Idom[v]
		kids[fill[d]] = v
		fill[d]++
	}
	return off, kids
}

// dropDomChildren frees the dominator tree's children when the graph
// parks its arrays (a large graph: its exact walks have no room for
// them); the next domChildren makes them again.
func (g *Graph) dropDomChildren() {
	if !g.park || g.domKids == nil {
		return
	}
	freeArr(g.mem, g.domOff)
	freeArr(g.mem, g.domKids)
	g.domOff, g.domKids = nil, nil
}

// Types returns every type's count, own bytes and retained bytes, by
// retained bytes (then own bytes, then name), with the default options:
// exact retained bytes for the top 30 types by the dominator tree's lower
// bound and by own bytes, and for the others while DefaultExactBudget
// lasts.
func (g *Graph) Types() []TypeStat { return g.TypesWith(TypeOptions{}) }

// TypesWith is Types with the types whose retained bytes are made exact
// chosen by o.
func (g *Graph) TypesWith(o TypeOptions) []TypeStat {
	ts := g.typesBound()
	if o.Top >= 0 || len(o.Also) > 0 || o.Budget >= 0 {
		g.exactRetained(ts, o)
		sortTypes(ts)
	}
	return ts
}

// typesBound returns every type with the dominator tree's lower bound of
// its retained bytes, sorted by it.
func (g *Graph) typesBound() []TypeStat {
	g.Analyze()
	ts := make([]TypeStat, len(g.TypeNames))
	for i := range ts {
		ts[i].Type = g.TypeNames[i]
	}
	for v := 0; v < g.N; v++ {
		t := &ts[g.Type[v]]
		t.Count++
		t.Bytes += g.Size[v]
	}
	g.mem.release() // parked: what the next walk does not read goes
	// A walk of the dominator tree with, per type, the number of its
	// objects on the path: an object adds its retained bytes to its type
	// only when no dominator of it has the type.
	off, kids := g.domChildren()
	g.mem.release() // parked: Idom and order, read by domChildren
	active := make([]uint32, len(g.TypeNames))
	stack := []dfsFrame{{g.Root(), off[g.Root()]}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.pos == off[f.v+1] {
			if f.v != g.Root() {
				active[g.Type[f.v]]--
			}
			stack = stack[:len(stack)-1]
			continue
		}
		w := kids[f.pos]
		f.pos++
		t := g.Type[w]
		if active[t] == 0 {
			ts[t].Retained += g.Retained[w]
		}
		active[t]++
		stack = append(stack, dfsFrame{w, off[w]})
	}
	ts = slices.DeleteFunc(ts, func(t TypeStat) bool { return t.Count == 0 })
	sortTypes(ts)
	g.mem.release() // parked: the tree's arrays and the types go
	return ts
}

// sortTypes orders types by retained bytes, then own bytes, then name.
func sortTypes(ts []TypeStat) {
	slices.SortFunc(ts, func(a, b TypeStat) int {
		return cmp.Or(cmpDesc(a.Retained, b.Retained), cmpDesc(a.Bytes, b.Bytes), strings.Compare(a.Type, b.Type))
	})
}

// cmpDesc orders the larger first.
func cmpDesc(a, b uint64) int { return cmp.Compare(b, a) }

// Path is a group of objects reached by the same shortest path from a
// root: the root, the types along the path (from the root's object down
// to the objects' own type; a run of more than maxRun objects of one type
// is one step "TYPE ×4+", a path of more than maxPathTypes steps its two
// ends around "..."), how many objects and their own bytes.
type Path struct {
	RootKind RootKind
	Root     string // the root's name (a static field's name, a stack frame's method) or its kind
	Types    []string
	Type     string // the objects' own type (Types' last step without a run's mark)
	Count    uint64
	Bytes    uint64
}

// Matcher returns the test --why applies to objects: "0xADDRESS" selects
// that object; a type name its objects (the full name, the runtime's or
// the readable one, or a suffix after a '.' or '+': "Session" matches
// "MyApp.Session" and "MyApp.Cache+Session"; "Dictionary<Int64,Session>"
// matches "System.Collections.Generic.Dictionary`2[System.Int64,Session]").
func (g *Graph) Matcher(spec string) (func(v uint32) bool, error) {
	if strings.HasPrefix(spec, "0x") || strings.HasPrefix(spec, "0X") {
		a, err := strconv.ParseUint(spec[2:], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("--why %s: not a hexadecimal address", spec)
		}
		id, ok := g.Find(a)
		if !ok {
			return nil, fmt.Errorf("--why %s: no object at that address in the snapshot", spec)
		}
		return func(v uint32) bool { return v == id }, nil
	}
	want := make([]bool, len(g.TypeNames))
	found := false
	// The runtime's exact names first, then the readable ones
	// (DisplayNames: "Dictionary<Int64,LeakSession>+Entry[]").
	for _, names := range [][]string{g.TypeNames, g.DisplayNames()} {
		for i, n := range names {
			if n == spec {
				want[i], found = true, true
			}
		}
		if found {
			break
		}
	}
	if !found {
		for _, names := range [][]string{g.TypeNames, g.DisplayNames()} {
			for i, n := range names {
				if strings.HasSuffix(n, spec) && len(n) > len(spec) && (n[len(n)-len(spec)-1] == '.' || n[len(n)-len(spec)-1] == '+') {
					want[i], found = true, true
				}
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("--why %s: no type of that name in the snapshot", spec)
	}
	return func(v uint32) bool { return want[g.Type[v]] }, nil
}

// TypesOf names the types of the objects match selects (for
// TypeOptions.Also: --why's types get exact retained bytes).
func (g *Graph) TypesOf(match func(v uint32) bool) []string {
	seen := make([]bool, len(g.TypeNames))
	var out []string
	for v := uint32(0); v < uint32(g.N); v++ {
		if t := g.Type[v]; !seen[t] && match(v) {
			seen[t] = true
			out = append(out, g.TypeNames[t])
		}
	}
	return out
}

// Why groups the objects match selects by their shortest path from a
// root (the root and the sequence of types, a run of more than maxRun
// objects of one type as one step: see paths.go), by bytes, then objects,
// then the types along the path and the root. It is one breadth-first
// walk of the graph, whatever the paths' lengths.
func (g *Graph) Why(match func(v uint32) bool) []Path {
	return g.pathGroups().why(match)
}

// why is Why over groups already walked (a diff asks several types).
func (p *pathGroups) why(match func(v uint32) bool) []Path {
	g := p.g
	type acc struct{ count, bytes uint64 }
	sums := make([]acc, len(p.parent))
	var used []uint32
	for v := uint32(0); v < uint32(g.N); v++ {
		gi := p.of[v]
		if gi == noGroup || !match(v) {
			continue
		}
		if sums[gi].count == 0 {
			used = append(used, gi)
		}
		sums[gi].count++
		sums[gi].bytes += g.Size[v]
	}
	type keyed struct {
		p   Path
		key string // the types joined, compared once per pair
		id  uint32
	}
	ks := make([]keyed, len(used))
	for i, gi := range used {
		kind, name := p.root(gi)
		ts := p.types(gi)
		ks[i] = keyed{p: Path{RootKind: kind, Root: name, Types: ts, Type: g.TypeNames[p.typ[gi]],
			Count: sums[gi].count, Bytes: sums[gi].bytes}, key: strings.Join(ts, ">"), id: gi}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		switch {
		case a.p.Bytes != b.p.Bytes:
			return cmpDesc(a.p.Bytes, b.p.Bytes)
		case a.p.Count != b.p.Count:
			return cmpDesc(a.p.Count, b.p.Count)
		}
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		// Ties (two roots holding alike objects; long paths whose
		// shown ends are alike) in a fixed order: the root, then the
		// walk's.
		return cmp.Or(cmp.Compare(a.p.RootKind, b.p.RootKind), strings.Compare(a.p.Root, b.p.Root), cmp.Compare(a.id, b.id))
	})
	out := make([]Path, len(ks))
	for i := range ks {
		out[i] = ks[i].p
	}
	return out
}

// TreeNode is a node of the dominator tree with the children that retain
// the most.
type TreeNode struct {
	ID       uint32
	Type     string
	Address  uint64
	Size     uint64
	Retained uint64
	// Children is the largest children by retained bytes; More counts
	// the others.
	Children []TreeNode
	More     int
}

// Tree returns the dominator tree from the virtual root, depth levels
// deep, each node's width largest children (BoundedTree with no bound on
// retained bytes, without its groups).
func (g *Graph) Tree(depth, width int) TreeNode {
	n, _ := g.BoundedTree(depth, width, 0)
	return n
}

// RootLabel names v's root when v is a rooted object ("" otherwise).
func (g *Graph) RootLabel(v uint32) string {
	if r, ok := g.RootOf(v); ok {
		return r.Label()
	}
	return ""
}
