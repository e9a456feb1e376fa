package hang

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/clrspy/clrspy/analysis"
)

// Result is every thread of the process, grouped, and the deadlocks found.
type Result struct {
	Threads []Thread `json:"threads"`
	Groups  []Group  `json:"groups"`
	// Deadlocks are the cycles of the wait-for graph whose waits have all
	// been open for the threshold, and (Suspected) those the stacks alone
	// suggest.
	Deadlocks  []Deadlock  `json:"deadlocks"`
	HangChains []HangChain `json:"hang_chains"`
	// ByWaitKind counts threads per wait kind ("running": no wait).
	ByWaitKind map[string]int `json:"by_wait_kind"`
	// Sampled is the number of threads with a managed stack sample.
	Sampled int `json:"sampled"`
	// TargetPaused is what the session cost the target: the runtime's
	// suspensions while it ran (each sample of every thread is taken with
	// the runtime suspended), from SuspendEEBegin to RestartEEEnd as
	// package gcpause pairs them (Analyzer.Stopped).
	TargetPaused Paused   `json:"target_paused"`
	Notes        []string `json:"notes"`
}

// Paused totals the runtime's suspensions.
type Paused struct {
	Count   int     `json:"count"`
	TotalMs float64 `json:"total_ms"`
	MaxMs   float64 `json:"max_ms"`
}

// Thread is one OS thread of the process.
type Thread struct {
	OSTid     uint64  `json:"os_tid"`
	ManagedID *uint32 `json:"managed_id"`
	Name      string  `json:"name"`
	Kind      string  `json:"kind"`
	// State is the kernel's: running, sleeping, disk, stopped, zombie or
	// unknown (no /proc: a trace file, or the thread ended).
	State   string `json:"state"`
	Syscall string `json:"syscall"`
	Wchan   string `json:"wchan,omitempty"`
	Wait    *Wait  `json:"wait"`
	// Holds are the locks the thread holds, as the target's memory says
	// (none read: a trace file, or .NET 8).
	Holds  []Held   `json:"holds,omitempty"`
	Frames []string `json:"frames"`
	// MixedFrames is the whole stack, newest first: the kernel's frames,
	// the native ones, Frames, and the native frames that started the
	// thread (nil: not walked). MixedNote says what it lacks and why.
	MixedFrames []string `json:"mixed_frames,omitempty"`
	MixedNote   string   `json:"mixed_note,omitempty"`
}

// Wait is what a thread waits on.
type Wait struct {
	Kind string `json:"kind"`
	// Frame is the frame that says so ("" when the kernel's state did).
	Frame         string `json:"frame,omitempty"`
	SyncOverAsync bool   `json:"sync_over_async"`
	ObjectType    string `json:"object_type"`
	// Object is the locked object's address (hex) when an event or the
	// target's memory named it or, when a static field holds it, that
	// field (Class.Field; the address in ObjectAddress).
	Object        string `json:"object"`
	ObjectAddress string `json:"object_address,omitempty"`
	LockID        uint64 `json:"lock_id,omitempty"`
	// OwnerOSTid is the thread holding the lock, when known.
	OwnerOSTid         *uint64 `json:"owner_os_tid"`
	OwnerUnknownReason string  `json:"owner_unknown_reason,omitempty"`
	// Source says where the owner came from: contention_events (the
	// wait's ContentionStart) or target_memory (its sync block).
	Source string `json:"source,omitempty"`
	// ObjectInferred: the memory names the lock's holder, not the lock a
	// thread waits for; this one is the only contended lock the thread
	// does not hold.
	ObjectInferred bool `json:"object_inferred,omitempty"`
	// WaitingMs is how long the wait has been open, when its start event
	// was seen.
	WaitingMs float64 `json:"waiting_ms,omitempty"`
}

// Group is threads with identical managed stacks.
type Group struct {
	Threads  []uint64 `json:"threads"`
	Count    int      `json:"count"`
	WaitKind string   `json:"wait_kind"`
	// AppFrame is the newest application frame (not the framework's):
	// what the group's code was doing ("" when every frame is the
	// framework's).
	AppFrame string   `json:"app_frame,omitempty"`
	Frames   []string `json:"frames"`
}

