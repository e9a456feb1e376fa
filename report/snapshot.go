package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/heapgraph"
)

// SnapshotDocument is `clrspy snapshot --json`: a heap snapshot's totals,
// its types by retained bytes, and --why's paths or --tree's dominators
// when asked.
type SnapshotDocument struct {
	Input
	Objects uint64  `json:"objects"`
	Bytes   uint64  `json:"bytes"`
	GC      uint32  `json:"gc"`       // the induced GC's number (0: not recorded, a .gcdump)
	PauseMs float64 `json:"pause_ms"` // its pause (the walk included): the snapshot's cost to the target
	// Roots counts the roots per kind.
	Roots   map[string]int        `json:"roots"`
	Missing heapgraph.Missing     `json:"missing"`
	Types   []SnapshotTypeJSON    `json:"types"`
	Why     string                `json:"why,omitempty"`
	Paths   []SnapshotPathJSON    `json:"paths,omitempty"`
	Tree    *SnapshotTreeNodeJSON `json:"tree,omitempty"`
	// TypeNames gives the readable name of each type whose runtime name
	// differs (`Dictionary<Int64,LeakSession>+Entry[]` for
	// `Entry[System.Int64,LeakSession][]`): the text shows it, every
	// "type" above stays the runtime's exact name.
	TypeNames []ReadableName `json:"type_names,omitempty"`
}

// ReadableName is a type's readable name beside the runtime's.
type ReadableName struct {
	Type string `json:"type"` // the runtime's name
	Name string `json:"name"` // as .NET users read it
}

// readableNames lists the types of gs whose readable names differ from
// the runtime's (heapgraph.Graph.DisplayNames), by runtime name.
func readableNames(gs ...*heapgraph.Graph) []ReadableName {
	m := map[string]string{}
	for _, g := range gs {
		for i, d := range g.DisplayNames() {
			if n := g.TypeNames[i]; d != n {
				m[n] = d
			}
		}
	}
	out := make([]ReadableName, 0, len(m))
	for n, d := range m {
		out = append(out, ReadableName{n, d})
	}
	if len(out) == 0 {
		return nil
	}
	slices.SortFunc(out, func(x, y ReadableName) int { return strings.Compare(x.Type, y.Type) })
	return out
}

func nameMap(l []ReadableName) map[string]string {
	m := make(map[string]string, len(l))
	for _, r := range l {
		m[r.Type] = r.Name
	}
	return m
}

// readable is the readable form of type name n (a path step "TYPE ×4+"
// too) by names.
func readable(names map[string]string, n string) string {
	if d, ok := names[n]; ok {
		return d
	}
	if i := strings.LastIndex(n, " ×"); i > 0 {
		if d, ok := names[n[:i]]; ok {
			return d + n[i:]
		}
	}
	return n
}

func readablePath(names map[string]string, p []string) string {
	out := make([]string, len(p))
	for i, n := range p {
		out[i] = readable(names, n)
	}
	return strings.Join(out, " > ")
}

// SnapshotTypeJSON is one type of a snapshot.
type SnapshotTypeJSON struct {
	Type          string `json:"type"`
	Count         uint64 `json:"count"`
	Bytes         uint64 `json:"bytes"`
	RetainedBytes uint64 `json:"retained_bytes"`
	// RetainedExact: retained_bytes is exact (what the roots no longer
	// reach without the type's objects); false: it is the dominator
	// tree's lower bound (a type past the top ones when the exact walks
	// ran out of their time budget).
	RetainedExact bool `json:"retained_exact"`
}

// SnapshotPathJSON is one --why group: objects reached by the same
// shortest path from a root. Path is the types from the root's object
// down to the objects' own; a run of more than 3 objects of one type is
// one step "TYPE ×4+", and a path of more than 24 steps keeps its 12 first
// and 12 last around "..." (see heapgraph's paths.go).
type SnapshotPathJSON struct {
	RootKind string   `json:"root_kind"`
	Root     string   `json:"root"`
	Path     []string `json:"path"`
	Count    uint64   `json:"count"`
	Bytes    uint64   `json:"bytes"`
}

