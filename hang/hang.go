package hang

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// Options are the optional settings of New.
type Options struct {
	// Symbols names the stacks (nil: addresses in hex). The caller feeds
	// it the stream's method events (it is an analysis of its own).
	Symbols *stacks.Symbols
	// Threshold is how long every wait of a cycle must have been open for
	// it to be reported as a deadlock (0: one second).
	Threshold time.Duration
	// OnCycle, when set, is called on the goroutine that feeds events as
	// soon as a wait closes a cycle (before the threshold has passed).
	OnCycle func(Cycle)
	// Observers receive every wait that closes (lock and wait-handle
	// waits, owner as last known).
	Observers []analysis.WaitObserver
}

// Task is what the kernel says of one thread of the process now (the
// caller reads /proc: this package does no I/O).
type Task struct {
	Tid     uint64
	Name    string // comm
	State   byte   // R, S, D, T, Z; 0 unknown (the thread is gone)
	Syscall string // the system call's name ("" running or unknown)
	Wchan   string
	// Walk is its native stack walked from outside (nil: not walked).
	Walk *Walk
}

type sample struct {
	stack []uint64
	ts    int64
	typ   clrevents.SampleType
	// since is when the thread's stack became this one: a stack that
	// stayed the same from the first sample on was blocked throughout.
	since, first int64
}

type threadInfo struct {
	managed uint32
	flags   uint32
}

type openWait struct {
	kind          analysis.WaitKind
	lock, object  uint64
	owner         uint64
	begin         int64
	stack         []uint64
	ownerReported bool // the start event named the owner
	nested        int  // wait-handle waits inside this lock wait
}

// Analyzer is the state machine. Not safe for concurrent use.
type Analyzer struct {
	hdr     *nettrace.Header
	ptrSize int
	opts    Options

	samples   map[uint64]*sample
	threads   map[uint64]*threadInfo
	byObject  map[uint64]uint64 // runtime Thread object → OS tid
	open      map[uint64]*openWait
	lockOwner map[uint64]uint64
	formed    map[string]int64 // cycle key → when it formed
	free      []*openWait      // closed waits, for reuse (newWait)
	lastTS    int64
	sawLockV2 bool
	mem       *Memory // during ResultWithMemory
	// The runtime's suspensions during the session (the sample
	// profiler's walks, and any GC): what the target paid, as package
	// gcpause pairs them (Stopped).
	pausedNs, maxPauseNs int64
	pauses               int
	stats                analysis.Stats
}

// New returns an analyzer for a stream with header hdr.
func New(hdr *nettrace.Header, opts Options) *Analyzer {
	if opts.Threshold <= 0 {
		opts.Threshold = time.Second
	}
	ps := 8
	if hdr != nil && hdr.PointerSize != 0 {
		ps = int(hdr.PointerSize)
	}
	return &Analyzer{hdr: hdr, ptrSize: ps, opts: opts,
		samples: map[uint64]*sample{}, threads: map[uint64]*threadInfo{}, byObject: map[uint64]uint64{},
		open: map[uint64]*openWait{}, lockOwner: map[uint64]uint64{}, formed: map[string]int64{}}
}

// Wants reports whether m is an event the analyzer reads.
func Wants(m *nettrace.Metadata) bool { return WantsSamples(m) || WantsWaits(m) }

// WantsSamples: the sample profiler's samples and the thread events.
func WantsSamples(m *nettrace.Metadata) bool {
	switch m.Runtime {
	case nettrace.SampleProfiler:
		return m.EventID == clrevents.IDThreadSample
	case nettrace.Runtime:
		switch m.EventID {
		case clrevents.IDThreadCreated:
			return true
		}
	case nettrace.Rundown:
		return m.EventID == clrevents.IDRundownThreadDC
	}
	return false
}

// Stopped takes one runtime suspension (analysis.StoppedObserver: package
// gcpause pairs them, in a Set or through its OnStopped): the target's
// paused time (Result.TargetPaused).
func (a *Analyzer) Stopped(s *analysis.Stopped) {
	d := max(s.EndNanos-s.BeginNanos, 0)
	a.pauses++
	a.pausedNs += d
	a.maxPauseNs = max(a.maxPauseNs, d)
}

// WantsWaits: the lock and wait-handle events of the wait-for graph, and
// the thread events that map owners.
func WantsWaits(m *nettrace.Metadata) bool {
	switch m.Runtime {
	case nettrace.Runtime:
		switch m.EventID {
		case clrevents.IDContentionStart, clrevents.IDContentionStop, clrevents.IDWaitHandleWaitStart,
			clrevents.IDWaitHandleWaitStop, clrevents.IDThreadCreated:
			return true
		}
	case nettrace.Rundown:
		return m.EventID == clrevents.IDRundownThreadDC
	}
	return false
}