// Deadlock is a cycle of threads each waiting for a lock the next holds.
type Deadlock struct {
	Threads []uint64       `json:"threads"`
	Locks   []DeadlockLock `json:"locks"`
	// Suspected marks a deadlock inferred from the stacks alone (no event
	// named the owners); Reason says why.
	Suspected bool   `json:"suspected"`
	Reason    string `json:"reason,omitempty"`
	// Source: contention_events, target_memory or stacks (suspected).
	Source string `json:"source"`
}

// DeadlockLock is one edge of a deadlock: the waiter, the lock, its owner.
type DeadlockLock struct {
	LockID        uint64   `json:"lock_id"`
	Object        string   `json:"object"`
	ObjectAddress string   `json:"object_address,omitempty"`
	ObjectType    string   `json:"object_type"`
	OwnerOSTid    *uint64  `json:"owner_os_tid"`
	WaiterOSTid   uint64   `json:"waiter_os_tid"`
	WaitingMs     float64  `json:"waiting_ms"`
	Frames        []string `json:"frames"`
}

// HangChain is threads waiting, through lock owners, on one thread that is
// itself blocked on something other than a lock (or running).
type HangChain struct {
	Root     uint64   `json:"root_os_tid"`
	RootWait *Wait    `json:"root_wait"`
	Waiters  []uint64 `json:"waiters"`
}

var stateNames = map[byte]string{'R': "running", 'S': "sleeping", 'I': "sleeping", 'D': "disk", 'T': "stopped", 't': "stopped", 'Z': "zombie", 'X': "zombie"}

// Result joins what the events said with tasks, every thread of the
// process as /proc lists it (nil for a trace file: the threads the events
// name). It may be called mid-stream.
func (a *Analyzer) Result(tasks []Task) *Result {
	r := &Result{Threads: []Thread{}, Groups: []Group{}, Deadlocks: []Deadlock{}, HangChains: []HangChain{},
		ByWaitKind: map[string]int{}, Notes: []string{}}
	byTid := map[uint64]Task{}
	for _, t := range tasks {
		byTid[t.Tid] = t
	}
	if tasks == nil {
		for tid := range a.samples {
			byTid[tid] = Task{Tid: tid}
		}
		for tid := range a.open {
			byTid[tid] = Task{Tid: tid}
		}
	}
	tids := slices.Sorted(maps.Keys(byTid))
	index := map[uint64]int{}
	for _, tid := range tids {
		t := byTid[tid]
		th := Thread{OSTid: tid, Name: t.Name, State: stateNames[t.State], Syscall: t.Syscall, Wchan: t.Wchan, Frames: []string{}}
		if th.State == "" {
			th.State = "unknown"
		}
		info := a.threads[tid]
		if info != nil {
			id := info.managed
			th.ManagedID = &id
			th.Kind = threadKind(info.flags, true, t.Name)
		} else {
			th.Kind = threadKind(0, false, t.Name)
			if id, ok := a.mem.managedID(tid); ok {
				th.ManagedID = &id
			}
		}
		if s := a.samples[tid]; s != nil {
			r.Sampled++
			th.Frames = a.opts.Symbols.Frames(s.stack)
		} else if w := a.open[tid]; w != nil && len(w.stack) > 0 {
			th.Frames = a.opts.Symbols.Frames(w.stack)
		}
		th.MixedFrames = mixedFrames(t.Walk, th.Frames)
		if t.Walk != nil {
			th.MixedNote = t.Walk.Reason
		}
		th.Wait = Classify(th.Frames, t.State, t.Syscall)
		if tasks == nil && th.Wait != nil && th.Wait.Frame == "" {
			th.Wait = nil // no kernel state to judge by
		}
		if _, rec := a.mem.blockedOn(tid); rec && a.open[tid] == nil && t.State != 'R' && t.State != 0 &&
			(th.Wait == nil || th.Wait.Kind == KindFutex || th.Wait.Kind == KindOther) {
			// No frame says Monitor.Enter (.NET 8 and 9 enter it in native
			// code), but the runtime's record of the wait does.
			th.Wait = &Wait{Kind: KindMonitor, Frame: "(the runtime's ThreadBlockingInfo)"}
		}
		if w := a.open[tid]; w != nil {
			th.Wait = a.eventWait(w, th.Wait)
		} else if th.Wait != nil && (th.Wait.Kind == KindMonitor || th.Wait.Kind == KindLock) {
			memoryWait(th.Wait, tid, a.mem)
		}
		th.Holds = a.mem.holds(tid)
		k := "running"
		if th.Wait != nil {
			k = th.Wait.Kind
		}
		r.ByWaitKind[k]++
		index[tid] = len(r.Threads)
		r.Threads = append(r.Threads, th)
	}
	r.Groups = groups(r.Threads)
	r.TargetPaused = Paused{Count: a.pauses, TotalMs: float64(a.pausedNs) / 1e6, MaxMs: float64(a.maxPauseNs) / 1e6}
	a.deadlocks(r, index)
	a.suspect(r)
	memoryDeadlocks(r, float64(a.opts.Threshold.Milliseconds()))
	memoryHangChains(r)
	if a.mem != nil && a.mem.Note != "" {
		r.Notes = append(r.Notes, a.mem.Note)
	}
	if len(a.samples) == 0 && tasks != nil {
		r.Notes = append(r.Notes, "no thread was sampled: the stacks are the waits' own (or none)")
	}
	return r
}

