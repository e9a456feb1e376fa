package heapgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// A .gcdump file (dotnet-gcdump, dotnet-monitor, PerfView) is PerfView's
// FastSerialization stream of a GCHeapDump object whose first field is a
// MemoryGraph: the graph's total size, root node, type table (name,
// size, module), one offset per node into a blob where each node is
// compressed integers (type<<1 | explicit-size bit, [size], child
// count, children as deltas from the node's index), then the nodes'
// addresses. The graph's root is a pseudo-node "[.NET Roots]" whose
// pseudo-children ("[static vars]", "[local vars]", "[other roots]" >
// "[strong Handles]" ...) name the roots; ReadGCDump turns them into
// roots of those kinds and keeps only real objects as nodes. The fields
// after the graph (collection metadata) are not read.

// ErrGCDump is wrapped by every error about a malformed .gcdump.
var ErrGCDump = errors.New("not a readable .gcdump")

// gcdumpReader is a bounds-checked little-endian reader of a whole file.
type gcdumpReader struct {
	b   []byte
	p   int
	err error
}

func (r *gcdumpReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at offset %d", ErrGCDump, what, r.p)
	}
}

func (r *gcdumpReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.p {
		r.fail("truncated")
		return nil
	}
	s := r.b[r.p : r.p+n]
	r.p += n
	return s
}

func (r *gcdumpReader) u8() byte {
	if s := r.take(1); s != nil {
		return s[0]
	}
	return 0
}

func (r *gcdumpReader) i32() int32 {
	if s := r.take(4); s != nil {
		return int32(binary.LittleEndian.Uint32(s))
	}
	return 0
}

func (r *gcdumpReader) i64() int64 {
	if s := r.take(8); s != nil {
		return int64(binary.LittleEndian.Uint64(s))
	}
	return 0
}

// str reads a FastSerialization string: int32 length (-1: null), UTF-8.
func (r *gcdumpReader) str() string {
	n := r.i32()
	if n < 0 {
		return ""
	}
	return string(r.take(int(n)))
}

// typeHeader reads the serialized type of an object: BeginObject,
// BeginObject, NullReference, version, minimum reader version, name,
// EndObject.
func (r *gcdumpReader) typeHeader() string {
	const begin, null, end = 4, 1, 6
	if tags := r.take(3); tags == nil || tags[0] != begin || tags[1] != begin || tags[2] != null {
		r.fail("no object header")
		return ""
	}
	r.i32()
	r.i32()
	name := r.str()
	if r.u8() != end {
		r.fail("no end of type")
	}
	return name
}

// compressed reads one of the node blob's compressed integers: 7 bits a
// byte, high bit set on all but the last, the first byte's 7 bits sign
// extended.
func compressed(b []byte, p *int) (int32, bool) {
	if *p >= len(b) {
		return 0, false
	}
	c := b[*p]
	*p++
	v := int32(c) << 25 >> 25
	for k := 0; c&0x80 != 0; k++ {
		if k == 4 || *p >= len(b) {
			return 0, false
		}
		c = b[*p]
		*p++
		v = v<<7 + int32(c&0x7f)
	}
	return v, true
}

// IsGCDump reports whether a file's first bytes (64 are enough) are a
// .gcdump's: FastSerialization's header, then a GCHeapDump object (a
// .nettrace starts "Nettrace" and holds a Trace object).
func IsGCDump(prefix []byte) bool {
	r := &gcdumpReader{b: prefix}
	if r.str() != "!FastSerialization.1" || r.err != nil {
		return false
	}
	return r.typeHeader() == "GCHeapDump" && r.err == nil
}

// ReadGCDump reads a .gcdump file into a graph and analyses it. A
// regular file (an *os.File) is mapped, not read into memory: see
// ReadGCDumpFile.
func ReadGCDump(in io.Reader) (*Graph, error) {
	if f, ok := in.(*os.File); ok {
		return ReadGCDumpFile(f, 0)
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return nil, err
	}
	return readGCDump(data)
}

