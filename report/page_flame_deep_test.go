package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/stacks"
)

// TestPageFlameDeepStack: the report page's flame data of a 1,000,000-frame
// stack (issue 29) is cut to MaxFlameDepth nodes, root-side frames first,
// then the marked cut frame, then the leaf; a shallow stack is untouched
// and the page's notes say what was cut.
func TestPageFlameDeepStack(t *testing.T) {
	const depth = 1_000_000
	p := &stacks.Profile{Frames: make([]stacks.Frame, depth)}
	for i := range p.Frames {
		p.Frames[i].Name = "f"
	}
	p.Frames[0].Name = "leaf"
	p.Frames[1].Name = "shallow" // its own node beside the deep path's "f" (frames of one name are one node)
	p.Frames[depth-1].Name = "root"
	deep := make([]int32, depth) // leaf first
	for i := range deep {
		deep[i] = int32(i)
	}
	list := []*flameStack{
		{frames: deep, bins: []stacks.Bin{{Index: 0, Count: 3}}, count: 3},
		{frames: []int32{1, depth - 1}, bins: []stacks.Bin{{Index: 0, Count: 1}}, count: 1},
	}
	f := buildFlame(p, list, &flameBins{})
	if got := slices.Max(f.NodeDepth); got != MaxFlameDepth-1 {
		t.Errorf("deepest node at depth %d, want %d", got, MaxFlameDepth-1)
	}
	if len(f.NodeDepth) != MaxFlameDepth+1 { // the deep path and the shallow stack's leaf
		t.Errorf("%d nodes, want %d", len(f.NodeDepth), MaxFlameDepth+1)
	}
	if f.Total != 4 || len(f.StackNode) != 2 {
		t.Errorf("total %d, %d stacks; want 4 and 2", f.Total, len(f.StackNode))
	}
	// Along the deep path: root first, the cut frame second to last, the
	// leaf last.
	name := func(node int) string { return f.Frames[f.NodeFrame[node]] }
	var path []int
	for i, d := range f.NodeDepth {
		if int(d) == len(path) {
			path = append(path, i)
		}
	}
	if name(path[0]) != "root" || name(path[len(path)-2]) != FlameCutName || name(path[len(path)-1]) != "leaf" {
		t.Errorf("deep path: %q ... %q, %q", name(path[0]), name(path[len(path)-2]), name(path[len(path)-1]))
	}
	if k := f.FrameKind[f.NodeFrame[path[len(path)-2]]]; k != int(stacks.KindTruncated) {
		t.Errorf("cut frame kind %d, want %d (truncated)", k, stacks.KindTruncated)
	}
	if len(f.Notes) != 1 || !strings.HasPrefix(f.Notes[0], "1 stack deeper than 1000 frames") {
		t.Errorf("notes %q", f.Notes)
	}
}
