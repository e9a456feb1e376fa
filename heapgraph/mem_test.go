//go:build linux

package heapgraph

import (
	"compress/gzip"
	"errors"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// loadWith builds a fixture's graph with the builder set up by setup.
func loadWith(tb testing.TB, name string, setup func(*Builder)) *Graph {
	tb.Helper()
	r := tracetest.OpenFile(tb, tracetest.Path(tb, name), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	b := NewBuilder(r.Header(), nil)
	setup(b)
	if err := tracetest.ReadAll(tb, r, b.Event); err != nil && !errors.Is(err, nettrace.ErrTruncated) {
		tb.Fatal(err)
	}
	g, err := b.Graph()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// TestGraphSpill builds the graph workload's snapshot four ways: in the
// Go heap, in anonymous mappings (MapArrays(false)), in anonymous
// mappings moved to files when the dump has been read because the system
// has too little memory, and spilled to files from the start, with a
// one-page step, so that resident pages go back to the page cache
// many times in every phase and are read back from the files. Every array
// and every analysis must be the same; the spill files must not be
// visible in their directory (unlinked when made) and must be gone when
// the graph is freed.
func TestGraphSpill(t *testing.T) {
	old := spillStep
	spillStep = 4096
	defer func() { spillStep = old }()

	want := load(t, "heap-graph.nettrace.gz")
	mapped := loadWith(t, "heap-graph.nettrace.gz", func(b *Builder) { b.MapArrays(false, "", 0) })
	dir := t.TempDir()
	spilled := loadWith(t, "heap-graph.nettrace.gz", func(b *Builder) { b.MapArrays(true, dir, 0) })
	// Mapped, then moved to files once read: the system "has" 1 KiB.
	avail := memAvailable
	memAvailable = func() int64 { return 1 << 10 }
	auto := loadWith(t, "heap-graph.nettrace.gz", func(b *Builder) { b.MapArrays(false, dir, 0) })
	memAvailable = avail
	// In memory, each long-lived array parked in a file once built (a
	// large graph's default: Graph.park).
	pm := parkMinObjects
	parkMinObjects = 0
	parked := loadWith(t, "heap-graph.nettrace.gz", func(b *Builder) { b.MapArrays(false, dir, 0) })
	parkMinObjects = pm
	if !parked.park || parked.mem.spill {
		t.Errorf("parked: park %v, spill %v; want parked arrays in a store that does not spill", parked.park, parked.mem.spill)
	}
	if want.N < 4000 {
		t.Fatalf("fixture has %d objects, want the workload's 4000 and more", want.N)
	}
	for name, g := range map[string]*Graph{"spilled": spilled, "auto": auto, "parked": parked} {
		files := 0
		for _, r := range g.mem.regs {
			if r.f != nil {
				files++
			}
		}
		// Addr, Size, Type, Off, Dst, Idom, Retained, order (and
		// byAddr when the ids are not in address order).
		if files < 8 {
			t.Errorf("%s: %d spilled regions, want the graph's 8 arrays or more", name, files)
		}
	}
	if mapped.mem.spill {
		t.Error("mapped: spilled with the system's memory available")
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("spill directory holds %d entries (%v), want none (files unlinked when made)", len(ents), err)
	}
	for name, g := range map[string]*Graph{"mapped": mapped, "spilled": spilled, "auto": auto, "parked": parked} {
		if g.N != want.N || g.Bytes != want.Bytes || g.Missing != want.Missing {
			t.Errorf("%s: %d objects %d bytes %+v, want %d %d %+v", name, g.N, g.Bytes, g.Missing, want.N, want.Bytes, want.Missing)
		}
		for field, pair := range map[string][2]any{
			"Addr": {g.Addr, want.Addr}, "Size": {g.Size, want.Size}, "Type": {g.Type, want.Type},
			"Off": {g.Off, want.Off}, "Dst": {g.Dst, want.Dst}, "Idom": {g.Idom, want.Idom},
			"Retained": {g.Retained, want.Retained}, "order": {g.order, want.order}, "Roots": {g.Roots, want.Roots},
		} {
			if !reflect.DeepEqual(pair[0], pair[1]) {
				t.Errorf("%s: %s differs from the Go heap's", name, field)
			}
		}
		if !reflect.DeepEqual(g.Types(), want.Types()) {
			t.Errorf("%s: types differ", name)
		}
		m, err := g.Matcher("GraphLeaf")
		if err != nil {
			t.Fatal(err)
		}
		wm, _ := want.Matcher("GraphLeaf")
		if !reflect.DeepEqual(g.Why(m), want.Why(wm)) {
			t.Errorf("%s: --why GraphLeaf differs", name)
		}
		if !reflect.DeepEqual(g.Tree(3, 5), want.Tree(3, 5)) {
			t.Errorf("%s: tree differs", name)
		}
		if id, ok := g.Find(want.Addr[want.N/2]); !ok || id != uint32(want.N/2) && want.Addr[id] != want.Addr[want.N/2] {
			t.Errorf("%s: Find of object %d's address: %d %v", name, want.N/2, id, ok)
		}
	}
	spilled.Free()
	mapped.Free()
	auto.Free()
	parked.Free()
	if spilled.Addr != nil || spilled.mem != nil {
		t.Error("Free left the arrays")
	}
}

// BenchmarkAnalyze times the dominator tree (semi-NCA, retained bytes) of
// a graph shaped like the graph workload's: one array of 500,000 items,
// each with a leaf, plus a reference from every 16th item to a random
// other item (so that dominators are not just the DFS tree), with the
// arrays mapped as clrspy snapshot maps them. Reported: ms per million
// objects.
func BenchmarkAnalyze(b *testing.B) {
	const items = 500000
	for b.Loop() {
		b.StopTimer()
		g := benchGraph(items)
		b.StartTimer()
		g.Analyze()
		b.StopTimer()
		g.Free()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/(2*items+1)*1e6, "ms/Mobjects")
}

func benchGraph(items int) *Graph {
	st := newStore(false, "")
	n := 2*items + 1 // the array, then item i at 1+2i, its leaf at 2+2i
	g := &Graph{N: n, mem: st}
	g.Size = makeArr[uint64](st, n)
	g.Off = makeArr[uint32](st, n+2)
	dst := newVec[uint32](st, 3*items+2)
	g.Off[0] = 0
	for i := range items {
		dst.push(uint32(1 + 2*i))
	}
	rnd := uint32(1)
	for i := range items {
		g.Off[1+2*i] = uint32(len(dst.s))
		dst.push(uint32(2 + 2*i))
		if i%16 == 0 {
			rnd = rnd*1664525 + 1013904223
			dst.push(1 + 2*(rnd%uint32(items)))
		}
		g.Off[2+2*i] = uint32(len(dst.s))
		g.Size[1+2*i], g.Size[2+2*i] = 32, 32
	}
	g.Size[0] = 8 * uint64(items)
	g.Off[n] = uint32(len(dst.s))
	dst.push(0) // the virtual root's one reference: the array
	g.Off[n+1] = uint32(len(dst.s))
	g.Dst = dst.s
	return g
}

// TestAddrRuns: nodes described in increasing runs (heap regions walked
// in another order than their addresses) are found through the runs; runs
// that interleave, or an address twice, fall back to the sorted index.
func TestAddrRuns(t *testing.T) {
	addr := []uint64{0x9000, 0x9010, 0x5000, 0x5040, 0x3000, 0x3100, 0x1000, 0x1008}
	g := &Graph{N: len(addr), Addr: addr, runs: addrRuns(addr)}
	if len(g.runs) != 4 || g.runs[0].first != 0x1000 || g.runs[3].first != 0x9000 {
		t.Fatalf("runs %+v, want 4 by address from 0x1000 to 0x9000", g.runs)
	}
	for id, a := range addr {
		if got, ok := g.Find(a); !ok || got != uint32(id) {
			t.Errorf("Find(%#x) = %d %v, want %d", a, got, ok, id)
		}
	}
	for _, a := range []uint64{0, 0x1004, 0x5020, 0x3200, 0x9001, 0x9020, 0xffff} {
		if got, ok := g.Find(a); ok {
			t.Errorf("Find(%#x) = %d, want none", a, got)
		}
	}
	// A run passing from one region to another with a gap where a
	// region walked later lies is cut there.
	gap := []uint64{0x1000000, 0x1000020, 0x3000000, 0x2000000, 0x2000040}
	g = &Graph{N: len(gap), Addr: gap, runs: addrRuns(gap)}
	if len(g.runs) != 3 {
		t.Errorf("runs of %x: %+v, want 3", gap, g.runs)
	}
	for id, a := range gap {
		if got, ok := g.Find(a); !ok || got != uint32(id) {
			t.Errorf("Find(%#x) = %d %v, want %d", a, got, ok, id)
		}
	}
	for _, bad := range [][]uint64{{0x1000, 0x1800, 0x1400, 0x2000}, {0x1000, 0x2000, 0x2000}, {0x1000000, 0x1000100, 0x1000050, 0x1000200}} {
		if r := addrRuns(bad); r != nil {
			t.Errorf("addrRuns(%x) = %+v, want nil (overlap)", bad, r)
		}
	}
}
