package threadpool

import "fmt"

// CheckValid reports the first invariant r breaks, nil when it breaks
// none: no negative time or count; the blocking of pool threads per stack
// adds up to the summary's, the sites to no more than it (to all of it
// when none was cut); the adjustments, episodes and injections listed
// plus those dropped are the summary's; episodes end after they start;
// the timeline goes forward; stack indices in range. Every fixture test
// and fuzz target of the package runs it.
func (r *Result) CheckValid() error {
	s := &r.Summary
	if s.SpanNs < 0 || s.BlockedNs < 0 || s.Waits < 0 || s.ThreadsMax < 0 || s.Injections < 0 || s.BriefEpisodes < 0 {
		return fmt.Errorf("summary: a negative value: %+v", *s)
	}
	var blocked, waits int64
	for _, b := range r.Blocked {
		if b.BlockedNs < 0 || b.Waits < 0 || b.Stack < 0 || b.Stack >= max(len(r.Stacks), 1) {
			return fmt.Errorf("blocked %+v (%d stacks)", b, len(r.Stacks))
		}
		blocked += b.BlockedNs
		waits += b.Waits
	}
	if blocked != s.BlockedNs || waits != s.Waits {
		return fmt.Errorf("summary %d waits blocked %d ns; the stacks add to %d, %d", s.Waits, s.BlockedNs, waits, blocked)
	}
	blocked, waits = 0, 0
	for i, site := range r.Sites {
		if site.BlockedNs < 0 || site.Waits < 0 || site.Stack < 0 || site.Stack >= max(len(r.Stacks), 1) {
			return fmt.Errorf("site %+v (%d stacks)", site, len(r.Stacks))
		}
		if i > 0 && site.BlockedNs > r.Sites[i-1].BlockedNs {
			return fmt.Errorf("sites out of order at %s", site.Site)
		}
		blocked += site.BlockedNs
		waits += site.Waits
	}
	if blocked > s.BlockedNs || waits > s.Waits || len(r.Sites) < TopSites && (blocked != s.BlockedNs || waits != s.Waits) {
		return fmt.Errorf("summary %d waits blocked %d ns; the %d sites add to %d, %d", s.Waits, s.BlockedNs, len(r.Sites), waits, blocked)
	}
	if s.Adjustments != len(r.Adjustments)+s.DroppedAdjustment || s.Episodes != len(r.Episodes)+s.DroppedEpisodes {
		return fmt.Errorf("summary %d adjustments %d episodes; %d and %d listed, %d and %d dropped",
			s.Adjustments, s.Episodes, len(r.Adjustments), len(r.Episodes), s.DroppedAdjustment, s.DroppedEpisodes)
	}
	injected := 0
	for _, n := range r.InjectionsByReason {
		injected += n
	}
	if injected != s.Injections {
		return fmt.Errorf("%d injections, %d by reason", s.Injections, injected)
	}
	for i, a := range r.Adjustments {
		if a.AtNs < 0 || i > 0 && a.AtNs < r.Adjustments[i-1].AtNs {
			return fmt.Errorf("adjustment %d at %d ns", i, a.AtNs)
		}
	}
	for i, e := range r.Episodes {
		if e.StartNs < 0 || e.EndNs < e.StartNs || e.Injections < 0 || e.ThreadsMax < e.ThreadsBefore {
			return fmt.Errorf("episode %d: %+v", i, e)
		}
	}
	for i, p := range r.Timeline {
		if p.Second < 0 || i > 0 && p.Second <= r.Timeline[i-1].Second || p.Injections < 0 {
			return fmt.Errorf("timeline point %d: %+v", i, p)
		}
	}
	return nil
}
