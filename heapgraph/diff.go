package heapgraph

import (
	"slices"
	"strings"
)

// TypeDelta is one type's change between two snapshots.
type TypeDelta struct {
	Type          string
	CountBefore   uint64
	CountAfter    uint64
	CountDelta    int64
	BytesDelta    int64
	RetainedDelta int64
}

// Growth is a dominator whose retained bytes changed, matched across the
// snapshots by its shortest path from a root (addresses change between
// GCs): the root, the path's types down to the dominator's own type.
type Growth struct {
	RootKind       RootKind
	Root           string
	Path           []string
	Count          uint64 // dominators on this path (after)
	RetainedBefore uint64
	RetainedAfter  uint64
	Delta          int64
}

// Suspect is a type that grew and whose objects (after) are nearly all
// kept through one path: the leak candidates.
type Suspect struct {
	Type       string
	CountDelta int64
	BytesDelta int64
	Path       Path    // the path that holds most of the type's objects
	Share      float64 // of the type's objects on that path
}

// Diff is what changed from Old to New.
type Diff struct {
	Types    []TypeDelta // by |retained delta|, then |bytes delta|
	Growth   []Growth    // by retained growth, the largest first
	Suspects []Suspect
}

// Compare diffs two snapshots of the same process.
func Compare(old, cur *Graph) Diff {
	var d Diff
	before := map[string]TypeStat{}
	for _, t := range old.Types() {
		before[t.Type] = t
	}
	seen := map[string]bool{}
	for _, a := range cur.Types() {
		b := before[a.Type]
		seen[a.Type] = true
		d.Types = append(d.Types, delta(a.Type, b, a))
	}
	for _, b := range old.Types() {
		if !seen[b.Type] {
			d.Types = append(d.Types, delta(b.Type, b, TypeStat{}))
		}
	}
	d.Types = slices.DeleteFunc(d.Types, func(t TypeDelta) bool {
		return t.CountDelta == 0 && t.BytesDelta == 0 && t.RetainedDelta == 0
	})
	slices.SortStableFunc(d.Types, func(x, y TypeDelta) int {
		if a, b := abs(x.RetainedDelta), abs(y.RetainedDelta); a != b {
			return cmpDesc(a, b)
		}
		if a, b := abs(x.BytesDelta), abs(y.BytesDelta); a != b {
			return cmpDesc(a, b)
		}
		return strings.Compare(x.Type, y.Type)
	})

	ob, nb := old.dominators(), cur.dominators()
	for k, n := range nb {
		o := ob[k]
		if g := int64(n.RetainedAfter) - int64(o.RetainedAfter); g > 0 {
			n.RetainedBefore = o.RetainedAfter
			n.Delta = g
			d.Growth = append(d.Growth, n)
		}
	}
	slices.SortFunc(d.Growth, func(x, y Growth) int {
		if x.Delta != y.Delta {
			return cmpDesc(uint64(x.Delta), uint64(y.Delta))
		}
		return strings.Compare(strings.Join(x.Path, ">"), strings.Join(y.Path, ">"))
	})
	// A dominator below one that grew is part of its growth: keep the
	// top-most of each path.
	kept := d.Growth[:0]
	for _, g := range d.Growth {
		inside := false
		for _, k := range kept {
			if k.RootKind == g.RootKind && k.Root == g.Root && len(k.Path) < len(g.Path) && slices.Equal(k.Path, g.Path[:len(k.Path)]) {
				inside = true
				break
			}
		}
		if !inside {
			kept = append(kept, g)
		}
	}
	d.Growth = kept
	if len(d.Growth) > maxGrowth {
		d.Growth = d.Growth[:maxGrowth]
	}

	// Suspects: of the types whose count grew, those whose objects are
	// kept through one path (80 % or more of them).
	n := 0
	for _, t := range d.Types {
		if t.CountDelta <= 0 || n >= maxSuspectChecks {
			continue
		}
		n++
		m, err := cur.Matcher(t.Type)
		if err != nil {
			continue
		}
		ps := cur.Why(m)
		if len(ps) == 0 {
			continue
		}
		var total uint64
		for _, p := range ps {
			total += p.Count
		}
		if share := float64(ps[0].Count) / float64(total); share >= 0.8 {
			d.Suspects = append(d.Suspects, Suspect{Type: t.Type, CountDelta: t.CountDelta, BytesDelta: t.BytesDelta, Path: ps[0], Share: share})
		}
	}
	return d
}

const (
	maxGrowth        = 30
	maxSuspectChecks = 20
	// maxDominators bounds the dominators matched per snapshot: those
	// retaining the most.
	maxDominators = 2000
)

func delta(name string, b, a TypeStat) TypeDelta {
	return TypeDelta{Type: name, CountBefore: b.Count, CountAfter: a.Count,
		CountDelta: int64(a.Count) - int64(b.Count), BytesDelta: int64(a.Bytes) - int64(b.Bytes),
		RetainedDelta: int64(a.Retained) - int64(b.Retained)}
}

func abs(v int64) uint64 {
	if v < 0 {
		return uint64(-v)
	}
	return uint64(v)
}

// dominators returns the largest dominators (by retained bytes, objects
// that retain more than themselves) keyed by their root path, retained
// bytes summed per path.
func (g *Graph) dominators() map[string]Growth {
	g.Analyze()
	var ids []uint32
	for v := uint32(0); v < uint32(g.N); v++ {
		if g.Retained[v] > g.Size[v] {
			ids = append(ids, v)
		}
	}
	slices.SortFunc(ids, func(a, b uint32) int { return cmpDesc(g.Retained[a], g.Retained[b]) })
	if len(ids) > maxDominators {
		ids = ids[:maxDominators]
	}
	par := g.bfs()
	out := map[string]Growth{}
	var chain []uint32
	for _, v := range ids {
		if par[v] == ^uint32(0) {
			continue
		}
		chain = chain[:0]
		for u := v; u != g.Root(); u = par[u] {
			chain = append(chain, u)
		}
		r := g.Roots[g.rootIndex(chain[len(chain)-1])]
		name := r.Name
		if name == "" {
			name = r.Kind.String()
		}
		path := g.pathTypes(chain)
		k := r.Kind.String() + "\x00" + name + "\x00" + strings.Join(path, "\x00")
		e := out[k]
		if e.Path == nil {
			e = Growth{RootKind: r.Kind, Root: name, Path: path}
		}
		e.Count++
		e.RetainedAfter += g.Retained[v]
		out[k] = e
	}
	return out
}
