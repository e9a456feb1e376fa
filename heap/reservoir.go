package heap

import (
	"math"
	"math/bits"
	"slices"
)

// weight is the object's upscaling: 1/p, p = min(1, w/T) the probability
// that an object of its priority weight passes the highest threshold T it
// met (see the package documentation).
func (o *obj) weight() float64 {
	if o.tau <= 0 {
		return 1
	}
	w := max(o.estBytes, 1)
	if w >= o.tau {
		return 1
	}
	return o.tau / w
}

// thin evicts followed objects until 7/8 of maxObjects remain: the
// threshold rises to the priority of the first object kept out, and every
// object at or below it goes. Evicting 1/8 at a time makes the pass (sort
// of the priorities included) cost O(log n) per followed sample.
func (t *Tracker) thin() {
	t.merge()
	keep := t.maxObjects - t.maxObjects/8
	if len(t.live) <= keep {
		return
	}
	t.addrsOK = false
	ps := t.prios[:0]
	for _, e := range t.live {
		ps = append(ps, t.objs[e.idx].prio)
	}
	t.prios = ps
	slices.Sort(ps)
	t.thresh = max(t.thresh, ps[len(ps)-keep-1])
	out := t.live[:0]
	for _, e := range t.live {
		o := &t.objs[e.idx]
		if o.prio <= t.thresh {
			o.state = evicted
			t.free = append(t.free, e.idx)
			t.liveN--
			t.stats.Evicted++
			continue
		}
		o.tau = max(o.tau, t.thresh)
		out = append(out, e)
	}
	t.live = out
}

// relax lowers the threshold for new samples while the followed set is
// under half its bound (after a GC killed much of it), so a quieter phase
// of the program is sampled more densely again. Objects already followed
// keep the threshold they passed (their weight does not change).
func (t *Tracker) relax() {
	if t.thresh == 0 || t.liveN >= t.maxObjects/2 {
		return
	}
	t.thresh /= 2
	if t.thresh < 1 { // every priority is at least 1
		t.thresh = 0
	}
}

// die records an object a GC found dead; its entry is gone already, so its
// slot is free at once.
func (t *Tracker) die(e *ent, gen int, gc *GC) {
	idx := e.idx
	t.endLife(e, dead, gen, int32(gc.Count), gc.StartNs)
	t.free = append(t.free, idx)
}

// endLife records the end of e's object: dead at GC count (its age goes in
// the histogram) or replaced (count 0), in generation gen at ns. The
// caller frees the slot, now (die) or at the next merge (retireAt: the
// entry stays in live or pend until then).
func (t *Tracker) endLife(e *ent, state uint8, gen int, count int32, ns int64) {
	o := t.settle(e)
	o.state = state
	o.deathGC, o.deathNs = count, ns
	o.deathGen, o.gen = int8(gen), int8(gen)
	o.gcsSeen = int32(t.ageClock - o.ageBase)
	t.liveN--
	t.buried(o)
	if b := ageBucket(int(o.gcsSeen)); state == dead && b >= 0 {
		t.ages[b] += o.weight()
	}
}

// settle copies what an entry holds into the object's slot, for an object
// leaving the live set or being reported.
func (t *Tracker) settle(e *ent) *obj {
	o := &t.objs[e.idx]
	o.addr, o.gen, o.survived, o.maxGen = e.addr, e.gen, e.survived, e.maxGen
	return o
}

// buried folds a dead (or replaced) object into its tally and keeps its
// record in the ring of recent deaths.
func (t *Tracker) buried(o *obj) {
	t.tallies[o.tally].add(o)
	if t.skipObjects {
		return
	}
	if t.maxObjects == 0 || len(t.dead) < t.maxObjects {
		t.dead = append(t.dead, *o)
		return
	}
	t.dead[t.deadNext] = *o
	t.deadNext = (t.deadNext + 1) % len(t.dead)
	t.stats.DeadDropped++
}

// tally is the running sum of the dead objects of one (type, stack): what
// a Group holds but the live part, which Result adds.
type tally struct {
	n, decided, survived, gen2, diedGen2     int
	w, wDecided, wSurvived, wGen2, wDiedGen2 float64
	estBytes, estCount                       float64
}

func (g *tally) add(o *obj) {
	w := o.weight()
	g.n++
	g.w += w
	g.estBytes += o.estBytes * w
	g.estCount += o.estCount * w
	g.decided++
	g.wDecided += w
	if o.survived > 0 {
		g.survived++
		g.wSurvived += w
	}
	if o.maxGen >= Gen2 {
		g.gen2++
		g.wGen2 += w
	}
	if o.gen >= Gen2 {
		g.diedGen2++
		g.wDiedGen2 += w
	}
}

