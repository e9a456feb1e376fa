package heapgraph

import (
	"fmt"
	"hash/fnv"
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
	// keep alive (each object counted once): the union of the dominator
	// subtrees of the type's objects. An object two objects of the type
	// both keep, neither dominating it, is not in it (the dominator tree
	// gives it to their common dominator).
	Retained uint64
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

// Types returns every type's count, own bytes and retained bytes, by
// retained bytes (then own bytes, then name).
func (g *Graph) Types() []TypeStat {
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
	// A walk of the dominator tree with, per type, the number of its
	// objects on the path: an object adds its retained bytes to its type
	// only when no dominator of it has the type.
	off, kids := g.domChildren()
	active := make([]uint32, len(g.TypeNames))
	type frame struct{ v, pos uint32 }
	stack := []frame{{g.Root(), off[g.Root()]}}
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
		stack = append(stack, frame{w, off[w]})
	}
	ts = slices.DeleteFunc(ts, func(t TypeStat) bool { return t.Count == 0 })
	slices.SortFunc(ts, func(a, b TypeStat) int {
		switch {
		case a.Retained != b.Retained:
			return cmpDesc(a.Retained, b.Retained)
		case a.Bytes != b.Bytes:
			return cmpDesc(a.Bytes, b.Bytes)
		}
		return strings.Compare(a.Type, b.Type)
	})
	return ts
}

func cmpDesc(a, b uint64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// Path is a group of objects reached by the same shortest path from a
// root: the root, the types along the path (from the root's object down
// to the objects' own type), how many objects and their own bytes.
type Path struct {
	RootKind RootKind
	Root     string // the root's name (a static field's name, a stack frame's method) or its kind
	Types    []string
	Count    uint64
	Bytes    uint64
}

// maxPathTypes bounds a path's types: longer ones keep their two ends
// around a "..." marker.
const maxPathTypes = 24

// bfs returns each node's parent on a shortest path from the virtual
// root (statics first: roots are in kind order).
func (g *Graph) bfs() []uint32 {
	const none = ^uint32(0)
	par := make([]uint32, g.N+1)
	for i := range par {
		par[i] = none
	}
	root := g.Root()
	par[root] = root
	q := []uint32{root}
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		for _, w := range g.Refs(v) {
			if par[w] == none {
				par[w] = v
				q = append(q, w)
			}
		}
	}
	return par
}

// Matcher returns the test --why applies to objects: "0xADDRESS" selects
// that object; a type name its objects (the full name, or a suffix after
// a '.' or '+': "Session" matches "MyApp.Session" and "MyApp.Cache+Session").
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
	for i, n := range g.TypeNames {
		if n == spec {
			want[i], found = true, true
		}
	}
	if !found {
		for i, n := range g.TypeNames {
			if strings.HasSuffix(n, spec) && len(n) > len(spec) && (n[len(n)-len(spec)-1] == '.' || n[len(n)-len(spec)-1] == '+') {
				want[i], found = true, true
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("--why %s: no type of that name in the snapshot", spec)
	}
	return func(v uint32) bool { return want[g.Type[v]] }, nil
}

// Why groups the objects match selects by their shortest path from a
// root (the root and the sequence of types), by bytes.
func (g *Graph) Why(match func(v uint32) bool) []Path {
	par := g.bfs()
	type group struct{ p Path }
	groups := map[uint64]*group{}
	var chain []uint32
	h := fnv.New64a()
	var buf [8]byte
	for v := uint32(0); v < uint32(g.N); v++ {
		if !match(v) || par[v] == ^uint32(0) {
			continue
		}
		chain = chain[:0]
		for u := v; u != g.Root(); u = par[u] {
			chain = append(chain, u)
		}
		top := chain[len(chain)-1]
		ri := g.rootIndex(top)
		h.Reset()
		buf[0] = byte(g.Roots[ri].Kind)
		h.Write(buf[:1])
		h.Write([]byte(g.Roots[ri].Name))
		for _, u := range chain {
			t := g.Type[u]
			buf[0], buf[1], buf[2], buf[3] = byte(t), byte(t>>8), byte(t>>16), byte(t>>24)
			h.Write(buf[:4])
		}
		k := h.Sum64()
		gr := groups[k]
		if gr == nil {
			r := g.Roots[ri]
			name := r.Name
			if name == "" {
				name = r.Kind.String()
			}
			gr = &group{p: Path{RootKind: r.Kind, Root: name, Types: g.pathTypes(chain)}}
			groups[k] = gr
		}
		gr.p.Count++
		gr.p.Bytes += g.Size[v]
	}
	out := make([]Path, 0, len(groups))
	for _, gr := range groups {
		out = append(out, gr.p)
	}
	slices.SortFunc(out, func(a, b Path) int {
		if a.Bytes != b.Bytes {
			return cmpDesc(a.Bytes, b.Bytes)
		}
		if a.Count != b.Count {
			return cmpDesc(a.Count, b.Count)
		}
		return strings.Compare(strings.Join(a.Types, ">"), strings.Join(b.Types, ">"))
	})
	return out
}

// pathTypes names chain (target first, root object last) from the root
// down, bounded by maxPathTypes.
func (g *Graph) pathTypes(chain []uint32) []string {
	out := make([]string, 0, len(chain))
	for i := len(chain) - 1; i >= 0; i-- {
		out = append(out, g.TypeName(chain[i]))
	}
	if len(out) > maxPathTypes {
		h := maxPathTypes / 2
		out = append(append(out[:h:h], "..."), out[len(out)-h:]...)
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
// deep, each node's width largest children.
func (g *Graph) Tree(depth, width int) TreeNode {
	g.Analyze()
	off, kids := g.domChildren()
	var build func(v uint32, d int) TreeNode
	// Depth is bounded by the caller (a handful of levels), so this
	// recursion is shallow by construction.
	build = func(v uint32, d int) TreeNode {
		n := TreeNode{ID: v, Type: g.TypeName(v), Size: 0, Retained: g.Retained[v]}
		if int(v) < g.N {
			n.Address, n.Size = g.Addr[v], g.Size[v]
		}
		if d >= depth {
			n.More = int(off[v+1] - off[v])
			return n
		}
		ch := slices.Clone(kids[off[v]:off[v+1]])
		slices.SortFunc(ch, func(a, b uint32) int { return cmpDesc(g.Retained[a], g.Retained[b]) })
		if len(ch) > width {
			n.More = len(ch) - width
			ch = ch[:width]
		}
		for _, c := range ch {
			n.Children = append(n.Children, build(c, d+1))
		}
		return n
	}
	return build(g.Root(), 0)
}

// RootLabel names v's root when v is a rooted object ("" otherwise).
func (g *Graph) RootLabel(v uint32) string {
	if r, ok := g.RootOf(v); ok {
		return r.Label()
	}
	return ""
}
