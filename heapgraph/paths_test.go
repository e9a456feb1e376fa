package heapgraph

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// chainGraph builds a graph from static roots, each holding a chain:
// chains[i] is the types (index into names) of its objects, each object
// referencing the next; every object of type t is sizes[t] bytes. Built
// in arrays (no map per object), so a chain of any length is cheap.
func chainGraph(names []string, sizes []uint64, roots []string, chains [][]uint32) *Graph {
	g := &Graph{TypeNames: names, rootOf: map[uint32]uint32{}}
	var heads []uint32
	for _, c := range chains {
		heads = append(heads, uint32(g.N))
		for i, t := range c {
			g.Off = append(g.Off, uint32(len(g.Dst)))
			if i+1 < len(c) {
				g.Dst = append(g.Dst, uint32(g.N+1))
			}
			g.Addr = append(g.Addr, uint64(0x1000+16*g.N))
			g.Type = append(g.Type, t)
			g.Size = append(g.Size, sizes[t])
			g.Bytes += sizes[t]
			g.N++
		}
	}
	g.Off = append(g.Off, uint32(len(g.Dst)))
	for i, h := range heads {
		g.rootOf[h] = uint32(len(g.Roots))
		g.Roots = append(g.Roots, Root{Object: h, Kind: RootStatic, Name: roots[i]})
		g.Dst = append(g.Dst, h)
	}
	g.Off = append(g.Off, uint32(len(g.Dst)))
	return g
}

func chain(n int, first, rest uint32, tail ...uint32) []uint32 {
	c := make([]uint32, 0, n+1+len(tail))
	c = append(c, first)
	for range n {
		c = append(c, rest)
	}
	return append(c, tail...)
}

func pathText(p Path) string {
	return fmt.Sprintf("%d %d %s %s %s | %s", p.Count, p.Bytes, p.RootKind, p.Root, strings.Join(p.Types, " > "), p.Type)
}

