package heapgraph

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// RootKind says what kind of GC root keeps an object alive.
type RootKind uint8

// Root kinds, in the order a path prefers them (a static field names its
// object better than the handle of the array statics live in).
const (
	RootStatic       RootKind = iota // a static field (Root.Name: the field's name)
	RootThreadStatic                 // a thread-static field
	RootStack                        // a local of a thread's stack (Name: the frame's method)
	RootHandle                       // a strong GC handle
	RootPinnedHandle                 // a pinning GC handle
	RootRefCounted                   // a ref-counted handle (COM)
	RootDependent                    // a dependent handle (ConditionalWeakTable value)
	RootFinalizer                    // the finalizer queue
	RootOther                        // older generation, sized ref, overflow
	RootUnrooted                     // no reported root reaches it (see Missing)
	numRootKinds
)

var rootKindNames = [numRootKinds]string{"static", "thread_static", "stack", "handle", "pinned_handle",
	"ref_counted_handle", "dependent_handle", "finalizer_queue", "other", "unrooted"}

// String is the kind's JSON name (snake_case).
func (k RootKind) String() string {
	if k < numRootKinds {
		return rootKindNames[k]
	}
	return fmt.Sprintf("kind_%d", k)
}

// Root is one GC root: an object and what holds it.
type Root struct {
	Object uint32 // node id
	Kind   RootKind
	Name   string // static: Class.Field (the field alone when no module says); stack: the frame's method; else ""
}

// Label names the root for people: "static Field", "stack of
// Namespace.Method", "handle", ...
func (r Root) Label() string {
	switch {
	case r.Name == "":
		return r.Kind.String()
	case r.Kind == RootStack:
		return "stack of " + r.Name
	}
	return r.Kind.String() + " " + r.Name
}

// Missing counts what a snapshot lacks. Any non-zero field but Unrooted
// makes the graph incomplete.
type Missing struct {
	// Cut: the stream ended during the heap walk (before the dump's GC
	// ended).
	Cut        bool   `json:"cut"`
	NodeEvents uint32 `json:"node_events"` // GCBulkNode events lost (Index gaps)
	EdgeEvents uint32 `json:"edge_events"`
	RootEvents uint32 `json:"root_events"`
	// Edges the nodes announced that no GCBulkEdge carried.
	Edges uint64 `json:"edges"`
	// DanglingEdges point at objects never described; DanglingObjects
	// counts those objects.
	DanglingEdges   uint64 `json:"dangling_edges"`
	DanglingObjects uint64 `json:"dangling_objects"`
	// Roots whose object was never described.
	Roots uint64 `json:"roots"`
	// FileCut: a .gcdump file ends early (in its node data or the
	// addresses after it); CutNodes of its nodes (objects or root
	// pseudo-nodes) were past the cut.
	FileCut  bool   `json:"file_cut"`
	CutNodes uint64 `json:"cut_nodes"`
	// CutEdges: references of the objects kept to nodes past the cut
	// (objects the file described, lost with its end; not in
	// DanglingEdges).
	CutEdges uint64 `json:"cut_edges"`
	// Unrooted objects: no reported root reaches them (the frozen
	// segments' string literals and RuntimeType objects, which are
	// alive forever; or objects whose root events were lost); each
	// region is joined to the virtual root as RootUnrooted.
	Unrooted uint64 `json:"unrooted"`
}

// Lost reports whether anything but unrooted objects is missing.
func (m Missing) Lost() bool {
	u := m
	u.Unrooted = 0
	return u != Missing{}
}

