package heap

import "fmt"

// CheckValid reports the first invariant r breaks, nil when it breaks
// none: no negative time, count or estimate; every object's generation,
// survival and fate consistent; each tally's fates among its samples; the
// tallies' samples are the objects listed when nothing was evicted or
// dropped; the GC records' remaps, in-place survivals and deaths add up to
// the totals when none was dropped; stack indices in range. Every fixture
// test and fuzz target of the package runs it.
func (r *Result) CheckValid() error {
	s := &r.Stats
	for _, n := range []int{s.Tracked, s.GCs, s.Remapped, s.InPlace, s.Died, s.NotFollowed, s.Evicted, s.DeadDropped,
		s.Untracked, s.IgnoredTicks, s.AllocationTicks, s.DecodeErrors, s.Contradictions.Total()} {
		if n < 0 {
			return fmt.Errorf("a negative count: %+v", *s)
		}
	}
	stackOK := func(i int) bool { return i == -1 || i == StackNotKept || i >= 0 && i < len(r.Stacks) }
	alive := 0
	for i := range r.Objects {
		o := &r.Objects[i]
		switch {
		case o.Gen < Gen0 || o.Gen > POH || o.MaxGen < o.Gen && o.Gen <= Gen2:
			return fmt.Errorf("object %d: generation %d, highest %d", o.ID, o.Gen, o.MaxGen)
		case o.Survived < 0 || o.Survived > o.GCsSeen:
			return fmt.Errorf("object %d: survived %d of the %d GCs it saw", o.ID, o.Survived, o.GCsSeen)
		case o.EstBytes < 0 || o.EstCount < 0 || o.Weight < 1:
			return fmt.Errorf("object %d: stands for %g bytes, %g objects, weight %g", o.ID, o.EstBytes, o.EstCount, o.Weight)
		case o.AllocNs < 0 || !o.Alive && o.DeathNs < 0:
			return fmt.Errorf("object %d: allocated at %d ns, died at %d ns", o.ID, o.AllocNs, o.DeathNs)
		case o.Alive && (o.DeathGC != 0 || o.Replaced):
			return fmt.Errorf("object %d: alive, killed by GC %d (replaced: %v)", o.ID, o.DeathGC, o.Replaced)
		case !stackOK(o.Stack):
			return fmt.Errorf("object %d: stack %d of %d", o.ID, o.Stack, len(r.Stacks))
		}
		if o.Alive {
			alive++
		}
	}
	sampled, aliveAtEnd := 0, 0
	for _, t := range r.Tallies {
		g := &t.Group
		if !stackOK(t.Stack) {
			return fmt.Errorf("tally %s: stack %d of %d", g.Key, t.Stack, len(r.Stacks))
		}
		if g.Sampled < 0 || g.Decided > g.Sampled || g.SurvivedOne > g.Decided || g.AliveAtEnd > g.Sampled ||
			g.ReachedGen2 > g.Sampled || g.DiedInGen2 > g.ReachedGen2 || g.Decided < 0 || g.SurvivedOne < 0 || g.AliveAtEnd < 0 || g.DiedInGen2 < 0 {
			return fmt.Errorf("tally %s: %d sampled, %d decided, %d survived one GC, %d alive, %d reached gen2, %d died there",
				g.Key, g.Sampled, g.Decided, g.SurvivedOne, g.AliveAtEnd, g.ReachedGen2, g.DiedInGen2)
		}
		if g.EstBytes < 0 || g.EstCount < 0 || g.LiveBytes < 0 || g.LiveCount < 0 {
			return fmt.Errorf("tally %s: %g bytes, %g objects, %g live bytes, %g live objects", g.Key, g.EstBytes, g.EstCount, g.LiveBytes, g.LiveCount)
		}
		sampled += g.Sampled
		aliveAtEnd += g.AliveAtEnd
	}
	if r.Complete() && (sampled != len(r.Objects) || aliveAtEnd != alive) {
		return fmt.Errorf("%d objects listed, %d alive; the tallies count %d, %d alive", len(r.Objects), alive, sampled, aliveAtEnd)
	}
	for _, a := range r.Ages {
		if a.Objects < 0 || a.Min > a.Max && a.Max != 0 {
			return fmt.Errorf("age bucket %+v", a)
		}
	}
	var remapped, inPlace, died int
	for _, g := range r.GCs {
		if g.StartNs < 0 || g.Remapped < 0 || g.InPlace < 0 || g.Died < 0 || g.Examined < 0 || g.Moved < 0 || g.Surviving < 0 {
			return fmt.Errorf("GC %d: %+v", g.Count, g)
		}
		remapped += g.Remapped
		inPlace += g.InPlace
		died += g.Died
	}
	if s.GCRecordsDropped == 0 && (len(r.GCs) != s.GCs || remapped != s.Remapped || inPlace != s.InPlace || died != s.Died) {
		return fmt.Errorf("%d GCs remapped %d, in place %d, died %d; the %d records add to %d, %d, %d",
			s.GCs, s.Remapped, s.InPlace, s.Died, len(r.GCs), remapped, inPlace, died)
	}
	return nil
}
