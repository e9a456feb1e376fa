package heapgraph

import "strconv"

// Path groups: every object reached from the roots gets, during one
// breadth-first walk, the id of its path group, interned from its BFS
// parent's group and its own type (a rooted object's from its root's kind
// and name and its type). A group is thus computed once however many
// objects share it, and objects group by an exact 32-bit id: --why,
// --format pprof's retention stacks, the report page's paths and a diff's
// dominator matching cost O(objects + references), not objects × path
// length (a million-node linked list was quadratic), with no hash of the
// chain that could merge two paths.
//
// Runs: a path through a linked list or any chain of one type would give a
// group per depth (a million groups of one object for a million-node
// list). So a run of more than maxRun objects of one type in a row is one
// step of the path whatever its length, written "TYPE ×4+" (maxRun+1): the
// list's nodes past the third are one group. Runs of up to maxRun stay
// exact ("Node > Node" is shown as such), so the paths of ordinary
// heaps, where such runs are short, are unchanged. One group for the run,
// rather than one per length or per power of two, is what the question
// wants: the list holds its nodes, and a growing list is a diff's leak
// suspect (one path holds nearly all of them). Chains that alternate
// types (A > B > A > ...) are not folded: a group per depth, each named
// in bounded time (a path's ends, below).

// maxRun is the longest run of one type a path keeps step by step.
const maxRun = 3

// noGroup marks an object the walk did not reach; visitedRoot marks the
// virtual root.
const (
	noGroup     = ^uint32(0)
	visitedRoot = noGroup - 1
)

// maxPathTypes bounds a path's displayed steps: longer ones keep their two
// ends around a "..." marker.
const maxPathTypes = 24

// pathGroups is the result of the walk: a trie of groups in parallel
// arrays (a few words per group, none per object but of).
type pathGroups struct {
	g *Graph
	// of is each node's group (noGroup: not reached).
	of []uint32
	// Per group: the group one step shorter (noGroup for a root group),
	// the step's type (a root group: its root's index), the run of that
	// type ending here (0: a root group; 1..maxRun; maxRun+1: a longer
	// run), the steps from the root and the ancestor at min(depth,
	// maxPathTypes/2) steps (the displayed head of a long path).
	parent, typ, depth, head []uint32
	run                      []uint8
	// index interns (parent, type, long run) -> group.
	index map[uint64]uint32
	// rootGroup caches the group of each root index; roots of one kind
	// and name share a group (byRoot).
	rootGroup []uint32
	byRoot    map[rootKey]uint32
}

type rootKey struct {
	kind RootKind
	name string
}

// pathGroups walks the graph breadth-first from the virtual root (roots
// in kind order: statics first) and gives each reached node its group.
// The walk and the parent it picks are the ones a shortest path takes.
func (g *Graph) pathGroups() *pathGroups {
	p := &pathGroups{g: g, of: make([]uint32, g.N+1), index: map[uint64]uint32{},
		rootGroup: make([]uint32, len(g.Roots)), byRoot: map[rootKey]uint32{}}
	for i := range p.of {
		p.of[i] = noGroup
	}
	for i := range p.rootGroup {
		p.rootGroup[i] = noGroup
	}
	root := g.Root()
	p.of[root] = visitedRoot
	// The queue holds each node once: N+1 ids, from the graph's store as
	// its other per-node scratch arrays, freed when the walk ends.
	q := makeArr[uint32](g.mem, g.N+1)
	defer freeArr(g.mem, q)
	q[0] = root
	for i, n := 0, 1; i < n; i++ {
		v := q[i]
		for _, w := range g.Refs(v) {
			if p.of[w] != noGroup {
				continue
			}
			var pg uint32
			if v == root {
				pg = p.rootGroupOf(g.rootIndex(w))
			} else {
				pg = p.of[v]
			}
			p.of[w] = p.child(pg, g.Type[w])
			q[n] = w
			n++
		}
	}
	return p
}