// SnapshotTreeNodeJSON is a node of --tree's dominator tree.
type SnapshotTreeNodeJSON struct {
	Type          string                 `json:"type"`
	Address       string                 `json:"address,omitempty"`
	Root          string                 `json:"root,omitempty"`
	Bytes         uint64                 `json:"bytes"`
	RetainedBytes uint64                 `json:"retained_bytes"`
	Children      []SnapshotTreeNodeJSON `json:"children,omitempty"`
	More          int                    `json:"more_children,omitempty"`
}

// SnapshotOptions says what a snapshot document holds beyond the types.
type SnapshotOptions struct {
	Top        int    // types listed (0: all)
	Why        string // --why's argument ("": none)
	TreeDepth  int    // --tree's depth (0: no tree)
	TreeWidth  int
	WhyMatcher func(uint32) bool
}

// NewSnapshotDocument describes graph g read from in.
func NewSnapshotDocument(in Input, g *heapgraph.Graph, o SnapshotOptions) *SnapshotDocument {
	in = snapshotPartial(in, g)
	d := &SnapshotDocument{Input: in, Objects: uint64(g.N), Bytes: g.Bytes, GC: g.GC,
		PauseMs: float64(g.Pause.Microseconds()) / 1000, Roots: map[string]int{}, Missing: g.Missing}
	for _, r := range g.Roots {
		d.Roots[r.Kind.String()]++
	}
	to := heapgraph.TypeOptions{Top: o.Top}
	if o.WhyMatcher != nil {
		to.Also = g.TypesOf(o.WhyMatcher)
	}
	ts := g.TypesWith(to)
	if o.Top > 0 && len(ts) > o.Top {
		ts = ts[:o.Top]
	}
	d.Types = make([]SnapshotTypeJSON, len(ts))
	for i, t := range ts {
		d.Types[i] = SnapshotTypeJSON{Type: t.Type, Count: t.Count, Bytes: t.Bytes, RetainedBytes: t.Retained, RetainedExact: t.RetainedExact}
	}
	if o.WhyMatcher != nil {
		d.Why = o.Why
		d.Paths = []SnapshotPathJSON{}
		for _, p := range g.Why(o.WhyMatcher) {
			d.Paths = append(d.Paths, SnapshotPathJSON{RootKind: p.RootKind.String(), Root: p.Root, Path: p.Types, Count: p.Count, Bytes: p.Bytes})
		}
	}
	if o.TreeDepth > 0 {
		t := treeJSON(g, g.Tree(o.TreeDepth, o.TreeWidth))
		d.Tree = &t
	}
	d.TypeNames = readableNames(g)
	return d
}

func treeJSON(g *heapgraph.Graph, n heapgraph.TreeNode) SnapshotTreeNodeJSON {
	j := SnapshotTreeNodeJSON{Type: n.Type, Bytes: n.Size, RetainedBytes: n.Retained, More: n.More, Root: g.RootLabel(n.ID)}
	if n.ID != g.Root() {
		j.Address = fmt.Sprintf("0x%x", n.Address)
	}
	for _, c := range n.Children {
		j.Children = append(j.Children, treeJSON(g, c))
	}
	return j
}

// snapshotMissing is the partial line of an incomplete snapshot.
func snapshotMissing(m heapgraph.Missing) string {
	var p []string
	if m.Cut {
		p = append(p, "the events end during the heap walk")
	}
	if m.FileCut && m.CutNodes > 0 && m.CutEdges > 0 {
		p = append(p, fmt.Sprintf("the .gcdump file is cut short (%d of its nodes lost, and %d references of the objects kept to them)", m.CutNodes, m.CutEdges))
	} else if m.FileCut && m.CutNodes > 0 {
		p = append(p, fmt.Sprintf("the .gcdump file is cut short (%d of its nodes lost)", m.CutNodes))
	} else if m.FileCut {
		p = append(p, "the .gcdump file is cut short (in the objects' addresses)")
	}
	if n := m.NodeEvents + m.EdgeEvents + m.RootEvents; n > 0 {
		p = append(p, fmt.Sprintf("%d heap-dump events lost (%d of objects, %d of references, %d of roots)", n, m.NodeEvents, m.EdgeEvents, m.RootEvents))
	}
	if m.Edges > 0 {
		p = append(p, fmt.Sprintf("%d references the objects announced never came", m.Edges))
	}
	if m.DanglingEdges > 0 {
		p = append(p, danglingText(m))
	}
	if m.Roots > 0 {
		p = append(p, fmt.Sprintf("%d roots name objects never described", m.Roots))
	}
	return "the heap snapshot is incomplete: " + strings.Join(p, ", ") + " (retained sizes and paths are of the objects described)"
}