// Stats implements analysis.Analyzer.
func (a *Analyzer) Stats() analysis.Stats { return a.stats }

// Event implements analysis.Analyzer.
func (a *Analyzer) Event(ev *nettrace.Event) {
	m := ev.Meta
	if ev.Timestamp > a.lastTS {
		// Rundown events come at the session's stop: the clock of "now"
		// for waits still open.
		a.lastTS = ev.Timestamp
	}
	switch m.Runtime {
	case nettrace.SampleProfiler:
		if m.EventID != clrevents.IDThreadSample {
			return
		}
		e, err := clrevents.DecodeThreadSample(ev.Payload, m.Version, a.ptrSize)
		if a.stats.Failed(err) {
			return
		}
		a.stats.Used()
		s := a.samples[ev.ThreadID]
		if s == nil {
			s = &sample{first: ev.Timestamp, since: ev.Timestamp}
			a.samples[ev.ThreadID] = s
		} else if !slices.Equal(s.stack, ev.Stack) {
			s.since = ev.Timestamp
		}
		s.stack = append(s.stack[:0], ev.Stack...)
		s.ts, s.typ = ev.Timestamp, e.Type
	case nettrace.Runtime:
		switch m.EventID {
		case clrevents.IDThreadCreated:
			a.thread(ev)
		case clrevents.IDContentionStart:
			a.contentionStart(ev)
		case clrevents.IDContentionStop:
			a.stats.Used()
			a.closeWait(ev.ThreadID, analysis.WaitLock, ev.Timestamp)
		case clrevents.IDWaitHandleWaitStart:
			e, err := clrevents.DecodeWaitHandleWaitStart(ev.Payload, m.Version, a.ptrSize)
			if a.stats.Failed(err) {
				return
			}
			a.stats.Used()
			if w := a.open[ev.ThreadID]; w != nil && w.kind == analysis.WaitLock {
				// A contended Monitor blocks on an event of its own: the
				// lock wait is what the thread waits for.
				w.nested++
				return
			}
			a.open[ev.ThreadID] = a.newWait(openWait{kind: analysis.WaitHandle, object: e.AssociatedObjectID, begin: ev.Timestamp}, ev.Stack)
		case clrevents.IDWaitHandleWaitStop:
			a.stats.Used()
			if w := a.open[ev.ThreadID]; w != nil && w.kind == analysis.WaitLock && w.nested > 0 {
				w.nested--
				return
			}
			a.closeWait(ev.ThreadID, analysis.WaitHandle, ev.Timestamp)
		}
	case nettrace.Rundown:
		if m.EventID == clrevents.IDRundownThreadDC {
			a.thread(ev)
		}
	}
}

func (a *Analyzer) thread(ev *nettrace.Event) {
	e, err := clrevents.DecodeThreadCreated(ev.Payload, ev.Meta.Version, a.ptrSize)
	if a.stats.Failed(err) {
		return
	}
	a.stats.Used()
	tid := uint64(e.OSThreadID)
	if tid == 0 {
		tid = ev.ThreadID
	}
	a.threads[tid] = &threadInfo{managed: e.ManagedID, flags: e.Flags}
	if e.ThreadObject != 0 {
		a.byObject[e.ThreadObject] = tid
	}
}

// owner maps a ContentionStart owner value to an OS thread id: every
// runtime measured writes the OS tid (package locks); a runtime Thread
// object's address is mapped through the thread events.
func (a *Analyzer) owner(v uint64) uint64 {
	if tid, ok := a.byObject[v]; ok {
		return tid
	}
	return v
}

func (a *Analyzer) contentionStart(ev *nettrace.Event) {
	m := ev.Meta
	e, err := clrevents.DecodeContentionStart(ev.Payload, m.Version, a.ptrSize)
	if a.stats.Failed(err) {
		return
	}
	a.stats.Used()
	if e.Flags == clrevents.ContentionNative {
		return
	}
	w := a.newWait(openWait{kind: analysis.WaitLock, lock: e.LockID, object: e.AssociatedObjectID, begin: ev.Timestamp}, ev.Stack)
	if e.HasLock {
		a.sawLockV2 = true
		if e.LockOwnerThreadID != 0 {
			w.owner, w.ownerReported = a.owner(e.LockOwnerThreadID), true
			a.lockOwner[e.LockID] = w.owner
		} else {
			w.owner = a.lockOwner[e.LockID]
		}
	}
	a.open[ev.ThreadID] = w
	if c, ok := a.cycleFrom(ev.ThreadID); ok {
		key := c.key()
		if _, seen := a.formed[key]; !seen {
			a.formed[key] = ev.Timestamp
			if a.opts.OnCycle != nil {
				a.opts.OnCycle(c)
			}
		}
	}
}