// eventWait is the wait an open event says, refined by the frames' kind.
func (a *Analyzer) eventWait(w *openWait, frames *Wait) *Wait {
	out := &Wait{Kind: KindWaitHandle, WaitingMs: a.ms(a.lastTS - w.begin)}
	if frames != nil {
		out.Frame, out.SyncOverAsync = frames.Frame, frames.SyncOverAsync
	}
	if w.object != 0 {
		out.Object = fmt.Sprintf("%#x", w.object)
		out.ObjectType = a.mem.objectType(w.object)
	}
	if w.kind == analysis.WaitLock {
		out.Kind = KindMonitor
		if frames != nil && frames.Kind == KindLock {
			out.Kind = KindLock
		}
		out.LockID = w.lock
		switch {
		case w.owner != 0:
			o := w.owner
			out.OwnerOSTid = &o
			out.Source = SourceEvents
		case a.mem.ownerOf(w.object) != 0:
			// The event named no owner; the object's sync block (or
			// thin lock) does.
			o := a.mem.ownerOf(w.object)
			out.OwnerOSTid = &o
			out.Source = SourceMemory
		case !a.sawLockV2:
			out.OwnerUnknownReason = "the runtime's ContentionStart names no owner before .NET 8"
		default:
			out.OwnerUnknownReason = "the runtime reported no owner for this lock"
		}
	}
	return out
}

func (a *Analyzer) ms(ticks int64) float64 {
	if a.hdr == nil {
		return float64(ticks) / 1e6
	}
	return float64(a.hdr.DurationNanos(ticks)) / 1e6
}

func groups(ts []Thread) []Group {
	by := map[string]*Group{}
	var order []*Group
	for _, t := range ts {
		if len(t.Frames) == 0 {
			continue
		}
		k := strings.Join(t.Frames, "\n")
		g := by[k]
		if g == nil {
			g = &Group{Frames: t.Frames, WaitKind: "running", AppFrame: appFrame(t.Frames)}
			if t.Wait != nil {
				g.WaitKind = t.Wait.Kind
			}
			by[k] = g
			order = append(order, g)
		}
		g.Threads = append(g.Threads, t.OSTid)
		g.Count++
	}
	slices.SortStableFunc(order, func(x, y *Group) int { return cmp.Compare(y.Count, x.Count) })
	out := make([]Group, len(order))
	for i, g := range order {
		out[i] = *g
	}
	return out
}

// frameworkPrefixes mark the frames of the runtime and its libraries.
var frameworkPrefixes = []string{"System.", "Microsoft.", "Internal.", "Interop", "[", "0x"}

// appFrame is the newest of frames that is not the framework's.
func appFrame(frames []string) string {
	for _, f := range frames {
		if !slices.ContainsFunc(frameworkPrefixes, func(p string) bool { return strings.HasPrefix(f, p) }) {
			return f
		}
	}
	return ""
}