// Graph is a heap snapshot: node ids 0..N-1 are objects in the order the
// runtime described them; id N is the virtual root, whose references are
// the rooted objects.
type Graph struct {
	N     int
	Addr  []uint64
	Size  []uint64
	Type  []uint32 // index into TypeNames
	Off   []uint32 // N+2 offsets into Dst: node v's references are Dst[Off[v]:Off[v+1]]
	Dst   []uint32
	Roots []Root // every root, in kind order (statics first)
	// rootOf maps a root object to its first (preferred) root; the
	// unrooted ones, Roots[unrootedFrom:] (by object id), are not in it
	// (see rootIndex).
	rootOf       map[uint32]uint32
	unrootedFrom int

	TypeNames []string
	// TypeModules names each type's module (its IL path), "" unknown.
	TypeModules []string

	Bytes   uint64 // sum of Size
	Missing Missing
	GC      uint32        // the dump GC's number
	Pause   time.Duration // the dump GC's pause (suspension to restart), 0 unknown
	// Taken is when the dump's GC began (zero: unknown, as for a .gcdump
	// file, which records no time; a caller may set it and TakenFrom).
	Taken time.Time
	// TakenFrom says where Taken comes from: "trace" (the dump GC's
	// event), "file_mtime" (a file's modification time), "" unknown.
	TakenFrom string
	COM       uint64    // RCW and CCW wrappers reported
	byAddr    []uint32  // ids sorted by address (when runs is nil)
	runs      []addrRun // or: runs of ids in address order, by address
	mem       *store    // where the arrays are mapped (nil: the Go heap)
	// park: move each long-lived array to a file once built, so a phase
	// holds only what it touches (parkIdle).
	park     bool
	analysed bool

	// Filled by Analyze.
	Idom     []uint32 // immediate dominator (N+1; Idom[N] == N)
	Retained []uint64 // retained bytes (N+1; Retained[N] == Bytes)
	order    []uint32 // ids in DFS preorder from the virtual root
	// The dominator tree's children (domChildren), once asked for.
	domOff, domKids []uint32
}

// Complete reports whether nothing was lost.
func (g *Graph) Complete() bool { return !g.Missing.Lost() }

// Root is the virtual root's id.
func (g *Graph) Root() uint32 { return uint32(g.N) }

// Refs returns v's references (for the virtual root: the rooted objects).
func (g *Graph) Refs(v uint32) []uint32 { return g.Dst[g.Off[v]:g.Off[v+1]] }

// TypeName is the type name of node v ("[root]" for the virtual root).
func (g *Graph) TypeName(v uint32) string {
	if int(v) >= g.N {
		return "[root]"
	}
	return g.TypeNames[g.Type[v]]
}

// Find returns the id of the object at addr.
func (g *Graph) Find(addr uint64) (uint32, bool) {
	if g.runs != nil {
		// The last run starting at or below addr, then within it.
		r, _ := slices.BinarySearchFunc(g.runs, addr, func(r addrRun, a uint64) int {
			if r.first <= a {
				return -1
			}
			return 1
		})
		if r == 0 {
			return 0, false
		}
		run := g.runs[r-1]
		i, ok := slices.BinarySearch(g.Addr[run.start:run.end], addr)
		return run.start + uint32(i), ok
	}
	i, ok := slices.BinarySearchFunc(g.byAddr, addr, func(id uint32, a uint64) int { return cmp.Compare(g.Addr[id], a) })
	if !ok {
		return 0, false
	}
	return g.byAddr[i], true
}

// RootOf returns the preferred root of a rooted object.
func (g *Graph) RootOf(v uint32) (Root, bool) {
	i, ok := g.rootIndexOK(v)
	if !ok {
		return Root{}, false
	}
	return g.Roots[i], true
}

// rootIndex is the index in Roots of v's preferred root (0 when v is no
// root's object).
func (g *Graph) rootIndex(v uint32) uint32 {
	i, _ := g.rootIndexOK(v)
	return i
}

func (g *Graph) rootIndexOK(v uint32) (uint32, bool) {
	if i, ok := g.rootOf[v]; ok {
		return i, true
	}
	if g.unrootedFrom >= len(g.Roots) {
		return 0, false
	}
	tail := g.Roots[g.unrootedFrom:]
	i, ok := slices.BinarySearchFunc(tail, v, func(r Root, v uint32) int { return int(int64(r.Object) - int64(v)) })
	return uint32(g.unrootedFrom + i), ok
}

