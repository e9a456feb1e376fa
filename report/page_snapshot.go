package report

// The report page's heap snapshot section: when the input holds a heap
// dump (clrspy record --profile gcdump, or a .gcdump file), the page shows
// its dominator tree as an icicle, its types by retained bytes, and each
// top type's retention paths (clrspy snapshot --why, precomputed: the page
// stays self-contained). The figures are heapgraph's; the types and paths
// are the rows `clrspy snapshot --json` writes.

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clrspy/clrspy/heapgraph"
)

// PageSnapshot is the heap snapshot section.
type PageSnapshot struct {
	Objects uint64  `json:"objects"`
	Bytes   uint64  `json:"bytes"`
	GC      uint32  `json:"gc"`       // the dump's induced GC (0: not recorded, a .gcdump)
	PauseMs float64 `json:"pause_ms"` // its pause, the walk included (0: unknown)
	// Complete is false when the snapshot lost events (Missing says
	// what); Note is then the line that says so.
	Complete bool              `json:"complete"`
	Note     string            `json:"note,omitempty"`
	Missing  heapgraph.Missing `json:"missing"`
	Roots    map[string]int    `json:"roots"` // roots per kind
	// Types are the largest by retained bytes; MoreTypes counts the rest.
	Types     []SnapshotTypeJSON `json:"types"`
	MoreTypes int                `json:"more_types"`
	// Why[i] are Types[i]'s retention paths, for the first len(Why) types.
	Why  []PageSnapshotWhy `json:"why"`
	Tree *PageSnapshotTree `json:"tree"`
	// TypeNames: the readable name of each type whose runtime name
	// differs (the page shows it; every name above is the runtime's).
	TypeNames []ReadableName `json:"type_names,omitempty"`
}

// PageSnapshotWhy is one type's retention paths (clrspy snapshot --why):
// the groups with the most bytes, and how many groups are left out.
type PageSnapshotWhy struct {
	Paths []SnapshotPathJSON `json:"paths"`
	More  int                `json:"more"`
}

// Tree node kinds (PageSnapshotTree.Kind).
const (
	SnapNodeObject = 0 // one object
	SnapNodeGroup  = 1 // the parent's smaller children of one type, summed
	SnapNodeRest   = 2 // the parent's children in no node or group
)

// PageSnapshotTree is the dominator tree, bounded for a drawing
// (heapgraph.BoundedTree), as columns in depth-first order: node 0 is the
// virtual root (all objects), a node's parent is the closest node before
// it one level up, children largest first (objects, then groups, then
// the rest).
type PageSnapshotTree struct {
	Depth    []int32  `json:"depth"`
	Kind     []int    `json:"kind"`
	Type     []int32  `json:"type"` // index into Names (-1: none)
	Count    []uint64 `json:"count"`
	Bytes    []uint64 `json:"bytes"` // own sizes
	Retained []uint64 `json:"retained"`
	Addr     []string `json:"addr"` // an object's address ("" for groups)
	Root     []int32  `json:"root"` // index into Names of the root holding the object (-1: none)
	// More counts a node's children not drawn below it (at MaxDepth: all).
	More  []int    `json:"more"`
	Names []string `json:"names"`
	// MaxDepth and MinRetained are the bounds: children retaining less
	// than MinRetained bytes are summed by type.
	MaxDepth    int    `json:"max_depth"`
	MinRetained uint64 `json:"min_retained"`
}

// Bounds of the section: with a node retaining at least 1/snapTreeShare
// of the heap, each level has at most that many nodes and groups, so the
// tree stays a few hundred KB for any heap.
const (
	snapTreeDepth = 8
	snapTreeWidth = 12
	snapTreeShare = 500
	snapWhyTypes  = 50 // types whose paths the page holds
	snapWhyPaths  = 6  // paths per type
)

// NewPageSnapshot describes graph g for the page: at most maxTypes types.
func NewPageSnapshot(g *heapgraph.Graph, maxTypes int) *PageSnapshot {
	s := &PageSnapshot{Objects: uint64(g.N), Bytes: g.Bytes, GC: g.GC, PauseMs: round3(float64(g.Pause.Microseconds()) / 1000),
		Complete: g.Complete(), Missing: g.Missing, Roots: map[string]int{}, Types: []SnapshotTypeJSON{}}
	if !s.Complete {
		s.Note = snapshotMissing(g.Missing)
	}
	for _, r := range g.Roots {
		s.Roots[r.Kind.String()]++
	}
	ts := g.Types()
	if len(ts) > maxTypes {
		s.MoreTypes = len(ts) - maxTypes
		ts = ts[:maxTypes]
	}
	for _, t := range ts {
		s.Types = append(s.Types, SnapshotTypeJSON{Type: t.Type, Count: t.Count, Bytes: t.Bytes, RetainedBytes: t.Retained, RetainedExact: t.RetainedExact})
	}
	// One walk gives every object's path (as --format pprof does); each
	// path ends in its objects' type.
	s.Why = make([]PageSnapshotWhy, min(len(ts), snapWhyTypes))
	byType := map[string]*PageSnapshotWhy{}
	for i := range s.Why {
		s.Why[i].Paths = []SnapshotPathJSON{}
		byType[ts[i].Type] = &s.Why[i]
	}
	for _, p := range g.Why(func(uint32) bool { return true }) {
		if w := byType[p.Type]; w != nil {
			w.Paths = append(w.Paths, SnapshotPathJSON{RootKind: p.RootKind.String(), Root: p.Root, Path: p.Types, Count: p.Count, Bytes: p.Bytes})
		}
	}
	// Why's order filtered: each type's paths in its --why order.
	for i := range s.Why {
		w := &s.Why[i]
		if len(w.Paths) > snapWhyPaths {
			w.More = len(w.Paths) - snapWhyPaths
			w.Paths = slices.Clip(w.Paths[:snapWhyPaths])
		}
	}
	s.Tree = newPageSnapshotTree(g)
	s.TypeNames = readableNames(g)
	return s
}

