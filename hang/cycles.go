package hang

import (
	"maps"
	"slices"

	"github.com/clrspy/clrspy/analysis"
)

// Cycles are the cycles of a wait-for graph given as waiter → the thread
// holding what it waits for (a thread waits for one thing at a time):
// each cycle's threads in wait order, starting at its lowest thread id;
// the cycles ordered by that id. A thread that waits for itself is no
// cycle (an owner the event got wrong).
func Cycles(waitsFor map[uint64]uint64) [][]uint64 {
	var out [][]uint64
	done := map[uint64]bool{}
	for _, start := range slices.Sorted(maps.Keys(waitsFor)) {
		if done[start] {
			continue
		}
		var path []uint64
		at := map[uint64]int{}
		cur := start
		for {
			if done[cur] {
				break // joins a path already followed
			}
			if i, ok := at[cur]; ok {
				if c := path[i:]; len(c) > 1 {
					lo := 0
					for j, t := range c {
						if t < c[lo] {
							lo = j
						}
					}
					out = append(out, append(slices.Clone(c[lo:]), c[:lo]...))
				}
				break
			}
			next, ok := waitsFor[cur]
			if !ok || next == 0 {
				break
			}
			at[cur] = len(path)
			path = append(path, cur)
			cur = next
		}
		for _, t := range path {
			done[t] = true
		}
	}
	slices.SortFunc(out, func(x, y []uint64) int { return int(min(1, max(-1, int64(x[0])-int64(y[0])))) })
	return out
}

// OpenLockWait is a lock wait still open: the waiter, the lock's owner as
// last known (the wait's ContentionStart, or the waiter whose
// ContentionStop took the lock since; 0: unknown), how long it has been
// open at the stream's latest event.
type OpenLockWait struct {
	Waiter, Owner uint64
	Lock, Object  uint64
	WaitingNs     int64
}

// OpenLockWaits are the lock waits open at now (a timestamp of the
// stream; 0: the latest event the analyzer saw), by waiter: the wait-for
// graph's edges, without a Result's stacks and names (a caller that
// judges the graph, such as triage, and feeds the analyzer only the wait
// events: its own clock then stops with the last of them).
func (a *Analyzer) OpenLockWaits(now int64) []OpenLockWait {
	if now == 0 {
		now = a.lastTS
	}
	out := []OpenLockWait{}
	for _, tid := range slices.Sorted(maps.Keys(a.open)) {
		w := a.open[tid]
		if w.kind != analysis.WaitLock {
			continue
		}
		out = append(out, OpenLockWait{Waiter: tid, Owner: w.owner, Lock: w.lock, Object: w.object,
			WaitingNs: a.nanos(now) - a.nanos(w.begin)})
	}
	return out
}