// Graph builds the graph the builder collected and analyses it (see
// Analyze). It fails when the stream held no heap dump.
func (b *Builder) Graph() (*Graph, error) {
	if len(b.addrs.s) == 0 {
		if b.state == waiting && b.gc == 0 {
			return nil, fmt.Errorf("no heap dump in the events (no blocking gen2 GC described its objects: the session needs the runtime's GCHeapDump and GCHeapCollect keywords)")
		}
		return nil, fmt.Errorf("the heap dump's GC %d described no objects", b.gc)
	}
	n := len(b.addrs.s)
	if uint64(n) >= 1<<32-2 {
		return nil, fmt.Errorf("%d objects: more than 32-bit node ids hold", n)
	}
	if err := b.mem.Err(); err != nil {
		return nil, err
	}
	if err := b.spillIfTooBig(); err != nil {
		return nil, err
	}
	// The collection is over: what it wrote goes to the page cache when
	// spilled (each phase brings back what it touches).
	b.mem.release()
	g := &Graph{N: n, Addr: b.addrs.s, Size: b.sizes.s, Type: b.types.s, TypeNames: b.typeNames, GC: b.gc, COM: b.com, mem: b.mem}
	// Types by name: distinct TypeIDs of one name (nested "<>c" classes
	// of different parents, a type in two load contexts) are one row.
	byName := make(map[string]uint32, len(b.typeNames))
	remap := make([]uint32, len(b.typeNames))
	g.TypeNames = nil
	for i, name := range b.typeNames {
		if name == "" {
			name = b.known[b.typeIDs[i]]
		}
		if name == "" {
			name = fmt.Sprintf("Type(0x%x)", b.typeIDs[i])
		}
		t, ok := byName[name]
		if !ok {
			t = uint32(len(g.TypeNames))
			byName[name] = t
			g.TypeNames = append(g.TypeNames, name)
			g.TypeModules = append(g.TypeModules, b.modules[b.typeMods[i]])
		}
		remap[i] = t
	}
	for v, t := range g.Type {
		g.Type[v] = remap[t]
	}
	g.Pause = time.Duration(b.pause)
	switch {
	case b.pause != 0:
		g.Taken, g.TakenFrom = b.hdr.SyncTimeUTC.Add(time.Duration(b.stoppedAt)), "trace"
	case b.state != waiting:
		g.Taken, g.TakenFrom = b.hdr.SyncTimeUTC.Add(time.Duration(b.startedAt)), "trace"
	}
	g.Missing.NodeEvents, g.Missing.EdgeEvents, g.Missing.RootEvents = b.lostNode, b.lostEdge, b.lostRoot
	// The stream ended inside the dump's GC: the walk may be cut.
	g.Missing.Cut = b.state == dumping
	for _, s := range g.Size {
		g.Bytes += s
	}
	// The runtime walks each heap region in address order, the regions
	// in an order of their own (measured on .NET 10: a 1 M-object heap's
	// nodes came in 1 to 8 increasing runs, a 24 M-object heap's in 15,
	// 57 once cut at region gaps): runs that do not overlap are an index
	// of their own. Else the ids are sorted by address.
	g.indexAddrs()

	// Sizes and types are not read again until the dominators' end: a
	// large graph parks them while the references are resolved.
	g.park = b.mem != nil && !b.mem.spill && n >= parkMinObjects
	parkBehind(g, g.Size)
	parkBehind(g, g.Type)

	// CSR: node i's edges are the next nedges[i] of the edge stream;
	// edges to objects never described are dropped and counted.
	// The per-node edge counts become the offsets in place (each count
	// is read before its slot is overwritten): no second array.
	b.nedges.push(0)
	b.nedges.push(0)
	g.Off = b.nedges.s
	b.nedges = vec[uint32]{}
	edges := edgeReader{buf: b.edges.s}
	// Room for the roots and the unrooted ones (reserved address space,
	// only what is written takes memory).
	dst := newVec[uint32](g.mem, int(b.nEdges)+len(b.roots)+len(b.statics)+n+1)
	var dangling []uint64
	pos := uint64(0)
	for i := 0; i < n; i++ {
		want := uint64(g.Off[i])
		g.Off[i] = uint32(len(dst.s))
		if rest := b.nEdges - pos; want > rest {
			g.Missing.Edges += want - rest
			want = rest
		}
		for range want {
			a := edges.next()
			if id, ok := g.Find(a); ok {
				dst.push(id)
			} else if a != 0 {
				dangling = append(dangling, a)
			}
		}
		pos += want
		if i&0xffff == 0 {
			g.mem.wrote(0x10000 * 24) // edges read, ids written, Off
		}
	}
	g.Off[n] = uint32(len(dst.s))
	g.Missing.DanglingEdges = uint64(len(dangling))
	slices.Sort(dangling)
	g.Missing.DanglingObjects = uint64(len(slices.Compact(dangling)))
	b.edges.free()
	b.mem.release()

	// Roots: statics first (named by class and field), then the others
	// in kind order, so a path prefers the most telling root.
	staticNames := b.staticNames()
	for i, s := range b.statics {
		// The event's TypeID is the object's type (measured: the
		// workload's static Holder of type GraphHolder declared in
		// Graph comes with GraphHolder's id): the declaring class
		// comes from the modules' metadata (NameStatics), if given.
		k := RootStatic
		if s.thread {
			k = RootThreadStatic
		}
		b.roots = append(b.roots, rawRoot{obj: s.obj, kind: k, name: b.intern(staticNames[i])})
	}
	for i := range b.roots {
		r := &b.roots[i]
		if r.kind == RootStack {
			if m := b.stackIDs[r.id]; m != "" {
				r.name = b.intern(m)
			}
		}
	}
	slices.SortStableFunc(b.roots, func(x, y rawRoot) int { return int(x.kind) - int(y.kind) })
	g.rootOf = make(map[uint32]uint32)
	for _, r := range b.roots {
		id, ok := g.Find(r.obj)
		if !ok {
			g.Missing.Roots++
			continue
		}
		if _, seen := g.rootOf[id]; !seen {
			g.rootOf[id] = uint32(len(g.Roots))
			dst.push(id)
		}
		g.Roots = append(g.Roots, Root{Object: id, Kind: r.kind, Name: b.names[r.name]})
	}
	b.roots = nil
	// The addresses are read no more (the roots' objects are found) until
	// the report's.
	parkBehind(g, g.Addr)
	g.Off[n+1] = uint32(len(dst.s))
	g.Dst = dst.s
	g.attachUnrooted(&dst)
	// The graph is whole: the dominators' walk reads it while it is
	// parked, and their first release waits for the parkings.
	parkBehind(g, g.Off)
	parkBehind(g, g.Dst)
	g.Analyze()
	if err := g.mem.Err(); err != nil {
		g.Free()
		return nil, err
	}
	return g, nil
}