// danglingText says how many references lead to objects the heap walk
// never described, and how many such objects (one object may be the
// target of many references).
func danglingText(m heapgraph.Missing) string {
	refs := "references lead"
	if m.DanglingEdges == 1 {
		refs = "reference leads"
	}
	switch {
	case m.DanglingObjects == 1:
		return fmt.Sprintf("%d %s to an object the heap walk never described", m.DanglingEdges, refs)
	case m.DanglingObjects > 1:
		return fmt.Sprintf("%d %s to %d objects the heap walk never described", m.DanglingEdges, refs, m.DanglingObjects)
	}
	return fmt.Sprintf("%d %s to objects the heap walk never described", m.DanglingEdges, refs)
}

// SnapshotUnnamed is the partial line of a snapshot whose types were not
// all named ("" when they were).
func SnapshotUnnamed(g *heapgraph.Graph) string {
	types, objects := g.UnnamedTypes()
	if types == 0 {
		return ""
	}
	return fmt.Sprintf("%d types (%d objects) are unnamed (Type(0x...)): the runtime names each type once and forgets which it named only when no session has its Type keyword on; another session open on the process (one with that keyword on) kept it from forgetting", types, objects)
}

// snapshotPartial marks in partial when g lost part of the heap or has
// unnamed types.
func snapshotPartial(in Input, g *heapgraph.Graph) Input {
	if !g.Complete() {
		in.Complete = false
		in.Partial = append(in.Partial, snapshotMissing(g.Missing))
	}
	if l := SnapshotUnnamed(g); l != "" {
		in.Complete = false
		in.Partial = append(in.Partial, l)
	}
	return in
}

// WriteSnapshotJSON writes d as one indented JSON document.
func WriteSnapshotJSON(w io.Writer, d any) error {
	return writeJSON(w, d, false)
}

