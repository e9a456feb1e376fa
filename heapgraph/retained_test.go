package heapgraph

import (
	"math/rand/v2"
	"testing"
	"time"
)

// craft builds a graph from nodes (type, size), references and rooted
// node ids (statics).
func craft(typeNames []string, nodes [][2]uint64, refs map[uint32][]uint32, roots []uint32) *Graph {
	n := len(nodes)
	g := &Graph{N: n, TypeNames: typeNames, rootOf: map[uint32]uint32{}}
	for i, nd := range nodes {
		g.Addr = append(g.Addr, uint64(0x1000+16*i))
		g.Type = append(g.Type, uint32(nd[0]))
		g.Size = append(g.Size, nd[1])
		g.Bytes += nd[1]
	}
	g.Off = make([]uint32, n+2)
	for v := 0; v < n; v++ {
		g.Off[v] = uint32(len(g.Dst))
		g.Dst = append(g.Dst, refs[uint32(v)]...)
	}
	g.Off[n] = uint32(len(g.Dst))
	for _, r := range roots {
		g.rootOf[r] = uint32(len(g.Roots))
		g.Roots = append(g.Roots, Root{Object: r, Kind: RootStatic, Name: "F"})
		g.Dst = append(g.Dst, r)
	}
	g.Off[n+1] = uint32(len(g.Dst))
	dst := vec[uint32]{s: g.Dst}
	g.attachUnrooted(&dst)
	return g
}

// TestRetainedExact: two objects of T share a child that nothing else
// keeps. Neither dominates it (the dominator tree gives it to their
// holder), so the lower bound misses it; T as a set retains it: exact is
// the lower bound plus the child. A child T shares with another type's
// object is not retained by T.
func TestRetainedExact(t *testing.T) {
	const (
		holder, t1, t2, shared, other, common = 0, 1, 2, 3, 4, 5
	)
	g := craft([]string{"App.Holder", "App.T", "App.Shared", "App.Other", "App.Common"},
		[][2]uint64{holder: {0, 100}, t1: {1, 10}, t2: {1, 10}, shared: {2, 1000}, other: {3, 50}, common: {4, 500}},
		map[uint32][]uint32{holder: {t1, t2}, t1: {shared, common}, t2: {shared}, other: {common}},
		[]uint32{holder, other})

	bound := map[string]TypeStat{}
	for _, ts := range g.TypesWith(TypeOptions{Top: -1, Budget: -1}) {
		bound[ts.Type] = ts
		if ts.RetainedExact {
			t.Errorf("%s: exact with no exact walk asked", ts.Type)
		}
	}
	if got := bound["App.T"].Retained; got != 20 {
		t.Errorf("T's lower bound %d, want 20 (its two objects)", got)
	}
	exact := map[string]TypeStat{}
	for _, ts := range g.Types() {
		exact[ts.Type] = ts
		if !ts.RetainedExact {
			t.Errorf("%s: not exact in a 6-object graph", ts.Type)
		}
	}
	for name, want := range map[string]uint64{"App.T": 1020, "App.Holder": 1120, "App.Shared": 1000, "App.Other": 50, "App.Common": 500} {
		if got := exact[name].Retained; got != want {
			t.Errorf("%s retains %d, want %d", name, got, want)
		}
	}
	if ts := g.Types(); ts[0].Type != "App.Holder" || ts[1].Type != "App.T" {
		t.Errorf("order %s, %s: want Holder then T (by exact retained bytes)", ts[0].Type, ts[1].Type)
	}

	// Only the types asked for (Top none, no budget): the others keep
	// the bound, marked.
	for _, ts := range g.TypesWith(TypeOptions{Top: -1, Budget: -1, Also: []string{"App.T"}}) {
		if ts.RetainedExact != (ts.Type == "App.T") {
			t.Errorf("%s: exact %v", ts.Type, ts.RetainedExact)
		}
	}

	// A diff: a third T sharing the child adds only its own bytes to T's
	// exact retained bytes (the bound would say the same here), and a
	// second child shared by t1 and t2 adds its bytes to T's.
	g2 := craft([]string{"App.Holder", "App.T", "App.Shared", "App.Other", "App.Common"},
		[][2]uint64{holder: {0, 100}, t1: {1, 10}, t2: {1, 10}, shared: {2, 1000}, other: {3, 50}, common: {4, 500}, 6: {2, 300}},
		map[uint32][]uint32{holder: {t1, t2}, t1: {shared, common, 6}, t2: {shared, 6}, other: {common}},
		[]uint32{holder, other})
	d := Compare(g, g2)
	for _, td := range d.Types {
		if td.Type == "App.T" && (td.RetainedDelta != 300 || !td.RetainedExact) {
			t.Errorf("T's retained delta %d (exact %v), want exactly 300", td.RetainedDelta, td.RetainedExact)
		}
	}
}

// BenchmarkRetainedExact: one exact walk over the graph workload's
// snapshot (the figure per million objects is in docs/PERFORMANCE.md).
func BenchmarkRetainedExact(b *testing.B) {
	g := load(b, "heap-graph.nettrace.gz")
	g.Analyze()
	d := g.domIndex()
	var s retainedScratch
	start := time.Now()
	for b.Loop() {
		g.retainedWithout(^uint32(0), g.Root(), &d, &s) // a whole walk
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(g.N)*1e6/1e6, "ms/Mobjects")
}

// TestRetainedExactRandom checks the exact figures (walks confined to the
// common dominator's subtree, on several goroutines) against the
// definition on random graphs: the bytes no longer reachable from the
// roots once the type's objects are gone.
func TestRetainedExactRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"A", "B", "C", "D", "E", "F"}
	for round := range 300 {
		n := 2 + rng.IntN(60)
		nodes := make([][2]uint64, n)
		for i := range nodes {
			nodes[i] = [2]uint64{uint64(rng.IntN(len(names))), uint64(1 + rng.IntN(100))}
		}
		refs := map[uint32][]uint32{}
		for range rng.IntN(3 * n) {
			a, b := uint32(rng.IntN(n)), uint32(rng.IntN(n))
			refs[a] = append(refs[a], b)
		}
		var roots []uint32
		for range 1 + rng.IntN(4) {
			roots = append(roots, uint32(rng.IntN(n)))
		}
		g := craft(names, nodes, refs, roots)
		for _, ts := range g.Types() {
			want := bruteRetained(g, ts.Type)
			if !ts.RetainedExact || ts.Retained != want {
				t.Fatalf("round %d: %s retains %d (exact %v), want %d", round, ts.Type, ts.Retained, ts.RetainedExact, want)
			}
		}
	}
}

// bruteRetained is the definition: the bytes the virtual root does not
// reach once every object of the type named is removed.
func bruteRetained(g *Graph, name string) uint64 {
	seen := make([]bool, g.N+1)
	stack := []uint32{g.Root()}
	seen[g.Root()] = true
	var reached uint64
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range g.Refs(v) {
			if !seen[w] && g.TypeNames[g.Type[w]] != name {
				seen[w] = true
				reached += g.Size[w]
				stack = append(stack, w)
			}
		}
	}
	return g.Bytes - reached
}