// parkMinObjects is the size from which a graph in memory parks its
// arrays (Graph.park): below it, the process's floor (its binary, the
// event reader's buffers) decides its peak, and the copies would cost
// time for little.
var parkMinObjects = 1 << 21

// parkArrays parks the graph's arrays of one element type when the graph
// parks them (park): each phase of the analyses then holds the arrays it
// touches and its own temporaries, not every array at once. They are
// written once, to unlinked files in $TMPDIR, and read back from the page
// cache by the phases that need them (a file of the disk: the kernel may
// write them out when memory is short, and drop their pages). An array
// that cannot be parked (a full disk) stays in memory.
func parkArrays[T any](g *Graph, as ...[]T) {
	if !g.park {
		return
	}
	for _, a := range as {
		if parkArr(g.mem, a) != nil {
			return
		}
	}
}

// parkBehind parks as parkArrays does, in the background: the caller
// goes on with work that may read the arrays but not write them, and the
// store's next release waits for the parking (the copy to the file,
// then the mapping of the file over the array, which its readers see
// unchanged).
func parkBehind[T any](g *Graph, as ...[]T) {
	if g.park {
		g.mem.behind(func() { parkArrays(g, as...) })
	}
}

// indexAddrs builds Find's index: the runs of increasing addresses when
// they do not overlap (addrRuns), else the ids sorted by address.
func (g *Graph) indexAddrs() {
	if g.runs = addrRuns(g.Addr); g.runs != nil {
		return
	}
	g.byAddr = makeArr[uint32](g.mem, g.N)
	for i := range g.byAddr {
		g.byAddr[i] = uint32(i)
	}
	slices.SortFunc(g.byAddr, func(a, c uint32) int { return cmp.Compare(g.Addr[a], g.Addr[c]) })
}

// addrRun is a run of ids whose addresses increase.
type addrRun struct {
	first      uint64 // the address of id start
	start, end uint32 // ids [start, end)
}

// addrRuns splits addr into increasing runs, cut wherever the next
// address jumps by more than regionGap too (a run may pass from one heap
// region to another with a gap where a region walked later lies; the
// gap between two objects of one region never holds another's), and
// returns them by address; nil when two still overlap (an address twice,
// or no order of regions: the sorted index is needed then).
func addrRuns(addr []uint64) []addrRun {
	const regionGap = 1 << 20 // .NET's regions: 4 MiB and up, aligned
	var runs []addrRun
	start := 0
	for i := 1; i <= len(addr); i++ {
		if i < len(addr) && addr[i] > addr[i-1] && addr[i]-addr[i-1] <= regionGap {
			continue
		}
		runs = append(runs, addrRun{addr[start], uint32(start), uint32(i)})
		if len(runs) > 1<<16 {
			return nil
		}
		start = i
	}
	slices.SortFunc(runs, func(a, b addrRun) int { return cmp.Compare(a.first, b.first) })
	for i := 1; i < len(runs); i++ {
		if addr[runs[i-1].end-1] >= runs[i].first {
			return nil
		}
	}
	return runs
}

