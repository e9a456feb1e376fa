package heapgraph

import (
	"slices"
	"strings"
)

// TreeGroup is the children of a dominator-tree node that a bounded tree
// does not show one by one, summed by type.
type TreeGroup struct {
	Type     string
	Count    uint64
	Bytes    uint64 // own sizes
	Retained uint64
}

// BoundedTree is Tree bounded for a drawing of any heap: depth levels
// deep, a node's children that retain at least minRetained bytes are
// nodes (the width largest); its other children are summed by type into
// groups (groups[node ID], the width largest that retain at least
// minRetained, largest first). What neither shows of a node is its
// Retained less its Size, its children's and its groups' Retained. Nodes
// at the depth limit have no groups; More counts every child not shown
// as a node.
//
// Since sibling subtrees are disjoint, at most Bytes/minRetained nodes and
// as many groups are on each level, whatever the heap's size.
func (g *Graph) BoundedTree(depth, width int, minRetained uint64) (TreeNode, map[uint32][]TreeGroup) {
	g.Analyze()
	off, kids := g.domChildren()
	groups := map[uint32][]TreeGroup{}
	byType := map[uint32]int{} // type -> index in the node's groups, reused
	var build func(v uint32, d int) TreeNode
	// Depth is bounded by the caller (a handful of levels), so this
	// recursion is shallow by construction.
	build = func(v uint32, d int) TreeNode {
		n := TreeNode{ID: v, Type: g.TypeName(v), Retained: g.Retained[v]}
		if int(v) < g.N {
			n.Address, n.Size = g.Addr[v], g.Size[v]
		}
		all := kids[off[v]:off[v+1]]
		if d >= depth {
			n.More = len(all)
			return n
		}
		var big []uint32
		var gs []TreeGroup
		clear(byType)
		// group adds child c to its type's group of this node.
		group := func(c uint32) {
			t := g.Type[c]
			i, ok := byType[t]
			if !ok {
				i = len(gs)
				byType[t] = i
				gs = append(gs, TreeGroup{Type: g.TypeNames[t]})
			}
			gs[i].Count++
			gs[i].Bytes += g.Size[c]
			gs[i].Retained += g.Retained[c]
		}
		for _, c := range all {
			if g.Retained[c] >= minRetained {
				big = append(big, c)
				continue
			}
			group(c)
		}
		slices.SortFunc(big, func(a, b uint32) int { return cmpDesc(g.Retained[a], g.Retained[b]) })
		if len(big) > width {
			// The smaller ones join their type's group.
			for _, c := range big[width:] {
				group(c)
			}
			big = big[:width]
		}
		n.More = len(all) - len(big)
		gs = slices.DeleteFunc(gs, func(x TreeGroup) bool { return x.Retained < minRetained })
		slices.SortFunc(gs, func(a, b TreeGroup) int {
			if a.Retained != b.Retained {
				return cmpDesc(a.Retained, b.Retained)
			}
			return strings.Compare(a.Type, b.Type)
		})
		if len(gs) > width {
			gs = gs[:width]
		}
		// byType is free again: the children's walks reuse it.
		for _, c := range big {
			n.Children = append(n.Children, build(c, d+1))
		}
		if len(gs) > 0 {
			groups[v] = gs
		}
		return n
	}
	return build(g.Root(), 0), groups
}
