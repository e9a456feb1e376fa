package locks

import "fmt"

// CheckValid reports the first invariant r breaks, nil when it breaks
// none: no negative time; the summary's waits and time are the sums of
// the locks' and of the threads'; each lock's histogram counts each of its
// waits once, its owners and stacks no more waits than it had, its
// longest wait no longer than its total; stack indices in range. Every
// fixture test and the fuzz target run it.
func (r *Result) CheckValid() error {
	s := &r.Summary
	if s.Contentions < 0 || s.TotalNs < 0 || s.MaxNs < 0 || s.MaxNs > s.TotalNs {
		return fmt.Errorf("summary: %d waits, %d ns, max %d ns", s.Contentions, s.TotalNs, s.MaxNs)
	}
	var waits, total, max int64
	for i := range r.Locks {
		l := &r.Locks[i]
		if l.Contentions < 0 || l.TotalNs < 0 || l.MaxNs < 0 || l.MaxNs > l.TotalNs {
			return fmt.Errorf("lock %#x: %d waits, %d ns, max %d ns", l.ID, l.Contentions, l.TotalNs, l.MaxNs)
		}
		waits += l.Contentions
		total += l.TotalNs
		max = maxOf(max, l.MaxNs)
		var hist, owned, stacked int64
		for _, n := range l.Histogram.Counts {
			hist += int64(n)
		}
		for _, o := range l.Owners {
			owned += o.Contentions
		}
		for _, sw := range l.Stacks {
			stacked += sw.Contentions
			if sw.Stack < 0 || sw.Stack >= len(r.Stacks) {
				return fmt.Errorf("lock %#x: stack %d of %d", l.ID, sw.Stack, len(r.Stacks))
			}
		}
		if hist != l.Contentions || owned > l.Contentions || stacked > l.Contentions {
			return fmt.Errorf("lock %#x: %d waits, histogram %d, owners %d, stacks %d", l.ID, l.Contentions, hist, owned, stacked)
		}
	}
	if s.WaitHistogram.Count != uint64(s.Contentions) || s.WaitHistogram.SumNanos != s.TotalNs {
		return fmt.Errorf("summary %d waits %d ns; its histogram %d, %d ns", s.Contentions, s.TotalNs, s.WaitHistogram.Count, s.WaitHistogram.SumNanos)
	}
	if waits != s.Contentions || total != s.TotalNs || max != s.MaxNs {
		return fmt.Errorf("summary %d waits %d ns max %d; the locks add to %d, %d, max %d", s.Contentions, s.TotalNs, s.MaxNs, waits, total, max)
	}
	var twaits, ttotal int64
	for _, t := range r.Threads {
		twaits += t.Contentions
		ttotal += t.TotalNs
	}
	if len(r.Threads) > 0 && (twaits != s.Contentions || ttotal != s.TotalNs) {
		return fmt.Errorf("summary %d waits %d ns; the threads add to %d, %d", s.Contentions, s.TotalNs, twaits, ttotal)
	}
	for _, w := range r.StillWaiting {
		if w.SoFarNs < 0 {
			return fmt.Errorf("thread %d waits %d ns so far", w.Thread, w.SoFarNs)
		}
	}
	return nil
}

func maxOf(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