func newPageSnapshotTree(g *heapgraph.Graph) *PageSnapshotTree {
	minRetained := max(g.Bytes/snapTreeShare, 1)
	root, groups := g.BoundedTree(snapTreeDepth, snapTreeWidth, minRetained)
	t := &PageSnapshotTree{MaxDepth: snapTreeDepth, MinRetained: minRetained, Names: []string{}}
	names := map[string]int32{}
	name := func(s string) int32 {
		if s == "" {
			return -1
		}
		i, ok := names[s]
		if !ok {
			i = int32(len(t.Names))
			names[s] = i
			t.Names = append(t.Names, s)
		}
		return i
	}
	add := func(depth int32, kind int, typ string, count, bytes, retained uint64, addr, root string, more int) {
		t.Depth = append(t.Depth, depth)
		t.Kind = append(t.Kind, kind)
		t.Type = append(t.Type, name(typ))
		t.Count = append(t.Count, count)
		t.Bytes = append(t.Bytes, bytes)
		t.Retained = append(t.Retained, retained)
		t.Addr = append(t.Addr, addr)
		t.Root = append(t.Root, name(root))
		t.More = append(t.More, more)
	}
	var walk func(n *heapgraph.TreeNode, depth int32)
	// As deep as the bounded tree: snapTreeDepth levels.
	walk = func(n *heapgraph.TreeNode, depth int32) {
		if depth == 0 {
			add(0, SnapNodeObject, "", uint64(g.N), 0, n.Retained, "", "", n.More)
		} else {
			add(depth, SnapNodeObject, n.Type, 1, n.Size, n.Retained, fmt.Sprintf("0x%x", n.Address), g.RootLabel(n.ID), n.More)
		}
		// Retained is the own size and the children's Retained: what no
		// node or group shows is the rest.
		shown := n.Size
		restCount := n.More
		for i := range n.Children {
			walk(&n.Children[i], depth+1)
			shown += n.Children[i].Retained
		}
		for _, gr := range groups[n.ID] {
			add(depth+1, SnapNodeGroup, gr.Type, gr.Count, gr.Bytes, gr.Retained, "", "", 0)
			shown += gr.Retained
			restCount -= int(gr.Count)
		}
		if rest := n.Retained - min(shown, n.Retained); rest > 0 && int(depth) < snapTreeDepth {
			add(depth+1, SnapNodeRest, "", uint64(restCount), 0, rest, "", "", 0)
		}
	}
	walk(&root, 0)
	return t
}

// addSnapshot builds the section; an incomplete snapshot's line joins
// the page's input (the banner says it too).
func (p *Page) addSnapshot(g *heapgraph.Graph) {
	p.Snapshot = NewPageSnapshot(g, maxTableRows)
	if !p.Snapshot.Complete {
		p.Input.Complete = false
		p.Input.Partial = append(slices.Clip(p.Input.Partial), p.Snapshot.Note)
	}
}

// SnapshotNote is the line a command prints about the page's snapshot
// section ("" when the page has none).
func (p *Page) SnapshotNote() string {
	if p.Snapshot == nil {
		return ""
	}
	s := fmt.Sprintf("heap snapshot of %d objects, %s", p.Snapshot.Objects, sizeText(p.Snapshot.Bytes))
	if !p.Snapshot.Complete {
		s += " (incomplete)"
	}
	return strings.TrimSpace(s)
}

// WroteLine is the line `report` prints once it wrote the page to out:
// the page's GCs, samples and snapshot, or with snapshotOnly (a .gcdump's
// page) the snapshot alone.
func (p *Page) WroteLine(name, out string, snapshotOnly bool) string {
	if snapshotOnly {
		return fmt.Sprintf("%s: %s; wrote %s", name, p.SnapshotNote(), filepath.Clean(out))
	}
	snap := ""
	if n := p.SnapshotNote(); n != "" {
		snap = ", " + n
	}
	samples := "no stack samples"
	switch {
	case p.CPU == nil:
	case p.CPU.Label == LabelCPU:
		samples = fmt.Sprintf("%d CPU samples", p.CPU.Total)
	default:
		samples = fmt.Sprintf("%d samples (%s)", p.CPU.Total, p.CPU.Label)
	}
	return fmt.Sprintf("%s: %d GCs, %s%s; wrote %s", name, p.GCs.Len(), samples, snap, filepath.Clean(out))
}