// WriteSnapshotText writes the snapshot for people: totals and the
// induced GC's pause, roots per kind, the types by retained bytes, then
// --why's paths and --tree's dominators when asked.
func WriteSnapshotText(w io.Writer, d *SnapshotDocument) error {
	names := nameMap(d.TypeNames)
	b := &strings.Builder{}
	if l := d.PartialLine(); l != "" {
		fmt.Fprintln(b, l)
	}
	switch {
	case d.GC > 0 && d.PauseMs > 0:
		fmt.Fprintf(b, "heap snapshot of %s: %d objects, %s (induced gen2 GC #%d, pause %.2f ms: the snapshot's cost to the target)\n",
			d.Source, d.Objects, sizeText(d.Bytes), d.GC, d.PauseMs)
	case d.GC > 0:
		fmt.Fprintf(b, "heap snapshot of %s: %d objects, %s (induced gen2 GC #%d; its pause is unknown: the events end before the runtime resumed)\n",
			d.Source, d.Objects, sizeText(d.Bytes), d.GC)
	default:
		fmt.Fprintf(b, "heap snapshot of %s: %d objects, %s (the induced GC's pause is not recorded in it)\n", d.Source, d.Objects, sizeText(d.Bytes))
	}
	var kinds []string
	for k := heapgraph.RootStatic; k.String() != "unrooted"; k++ {
		if n := d.Roots[k.String()]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
	}
	fmt.Fprintf(b, "roots: %s\n", strings.Join(kinds, ", "))
	if d.Missing.Unrooted > 0 {
		fmt.Fprintf(b, "unrooted: %d objects no reported root reaches (the frozen segments' literals and RuntimeType objects, or lost roots)\n", d.Missing.Unrooted)
	}
	fmt.Fprintln(b)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "RETAINED\tBYTES\tCOUNT\t  TYPE")
	bounds := 0
	for _, t := range d.Types {
		r := sizeText(t.RetainedBytes)
		if !t.RetainedExact {
			r = ">=" + r
			bounds++
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t  %s\n", r, sizeText(t.Bytes), t.Count, readable(names, t.Type))
	}
	tw.Flush()
	if bounds > 0 {
		fmt.Fprintf(b, ">=: the dominator tree's lower bound of retained bytes (%d of the types listed); exact figures (a walk of the heap without the type) are computed for the top types by that bound and by own bytes, and for more while %v lasts\n",
			bounds, heapgraph.DefaultExactBudget)
	}
	if d.Paths != nil {
		fmt.Fprintf(b, "\nwhy is %s alive: shortest paths from a root (%d groups)\n", d.Why, len(d.Paths))
		for _, p := range d.Paths {
			fmt.Fprintf(b, "%8d objects %10s  %s %s\n", p.Count, sizeText(p.Bytes), rootText(p.RootKind, p.Root), readablePath(names, p.Path))
		}
	}
	if d.Tree != nil {
		fmt.Fprintf(b, "\ndominator tree (retained, own, type)\n")
		writeTree(b, *d.Tree, 0, names)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTree(b *strings.Builder, n SnapshotTreeNodeJSON, depth int, names map[string]string) {
	root := ""
	if n.Root != "" {
		root = " [" + n.Root + "]"
	}
	fmt.Fprintf(b, "%s%s %s %s %s%s\n", strings.Repeat("  ", depth), sizeText(n.RetainedBytes), sizeText(n.Bytes), readable(names, n.Type), n.Address, root)
	for _, c := range n.Children {
		writeTree(b, c, depth+1, names)
	}
	if n.More > 0 {
		fmt.Fprintf(b, "%s... %d more\n", strings.Repeat("  ", depth+1), n.More)
	}
}

// rootText names a root in brackets: "[static Holder]", "[handle]".
func rootText(kind, root string) string {
	if root == "" || root == kind {
		return "[" + kind + "]"
	}
	return "[" + kind + " " + root + "]"
}

// sizeText is a byte count for people: 512 B, 1.5 KiB, 12.3 MiB.
func sizeText(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// WriteSnapshotPprof writes a pprof heap profile (inuse_objects,
// inuse_space) whose stacks are retention paths: the root kind, the root,
// then the types along the shortest path from it down to the objects'
// type, so `go tool pprof -http` draws who keeps memory and -diff_base
// compares two snapshots. A partial snapshot says so in the comments.
func WriteSnapshotPprof(w io.Writer, in Input, g *heapgraph.Graph) error {
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		DefaultSampleType: "inuse_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            1,
	}
	in = snapshotPartial(in, g)
	if l := in.PartialLine(); l != "" {
		p.Comments = append(p.Comments, l)
	}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		locs[name] = l
		return l
	}
	for _, path := range g.Why(func(uint32) bool { return true }) {
		ls := make([]*profile.Location, 0, len(path.Types)+2)
		for i := len(path.Types) - 1; i >= 0; i-- {
			ls = append(ls, loc(path.Types[i]))
		}
		ls = append(ls, loc(path.RootKind.String()+" "+path.Root), loc("["+path.RootKind.String()+"]"))
		if path.Root == path.RootKind.String() {
			ls = append(ls[:len(ls)-2], ls[len(ls)-1])
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: ls, Value: []int64{int64(path.Count), int64(path.Bytes)}})
	}
	return p.Write(w)
}