func (p *pathGroups) rootGroupOf(ri uint32) uint32 {
	if gi := p.rootGroup[ri]; gi != noGroup {
		return gi
	}
	r := p.g.Roots[ri]
	k := rootKey{r.Kind, r.Name}
	gi, ok := p.byRoot[k]
	if !ok {
		gi = p.add(noGroup, ri, 0)
		p.byRoot[k] = gi
	}
	p.rootGroup[ri] = gi
	return gi
}

// child is the group of an object of type t whose BFS parent is in group
// pg.
func (p *pathGroups) child(pg, t uint32) uint32 {
	r := p.run[pg]
	if r == 0 || p.typ[pg] != t {
		return p.intern(pg, t, 1)
	}
	switch {
	case r > maxRun:
		return pg // a long run absorbs the next object of its type
	case r == maxRun:
		// The run becomes long: one step after the group before it.
		base := pg
		for range maxRun {
			base = p.parent[base]
		}
		return p.intern(base, t, maxRun+1)
	}
	return p.intern(pg, t, r+1)
}

// intern returns the group (pg, t, run). An exact run's length follows
// from its parent, so the key needs only whether the run is long: group
// id, type index (31 bits: a type table is far smaller) and that bit in
// one word, the map's fast key.
func (p *pathGroups) intern(pg, t uint32, run uint8) uint32 {
	k := uint64(pg)<<32 | uint64(t)<<1
	if run > maxRun {
		k |= 1
	}
	if gi, ok := p.index[k]; ok {
		return gi
	}
	gi := p.add(pg, t, run)
	p.index[k] = gi
	return gi
}

func (p *pathGroups) add(pg, t uint32, run uint8) uint32 {
	gi := uint32(len(p.parent))
	d, h := uint32(0), gi
	if pg != noGroup {
		d = p.depth[pg] + 1
		if d > maxPathTypes/2 {
			h = p.head[pg]
		}
	}
	p.parent = append(p.parent, pg)
	p.typ = append(p.typ, t)
	p.run = append(p.run, run)
	p.depth = append(p.depth, d)
	p.head = append(p.head, h)
	return gi
}

// rootOfGroup returns the root at the top of group gi's path: at most
// maxPathTypes/2 steps up from its head.
func (p *pathGroups) rootOfGroup(gi uint32) Root {
	gi = p.head[gi]
	for p.parent[gi] != noGroup {
		gi = p.parent[gi]
	}
	return p.g.Roots[p.typ[gi]]
}

// root returns group gi's root kind and name (the kind when the root has
// no name).
func (p *pathGroups) root(gi uint32) (RootKind, string) {
	r := p.rootOfGroup(gi)
	if r.Name == "" {
		return r.Kind, r.Kind.String()
	}
	return r.Kind, r.Name
}

// step names group gi's last step.
func (p *pathGroups) step(gi uint32) string {
	name := p.g.TypeNames[p.typ[gi]]
	if p.run[gi] > maxRun {
		return name + " ×" + strconv.Itoa(maxRun+1) + "+"
	}
	return name
}

// types names group gi's steps from the root's object down, a path of
// more than maxPathTypes steps as its two ends around "...": at most
// maxPathTypes+1 names, whatever the path's length.
func (p *pathGroups) types(gi uint32) []string {
	d := int(p.depth[gi])
	if d <= maxPathTypes {
		out := make([]string, d)
		for i := d - 1; i >= 0; i-- {
			out[i] = p.step(gi)
			gi = p.parent[gi]
		}
		return out
	}
	h := maxPathTypes / 2
	out := make([]string, 2*h+1)
	out[h] = "..."
	for i, u := 2*h, gi; i > h; i-- {
		out[i] = p.step(u)
		u = p.parent[u]
	}
	for i, u := h-1, p.head[gi]; i >= 0; i-- {
		out[i] = p.step(u)
		u = p.parent[u]
	}
	return out
}