// deadlocks fills the cycles and hang chains of the open waits.
func (a *Analyzer) deadlocks(r *Result, index map[uint64]int) {
	threshold := a.opts.Threshold.Nanoseconds()
	old := func(w *openWait) bool { return a.nanos(a.lastTS)-a.nanos(w.begin) >= threshold }
	inCycle := map[uint64]bool{}
	seen := map[string]bool{}
	for _, tid := range slices.Sorted(maps.Keys(a.open)) {
		c, ok := a.cycleFrom(tid)
		if !ok || seen[c.key()] {
			continue
		}
		seen[c.key()] = true
		all := true
		for _, t := range c.Threads {
			all = all && old(a.open[t])
		}
		if !all {
			continue
		}
		d := Deadlock{Threads: c.Threads, Source: SourceEvents}
		for i, t := range c.Threads {
			inCycle[t] = true
			w := a.open[t]
			o := c.Threads[(i+1)%len(c.Threads)]
			l := DeadlockLock{LockID: w.lock, Object: fmt.Sprintf("%#x", w.object), ObjectType: a.mem.objectType(w.object), OwnerOSTid: &o, WaiterOSTid: t,
				WaitingMs: a.ms(a.lastTS - w.begin), Frames: a.opts.Symbols.Frames(w.stack)}
			if i, ok := index[t]; ok && len(r.Threads[i].Frames) > 0 {
				l.Frames = r.Threads[i].Frames
			}
			d.Locks = append(d.Locks, l)
		}
		r.Deadlocks = append(r.Deadlocks, d)
	}
	chains := map[uint64]*HangChain{}
	for _, tid := range slices.Sorted(maps.Keys(a.open)) {
		w := a.open[tid]
		if inCycle[tid] || w.kind != analysis.WaitLock || w.owner == 0 || !old(w) {
			continue
		}
		cur, hops := w.owner, 0
		for hops <= len(a.open) {
			ow := a.open[cur]
			if ow == nil || ow.kind != analysis.WaitLock || ow.owner == 0 || inCycle[cur] {
				break
			}
			cur, hops = ow.owner, hops+1
		}
		if inCycle[cur] || hops > len(a.open) {
			continue
		}
		c := chains[cur]
		if c == nil {
			c = &HangChain{Root: cur}
			if i, ok := index[cur]; ok {
				c.RootWait = r.Threads[i].Wait
			}
			chains[cur] = c
		}
		c.Waiters = append(c.Waiters, tid)
	}
	for _, root := range slices.Sorted(maps.Keys(chains)) {
		r.HangChains = append(r.HangChains, *chains[root])
	}
}

// Merge joins a --watch session's result (the waits its events named, the
// deadlocks and hang chains) with a snapshot taken right after it (every
// thread's stack): the snapshot's threads, each with the wait the events
// saw when they saw one (its owner, how long), the watch's deadlocks when
// it found any (else the snapshot's suspicions) and its hang chains.
func Merge(snap, watch *Result) *Result {
	out := *snap
	out.Threads = slices.Clone(snap.Threads)
	byTid := map[uint64]*Thread{}
	for i := range watch.Threads {
		byTid[watch.Threads[i].OSTid] = &watch.Threads[i]
	}
	out.ByWaitKind = map[string]int{}
	for i := range out.Threads {
		t := &out.Threads[i]
		if w := byTid[t.OSTid]; w != nil {
			if w.Wait != nil && (w.Wait.LockID != 0 || w.Wait.WaitingMs > 0) {
				nw := *w.Wait
				if t.Wait != nil && t.Wait.Frame != "" {
					nw.Frame, nw.SyncOverAsync = t.Wait.Frame, t.Wait.SyncOverAsync
				}
				t.Wait = &nw
			}
			if len(t.Frames) == 0 {
				t.Frames = w.Frames
			}
			if t.ManagedID == nil {
				t.ManagedID = w.ManagedID
			}
		}
		k := "running"
		if t.Wait != nil {
			k = t.Wait.Kind
		}
		out.ByWaitKind[k]++
	}
	out.Groups = groups(out.Threads)
	if len(watch.Deadlocks) > 0 {
		out.Deadlocks = watch.Deadlocks
	}
	// The roots' waits as the snapshot's stacks say (the watch's events
	// name no wait of a sleeping or reading root).
	out.HangChains = slices.Clone(watch.HangChains)
	for i := range out.HangChains {
		for j := range out.Threads {
			if out.Threads[j].OSTid == out.HangChains[i].Root {
				out.HangChains[i].RootWait = out.Threads[j].Wait
			}
		}
	}
	out.TargetPaused = Paused{Count: snap.TargetPaused.Count + watch.TargetPaused.Count,
		TotalMs: snap.TargetPaused.TotalMs + watch.TargetPaused.TotalMs, MaxMs: max(snap.TargetPaused.MaxMs, watch.TargetPaused.MaxMs)}
	out.Notes = append(slices.Clone(watch.Notes), snap.Notes...)
	return &out
}
