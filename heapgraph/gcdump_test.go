package heapgraph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// dotnetGcdump is dotnet-gcdump 10.0.750501's own file of the graph
// workload with items=3 (testdata/traces/README.md): `dotnet-gcdump
// report` on it says 90,008 GC heap bytes.
const dotnetGcdump = "heap-graph-dotnet-gcdump.gcdump"

// TestReadGCDump reads dotnet-gcdump's file: the workload's types have
// the workload's counts, the total is dotnet-gcdump's, the holder retains
// exactly what it holds, and the three roots come out of the file's root
// pseudo-nodes with their kinds.
func TestReadGCDump(t *testing.T) {
	data, err := os.ReadFile(tracetest.Path(t, dotnetGcdump))
	if err != nil {
		t.Fatal(err)
	}
	g, err := ReadGCDump(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CheckValid(); err != nil {
		t.Error(err)
	}
	if g.Bytes != 90008 || !g.Complete() {
		t.Errorf("%d bytes (dotnet-gcdump report: 90,008), missing %+v", g.Bytes, g.Missing)
	}
	ts := typeMap(g)
	for name, want := range map[string]uint64{"Workload.GraphItem": 3, "Workload.GraphLeaf": 3, "Workload.GraphHolder": 1,
		"Workload.GraphItem[]": 1, "Workload.GraphHandleOnly": 1, "Workload.GraphStackOnly": 1} {
		if got := ts[name].Count; got != want {
			t.Errorf("%s: %d objects, the workload made %d", name, got, want)
		}
	}
	// GraphHolder 32 + GraphItem[3] 48 + 3 × (GraphItem 32 + GraphLeaf 32).
	if got := ts["Workload.GraphHolder"].Retained; got != 272 {
		t.Errorf("GraphHolder retains %d bytes, want 272", got)
	}
	for typ, kind := range map[string]RootKind{"GraphLeaf": RootStatic, "GraphHandleOnly": RootHandle, "GraphStackOnly": RootStack} {
		m, err := g.Matcher(typ)
		if err != nil {
			t.Fatal(err)
		}
		ps := g.Why(m)
		if len(ps) != 1 || ps[0].RootKind != kind {
			t.Errorf("%s: paths %+v, want one from a %s root", typ, ps, kind)
		}
	}
	if m, _ := g.Matcher("GraphLeaf"); g.Why(m)[0].Root != "Workload.GraphHolder.Holder" {
		t.Errorf("GraphLeaf's root %q, want PerfView's name of the static, Workload.GraphHolder.Holder", g.Why(m)[0].Root)
	}
	// Hostile bytes anywhere (the fuzzer's work, deterministic here so
	// every run covers them): an error or a consistent graph, no panic.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		b := bytes.Clone(data)
		for range 1 + rng.IntN(8) {
			b[rng.IntN(len(b))] = byte(rng.Uint32())
		}
		if h, err := ReadGCDump(bytes.NewReader(b)); err == nil {
			h.Types()
			h.Why(func(uint32) bool { return true })
		} else if !errors.Is(err, ErrGCDump) {
			t.Fatalf("error not wrapping ErrGCDump: %v", err)
		}
	}
	// Cut before its nodes, the file is one error, never a panic
	// (TestReadGCDumpCut: cut later, a partial graph).
	for _, n := range []int{0, 10, 30, 100, len(data) / 2} {
		if _, err := ReadGCDump(bytes.NewReader(data[:n])); !errors.Is(err, ErrGCDump) {
			t.Errorf("cut at %d: %v, want ErrGCDump", n, err)
		}
	}
}