// ReadGCDumpFile reads the .gcdump f. A regular file is mapped read-only
// (Linux): its bytes stay in the kernel's page cache and are never copied
// into the Go heap; with budget > 0 (--max-memory) the mapped pages are
// handed back whenever the process's resident memory exceeds budget, so
// the file's size does not count against it. What the graph holds per
// object (its arrays, about 40 bytes an object, and the decode's 16) is
// the floor. Anything else (a pipe) is read whole.
func ReadGCDumpFile(f *os.File, budget int64) (*Graph, error) {
	st, err := f.Stat()
	if err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		s := newStore(true, "")
		if data, err := s.mapFile(f, st.Size()); err == nil {
			defer s.closeAll()
			s.Watch(budget)
			return readGCDump(data)
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return readGCDump(data)
}

func readGCDump(data []byte) (*Graph, error) {
	r := &gcdumpReader{b: data}
	if magic := r.str(); magic != "!FastSerialization.1" || r.err != nil {
		return nil, fmt.Errorf("%w: no FastSerialization header", ErrGCDump)
	}
	if name := r.typeHeader(); r.err == nil && name != "GCHeapDump" {
		return nil, fmt.Errorf("%w: the file holds a %q, not a GCHeapDump", ErrGCDump, name)
	}
	if name := r.typeHeader(); r.err == nil && name != "Graphs.MemoryGraph" {
		return nil, fmt.Errorf("%w: the heap dump's graph is a %q, not a Graphs.MemoryGraph", ErrGCDump, name)
	}
	r.i64() // total size: recomputed
	root := r.i32()
	ntypes := r.i32()
	if r.err != nil || ntypes < 0 || int(ntypes) > (len(data)-r.p)/12 { // a type takes 12 bytes at least
		r.fail("bad type count")
		return nil, r.err
	}
	names := make([]string, ntypes)
	mods := make([]string, ntypes)
	sizes := make([]int32, ntypes)
	for i := range names {
		names[i] = r.str()
		sizes[i] = r.i32()
		mods[i] = r.str()
	}
	nnodes := r.i32()
	if r.err != nil || nnodes < 0 || int(nnodes) > (len(data)-r.p)/4 || root < 0 || root >= nnodes {
		r.fail("bad node count or root")
		return nil, r.err
	}
	labels := make([]uint32, nnodes)
	for i := range labels {
		labels[i] = uint32(r.i32())
	}
	// A file cut in the node blob or the addresses after it still gives
	// the nodes it holds whole: a partial graph, marked cut (Missing).
	// Cut before, there is nothing to read.
	blobLen := r.i32()
	if r.err != nil || blobLen < 0 {
		r.fail("bad node data length")
		return nil, r.err
	}
	cut := int(blobLen) > len(data)-r.p
	blob := r.take(min(int(blobLen), len(data)-r.p))
	// The nodes' addresses follow (MemoryGraph's part); GCHeapDump's own
	// fields come after them, so a file ending here is cut.
	var addrs []uint64
	if n := r.i32(); r.err != nil {
		cut = true
	} else if n == nnodes {
		have := min(int(n), (len(data)-r.p)/8)
		cut = cut || have < int(n)
		addrs = make([]uint64, have)
		for i := range addrs {
			addrs[i] = uint64(r.i64())
		}
	}
	return gcdumpGraph(names, mods, sizes, labels, blob, addrs, uint32(root), cut)
}

// gcNode is one node decoded from the blob.
type gcNode struct {
	typ  int32
	size int32
	kids []int32 // absolute indices
}

// decodeHead decodes a node's type, size and child count (not its
// children, which start at *p): constant work, whatever the count.
func decodeHead(blob []byte, label uint32, sizes []int32, p *int) (n gcNode, count int32, ok bool) {
	*p = int(label)
	ts, ok := compressed(blob, p)
	if !ok || ts < 0 || int(ts>>1) >= len(sizes) {
		return gcNode{}, 0, false
	}
	n = gcNode{typ: ts >> 1, size: sizes[ts>>1]}
	if ts&1 != 0 {
		if n.size, ok = compressed(blob, p); !ok {
			return gcNode{}, 0, false
		}
	}
	c, ok := compressed(blob, p)
	if !ok || c < 0 || int(c) > len(blob)-*p {
		return gcNode{}, 0, false
	}
	return n, c, true
}

func decodeNode(blob []byte, label uint32, idx int, sizes []int32, kids []int32) (gcNode, bool) {
	var p int
	n, c, ok := decodeHead(blob, label, sizes, &p)
	if !ok {
		return gcNode{}, false
	}
	n.kids = kids[:0]
	for range c {
		d, ok := compressed(blob, &p)
		if !ok {
			return gcNode{}, false
		}
		n.kids = append(n.kids, int32(idx)+d)
	}
	return n, true
}

// pseudoKind maps a root pseudo-node's name to a root kind and name.
func pseudoKind(name string, parent RootKind) (RootKind, string) {
	switch {
	case strings.HasPrefix(name, "[static var "):
		return RootStatic, strings.TrimSuffix(strings.TrimPrefix(name, "[static var "), "]")
	case name == "[static vars]":
		return RootStatic, ""
	case name == "[thread static vars]":
		return RootThreadStatic, ""
	case name == "[local vars]":
		return RootStack, ""
	case name == "[strong Handles]":
		return RootHandle, ""
	case name == "[pinning Handles]":
		return RootPinnedHandle, ""
	case name == "[finalizer Handles]":
		return RootFinalizer, ""
	case name == "[Dependent Handles]":
		return RootDependent, ""
	case name == "[COM/WinRT Objects]" || strings.HasPrefix(name, "[CCW "):
		return RootRefCounted, ""
	case name == "[other roots]" || name == "[other Handles]":
		return RootOther, ""
	}
	return parent, ""
}

func gcdumpGraph(names, mods []string, sizes []int32, labels []uint32, blob []byte, addrs []uint64, root uint32, cut bool) (*Graph, error) {
	n := len(labels)
	var kids []int32
	// Nodes may share an encoding (PerfView writes every UNDEFINED node
	// as one childless encoding), so nothing but this check bounds the
	// references by the file's size: a hostile file of 100 KB whose
	// nodes all point at one encoding of 10,000 children would claim
	// 10^8 references (gigabytes, seconds). A child takes a byte at
	// least, and nodes written one after the other have disjoint
	// encodings (in a cut file, only the one the cut splits can claim
	// more than the bytes after its start), so honest counts sum to at
	// most the node data's length.
	var refs uint64
	for i := range labels {
		var p int
		if _, c, ok := decodeHead(blob, labels[i], sizes, &p); ok {
			if refs += uint64(c); refs > uint64(len(blob)) {
				return nil, fmt.Errorf("%w: its nodes claim more references (%d by node %d of %d) than its %d bytes of node data hold", ErrGCDump, refs, i, n, len(blob))
			}
		}
	}
	// In a cut file, the nodes whose encoding the cut reaches are lost:
	// not described, like PerfView's UNDEFINED nodes, and counted.
	var lost []bool
	if cut {
		lost = make([]bool, n)
		for i := range lost {
			_, ok := decodeNode(blob, labels[i], i, sizes, nil)
			lost[i] = !ok
		}
	}
	isLost := func(i int32) bool { return lost != nil && lost[i] }
	node := func(i int) (gcNode, error) {
		g, ok := decodeNode(blob, labels[i], i, sizes, kids)
		if !ok {
			return gcNode{}, fmt.Errorf("%w: node %d does not decode", ErrGCDump, i)
		}
		kids = g.kids
		for _, k := range g.kids {
			if k < 0 || int(k) >= n {
				return gcNode{}, fmt.Errorf("%w: node %d refers to node %d of %d", ErrGCDump, i, k, n)
			}
		}
		return g, nil
	}
	isPseudo := func(t int32) bool {
		s := names[t]
		// "[]c" is PerfView's spelling of a compiler-generated "<>c".
		return strings.HasPrefix(s, "[") && !strings.HasPrefix(s, "[]") && !strings.HasPrefix(s, "[RCW ")
	}
	// Walk the root's pseudo-nodes: their real children are the roots.
	const pseudo = ^uint32(0) - 1
	const undefined = ^uint32(0)
	newID := make([]uint32, n)
	type rootRef struct {
		obj  int32
		kind RootKind
		name string
	}
	var roots []rootRef
	var lostRoots uint64
	type item struct {
		v    int32
		kind RootKind
		name string
	}
	stack := []item{{int32(root), RootOther, ""}}
	newID[root] = pseudo
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if isLost(it.v) {
			continue
		}
		g, err := node(int(it.v))
		if err != nil {
			return nil, err
		}
		ks := slices.Clone(g.kids)
		for _, k := range ks {
			if newID[k] == pseudo {
				continue
			}
			if isLost(k) {
				// A root pseudo-node or a root object: either way,
				// roots named by nothing the file still holds.
				lostRoots++
				continue
			}
			// The child's type only: decoding its children here would
			// cost the roots' count times theirs.
			var p int
			kg, _, ok := decodeHead(blob, labels[k], sizes, &p)
			if !ok {
				return nil, fmt.Errorf("%w: node %d does not decode", ErrGCDump, k)
			}
			if isPseudo(kg.typ) {
				newID[k] = pseudo
				kind, name := pseudoKind(names[kg.typ], it.kind)
				if name == "" {
					name = it.name
				}
				stack = append(stack, item{k, kind, name})
				continue
			}
			roots = append(roots, rootRef{k, it.kind, it.name})
		}
	}
	// Real nodes, in file order; UNDEFINED ones (referenced, never
	// described) are dropped and counted.
	// PerfView splits big objects' types by size ("System.String (Bytes >
	// 10K)"): the same type, merged here.
	byName := map[string]uint32{}
	typeOf := make([]uint32, len(names))
	var typeNames, typeMods []string
	for i, s := range names {
		if j := strings.LastIndex(s, " (Bytes > "); j > 0 && strings.HasSuffix(s, ")") {
			s = s[:j]
		}
		t, ok := byName[s]
		if !ok {
			t = uint32(len(typeNames))
			byName[s] = t
			typeNames = append(typeNames, s)
			typeMods = append(typeMods, mods[i])
		}
		typeOf[i] = t
	}
	g := &Graph{TypeNames: typeNames, TypeModules: typeMods}
	g.Missing.FileCut = cut
	g.Missing.Roots = lostRoots
	// A node of address 0 stands for a null root (PerfView adds the
	// runtime's null stack slots as children of "[local vars]"); in a
	// file cut in the addresses, those past the cut are unknown.
	isNull := func(i int32) bool { return int(i) < len(addrs) && addrs[i] == 0 }
	m := uint32(0)
	for i := 0; i < n; i++ {
		if newID[i] == pseudo {
			continue
		}
		if isLost(int32(i)) {
			newID[i] = undefined
			g.Missing.CutNodes++
			continue
		}
		nd, err := node(i)
		if err != nil {
			return nil, err
		}
		if names[nd.typ] == "UNDEFINED" {
			newID[i] = undefined
			if !isNull(int32(i)) {
				g.Missing.DanglingObjects++
			}
			continue
		}
		newID[i] = m
		m++
		var a uint64
		if i < len(addrs) {
			a = addrs[i]
		}
		sz := max(nd.size, 0)
		g.Addr = append(g.Addr, a)
		g.Size = append(g.Size, uint64(sz))
		g.Type = append(g.Type, typeOf[nd.typ])
		g.Bytes += uint64(sz)
	}
	g.N = int(m)
	g.Off = make([]uint32, g.N+2)
	for i := 0; i < n; i++ {
		id := newID[i]
		if id == pseudo || id == undefined {
			continue
		}
		g.Off[id] = uint32(len(g.Dst))
		nd, _ := node(i)
		for _, k := range nd.kids {
			switch t := newID[k]; t {
			case pseudo:
			case undefined:
				if !isNull(k) {
					g.Missing.DanglingEdges++
				}
			default:
				g.Dst = append(g.Dst, t)
			}
		}
	}
	g.Off[g.N] = uint32(len(g.Dst))
	slices.SortStableFunc(roots, func(x, y rootRef) int { return int(x.kind) - int(y.kind) })
	g.rootOf = map[uint32]uint32{}
	for _, r := range roots {
		id := newID[r.obj]
		if id == undefined {
			if !isNull(r.obj) {
				g.Missing.Roots++
			}
			continue
		}
		if _, seen := g.rootOf[id]; !seen {
			g.rootOf[id] = uint32(len(g.Roots))
			g.Dst = append(g.Dst, id)
		}
		g.Roots = append(g.Roots, Root{Object: id, Kind: r.kind, Name: r.name})
	}
	g.Off[g.N+1] = uint32(len(g.Dst))
	g.indexAddrs()
	dst := vec[uint32]{s: g.Dst}
	g.attachUnrooted(&dst)
	g.Analyze()
	return g, nil
}
