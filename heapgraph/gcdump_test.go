package heapgraph

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"testing"

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
	// Cut anywhere, the file is one error, never a panic.
	for _, n := range []int{0, 10, 30, 100, len(data) / 2, len(data) - 5000} {
		if _, err := ReadGCDump(bytes.NewReader(data[:n])); !errors.Is(err, ErrGCDump) {
			t.Errorf("cut at %d: %v, want ErrGCDump", n, err)
		}
	}
}

func FuzzGCDump(f *testing.F) {
	data, err := os.ReadFile(tracetest.Path(f, dotnetGcdump))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/3])
	f.Fuzz(func(t *testing.T, b []byte) {
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