func (a *Analyzer) closeWait(tid uint64, kind analysis.WaitKind, ts int64) {
	w := a.open[tid]
	if w == nil || w.kind != kind {
		return
	}
	delete(a.open, tid)
	defer a.freeWait(w)
	if kind == analysis.WaitLock && w.lock != 0 {
		// The waiter now holds the lock: the others wait for it.
		a.lockOwner[w.lock] = tid
		for _, o := range a.open {
			if o.kind == analysis.WaitLock && o.lock == w.lock {
				o.owner = tid
			}
		}
	}
	if len(a.opts.Observers) > 0 {
		fact := analysis.Wait{Thread: tid, Kind: kind, Object: w.object, Owner: w.owner,
			BeginNanos: a.nanos(w.begin), EndNanos: a.nanos(ts)}
		for _, o := range a.opts.Observers {
			o.Wait(&fact)
		}
	}
}

// maxFree bounds the closed waits kept for reuse.
const maxFree = 64

// newWait is v with a copy of stack, in a closed wait's memory when one is
// free: a live view that sees millions of waits allocates none per wait.
func (a *Analyzer) newWait(v openWait, stack []uint64) *openWait {
	var w *openWait
	if n := len(a.free); n > 0 {
		w, a.free = a.free[n-1], a.free[:n-1]
	} else {
		w = &openWait{}
	}
	buf := w.stack[:0]
	*w = v
	w.stack = append(buf, stack...)
	return w
}

// freeWait keeps a closed wait for reuse (nothing refers to it once it
// left open).
func (a *Analyzer) freeWait(w *openWait) {
	if len(a.free) < maxFree {
		a.free = append(a.free, w)
	}
}

func (a *Analyzer) nanos(ts int64) int64 {
	if a.hdr == nil {
		return ts
	}
	return a.hdr.Nanos(ts)
}

// Cycle is a cycle of the wait-for graph: Threads[i] waits for a lock
// Threads[(i+1)%n] holds (Locks[i]).
type Cycle struct {
	Threads []uint64
	Locks   []uint64 // lock ids
	Objects []uint64 // the locked objects' addresses
}

func (c Cycle) key() string {
	var b strings.Builder
	for _, t := range c.Threads {
		fmt.Fprintf(&b, "%d,", t)
	}
	return b.String()
}

// String is "thread 12 waits for 13 (lock 0x..), thread 13 waits for 12 (...)".
func (c Cycle) String() string {
	var parts []string
	for i, t := range c.Threads {
		parts = append(parts, fmt.Sprintf("thread %d waits for a lock (%#x) thread %d holds", t, c.Locks[i], c.Threads[(i+1)%len(c.Threads)]))
	}
	return strings.Join(parts, "; ")
}

// cycleFrom follows the owner chain from tid and reports the cycle through
// tid, if any, rotated to start at its lowest thread id.
func (a *Analyzer) cycleFrom(tid uint64) (Cycle, bool) {
	// First without allocating (every lock wait's start asks): does the
	// owner chain come back to tid?
	back := false
	for cur, n := tid, 0; n <= len(a.open); n++ {
		w := a.open[cur]
		if w == nil || w.kind != analysis.WaitLock || w.owner == 0 || w.owner == cur {
			return Cycle{}, false
		}
		if cur = w.owner; cur == tid {
			back = true
			break
		}
	}
	if !back {
		return Cycle{}, false
	}
	var c Cycle
	cur := tid
	for range len(a.open) + 1 {
		w := a.open[cur]
		if w == nil || w.kind != analysis.WaitLock || w.owner == 0 || w.owner == cur {
			return Cycle{}, false
		}
		c.Threads = append(c.Threads, cur)
		c.Locks = append(c.Locks, w.lock)
		c.Objects = append(c.Objects, w.object)
		cur = w.owner
		if cur == tid {
			lo := 0
			for i, t := range c.Threads {
				if t < c.Threads[lo] {
					lo = i
				}
			}
			rot := func(s []uint64) []uint64 { return append(slices.Clone(s[lo:]), s[:lo]...) }
			return Cycle{Threads: rot(c.Threads), Locks: rot(c.Locks), Objects: rot(c.Objects)}, true
		}
		if slices.Contains(c.Threads, cur) {
			return Cycle{}, false // a cycle that does not pass through tid
		}
	}
	return Cycle{}, false
}