// FuzzGCDump reads hostile .gcdump files: a real or hand-made file
// (base) with the fuzzer's bytes written over it at `at` and the result
// cut at `cut` (0: not cut), or, for base past them, the fuzzer's bytes
// alone. The fuzzed bytes are a patch rather than the whole file: after
// each input that finds new code, go test minimizes it (for 60 s unless
// -fuzzminimizetime says otherwise), byte by byte, and minimizing a
// 35 KB file took both workers the whole run (about 10 executions in
// 30 s); a patch of a few bytes is minimized in a moment.
func FuzzGCDump(f *testing.F) {
	bases := gcdumpBases(f)
	real := uint32(len(bases[0]))
	f.Add(uint8(0), uint32(0), []byte{}, uint32(0))
	f.Add(uint8(0), uint32(0), []byte{}, real/3)
	f.Add(uint8(0), uint32(0), []byte{}, real-6200) // cut in the node data
	f.Add(uint8(0), uint32(0), []byte{}, real-200)  // cut in the addresses
	for i := 1; i < len(bases); i++ {
		f.Add(uint8(i), uint32(0), []byte{}, uint32(0))
	}
	// The fuzzer's bytes alone: a small file (a large seed here would be
	// as slow to minimize as the real file).
	f.Add(uint8(len(bases)), uint32(0), undefinedGCDump(), uint32(0))
	f.Fuzz(func(t *testing.T, base uint8, at uint32, patch []byte, cut uint32) {
		var b []byte
		if i := int(base) % (len(bases) + 1); i < len(bases) {
			if len(patch) > maxPatch {
				return
			}
			src := bases[i]
			o := int(at % uint32(len(src)+1))
			b = append(append(append(b, src[:o]...), patch...), src[min(o+len(patch), len(src)):]...)
		} else {
			if len(patch) > maxFile {
				return
			}
			b = patch
		}
		if cut > 0 && int(cut) < len(b) {
			b = b[:cut]
		}
		g, err := ReadGCDump(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrGCDump) {
				t.Fatalf("error not wrapping ErrGCDump: %v", err)
			}
			return
		}
		if err := g.CheckValid(); err != nil {
			t.Fatal(err)
		}
		if len(g.Addr) != g.N || len(g.Off) != g.N+2 || int(g.Off[g.N+1]) != len(g.Dst) || len(g.Retained) != g.N+1 {
			t.Fatalf("inconsistent graph: %d nodes, %d offsets, %d refs", g.N, len(g.Off), len(g.Dst))
		}
		// References are bounded by the file (a child takes a byte).
		if len(g.Dst) > len(b)+g.N {
			t.Fatalf("%d references from a %d-byte file", len(g.Dst), len(b))
		}
		var sum uint64
		for _, ts := range g.Types() {
			sum += ts.Bytes
		}
		if sum != g.Bytes || g.Retained[g.N] != g.Bytes {
			t.Fatalf("types sum to %d, root retains %d, graph %d", sum, g.Retained[g.N], g.Bytes)
		}
		g.Why(func(uint32) bool { return true })
	})
}

// Fuzzed bytes longer than these are not read: go test minimizes an
// input that finds new code by removing each run of its bytes in turn
// (quadratic in its length), and a patch of a few hundred bytes of the
// real file (a millisecond an execution) kept workers minimizing for the
// 60 s default, not fuzzing. A field is a few bytes; the hand-made files
// are about 300.
const maxPatch, maxFile = 64, 512

