package heapgraph

import "fmt"

// CheckValid reports the first invariant g breaks, nil when it breaks
// none: one address, size and type per object, references in range and
// to objects (never to the virtual root), the total the sum of the sizes;
// once analysed, every object's retained bytes its own plus those of the
// objects it immediately dominates, the virtual root's all the reachable
// bytes. The tests that build graphs and the fuzz targets run it.
func (g *Graph) CheckValid() error {
	if len(g.Addr) != g.N || len(g.Size) != g.N || len(g.Type) != g.N || len(g.Off) != g.N+2 || int(g.Off[g.N+1]) != len(g.Dst) {
		return fmt.Errorf("%d objects: %d addresses, %d sizes, %d types, %d offsets for %d references",
			g.N, len(g.Addr), len(g.Size), len(g.Type), len(g.Off), len(g.Dst))
	}
	var bytes uint64
	for v := 0; v < g.N; v++ {
		if int(g.Type[v]) >= len(g.TypeNames) {
			return fmt.Errorf("object %#x: type %d of %d", g.Addr[v], g.Type[v], len(g.TypeNames))
		}
		bytes += g.Size[v]
	}
	if bytes != g.Bytes {
		return fmt.Errorf("%d bytes, the objects add to %d", g.Bytes, bytes)
	}
	for v := 0; v <= g.N; v++ {
		if g.Off[v] > g.Off[v+1] {
			return fmt.Errorf("node %d: references from %d to %d", v, g.Off[v], g.Off[v+1])
		}
	}
	for _, w := range g.Dst {
		if int(w) >= g.N {
			return fmt.Errorf("a reference to node %d of %d", w, g.N)
		}
	}
	if !g.analysed {
		return nil
	}
	if len(g.Idom) != g.N+1 || len(g.Retained) != g.N+1 || g.Idom[g.N] != g.Root() {
		return fmt.Errorf("%d objects: %d dominators, %d retained sizes", g.N, len(g.Idom), len(g.Retained))
	}
	sum := make([]uint64, g.N+1)
	for _, v := range g.order {
		if int(v) < g.N {
			sum[v] += g.Size[v]
		}
		if v != g.Root() {
			d := g.Idom[v]
			if int(d) > g.N || d == v {
				return fmt.Errorf("object %d: dominator %d", v, d)
			}
		}
	}
	// Children before parents: reverse preorder adds each subtree once.
	for i := len(g.order) - 1; i >= 1; i-- {
		v := g.order[i]
		sum[g.Idom[v]] += sum[v]
	}
	for _, v := range g.order {
		if sum[v] != g.Retained[v] {
			return fmt.Errorf("node %d retains %d bytes; it and what it dominates are %d", v, g.Retained[v], sum[v])
		}
	}
	if r := g.Retained[g.Root()]; r > g.Bytes || len(g.order) == g.N+1 && r != g.Bytes {
		return fmt.Errorf("the root retains %d of %d bytes (%d of %d nodes reached)", r, g.Bytes, len(g.order), g.N+1)
	}
	return nil
}
