package heapgraph

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// WriteGCDump writes g as a .gcdump file in the layout dotnet-gcdump
// 10.0.750501 writes (and `dotnet-gcdump report` and PerfView read): the
// FastSerialization header, the GCHeapDump and Graphs.MemoryGraph type
// headers, the graph (types, node offsets, the compressed node blob,
// node addresses), then GCHeapDump's remaining fields as dotnet-gcdump
// leaves them (no collection metadata; CreationTool "clrspy") and the
// serializer's trailer, whose three stream offsets are relative to the
// end of the file.
//
// Roots become the pseudo-nodes PerfView's readers expect under node 0,
// "[.NET Roots]": "[static vars]" > "[static var NAME]", "[local vars]",
// "[other roots]" > "[strong Handles]", "[pinning Handles]",
// "[finalizer Handles]", "[Dependent Handles]", "[COM/WinRT Objects]",
// "[other Handles]"; unrooted objects go under "[other roots]" >
// "[unrooted]".
func WriteGCDump(w io.Writer, g *Graph) error {
	if g.N > math.MaxInt32-1024 {
		return fmt.Errorf("%d objects: more than a .gcdump's 32-bit node indices hold", g.N)
	}
	// Types: 0 is PerfView's "UNDEFINED"; the snapshot's types; then
	// the pseudo-nodes' types.
	var names []string
	names = append(names, "UNDEFINED")
	names = append(names, g.TypeNames...)
	pseudoType := func(name string) int32 {
		names = append(names, name)
		return int32(len(names) - 1)
	}

	// Pseudo-nodes first (node 0 is the root), then the objects.
	type pnode struct {
		typ  int32
		kids []int32
	}
	var pseudo []pnode
	add := func(name string) int32 {
		pseudo = append(pseudo, pnode{typ: pseudoType(name)})
		return int32(len(pseudo) - 1)
	}
	root := add("[.NET Roots]")
	group := map[string]int32{}
	var other int32 = -1
	groupOf := func(r Root) int32 {
		key, parent := "", root
		switch r.Kind {
		case RootStatic:
			key = "[static vars]"
		case RootThreadStatic:
			key = "[thread static vars]"
		case RootStack:
			key = "[local vars]"
		default:
			if other < 0 {
				other = add("[other roots]")
				pseudo[root].kids = append(pseudo[root].kids, other)
			}
			parent = other
			key = map[RootKind]string{RootHandle: "[strong Handles]", RootPinnedHandle: "[pinning Handles]",
				RootFinalizer: "[finalizer Handles]", RootDependent: "[Dependent Handles]", RootRefCounted: "[COM/WinRT Objects]",
				RootUnrooted: "[unrooted]"}[r.Kind]
			if key == "" {
				key = "[other Handles]"
			}
		}
		p, ok := group[key]
		if !ok {
			p = add(key)
			group[key] = p
			pseudo[parent].kids = append(pseudo[parent].kids, p)
		}
		return p
	}
	statics := map[string]int32{}
	// Object ids are shifted by the pseudo-node count, known only at
	// the end: kids of pseudo-nodes are kept as -(object id)-1 first.
	for _, r := range g.Roots {
		p := groupOf(r)
		if r.Kind == RootStatic || r.Kind == RootThreadStatic {
			s, ok := statics[r.Name]
			if !ok {
				s = add("[static var " + r.Name + "]")
				statics[r.Name] = s
				pseudo[p].kids = append(pseudo[p].kids, s)
			}
			p = s
		}
		pseudo[p].kids = append(pseudo[p].kids, -int32(r.Object)-1)
	}
	np := int32(len(pseudo))
	total := int(np) + g.N

	// A type's size is its first object's (PerfView's convention); an
	// object of another size gives its own.
	typeSize := make([]int32, len(g.TypeNames)+1)
	seenType := make([]bool, len(g.TypeNames)+1)
	for v := 0; v < g.N; v++ {
		if t := g.Type[v] + 1; !seenType[t] {
			seenType[t] = true
			typeSize[t] = int32(min(g.Size[v], math.MaxInt32))
		}
	}
	var blob []byte
	labels := make([]uint32, 0, total)
	put := func(v int32) {
		switch {
		case v<<25>>25 == v:
		case v<<18>>18 == v:
			blob = append(blob, byte(v>>7)|0x80)
		case v<<11>>11 == v:
			blob = append(blob, byte(v>>14)|0x80, byte(v>>7)|0x80)
		case v<<4>>4 == v:
			blob = append(blob, byte(v>>21)|0x80, byte(v>>14)|0x80, byte(v>>7)|0x80)
		default:
			blob = append(blob, byte(v>>28)|0x80, byte(v>>21)|0x80, byte(v>>14)|0x80, byte(v>>7)|0x80)
		}
		blob = append(blob, byte(v&0x7f))
	}
	for i, p := range pseudo {
		labels = append(labels, uint32(len(blob)))
		put(p.typ<<1 | 1)
		put(0)
		put(int32(len(p.kids)))
		for _, k := range p.kids {
			if k < 0 {
				k = -k - 1 + np
			}
			put(k - int32(i))
		}
	}
	for v := 0; v < g.N; v++ {
		idx := np + int32(v)
		labels = append(labels, uint32(len(blob)))
		size := g.Size[v]
		if size > math.MaxInt32 {
			size = math.MaxInt32
		}
		t := int32(g.Type[v] + 1)
		if int32(size) == typeSize[t] {
			put(t << 1)
		} else {
			put(t<<1 | 1)
			put(int32(size))
		}
		refs := g.Refs(uint32(v))
		put(int32(len(refs)))
		for _, k := range refs {
			put(int32(k) + np - idx)
		}
	}

	bw := bufio.NewWriter(w)
	var n int64
	var scratch [8]byte
	wr := func(b []byte) {
		m, _ := bw.Write(b)
		n += int64(m)
	}
	i32 := func(v int32) {
		binary.LittleEndian.PutUint32(scratch[:4], uint32(v))
		wr(scratch[:4])
	}
	i64 := func(v int64) {
		binary.LittleEndian.PutUint64(scratch[:], uint64(v))
		wr(scratch[:])
	}
	str := func(s string) {
		i32(int32(len(s)))
		wr([]byte(s))
	}
	str("!FastSerialization.1")
	typeHeader := func(version, minReader int32, name string) {
		wr([]byte{4, 4, 1})
		i32(version)
		i32(minReader)
		str(name)
		wr([]byte{6})
	}
	typeHeader(10, 8, "GCHeapDump")
	typeHeader(1, 0, "Graphs.MemoryGraph")
	i64(int64(g.Bytes))
	i32(root)
	i32(int32(len(names)))
	for i, name := range names {
		str(name)
		if i < len(typeSize) {
			i32(typeSize[i])
		} else {
			i32(0)
		}
		// PerfView's readers list the types that have a module and
		// take the others (null module) for pseudo-nodes.
		if i > 0 && i <= len(g.TypeNames) {
			mod := gcdumpModule
			if i-1 < len(g.TypeModules) && g.TypeModules[i-1] != "" {
				mod = g.TypeModules[i-1]
			}
			str(mod)
		} else {
			i32(-1)
		}
	}
	i32(int32(total))
	for _, l := range labels {
		i32(int32(l))
	}
	i32(int32(len(blob)))
	wr(blob)
	i32(int32(total))
	for range np {
		i64(0)
	}
	for _, a := range g.Addr[:g.N] {
		i64(int64(a))
	}
	// MemoryGraph's tagged Is64Bit (true) and end; GCHeapDump's other
	// fields as dotnet-gcdump leaves them (no heap info, count and size
	// multipliers 1.0, no log, time, machine or process), its tagged
	// CreationTool, its end; the serializer's trailer.
	tool := "clrspy"
	wr([]byte{8, 1, 6, 1, 0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f, 1, 1})
	i32(-1)
	i64(0)
	i32(-1)
	i32(-1)
	wr(make([]byte, 24))
	wr([]byte{0x0c, 0, 0, 0, 0, 1})
	tagged := n // the tagged CreationTool: the forward reference's target
	wr([]byte{0x0d})
	str(tool)
	wr([]byte{6, 6})
	// The trailer: the forward-reference table (one entry), the table's
	// offset, and the offset of that offset.
	table := n
	i32(1)
	i32(int32(tagged))
	i32(int32(table))
	i32(int32(table + 8))
	return bw.Flush()
}

// gcdumpModule is a type's module in a written .gcdump when the
// snapshot's events did not name it (PerfView's readers list only types
// with a module).
const gcdumpModule = "unknown module"