// SnapshotDiffDocument is `clrspy snapshot --diff OLD NEW --json`: per
// type deltas, the dominators whose retained bytes grew most (matched by
// their root path), and leak suspects. The envelope describes both inputs
// (sources joined, counts summed, complete only if both were).
type SnapshotDiffDocument struct {
	Input
	Before   SnapshotSideJSON        `json:"before"`
	After    SnapshotSideJSON        `json:"after"`
	Types    []SnapshotTypeDeltaJSON `json:"types"`
	Growth   []SnapshotGrowthJSON    `json:"growth"`
	Suspects []SnapshotSuspectJSON   `json:"suspects"`
	// BytesDelta and ObjectsDelta: the whole heap's change, after minus
	// before.
	BytesDelta   int64 `json:"bytes_delta"`
	ObjectsDelta int64 `json:"objects_delta"`
	// IntervalSec is the time from the first snapshot to the second and
	// BytesPerMin the heap's growth over it (absent when either
	// snapshot's time is unknown).
	IntervalSec *float64 `json:"interval_sec,omitempty"`
	BytesPerMin *float64 `json:"bytes_per_min,omitempty"`
	// TypeNames: the readable names, as SnapshotDocument's.
	TypeNames []ReadableName `json:"type_names,omitempty"`
}

// SnapshotSideJSON is one snapshot of a diff.
type SnapshotSideJSON struct {
	Source  string `json:"source"`
	Objects uint64 `json:"objects"`
	Bytes   uint64 `json:"bytes"`
	// Taken is when the snapshot was taken (RFC 3339, UTC), TakenFrom
	// where that time comes from: "trace" (its GC's event) or
	// "file_mtime" (a .gcdump's modification time); absent: unknown.
	Taken     string `json:"taken,omitempty"`
	TakenFrom string `json:"taken_from,omitempty"`
}

func snapshotSide(source string, g *heapgraph.Graph) SnapshotSideJSON {
	s := SnapshotSideJSON{Source: source, Objects: uint64(g.N), Bytes: g.Bytes}
	if !g.Taken.IsZero() {
		s.Taken, s.TakenFrom = g.Taken.UTC().Format(time.RFC3339Nano), g.TakenFrom
	}
	return s
}

// SnapshotTypeDeltaJSON is one type's change.
type SnapshotTypeDeltaJSON struct {
	Type          string `json:"type"`
	CountBefore   uint64 `json:"count_before"`
	CountAfter    uint64 `json:"count_after"`
	CountDelta    int64  `json:"count_delta"`
	BytesDelta    int64  `json:"bytes_delta"`
	RetainedDelta int64  `json:"retained_delta"`
	// RetainedExact: the delta is of exact retained bytes on both sides
	// (false: of the dominator tree's lower bound on one side or both).
	RetainedExact bool `json:"retained_exact"`
}

// SnapshotGrowthJSON is a dominator path whose retained bytes grew.
type SnapshotGrowthJSON struct {
	RootKind       string   `json:"root_kind"`
	Root           string   `json:"root"`
	Path           []string `json:"path"`
	Count          uint64   `json:"count"`
	RetainedBefore uint64   `json:"retained_before"`
	RetainedAfter  uint64   `json:"retained_after"`
	RetainedDelta  int64    `json:"retained_delta"`
}

// SnapshotSuspectJSON is a type that grew and is kept through one path.
type SnapshotSuspectJSON struct {
	Type       string           `json:"type"`
	CountDelta int64            `json:"count_delta"`
	BytesDelta int64            `json:"bytes_delta"`
	Share      float64          `json:"share"`
	Path       SnapshotPathJSON `json:"path"`
}