// gcdumpBases are FuzzGCDump's files: dotnet-gcdump's, clrspy's writing
// of the same graph, a hand-made one with a reference to an object never
// described, and (regressions, TestReadGCDumpHostile) nodes sharing one
// encoding with children and roots all naming one object with children.
func gcdumpBases(tb testing.TB) [][]byte {
	data, err := os.ReadFile(tracetest.Path(tb, dotnetGcdump))
	if err != nil {
		tb.Fatal(err)
	}
	g, err := ReadGCDump(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	var own bytes.Buffer
	if err := WriteGCDump(&own, g); err != nil {
		tb.Fatal(err)
	}
	return [][]byte{data, own.Bytes(), undefinedGCDump(), sharedGCDump(20, 40), fanGCDump(20, 20)}
}

// sharedGCDump is a hostile file: node 0 the root, nodes 1..n-2 all
// pointing at one encoding of k children (each the next node), node n-1
// childless. Read as written it would be (n-2)·k references from a file
// of about 4n+k bytes: 1.7 GB and 2.3 s for a 104 KB one.
func sharedGCDump(n, k int) []byte {
	blob := []byte{0, 0} // the root: type 0, no children
	shared := len(blob)
	blob = compressedInt(append(blob, 2), int32(k)) // type 1
	for range k {
		blob = append(blob, 1)
	}
	last := len(blob)
	blob = append(blob, 2, 0)
	labels := make([]int32, n)
	for i := 1; i < n; i++ {
		labels[i] = int32(shared)
	}
	labels[n-1] = int32(last)
	return rawGCDump([]string{"[.NET Roots]", "A"}, []int32{0, 24}, labels, blob, nil)
}

// fanGCDump is a file whose root names one object m times, that object
// having k children: walking the roots by decoding each root object whole
// took m·k steps.
func fanGCDump(m, k int) []byte {
	blob := compressedInt([]byte{0}, int32(m)) // the root: type 0
	for range m {
		blob = append(blob, 1) // node 1
	}
	one := len(blob)
	blob = compressedInt(append(blob, 2), int32(k)) // node 1: type 1
	for range k {
		blob = append(blob, 1) // node 2
	}
	two := len(blob)
	blob = append(blob, 2, 0) // node 2: type 1, no children
	return rawGCDump([]string{"[.NET Roots]", "A"}, []int32{0, 24}, []int32{0, int32(one), int32(two)}, blob, []uint64{0, 0x1000, 0x2000})
}

// TestReadGCDumpHostile: a hostile file cannot make the reader allocate
// or work out of proportion to its size. Nodes sharing one encoding with
// children claim more references than the node data holds: one error.
// Roots naming one object with many children: read in linear time.
func TestReadGCDumpHostile(t *testing.T) {
	b := sharedGCDump(8000, 8000)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	g, err := ReadGCDump(bytes.NewReader(b))
	runtime.ReadMemStats(&m1)
	if !errors.Is(err, ErrGCDump) || !strings.Contains(err.Error(), "claim more references") {
		t.Errorf("shared encoding: %v, want ErrGCDump about the references", err)
	}
	if g != nil {
		t.Errorf("shared encoding: a graph of %d references", len(g.Dst))
	}
	// Read as written: 64 M references, 1.7 GB. The bound: a few times
	// the 104 KB file.
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 10*uint64(len(b)) {
		t.Errorf("a %d-byte file made the reader allocate %d bytes", len(b), a)
	}
	// 40,000 roots × 40,000 children: 1.6·10^9 steps walked the old way
	// (seconds); linear, a few milliseconds. The bound leaves a loaded
	// machine hundreds of times the linear cost.
	b = fanGCDump(40000, 40000)
	start := time.Now()
	g, err = ReadGCDump(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a %d-byte file took %v to read", len(b), d)
	}
	if g.N != 2 || len(g.Roots) != 40000 || g.Bytes != 48 || g.Retained[g.N] != 48 || !g.Complete() {
		t.Errorf("%d objects, %d roots, %d bytes, missing %+v; want 2 objects of 24 bytes under 40,000 roots", g.N, len(g.Roots), g.Bytes, g.Missing)
	}
}

// TestWriteGCDump writes the real snapshot as a .gcdump and reads it
// back: the same objects, bytes, types with the same counts and retained
// bytes, and the workload's three roots with their kinds. (`dotnet-gcdump
// report` 10.0.750501 reads such a file with the same per-type counts:
// checked by hand, docs/PERFORMANCE.md.)
func TestWriteGCDump(t *testing.T) {
	g := load(t, "heap-graph.nettrace.gz")
	var buf bytes.Buffer
	if err := WriteGCDump(&buf, g); err != nil {
		t.Fatal(err)
	}
	h, err := ReadGCDump(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if h.N != g.N || h.Bytes != g.Bytes || len(h.Dst) != len(g.Dst) {
		t.Errorf("read back %d objects, %d bytes, %d references; wrote %d, %d, %d", h.N, h.Bytes, len(h.Dst), g.N, g.Bytes, len(g.Dst))
	}
	a, b := typeMap(g), typeMap(h)
	for name, ts := range a {
		if b[name] != ts {
			t.Errorf("%s: wrote %+v, read %+v", name, ts, b[name])
		}
	}
	for typ, kind := range map[string]RootKind{"GraphLeaf": RootStatic, "GraphHandleOnly": RootHandle, "GraphStackOnly": RootStack} {
		m, _ := h.Matcher(typ)
		if ps := h.Why(m); len(ps) != 1 || ps[0].RootKind != kind {
			t.Errorf("%s: paths %+v, want one from a %s root", typ, ps, kind)
		}
	}
	if m, _ := h.Matcher("GraphLeaf"); h.Why(m)[0].Root != "Holder" {
		t.Errorf("GraphLeaf's root %q, want Holder", h.Why(m)[0].Root)
	}
}

// tinyNode is one node of a hand-made .gcdump: its type index, its size
// when not the type's, and its children's indices.
type tinyNode struct {
	typ, size int32
	kids      []int32
}

// tinyGCDump writes a .gcdump by hand, field by field as ReadGCDump's
// comment describes the layout (types: name and size; node 0 the root).
func tinyGCDump(types []string, sizes []int32, nodes []tinyNode, addrs []uint64) []byte {
	var blob []byte
	labels := make([]int32, len(nodes))
	for i, n := range nodes {
		labels[i] = int32(len(blob))
		if n.size != 0 {
			blob = compressedInt(blob, n.typ<<1|1)
			blob = compressedInt(blob, n.size)
		} else {
			blob = compressedInt(blob, n.typ<<1)
		}
		blob = compressedInt(blob, int32(len(n.kids)))
		for _, k := range n.kids {
			blob = compressedInt(blob, k-int32(i))
		}
	}
	return rawGCDump(types, sizes, labels, blob, addrs)
}

// compressedInt appends v as the node data's compressed integer: 7-bit
// groups, most significant first, the first one signed, the high bit on
// all but the last.
func compressedInt(out []byte, v int32) []byte {
	n := 1
	for ; n < 5; n++ {
		if lo, hi := int64(-1)<<(7*n-1), int64(1)<<(7*n-1); int64(v) >= lo && int64(v) < hi {
			break
		}
	}
	for k := n - 1; k >= 0; k-- {
		c := byte(v>>(7*k)) & 0x7f
		if k > 0 {
			c |= 0x80
		}
		out = append(out, c)
	}
	return out
}

// rawGCDump writes a .gcdump of the given node data and each node's
// offset into it (labels; node 0 the root).
func rawGCDump(types []string, sizes []int32, labels []int32, blob []byte, addrs []uint64) []byte {
	var b []byte
	i32 := func(v int32) { b = binary.LittleEndian.AppendUint32(b, uint32(v)) }
	str := func(s string) { i32(int32(len(s))); b = append(b, s...) }
	header := func(name string) { b = append(b, 4, 4, 1); i32(1); i32(0); str(name); b = append(b, 6) }
	str("!FastSerialization.1")
	header("GCHeapDump")
	header("Graphs.MemoryGraph")
	b = binary.LittleEndian.AppendUint64(b, 0)
	i32(0) // root: node 0
	i32(int32(len(types)))
	for i, t := range types {
		str(t)
		i32(sizes[i])
		str("")
	}
	i32(int32(len(labels)))
	for _, l := range labels {
		i32(l)
	}
	i32(int32(len(blob)))
	b = append(b, blob...)
	i32(int32(len(addrs)))
	for _, a := range addrs {
		b = binary.LittleEndian.AppendUint64(b, a)
	}
	return append(b, make([]byte, 16)...) // GCHeapDump's fields after the graph (not read)
}

// undefinedGCDump is a static root A (24 bytes) referring to B (a 300-byte
// object) and to an object never described (PerfView's UNDEFINED node),
// to which B refers too.
func undefinedGCDump() []byte {
	return tinyGCDump([]string{"UNDEFINED", "[.NET Roots]", "[static vars]", "A", "B"}, []int32{0, 0, 0, 24, 32},
		[]tinyNode{{typ: 1, kids: []int32{1}}, {typ: 2, kids: []int32{2}}, {typ: 3, kids: []int32{3, 4}}, {typ: 0}, {typ: 4, size: 300, kids: []int32{3}}},
		[]uint64{0, 0, 0x1000, 0x2000, 0x3000})
}

// TestReadGCDumpMissing: references to an object the file never
// describes (UNDEFINED) give the graph of what it does describe, marked
// incomplete with the references and objects missing counted.
func TestReadGCDumpMissing(t *testing.T) {
	g, err := ReadGCDump(bytes.NewReader(undefinedGCDump()))
	if err != nil {
		t.Fatal(err)
	}
	if g.N != 2 || g.Bytes != 324 || g.Complete() || g.Missing.DanglingEdges != 2 || g.Missing.DanglingObjects != 1 {
		t.Fatalf("%d objects, %d bytes, missing %+v; want 2, 324, 2 references to 1 object never described", g.N, g.Bytes, g.Missing)
	}
	ts := typeMap(g)
	if ts["A"].Retained != 324 || ts["B"].Count != 1 || ts["B"].Bytes != 300 {
		t.Errorf("types %+v", ts)
	}
	if len(g.Roots) != 1 || g.Roots[0].Kind != RootStatic {
		t.Errorf("roots %+v, want A from a static", g.Roots)
	}
}

// TestReadGCDumpCut: a .gcdump cut anywhere is one error when the cut
// leaves no node to read (in the header, types or node offsets), and
// otherwise a partial graph marked cut: the nodes the file still holds
// whole, the lost ones counted, consistent sums.
func TestReadGCDumpCut(t *testing.T) {
	data, err := os.ReadFile(tracetest.Path(t, dotnetGcdump))
	if err != nil {
		t.Fatal(err)
	}
	full, err := ReadGCDump(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var inNodes, inAddrs int
	for n := 0; n < len(data)-100; n += 97 {
		g, err := ReadGCDump(bytes.NewReader(data[:n]))
		if err != nil {
			if !errors.Is(err, ErrGCDump) {
				t.Fatalf("cut at %d: %v, not wrapping ErrGCDump", n, err)
			}
			continue
		}
		if g.Complete() || !g.Missing.FileCut || g.N > full.N {
			t.Fatalf("cut at %d: %d objects, complete %v, missing %+v", n, g.N, g.Complete(), g.Missing)
		}
		var sum uint64
		for _, ts := range g.Types() {
			sum += ts.Bytes
		}
		if sum != g.Bytes || g.Retained[g.N] != g.Bytes {
			t.Fatalf("cut at %d: types sum to %d, the root retains %d, the graph has %d", n, sum, g.Retained[g.N], g.Bytes)
		}
		if g.Missing.CutNodes > 0 {
			inNodes++
		} else {
			inAddrs++
		}
	}
	// The node data and the addresses after it are most of a large
	// heap's file (here, with a few hundred objects and long type names,
	// their last sixth).
	if inNodes < 5 || inAddrs < 5 {
		t.Errorf("%d cuts gave partial graphs missing nodes, %d missing addresses; want 5 or more of each", inNodes, inAddrs)
	}
}
