package monitor

import (
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/hang"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// lockState is the monitor's lock contention: package locks' analyzer in
// its bounded mode (the pairing, owners, stacks and tables a file's report
// has), plus what only a live view shows: ContentionStart events counted
// as the runtime counts them.
type lockState struct {
	an     *locks.Analyzer
	starts uint64
	// graph is the wait-for graph of the open lock waits (package hang):
	// deadlocks and blocked threads now.
	graph *hang.Analyzer
	// last is the latest event's timestamp: the graph's clock (it sees
	// only the wait events).
	last int64
}

// Bounds of the live lock analysis: a view that runs for days keeps this
// many locks and waiting stacks apart (the rest fold, counted).
const (
	maxLocks       = 4096
	maxLockStacks  = 1024
	maxLockThreads = 4096
)

func newLockState(hdr *nettrace.Header, sym *stacks.Symbols, onCycle func(hang.Cycle), objectTypes func([]uint64) (map[uint64]string, string)) *lockState {
	return &lockState{an: locks.New(hdr, locks.Options{Symbols: sym, NoSamples: true, MaxLocks: maxLocks, MaxStacks: maxLockStacks,
		MaxThreads: maxLockThreads, NoObjectTypes: true, ObjectTypes: objectTypes}), graph: hang.New(hdr, hang.Options{OnCycle: onCycle})}
}

// blockedAfter: a lock wait open this long counts as blocked (and toward
// a deadlock), as triage.MinBlockedSec.
const blockedAfter = time.Second

// Stats implements analysis.Analyzer (locks').
func (l *lockState) Stats() analysis.Stats { return l.an.Stats() }

// Event implements analysis.Analyzer.
func (l *lockState) Event(ev *nettrace.Event) {
	if ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == clrevents.IDContentionStart {
		l.starts++
	}
	l.an.Event(ev)
	l.last = max(l.last, ev.Timestamp)
	if hang.WantsWaits(ev.Meta) {
		l.graph.Event(ev)
	}
}

// LockSummary is lock contention since the session began.
type LockSummary struct {
	// Contentions counts ContentionStart events: what the runtime counts in
	// Monitor.LockContentionCount.
	Contentions uint64 `json:"contentions"`
	// Waits counts completed waits (paired start and stop).
	Waits       uint64  `json:"waits"`
	TotalWaitMS float64 `json:"total_wait_ms"`
	MaxWaitMS   float64 `json:"max_wait_ms"`
	// WaitHistogram is locks' (Summary.WaitHistogram).
	WaitHistogram analysis.Histogram `json:"wait_histogram"`
	// Waiting is the threads waiting now.
	Waiting int `json:"waiting"`
	// Unpaired counts stops whose start was before the session.
	Unpaired uint64 `json:"unpaired"`
	// Blocked counts the lock waits open for a second or longer now;
	// Deadlocks the cycles among them (each waiter waits for a lock the
	// next one holds, owners from the contention events).
	Blocked   int `json:"blocked"`
	Deadlocks int `json:"deadlocks"`
	// Top are the locks with the longest total wait. LockID 0: the runtime
	// does not name locks (before .NET 8), or the locks beyond the 4096
	// tracked.
	Top []LockRow `json:"top"`
}

// LockRow is one lock.
type LockRow struct {
	LockID uint64 `json:"lock_id"`
	Object uint64 `json:"object,omitempty"` // the locked object's address (it moves with GCs)
	// ObjectType is the object's type, when the target's memory named it.
	ObjectType  string  `json:"object_type,omitempty"`
	Waits       uint64  `json:"waits"`
	TotalWaitMS float64 `json:"total_wait_ms"`
	MaxWaitMS   float64 `json:"max_wait_ms"`
	// OwnerThreadID is the OS thread that held the lock during most of
	// the wait time (0: unknown).
	OwnerThreadID uint64 `json:"owner_thread_id"`
}

// summary is the analysis' result as the snapshot's lock summary (and the
// result itself, for a page's lock table).
func (l *lockState) summary(top int) (LockSummary, *locks.Result) {
	r := l.an.Result()
	sum := &r.Summary
	s := LockSummary{
		Contentions: l.starts, Waits: uint64(sum.Contentions), TotalWaitMS: ms(sum.TotalNs), MaxWaitMS: ms(sum.MaxNs),
		WaitHistogram: sum.WaitHistogram, Waiting: sum.Unpaired, Unpaired: uint64(sum.StopsWithoutStart), Top: []LockRow{},
	}
	for _, lk := range r.Locks[:min(top, len(r.Locks))] {
		row := LockRow{LockID: lk.ID, Object: lk.Object, ObjectType: lk.ObjectType, Waits: uint64(lk.Contentions), TotalWaitMS: ms(lk.TotalNs), MaxWaitMS: ms(lk.MaxNs)}
		var best int64
		for _, o := range lk.Owners {
			if o.TotalNs > best && o.Mapped {
				best, row.OwnerThreadID = o.TotalNs, o.OSThreadID
			}
		}
		s.Top = append(s.Top, row)
	}
	waitsFor := map[uint64]uint64{}
	for _, w := range l.graph.OpenLockWaits(l.last) {
		if w.WaitingNs >= blockedAfter.Nanoseconds() {
			s.Blocked++
			waitsFor[w.Waiter] = w.Owner
		}
	}
	s.Deadlocks = len(hang.Cycles(waitsFor))
	return s, r
}