// NewSnapshotDiffDocument describes the diff of two snapshots.
func NewSnapshotDiffDocument(before, after Input, old, cur *heapgraph.Graph, d heapgraph.Diff, top int) *SnapshotDiffDocument {
	in := Input{Source: before.Source + " -> " + after.Source, Events: before.Events + after.Events,
		EventsLost: before.EventsLost + after.EventsLost, Truncated: before.Truncated || after.Truncated,
		DecodeErrors: before.DecodeErrors + after.DecodeErrors}
	if after.TruncatedAt != nil {
		in.TruncatedAt = after.TruncatedAt
	} else {
		in.TruncatedAt = before.TruncatedAt
	}
	for _, s := range []struct {
		in Input
		g  *heapgraph.Graph
	}{{before, old}, {after, cur}} {
		for _, p := range s.in.Partial {
			in.Partial = append(in.Partial, s.in.Source+": "+p)
		}
		if !s.g.Complete() {
			in.Partial = append(in.Partial, s.in.Source+": "+snapshotMissing(s.g.Missing))
		}
		if l := SnapshotUnnamed(s.g); l != "" {
			in.Partial = append(in.Partial, s.in.Source+": "+l)
		}
	}
	in.Complete = len(in.Partial) == 0
	doc := &SnapshotDiffDocument{Input: in,
		Before: snapshotSide(before.Source, old), After: snapshotSide(after.Source, cur),
		Types: []SnapshotTypeDeltaJSON{}, Growth: []SnapshotGrowthJSON{}, Suspects: []SnapshotSuspectJSON{},
		BytesDelta: int64(cur.Bytes) - int64(old.Bytes), ObjectsDelta: int64(cur.N) - int64(old.N), TypeNames: readableNames(old, cur)}
	if !old.Taken.IsZero() && !cur.Taken.IsZero() {
		sec := cur.Taken.Sub(old.Taken).Seconds()
		doc.IntervalSec = &sec
		if sec > 0 {
			r := float64(doc.BytesDelta) * 60 / sec
			doc.BytesPerMin = &r
		}
	}
	ts := d.Types
	if top > 0 && len(ts) > top {
		ts = ts[:top]
	}
	for _, t := range ts {
		doc.Types = append(doc.Types, SnapshotTypeDeltaJSON{Type: t.Type, CountBefore: t.CountBefore, CountAfter: t.CountAfter,
			CountDelta: t.CountDelta, BytesDelta: t.BytesDelta, RetainedDelta: t.RetainedDelta, RetainedExact: t.RetainedExact})
	}
	for _, g := range d.Growth {
		doc.Growth = append(doc.Growth, SnapshotGrowthJSON{RootKind: g.RootKind.String(), Root: g.Root, Path: g.Path, Count: g.Count,
			RetainedBefore: g.RetainedBefore, RetainedAfter: g.RetainedAfter, RetainedDelta: g.Delta})
	}
	for _, s := range d.Suspects {
		doc.Suspects = append(doc.Suspects, SnapshotSuspectJSON{Type: s.Type, CountDelta: s.CountDelta, BytesDelta: s.BytesDelta, Share: s.Share,
			Path: SnapshotPathJSON{RootKind: s.Path.RootKind.String(), Root: s.Path.Root, Path: s.Path.Types, Count: s.Path.Count, Bytes: s.Path.Bytes}})
	}
	return doc
}

