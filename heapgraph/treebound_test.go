package heapgraph

import (
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// TestBoundedTree: on the graph workload's snapshot, the bounded tree's
// first node under the root is the static holder (it retains the bytes the
// workload allocated under it), its array's 2,000 items, each too small to
// draw, are one group of that type with the items' and leaves' bytes; no
// node shows more than it retains, and each level holds at most
// Bytes/minRetained nodes and as many groups.
func TestBoundedTree(t *testing.T) {
	g := load(t, "heap-graph.nettrace.gz")
	var w uint64
	if err := tracetest.Workload(t, "heap-graph").Get("holderBytes", &w); err != nil {
		t.Fatal(err)
	}
	minRetained := g.Bytes / 500
	root, groups := g.BoundedTree(8, 12, minRetained)
	if root.ID != g.Root() || root.Retained != g.Bytes || len(root.Children) == 0 {
		t.Fatalf("root %+v", root)
	}
	holder := root.Children[0]
	// The static's name (Holder, or with its class) is the builder's.
	if l := g.RootLabel(holder.ID); holder.Type != "Workload.GraphHolder" || holder.Retained != w || !strings.HasPrefix(l, "static ") || !strings.HasSuffix(l, "Holder") {
		t.Errorf("first node %s retains %d (%s), want Workload.GraphHolder retaining %d", holder.Type, holder.Retained, g.RootLabel(holder.ID), w)
	}
	if len(holder.Children) != 1 || holder.Children[0].Type != "Workload.GraphItem[]" {
		t.Fatalf("holder's children %+v", holder.Children)
	}
	arr := holder.Children[0]
	gs := groups[arr.ID]
	if len(arr.Children) != 0 || arr.More != 2000 || len(gs) != 1 || gs[0].Type != "Workload.GraphItem" || gs[0].Count != 2000 || gs[0].Retained != arr.Retained-arr.Size {
		t.Errorf("array: %d children, %d more, groups %+v (retains %d, own %d)", len(arr.Children), arr.More, gs, arr.Retained, arr.Size)
	}
	perLevel := map[int]int{}
	var check func(n TreeNode, d int)
	check = func(n TreeNode, d int) {
		perLevel[d]++
		shown := n.Size
		for _, c := range n.Children {
			shown += c.Retained
			check(c, d+1)
			if c.Retained < minRetained {
				t.Errorf("%s 0x%x retains %d, below the bound %d", c.Type, c.Address, c.Retained, minRetained)
			}
		}
		for _, gr := range groups[n.ID] {
			shown += gr.Retained
			perLevel[d+1]++
		}
		if shown > n.Retained {
			t.Errorf("%s 0x%x: own, children and groups %d, more than its retained %d", n.Type, n.Address, shown, n.Retained)
		}
		if d >= 8 && (len(n.Children) > 0 || len(groups[n.ID]) > 0) {
			t.Errorf("%s below the depth limit", n.Type)
		}
	}
	check(root, 0)
	for d, n := range perLevel {
		if uint64(n) > 2*g.Bytes/minRetained {
			t.Errorf("level %d: %d nodes and groups", d, n)
		}
	}
}