func (g *tally) group(key string) Group {
	return Group{Key: key, Sampled: g.n, EstBytes: g.estBytes, EstCount: g.estCount, Decided: g.decided, SurvivedOne: g.survived,
		ReachedGen2: g.gen2, DiedInGen2: g.diedGen2,
		W: Weighted{Sampled: g.w, Decided: g.wDecided, SurvivedOne: g.wSurvived, ReachedGen2: g.wGen2, DiedInGen2: g.wDiedGen2}}
}

// addObj adds one object, alive with generation gen or dead.
func (g *Group) addObj(o *obj, isAlive bool, gen int) {
	w := o.weight()
	g.Sampled++
	g.W.Sampled += w
	g.EstBytes += o.estBytes * w
	g.EstCount += o.estCount * w
	if isAlive {
		g.AliveAtEnd++
		g.W.AliveAtEnd += w
		g.LiveBytes += o.estBytes * w
		g.LiveCount += o.estCount * w
		if o.survived == 0 {
			return // not decided
		}
	}
	g.Decided++
	g.W.Decided += w
	if o.survived > 0 {
		g.SurvivedOne++
		g.W.SurvivedOne += w
	}
	if o.maxGen >= Gen2 {
		g.ReachedGen2++
		g.W.ReachedGen2 += w
	}
	if !isAlive && gen >= Gen2 {
		g.DiedInGen2++
		g.W.DiedInGen2 += w
	}
}

// nAgeBuckets is the number of age-at-death buckets: 1, 2, 3–4, 5–8, ...,
// 1025–2048, 2049+.
const nAgeBuckets = 13

// ageBucket returns the bucket of an age in GCs, -1 for 0.
func ageBucket(n int) int {
	switch {
	case n <= 0:
		return -1
	case n <= 2:
		return n - 1
	}
	return min(bits.Len(uint(n-1)), nAgeBuckets-1)
}

// ageBounds returns bucket b's inclusive bounds (max 0: no upper bound).
func ageBounds(b int) (lo, hi int) {
	switch {
	case b < 2:
		return b + 1, b + 1
	case b == nAgeBuckets-1:
		return 1<<(b-1) + 1, 0
	}
	return 1<<(b-1) + 1, 1 << b
}

// Result returns the replay so far (GCs still open are not applied until
// Finish): a snapshot that later events do not change.
func (t *Tracker) Result() *Result {
	r := &Result{Stacks: t.stacks, Stats: t.stats, EndNs: t.lastNs, PtrSize: t.ptrSize, MaxObjects: t.maxObjects, NoObjects: t.skipObjects}
	names := t.typeNames()
	r.Tallies = make([]Tally, len(t.tallies))
	for i := range t.tallies {
		k := t.tallyKeys[i]
		r.Tallies[i] = Tally{TypeID: t.types[k.ty].id, Stack: int(k.stack), Group: t.tallies[i].group(names[k.ty])}
	}
	if !t.skipObjects {
		r.Objects = make([]Object, 0, t.liveN+len(t.dead))
	}
	for i := range t.dead {
		r.Objects = append(r.Objects, t.object(&t.dead[i], names))
	}
	for _, list := range [][]ent{t.live, t.pend} {
		for _, e := range list {
			if t.objs[e.idx].state != alive {
				continue
			}
			o := t.settle(&e)
			r.Tallies[o.tally].addObj(o, true, int(e.gen))
			if !t.skipObjects {
				r.Objects = append(r.Objects, t.object(o, names))
			}
		}
	}
	slices.SortFunc(r.Objects, func(a, b Object) int { return a.ID - b.ID })
	for b, w := range t.ages {
		lo, hi := ageBounds(b)
		r.Ages = append(r.Ages, AgeBucket{Min: lo, Max: hi, Objects: int(math.Round(w))})
	}
	r.GCs = make([]GC, 0, len(t.gcs))
	r.GCs = append(r.GCs, t.gcs[t.gcsNext:]...)
	r.GCs = append(r.GCs, t.gcs[:t.gcsNext]...)
	return r
}

// object converts a slot (a live one settled first).
func (t *Tracker) object(o *obj, names []string) Object {
	x := Object{ID: o.id, TypeID: t.types[o.ty].id, Type: names[o.ty], Size: o.size, Source: o.source,
		AllocNs: o.allocNs, Stack: int(o.stack), Address: o.addr, Gen: int(o.gen), MaxGen: int(o.maxGen),
		Survived: int(o.survived), GCsSeen: int(o.gcsSeen), EstBytes: o.estBytes, EstCount: o.estCount,
		Weight: o.weight(), Alive: o.state == alive, Replaced: o.state == replaced}
	if x.Alive {
		x.GCsSeen = int(t.ageClock - o.ageBase)
		return x
	}
	x.DeathGC, x.DeathNs, x.DeathGen = int(o.deathGC), o.deathNs, int(o.deathGen)
	return x
}
