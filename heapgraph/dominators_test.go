package heapgraph

import (
	"math/rand/v2"
	"testing"
	"time"
)

// csrGraph is a graph of n objects of size 8·(id+1) (distinct sums) with
// the given references; refs[n] are the virtual root's.
func csrGraph(n int, refs [][]uint32) *Graph {
	g := &Graph{N: n, Off: make([]uint32, n+2), Size: make([]uint64, n)}
	for v := 0; v <= n; v++ {
		g.Off[v] = uint32(len(g.Dst))
		g.Dst = append(g.Dst, refs[v]...)
		if v < n {
			g.Size[v] = 8 * uint64(v+1)
			g.Bytes += g.Size[v]
		}
	}
	g.Off[n+1] = uint32(len(g.Dst))
	return g
}

// TestDominatorsBruteForce checks every object's retained bytes and
// immediate dominator on random graphs against their definitions: d
// dominates v when v is unreachable from the root without d; v retains
// itself and what it dominates; v's immediate dominator is the one of its
// dominators every other dominates.
func TestDominatorsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 300 {
		n := 1 + rng.IntN(40)
		refs := make([][]uint32, n+1)
		for range 1 + rng.IntN(3) {
			refs[n] = append(refs[n], uint32(rng.IntN(n)))
		}
		for range rng.IntN(3 * n) {
			v := rng.IntN(n)
			refs[v] = append(refs[v], uint32(rng.IntN(n)))
		}
		g := csrGraph(n, refs)
		// reach[d][v]: v reachable from the root with d removed (d == n+1:
		// nothing removed).
		reach := func(cut int) []bool {
			seen := make([]bool, n+1)
			stack := []uint32{uint32(n)}
			seen[n] = true
			for len(stack) > 0 {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, w := range g.Refs(v) {
					if int(w) != cut && !seen[w] {
						seen[w] = true
						stack = append(stack, w)
					}
				}
			}
			return seen
		}
		all := reach(n + 1)
		without := make([][]bool, n)
		for d := range n {
			without[d] = reach(d)
		}
		dominates := func(d, v int) bool { return d == n || d == v || !without[d][v] }
		g.Analyze()
		for v := range n {
			if !all[v] {
				continue
			}
			want := g.Size[v]
			for w := range n {
				if w != v && all[w] && !without[v][w] {
					want += g.Size[w]
				}
			}
			if g.Retained[v] != want {
				t.Fatalf("round %d: object %d retains %d bytes, by definition %d (refs %v)", round, v, g.Retained[v], want, refs)
			}
			idom := int(g.Idom[v])
			if idom == v || !dominates(idom, v) {
				t.Fatalf("round %d: idom(%d) = %d does not dominate it (refs %v)", round, v, idom, refs)
			}
			for d := range n {
				if d != v && dominates(d, v) && !dominates(d, idom) {
					t.Fatalf("round %d: idom(%d) = %d, but %d dominates %d and not it (refs %v)", round, v, idom, d, v, refs)
				}
			}
		}
	}
}

// TestDominatorsChainFan: a chain of objects whose head and end both refer
// to the same many objects. Semi-NCA walked the whole chain for each of
// them (quadratic: 1.1 s for 40,000 objects, 52 s for these 200,000);
// with jump pointers, tens of milliseconds. The bound leaves
// a loaded machine many times that.
func TestDominatorsChainFan(t *testing.T) {
	const chain, fan = 100000, 100000
	n := chain + fan
	refs := make([][]uint32, n+1)
	refs[n] = []uint32{0}
	for i := range chain - 1 {
		refs[i] = []uint32{uint32(i + 1)}
	}
	for j := range fan {
		refs[0] = append(refs[0], uint32(chain+j))
		refs[chain-1] = append(refs[chain-1], uint32(chain+j))
	}
	g := csrGraph(n, refs)
	start := time.Now()
	g.Analyze()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("dominators of %d objects took %v", n, d)
	}
	// The head dominates everything; each fanned object only itself.
	if g.Retained[0] != g.Bytes || g.Retained[n] != g.Bytes || g.Idom[chain+5] != 0 || g.Retained[chain+5] != g.Size[chain+5] {
		t.Errorf("head retains %d of %d, idom(fan 5) = %d", g.Retained[0], g.Bytes, g.Idom[chain+5])
	}
}