// TestWhyDeepChain: a static holds a list whose 200,000 nodes form one
// chain (each the next's BFS parent), the last node a tail object. The
// first three nodes' paths are exact (List > Node, List > Node > Node,
// ...), the 199,997 below them one group "Node ×4+", and the tail's path
// goes through that run. Walking each node's chain would be 2·10^10
// steps; one walk is milliseconds. A second root holds a run that ends
// and starts again: a run of more than maxRun, another type, then a short
// run of the same type, kept exact.
func TestWhyDeepChain(t *testing.T) {
	const (
		list, node, tail, other = 0, 1, 2, 3
		n                       = 200_000
	)
	names := []string{"App.List", "App.Node", "App.Tail", "App.Other"}
	sizes := []uint64{48, 32, 24, 40}
	g := chainGraph(names, sizes, []string{"App.Cache.Items", "App.Cache.Mixed"},
		[][]uint32{chain(n, list, node, tail), chain(5, other, node, other, node, node)})

	m, err := g.Matcher("Node")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ps := g.Why(m)
	took := time.Since(start)
	t.Logf("Why over a %d-node chain: %v", n, took)
	var got []string
	for _, p := range ps {
		got = append(got, pathText(p))
	}
	want := wantOrder([]string{
		fmt.Sprintf("%d %d static App.Cache.Items App.List > App.Node ×4+ | App.Node", n-3, (n-3)*32),
		"1 32 static App.Cache.Items App.List > App.Node | App.Node",
		"1 32 static App.Cache.Items App.List > App.Node > App.Node | App.Node",
		"1 32 static App.Cache.Items App.List > App.Node > App.Node > App.Node | App.Node",
		"1 32 static App.Cache.Mixed App.Other > App.Node | App.Node",
		"1 32 static App.Cache.Mixed App.Other > App.Node > App.Node | App.Node",
		"1 32 static App.Cache.Mixed App.Other > App.Node > App.Node > App.Node | App.Node",
		"2 64 static App.Cache.Mixed App.Other > App.Node ×4+ | App.Node", // the run's 4th and 5th
		"1 32 static App.Cache.Mixed App.Other > App.Node ×4+ > App.Other > App.Node | App.Node",
		"1 32 static App.Cache.Mixed App.Other > App.Node ×4+ > App.Other > App.Node > App.Node | App.Node",
	})
	if !slices.Equal(got, want) {
		t.Errorf("--why Node:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var count, bytes uint64
	for _, p := range ps {
		count += p.Count
		bytes += p.Bytes
	}
	if count != n+7 || bytes != (n+7)*32 {
		t.Errorf("groups sum to %d objects, %d bytes; want every node's, %d and %d", count, bytes, n+7, (n+7)*32)
	}
	// A loaded 2-core machine: the walk takes tens of milliseconds;
	// walking chains would take minutes. 5 s tells them apart with room.
	if took > 5*time.Second {
		t.Errorf("Why took %v over a %d-node chain: not linear", took, n)
	}

	// The reference chain walk agrees on a short list (and folding is
	// what makes it differ from the unfolded one).
	small := chainGraph(names, sizes, []string{"App.Cache.Items", "App.Cache.Mixed"},
		[][]uint32{chain(30, list, node, tail), chain(5, other, node, other, node, node)})
	all := func(uint32) bool { return true }
	if got := small.Why(all); !reflect.DeepEqual(got, whyByChains(small, all, true)) || reflect.DeepEqual(got, whyByChains(small, all, false)) {
		t.Errorf("short list: %+v, chain walk %+v", got, whyByChains(small, all, true))
	}

	mt, _ := g.Matcher("App.Tail")
	if ps := g.Why(mt); len(ps) != 1 || pathText(ps[0]) != "1 24 static App.Cache.Items App.List > App.Node ×4+ > App.Tail | App.Tail" {
		t.Errorf("--why Tail: %+v", ps)
	}

	// Memory: the walk allocates per group and per slice growth, never
	// per object (a few dozen allocations for 200,000 objects).
	if a := testing.AllocsPerRun(2, func() { g.Why(m) }); a > 200 {
		t.Errorf("Why allocates %.0f times over %d objects", a, n)
	}
}

// TestDiffLongList: a list grows from 1,000 to 2,000 nodes. Its nodes
// past the third are one path ("Node ×4+") whose dominators each retain
// the rest of the list: the path's growth is the outermost one's, the
// 1,000 nodes added (32,000 bytes), not the sum over the nested ones.
func TestDiffLongList(t *testing.T) {
	names, sizes := []string{"App.List", "App.Node"}, []uint64{48, 32}
	old := chainGraph(names, sizes, []string{"App.Cache.Items"}, [][]uint32{chain(1000, 0, 1)})
	cur := chainGraph(names, sizes, []string{"App.Cache.Items"}, [][]uint32{chain(2000, 0, 1)})
	d := Compare(old, cur)
	var got []string
	for _, g := range d.Growth {
		got = append(got, fmt.Sprintf("%d %d %d %s", g.Delta, g.RetainedBefore, g.Count, strings.Join(g.Path, " > ")))
	}
	// Each dominator below the list grew as much; the top-most is kept.
	if want := []string{"32000 32048 1 App.List"}; !slices.Equal(got, want) {
		t.Errorf("growth %q, want %q", got, want)
	}
	run := cur.dominators(cur.pathGroups())["static\x00App.Cache.Items\x00App.List\x00App.Node ×4+"]
	if run.Count != 1 || run.RetainedAfter != (2000-3)*32 {
		t.Errorf("the run's dominators: %+v, want one retaining the 1,997 nodes past the third", run)
	}
	if len(d.Suspects) != 1 || d.Suspects[0].Type != "App.Node" || d.Suspects[0].Path.Count != 1997 {
		t.Errorf("suspects %+v, want App.Node through its run", d.Suspects)
	}
}

// wantOrder sorts expected path texts as Why does: bytes, then objects
// (both descending), then the types along the path.
func wantOrder(ts []string) []string {
	out := slices.Clone(ts)
	slices.SortStableFunc(out, func(a, b string) int {
		var ca, ba, cb, bb uint64
		fmt.Sscan(a, &ca, &ba)
		fmt.Sscan(b, &cb, &bb)
		switch {
		case ba != bb:
			return cmpDesc(ba, bb)
		case ca != cb:
			return cmpDesc(ca, cb)
		}
		return strings.Compare(typesOf(a), typesOf(b))
	})
	return out
}

// typesOf is a path text's types joined as Why's sort joins them.
func typesOf(s string) string {
	f := strings.SplitN(s, " ", 5)
	return strings.ReplaceAll(strings.SplitN(f[4], " | ", 2)[0], " > ", ">")
}

// TestWhyAlternatingChain: a chain alternating two types has no run to
// fold: one group per depth (100,000 groups of one object), each named in
// bounded time and shown as its two ends around "...".
func TestWhyAlternatingChain(t *testing.T) {
	const n = 100_000
	c := make([]uint32, n)
	for i := range c {
		c[i] = uint32(i % 2)
	}
	g := chainGraph([]string{"App.A", "App.B"}, []uint64{16, 24}, []string{"App.Root"}, [][]uint32{c})
	start := time.Now()
	ps := g.Why(func(uint32) bool { return true })
	took := time.Since(start)
	t.Logf("Why over a %d-node alternating chain: %v, %d groups", n, took, len(ps))
	if len(ps) != n {
		t.Fatalf("%d groups, want one per object", len(ps))
	}
	// Paths of more than maxPathTypes steps are shown as their ends:
	// the 12 first steps from the root, "...", the 12 last.
	long := 0
	for _, p := range ps {
		if p.Count != 1 || p.Types[len(p.Types)-1] != p.Type || p.Types[0] != "App.A" {
			t.Fatalf("group %+v", p)
		}
		if len(p.Types) > maxPathTypes {
			long++
			if len(p.Types) != maxPathTypes+1 || p.Types[maxPathTypes/2] != "..." || p.Types[maxPathTypes/2-1] != "App.B" {
				t.Fatalf("group %+v", p)
			}
		}
	}
	if long != n-maxPathTypes {
		t.Errorf("%d paths shown shortened, want %d", long, n-maxPathTypes)
	}
	if took > 5*time.Second {
		t.Errorf("Why took %v: not linear", took)
	}
}

// whyByChains is the former Why, as reference: each object's whole BFS
// chain walked and keyed by its exact type sequence as a string (no hash),
// runs of more than maxRun folded when fold is set.
func whyByChains(g *Graph, match func(uint32) bool, fold bool) []Path {
	const none = ^uint32(0)
	par := make([]uint32, g.N+1)
	for i := range par {
		par[i] = none
	}
	root := g.Root()
	par[root] = root
	q := []uint32{root}
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		for _, w := range g.Refs(v) {
			if par[w] == none {
				par[w] = v
				q = append(q, w)
			}
		}
	}
	groups := map[string]*Path{}
	for v := uint32(0); v < uint32(g.N); v++ {
		if !match(v) || par[v] == none {
			continue
		}
		var chain []uint32
		for u := v; u != root; u = par[u] {
			chain = append(chain, g.Type[u])
		}
		slices.Reverse(chain)
		var steps []string
		for i := 0; i < len(chain); {
			j := i
			for j < len(chain) && chain[j] == chain[i] {
				j++
			}
			name := g.TypeNames[chain[i]]
			if fold && j-i > maxRun {
				steps = append(steps, name+" ×4+")
			} else {
				for range j - i {
					steps = append(steps, name)
				}
			}
			i = j
		}
		r := g.Roots[g.rootIndex(par2top(par, v, root))]
		k := fmt.Sprint(r.Kind, "\x00", r.Name, "\x00", strings.Join(steps, "\x00"))
		p := groups[k]
		if p == nil {
			name := r.Name
			if name == "" {
				name = r.Kind.String()
			}
			shown := steps
			if len(shown) > maxPathTypes {
				h := maxPathTypes / 2
				shown = append(append(slices.Clone(steps[:h]), "..."), steps[len(steps)-h:]...)
			}
			p = &Path{RootKind: r.Kind, Root: name, Types: shown, Type: g.TypeNames[g.Type[v]]}
			groups[k] = p
		}
		p.Count++
		p.Bytes += g.Size[v]
	}
	var out []Path
	for _, p := range groups {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Path) int {
		switch {
		case a.Bytes != b.Bytes:
			return cmpDesc(a.Bytes, b.Bytes)
		case a.Count != b.Count:
			return cmpDesc(a.Count, b.Count)
		}
		if c := strings.Compare(strings.Join(a.Types, ">"), strings.Join(b.Types, ">")); c != 0 {
			return c
		}
		if a.RootKind != b.RootKind {
			return int(a.RootKind) - int(b.RootKind)
		}
		return strings.Compare(a.Root, b.Root)
	})
	return out
}

