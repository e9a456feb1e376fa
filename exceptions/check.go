package exceptions

import "fmt"

// CheckValid reports the first invariant r breaks, nil when it breaks
// none: no negative count; rethrows and nested throws among the throws;
// the types' counts, each type's throw sites and message patterns, and
// the timeline add up to the throws; the types' catches and uncaught
// exceptions to the totals; each type's catch sites to its catches; stack
// indices in range. Every fixture test and fuzz target of the package runs
// it.
func (r *Result) CheckValid() error {
	for _, n := range []int64{r.Thrown, r.Rethrown, r.Nested, r.Caught, r.Uncaught, r.Open, r.Finallys, r.Filters,
		r.CatchesWithoutThrow, r.StopsWithoutThrow, r.FoldedTypes, r.FoldedStacks, r.FoldedPatterns, r.FoldedCatchSites, r.LostDispatches} {
		if n < 0 {
			return fmt.Errorf("a negative count: %+v", *r)
		}
	}
	if r.Rethrown > r.Thrown || r.Nested > r.Thrown {
		return fmt.Errorf("%d thrown, of them %d rethrown and %d nested", r.Thrown, r.Rethrown, r.Nested)
	}
	var count, caught, uncaught int64
	for i := range r.Types {
		t := &r.Types[i]
		if t.Count <= 0 || t.Caught < 0 || t.Uncaught < 0 {
			return fmt.Errorf("type %s: %d thrown, %d caught, %d uncaught", t.Name, t.Count, t.Caught, t.Uncaught)
		}
		if i > 0 && t.Count > r.Types[i-1].Count {
			return fmt.Errorf("types out of order at %s", t.Name)
		}
		count += t.Count
		caught += t.Caught
		uncaught += t.Uncaught
		var sites, pats, catches int64
		for _, s := range t.ThrowSites {
			if s.Count <= 0 || s.Stack < 0 || s.Stack >= len(r.Stacks) {
				return fmt.Errorf("type %s: throw site %q of %d throws at stack %d of %d", t.Name, s.Site, s.Count, s.Stack, len(r.Stacks))
			}
			sites += s.Count
		}
		for _, p := range t.Patterns {
			pats += p.Count
		}
		for _, c := range t.CatchSites {
			catches += c.Count
		}
		if sites != t.Count || pats != t.Count || catches != t.Caught {
			return fmt.Errorf("type %s: %d thrown, %d at throw sites, %d by pattern; %d caught, %d at catch sites", t.Name, t.Count, sites, pats, t.Caught, catches)
		}
	}
	if count != r.Thrown || caught != r.Caught || uncaught != r.Uncaught {
		return fmt.Errorf("%d thrown, %d caught, %d uncaught; the types add to %d, %d, %d", r.Thrown, r.Caught, r.Uncaught, count, caught, uncaught)
	}
	var binned int64
	for _, c := range r.Timeline.Counts {
		if c < 0 {
			return fmt.Errorf("timeline bin of %d", c)
		}
		binned += c
	}
	if binned != r.Thrown || r.Timeline.BinNs < 0 {
		return fmt.Errorf("timeline counts %d throws in bins of %d ns, %d thrown", binned, r.Timeline.BinNs, r.Thrown)
	}
	return nil
}
