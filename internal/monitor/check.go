package monitor

import (
	"errors"
	"fmt"
)

// CheckValid reports the first invariant s breaks, nil when it breaks
// none: each analysis' result it holds is valid by that analysis' own
// CheckValid (the pause rollup, locks, counters, thread pool, exceptions;
// not the CPU window's profile, one sample per kept node of its tree,
// without threads, which stacks' invariants of a sampler's profile do not
// fit), and what the live model adds agrees with
// them: the windows cover no more than the session and their shares are
// percentages, GC-stopped time within the stopped time; the stopped time
// for GCs no longer than the session; the kept GC rows no more than the
// GCs counted, each number once; the longest GC among the counted ones.
// The monitor's fixture tests run it on every snapshot they take.
func (s *Snapshot) CheckValid() error {
	if r := s.Rollup; r != nil {
		if err := r.CheckValid(); err != nil {
			return fmt.Errorf("pauses: %w", err)
		}
	}
	for _, c := range []struct {
		what string
		r    interface{ CheckValid() error }
		ok   bool
	}{
		{"locks", s.LocksResult, s.LocksResult != nil},
		{"counters", s.Counters, s.Counters != nil},
		{"thread pool", s.ThreadPoolResult, s.ThreadPoolResult != nil},
		{"exceptions", s.ExceptionsResult, s.ExceptionsResult != nil},
	} {
		if !c.ok {
			continue
		}
		if err := c.r.CheckValid(); err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
	}
	// Times are sums of float seconds and milliseconds: a rounding's
	// worth of slack.
	const eps = 1e-6
	elapsed := s.Session.ElapsedSec
	for _, w := range s.Windows {
		switch {
		case w.CoveredSec < 0 || w.CoveredSec > elapsed+eps || (w.Seconds > 0 && w.CoveredSec > w.Seconds+eps):
			return fmt.Errorf("window %g s covers %g s of a %g s session", w.Seconds, w.CoveredSec, elapsed)
		case w.GCPausedPercent < 0 || w.SuspendedPercent > 100+eps || w.GCPausedPercent > w.SuspendedPercent+eps:
			return fmt.Errorf("window %g s: %g%% paused for GCs, %g%% suspended", w.Seconds, w.GCPausedPercent, w.SuspendedPercent)
		}
	}
	g := &s.GC
	if g.StoppedMS < 0 || g.StoppedMS > elapsed*1e3+eps {
		return fmt.Errorf("%g ms stopped for GCs in a %g s session", g.StoppedMS, elapsed)
	}
	complete := 0
	seen := make(map[uint32]bool, len(s.GCs))
	for i := range s.GCs {
		r := &s.GCs[i]
		if seen[r.Number] {
			return fmt.Errorf("GC %d: two rows", r.Number)
		}
		seen[r.Number] = true
		if r.Complete {
			complete++
		}
	}
	if complete > g.GCCount {
		return fmt.Errorf("%d complete GC rows, %d GCs counted", complete, g.GCCount)
	}
	if l := g.Longest; l != nil && (!l.Complete || l.PauseMS > g.MaxPauseMS+eps) {
		return fmt.Errorf("longest GC %d: complete %v, %g ms paused, the summary's longest %g ms", l.Number, l.Complete, l.PauseMS, g.MaxPauseMS)
	}
	if s.Session.State == StateError && s.Session.Error == "" {
		return errors.New("session in error without an error")
	}
	return nil
}