func par2top(par []uint32, v, root uint32) uint32 {
	for par[v] != root {
		v = par[v]
	}
	return v
}

// TestWhyMatchesChainWalk: on the recorded snapshots (the graph workload
// before and after its additions, and dotnet-gcdump's file of it), Why
// equals the former per-object chain walk, for every object and for each
// type: the same groups, counts, bytes and order. No path there has a run
// of more than maxRun objects of one type, so folding changes nothing and
// the output is what it was before path groups.
func TestWhyMatchesChainWalk(t *testing.T) {
	data, err := os.ReadFile(tracetest.Path(t, dotnetGcdump))
	if err != nil {
		t.Fatal(err)
	}
	dump, err := ReadGCDump(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]*Graph{"heap-graph": load(t, "heap-graph.nettrace.gz"),
		"heap-graph-added": load(t, "heap-graph-added.nettrace.gz"), "dotnet-gcdump": dump} {
		check := func(what string, m func(uint32) bool) {
			got := g.Why(m)
			if want := whyByChains(g, m, true); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: %d groups, the chain walk %d", name, what, len(got), len(want))
				for i := range min(len(got), len(want)) {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Errorf("first difference at %d: %s, want %s", i, pathText(got[i]), pathText(want[i]))
						break
					}
				}
			}
			if unfolded := whyByChains(g, m, false); !reflect.DeepEqual(got, unfolded) {
				t.Errorf("%s %s: folding runs changed the groups", name, what)
			}
		}
		all := func(uint32) bool { return true }
		check("all", all)
		t.Logf("%s: %d objects, %d groups", name, g.N, len(g.Why(all)))
		for _, ts := range g.Types() {
			m, err := g.Matcher(ts.Type)
			if err != nil {
				t.Fatal(err)
			}
			check(ts.Type, m)
		}
	}
}

// BenchmarkWhy: Why over every object of the graph workload's snapshot
// and over a million-node chain.
func BenchmarkWhy(b *testing.B) {
	all := func(uint32) bool { return true }
	b.Run("heap-graph", func(b *testing.B) {
		g := load(b, "heap-graph.nettrace.gz")
		for b.Loop() {
			g.Why(all)
		}
	})
	b.Run("chain1M", func(b *testing.B) {
		g := chainGraph([]string{"App.List", "App.Node"}, []uint64{48, 32}, []string{"F"}, [][]uint32{chain(1_000_000, 0, 1)})
		for b.Loop() {
			g.Why(all)
		}
	})
}
