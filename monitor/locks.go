package monitor

import (
	"math"
	"sort"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// lockState pairs ContentionStart/Stop per thread (as package locks does)
// and keeps totals, a wait histogram and per-lock aggregates, bounded:
// beyond maxLocks distinct locks, waits count under an "other" entry. The
// owner a ContentionStart v2 names is the owner's OS thread id on every
// runtime measured (docs/locks.md).
type lockState struct {
	open        map[uint64]lockWait // by waiting thread
	locks       map[uint64]*lockAcc
	other       lockAcc
	contentions uint64
	waits       uint64
	total, max  int64
	unpaired    uint64 // stops without a start (the wait began before the session)
	hist        hist
	lockIDs     bool // the runtime names locks (ContentionStart v2, .NET 8+)
}

type lockWait struct {
	ts           int64
	lock, object uint64
	owner        uint64
}

type lockAcc struct {
	id, object uint64
	waits      uint64
	total, max int64
	owners     [4]ownerAcc
}

type ownerAcc struct {
	tid   uint64
	waits uint64
	total int64
}

const maxLocks = 4096

func newLockState() lockState {
	return lockState{open: make(map[uint64]lockWait), locks: make(map[uint64]*lockAcc), hist: newHist(WaitBounds)}
}

func (l *lockState) start(ev *nettrace.Event, ptr int, ts int64, st *analysis.Stats) {
	e, err := clrevents.DecodeContentionStart(ev.Payload, ev.Meta.Version, ptr)
	if st.Failed(err) {
		return
	}
	st.Used()
	l.contentions++
	w := lockWait{ts: ts}
	if e.HasLock {
		l.lockIDs = true
		w.lock, w.object, w.owner = e.LockID, e.AssociatedObjectID, e.LockOwnerThreadID
	}
	if len(l.open) >= 1<<16 {
		// Starts whose stops were lost: start over rather than grow.
		clear(l.open)
	}
	l.open[ev.ThreadID] = w
}

func (l *lockState) stop(ev *nettrace.Event, ptr int, ts int64, st *analysis.Stats) {
	e, err := clrevents.DecodeContentionStop(ev.Payload, ev.Meta.Version, ptr)
	if st.Failed(err) {
		return
	}
	st.Used()
	w, ok := l.open[ev.ThreadID]
	if !ok {
		l.unpaired++
		return
	}
	delete(l.open, ev.ThreadID)
	d := max(ts-w.ts, 0)
	if e.HasDuration {
		d = int64(math.Round(e.DurationNs))
	}
	l.waits++
	l.total += d
	l.max = max(l.max, d)
	l.hist.add(d)
	a := l.locks[w.lock]
	if a == nil {
		if len(l.locks) < maxLocks {
			a = &lockAcc{id: w.lock}
			l.locks[w.lock] = a
		} else {
			a = &l.other
		}
	}
	if w.object != 0 {
		a.object = w.object
	}
	a.waits++
	a.total += d
	a.max = max(a.max, d)
	if w.owner != 0 {
		a.addOwner(w.owner, d)
	}
}

// addOwner credits a wait to its owner; a lock keeps its four heaviest
// owners (a new one replaces the lightest).
func (a *lockAcc) addOwner(tid uint64, d int64) {
	light := 0
	for i := range a.owners {
		o := &a.owners[i]
		if o.tid == tid || o.tid == 0 {
			o.tid = tid
			o.waits++
			o.total += d
			return
		}
		if o.total < a.owners[light].total {
			light = i
		}
	}
	a.owners[light] = ownerAcc{tid, 1, d}
}

// LockSummary is lock contention since the session began.
type LockSummary struct {
	// Contentions counts ContentionStart events: what the runtime counts in
	// Monitor.LockContentionCount.
	Contentions uint64 `json:"contentions"`
	// Waits counts completed waits (paired start and stop).
	Waits         uint64    `json:"waits"`
	TotalWaitMS   float64   `json:"total_wait_ms"`
	MaxWaitMS     float64   `json:"max_wait_ms"`
	WaitHistogram Histogram `json:"wait_histogram"`
	// Waiting is the threads waiting now.
	Waiting int `json:"waiting"`
	// Unpaired counts stops whose start was before the session.
	Unpaired uint64 `json:"unpaired"`
	// Top are the locks with the longest total wait. LockID 0: the runtime
	// does not name locks (before .NET 8), or the locks beyond the 4096
	// tracked.
	Top []LockRow `json:"top"`
}

// LockRow is one lock.
type LockRow struct {
	LockID      uint64  `json:"lock_id"`
	Object      uint64  `json:"object,omitempty"` // the locked object's address (it moves with GCs)
	Waits       uint64  `json:"waits"`
	TotalWaitMS float64 `json:"total_wait_ms"`
	MaxWaitMS   float64 `json:"max_wait_ms"`
	// OwnerThreadID is the OS thread that held the lock during most of
	// the wait time (0: unknown).
	OwnerThreadID uint64 `json:"owner_thread_id"`
}

func (l *lockState) summary(top int) LockSummary {
	s := LockSummary{
		Contentions: l.contentions, Waits: l.waits, TotalWaitMS: ms(l.total), MaxWaitMS: ms(l.max),
		WaitHistogram: l.hist.snapshot(), Waiting: len(l.open), Unpaired: l.unpaired, Top: []LockRow{},
	}
	accs := make([]*lockAcc, 0, len(l.locks)+1)
	for _, a := range l.locks {
		accs = append(accs, a)
	}
	if l.other.waits > 0 {
		accs = append(accs, &l.other)
	}
	sort.Slice(accs, func(i, j int) bool {
		if accs[i].total != accs[j].total {
			return accs[i].total > accs[j].total
		}
		return accs[i].id < accs[j].id
	})
	for _, a := range accs[:min(top, len(accs))] {
		r := LockRow{LockID: a.id, Object: a.object, Waits: a.waits, TotalWaitMS: ms(a.total), MaxWaitMS: ms(a.max)}
		var best ownerAcc
		for _, o := range a.owners {
			if o.total > best.total {
				best = o
			}
		}
		r.OwnerThreadID = best.tid
		s.Top = append(s.Top, r)
	}
	return s
}
