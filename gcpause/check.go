package gcpause

import "fmt"

// CheckValid reports the first invariant r breaks, nil when it breaks
// none: no negative time, every complete GC counted once in its
// generation, its type and the histogram, totals no larger than the sums
// they come from, suspensions by reason consistent. Every fixture test and
// fuzz target of the package runs it, so a change that makes the rollup
// disagree with its rows fails there, whatever the input.
func (r *Result) CheckValid() error {
	complete := 0
	for _, g := range r.GCs {
		switch {
		case g.PauseNanos < 0 || g.SuspendNanos < 0 || g.PauseRuntimeNanos < -1:
			return fmt.Errorf("GC %d: negative pause %d, suspend %d or runtime pause %d ns", g.Number, g.PauseNanos, g.SuspendNanos, g.PauseRuntimeNanos)
		case g.DurationNanos < -1:
			return fmt.Errorf("GC %d: duration %d ns", g.Number, g.DurationNanos)
		case g.Complete && !g.HasHeapStats:
			return fmt.Errorf("GC %d: complete without heap statistics", g.Number)
		}
		if g.Complete {
			complete++
		}
	}
	if r.Complete+r.Incomplete != r.Started || r.All.Count != r.Complete {
		return fmt.Errorf("%d GCs started, %d complete + %d incomplete, %d in the rollup", r.Started, r.Complete, r.Incomplete, r.All.Count)
	}
	if len(r.GCs) == r.Started && complete != r.Complete {
		return fmt.Errorf("%d complete GC rows, the rollup counts %d", complete, r.Complete)
	}
	var byGen, induced, byType int
	for _, s := range r.ByGen {
		byGen += s.Count
		induced += s.Induced
		if s.MaxNanos > r.All.MaxNanos {
			return fmt.Errorf("a generation's longest pause %d ns is longer than all's %d", s.MaxNanos, r.All.MaxNanos)
		}
	}
	for _, n := range r.ByType {
		byType += n
	}
	var hist int
	for _, n := range r.All.Histogram.Counts {
		hist += int(n)
	}
	if byGen != r.All.Count || induced != r.All.Induced || byType != r.All.Count {
		return fmt.Errorf("%d GCs in all, %d by generation, %d by type; %d induced, %d by generation", r.All.Count, byGen, byType, r.All.Induced, induced)
	}
	if hist != r.All.Count-r.All.StartUnseen {
		return fmt.Errorf("histogram counts %d GCs, the rollup %d (%d with an unseen start)", hist, r.All.Count, r.All.StartUnseen)
	}
	for i, s := range append(r.ByGen[:], r.All) {
		if s.TotalNanos < 0 || s.TotalNanos > s.SumNanos || s.MaxNanos > s.SumNanos || s.MaxSuspend > s.TotalSuspend || s.PausePercent < 0 || s.PausePercent > 100 {
			return fmt.Errorf("rollup %d: stopped %d ns, sum %d, max %d, suspend max %d of %d, %.3f %%", i, s.TotalNanos, s.SumNanos, s.MaxNanos, s.MaxSuspend, s.TotalSuspend, s.PausePercent)
		}
	}
	for i, g := range r.Longest {
		if i > 0 && g.PauseNanos > r.Longest[i-1].PauseNanos {
			return fmt.Errorf("longest pauses out of order at %d", i)
		}
	}
	for _, s := range r.ByReason {
		if s.Count < 0 || s.Incomplete > s.Count || s.MaxNanos > s.TotalNanos || s.MaxSuspend > s.TotalSuspend || s.TotalNanos < 0 {
			return fmt.Errorf("%s: %d suspensions (%d incomplete), %d ns total, max %d", s.Reason, s.Count, s.Incomplete, s.TotalNanos, s.MaxNanos)
		}
	}
	return nil
}
