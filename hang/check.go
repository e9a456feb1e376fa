package hang

import (
	"fmt"
	"slices"
)

// CheckValid reports the first broken invariant of r: the counts per wait
// kind add up to the threads, each thread is listed once, the groups hold
// distinct listed threads with their count, and each deadlock is a cycle
// (edge i's waiter is thread i, and unless suspected its owner is thread
// i+1).
func (r *Result) CheckValid() error {
	n := 0
	for _, c := range r.ByWaitKind {
		n += c
	}
	if n != len(r.Threads) {
		return fmt.Errorf("%d threads counted by wait kind, %d listed", n, len(r.Threads))
	}
	listed := map[uint64]bool{}
	for _, t := range r.Threads {
		if listed[t.OSTid] {
			return fmt.Errorf("thread %d listed twice", t.OSTid)
		}
		listed[t.OSTid] = true
	}
	grouped := map[uint64]bool{}
	for i, g := range r.Groups {
		if g.Count != len(g.Threads) || g.Count == 0 || len(g.Frames) == 0 {
			return fmt.Errorf("group %d: count %d, %d threads, %d frames", i, g.Count, len(g.Threads), len(g.Frames))
		}
		for _, t := range g.Threads {
			if !listed[t] || grouped[t] {
				return fmt.Errorf("group %d: thread %d unlisted or in two groups", i, t)
			}
			grouped[t] = true
		}
	}
	for i, d := range r.Deadlocks {
		if len(d.Threads) < 2 || len(d.Locks) != len(d.Threads) {
			return fmt.Errorf("deadlock %d: %d threads, %d locks", i, len(d.Threads), len(d.Locks))
		}
		if d.Suspected && d.Reason == "" {
			return fmt.Errorf("deadlock %d: suspected without a reason", i)
		}
		for j, l := range d.Locks {
			if l.WaiterOSTid != d.Threads[j] {
				return fmt.Errorf("deadlock %d: edge %d's waiter %d is not thread %d", i, j, l.WaiterOSTid, d.Threads[j])
			}
			next := d.Threads[(j+1)%len(d.Threads)]
			if !d.Suspected && (l.OwnerOSTid == nil || *l.OwnerOSTid != next) {
				return fmt.Errorf("deadlock %d: edge %d's owner is not thread %d", i, j, next)
			}
		}
	}
	for i, c := range r.HangChains {
		if len(c.Waiters) == 0 || slices.Contains(c.Waiters, c.Root) {
			return fmt.Errorf("hang chain %d: %d waiters, root among them: %v", i, len(c.Waiters), slices.Contains(c.Waiters, c.Root))
		}
	}
	return nil
}