// Free unmaps the arrays of a graph whose builder mapped them
// (Builder.MapArrays): neither g nor any slice taken from it may be used
// after. A no-op for other graphs.
func (g *Graph) Free() {
	if g.mem == nil {
		return
	}
	g.mem.closeAll()
	g.mem = nil
	g.Addr, g.Size, g.Type, g.Off, g.Dst, g.byAddr, g.Idom, g.Retained, g.order = nil, nil, nil, nil, nil, nil, nil, nil, nil
	g.domOff, g.domKids = nil, nil
}

func (b *Builder) intern(s string) uint32 {
	if i, ok := b.nameIdx[s]; ok {
		return i
	}
	if b.nameIdx == nil {
		b.nameIdx = map[string]uint32{}
	}
	i := uint32(len(b.names))
	b.names = append(b.names, s)
	b.nameIdx[s] = i
	return i
}

// attachUnrooted joins to the virtual root every object the roots do not
// reach: the first unreached object of each unreached region (in id
// order) becomes an unrooted root.
// dst holds g.Dst (the unrooted roots are appended to it).
func (g *Graph) attachUnrooted(dst *vec[uint32]) {
	seen := make([]uint64, (g.N+1+63)/64)
	var stack []dfsFrame
	mark := func(s uint32) {
		seen[s/64] |= 1 << (s % 64)
		stack = g.markFrom(append(stack[:0], dfsFrame{s, g.Off[s]}), seen)
	}
	mark(g.Root())
	// The unreached regions' first objects, found before they are added
	// (a million of them when a lost event held an array's references):
	// Roots then grows once, to its size.
	var heads []uint32
	for v := uint32(0); v < uint32(g.N); v++ {
		if seen[v/64]&(1<<(v%64)) != 0 {
			continue
		}
		heads = append(heads, v)
		mark(v)
	}
	// They go last in Roots, in id order: found by binary search
	// (rootIndex), not in rootOf (a map entry each).
	g.Roots = slices.Grow(g.Roots, len(heads))
	g.unrootedFrom = len(g.Roots)
	for _, v := range heads {
		g.Missing.Unrooted++
		g.Roots = append(g.Roots, Root{Object: v, Kind: RootUnrooted})
		dst.push(v)
	}
	g.Dst = dst.s
	g.Off[g.N+1] = uint32(len(g.Dst))
	// Count every object reached only through an unrooted one (more
	// than the unrooted roots themselves).
	if g.Missing.Unrooted > 0 {
		g.Missing.Unrooted = g.unrootedCount()
	}
}

// unrootedCount counts the objects the real roots do not reach.
func (g *Graph) unrootedCount() uint64 {
	seen := make([]uint64, (g.N+1+63)/64)
	var stack []dfsFrame
	for _, r := range g.Roots {
		if r.Kind == RootUnrooted || seen[r.Object/64]&(1<<(r.Object%64)) != 0 {
			continue
		}
		seen[r.Object/64] |= 1 << (r.Object % 64)
		stack = g.markFrom(append(stack[:0], dfsFrame{r.Object, g.Off[r.Object]}), seen)
	}
	var n uint64
	for v := 0; v < g.N; v++ {
		if seen[v/64]&(1<<(v%64)) == 0 {
			n++
		}
	}
	return n
}

// dfsFrame is a node being walked and the position of its next reference.
type dfsFrame struct{ v, pos uint32 }

// markFrom sets in seen every node reachable from the stack's frames
// (their own nodes already set). A frame per node on the current path,
// not per reference waiting: an array of a million references costs one
// frame, not a million entries. It returns the stack for reuse.
func (g *Graph) markFrom(stack []dfsFrame, seen []uint64) []dfsFrame {
	steps := 0
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.pos == g.Off[f.v+1] {
			stack = stack[:len(stack)-1]
			continue
		}
		w := g.Dst[f.pos]
		f.pos++
		if steps++; steps&0xffff == 0 {
			g.mem.wrote(0x10000 * 8)
		}
		if seen[w/64]&(1<<(w%64)) == 0 {
			seen[w/64] |= 1 << (w % 64)
			stack = append(stack, dfsFrame{w, g.Off[w]})
		}
	}
	return stack
}