// WriteSnapshotDiffText writes a diff for people: sizes in B, KiB, MiB
// or GiB, the time between the snapshots and the heap's growth rate.
func WriteSnapshotDiffText(w io.Writer, d *SnapshotDiffDocument) error {
	names := nameMap(d.TypeNames)
	b := &strings.Builder{}
	if l := d.PartialLine(); l != "" {
		fmt.Fprintln(b, l)
	}
	fmt.Fprintf(b, "heap snapshots: %s (%d objects, %s%s) -> %s (%d objects, %s%s)\n", d.Before.Source, d.Before.Objects, sizeText(d.Before.Bytes),
		takenText(d.Before), d.After.Source, d.After.Objects, sizeText(d.After.Bytes), takenText(d.After))
	fmt.Fprintf(b, "the heap %s by %s (%+d objects)", grewWord(d.BytesDelta), sizeText(uint64(max(d.BytesDelta, -d.BytesDelta))), d.ObjectsDelta)
	switch {
	case d.IntervalSec == nil:
		fmt.Fprint(b, "; the time between the snapshots is unknown")
	case *d.IntervalSec <= 0:
		fmt.Fprintf(b, "; the second snapshot is not later than the first (%s)", durationText(*d.IntervalSec))
	default:
		fmt.Fprintf(b, " in %s: %s/min", durationText(*d.IntervalSec), deltaText(int64(*d.BytesPerMin)))
	}
	fmt.Fprint(b, "\n\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "RETAINED Δ\tBYTES Δ\tCOUNT Δ\tBEFORE\tAFTER\t  TYPE")
	for _, t := range d.Types {
		mark := ""
		if !t.RetainedExact {
			mark = "~"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%+d\t%d\t%d\t  %s\n", mark, deltaText(t.RetainedDelta), deltaText(t.BytesDelta), t.CountDelta, t.CountBefore, t.CountAfter, readable(names, t.Type))
	}
	tw.Flush()
	for _, t := range d.Types {
		if !t.RetainedExact {
			fmt.Fprintln(b, "~: a retained delta of the dominator tree's lower bounds (types past those whose exact retained bytes fit in the time budget)")
			break
		}
	}
	if len(d.Growth) > 0 {
		fmt.Fprintf(b, "\ndominators that grew (matched by their path from a root)\n")
		for _, g := range d.Growth[:min(10, len(d.Growth))] {
			fmt.Fprintf(b, "%12s  %s -> %s  %s %s\n", deltaText(g.RetainedDelta), sizeText(g.RetainedBefore), sizeText(g.RetainedAfter), rootText(g.RootKind, g.Root), readablePath(names, g.Path))
		}
	}
	if len(d.Suspects) > 0 {
		fmt.Fprintf(b, "\nleak suspects (grew, and kept through one path)\n")
		for _, s := range d.Suspects {
			fmt.Fprintf(b, "%s: %+d objects, %s; %.0f%% through %s %s\n", readable(names, s.Type), s.CountDelta, deltaText(s.BytesDelta), 100*s.Share, rootText(s.Path.RootKind, s.Path.Root), readablePath(names, s.Path.Path))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// deltaText is a signed size: "+43.4 MiB", "-512 B", "+0 B".
func deltaText(n int64) string {
	if n < 0 {
		return "-" + sizeText(uint64(-n))
	}
	return "+" + sizeText(uint64(n))
}

func grewWord(n int64) string {
	if n < 0 {
		return "shrank"
	}
	return "grew"
}

// takenText is ", taken 2026-12-02 16:01:02 UTC" (the modification time
// of a .gcdump marked so), or "".
func takenText(s SnapshotSideJSON) string {
	t, err := time.Parse(time.RFC3339Nano, s.Taken)
	if err != nil {
		return ""
	}
	from := ""
	if s.TakenFrom == "file_mtime" {
		from = " (file time)"
	}
	return ", taken " + t.Format("2006-01-02 15:04:05 UTC") + from
}

// durationText is a duration for people: "850 ms", "12.3 s", "5 min 2 s",
// "2 h 5 min".
func durationText(sec float64) string {
	a := math.Abs(sec)
	sign := ""
	if sec < 0 {
		sign = "-"
	}
	switch {
	case a < 1:
		return fmt.Sprintf("%s%.0f ms", sign, a*1000)
	case a < 60:
		return fmt.Sprintf("%s%.1f s", sign, a)
	case a < 3600:
		return fmt.Sprintf("%s%d min %d s", sign, int(a)/60, int(a)%60)
	}
	return fmt.Sprintf("%s%d h %d min", sign, int(a)/3600, int(a)%3600/60)
}

// WriteSnapshot writes graph g read from in as format: "gcdump" (the
// graph itself in PerfView's format), "pprof", "json" or text. The
// dominators are computed first (but for gcdump); phase, when given, is
// told "dominators" and "analyses" as each stage ends.
func WriteSnapshot(w io.Writer, in Input, g *heapgraph.Graph, format string, o SnapshotOptions, phase func(string)) error {
	if format == "gcdump" {
		return heapgraph.WriteGCDump(w, g)
	}
	if phase == nil {
		phase = func(string) {}
	}
	g.Analyze()
	phase("dominators")
	if format == "pprof" {
		return WriteSnapshotPprof(w, in, g)
	}
	doc := NewSnapshotDocument(in, g, o)
	phase("analyses")
	if format == "json" {
		return WriteSnapshotJSON(w, doc)
	}
	return WriteSnapshotText(w, doc)
}
