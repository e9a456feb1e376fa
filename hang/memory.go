package hang

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Memory is what the target's memory says of its locks now, read by the
// caller (package cdac reads a live runtime's sync blocks; this package
// does no I/O): the owners of waits no event names, for a process that
// was deadlocked before the session began.
type Memory struct {
	// Locks are the inflated locks (sync blocks) held or waited for.
	Locks []HeldLock
	// Types names objects by address (the events' lock objects).
	Types map[uint64]string
	// Reason is why the memory could not be read ("" when it was): the
	// owner_unknown_reason of every wait it would have named.
	Reason string
	// Note is a line for the result's notes (what the reading cost).
	Note string
	// StackRefs lists, per OS thread, the lock objects (of Locks) its
	// stack refers to where it waits: the lock it waits for is among
	// them, with those its callers hold. nil: not read.
	StackRefs map[uint64][]uint64
	// BlockedOn is, per OS thread, the object of the lock the runtime's
	// own record of the wait names (.NET 9+'s ThreadBlockingInfo, on the
	// waiting thread's stack): exact, where StackRefs is a clue.
	BlockedOn map[uint64]uint64
	// LockBlockedOn is, per OS thread, the System.Threading.Lock (one of
	// Locks) the runtime's record of the wait names (.NET 9+).
	LockBlockedOn map[uint64]uint64
	// LockReason is why a Lock a thread waits for could not be read.
	LockReason string
	// ManagedIDs are the managed thread ids of the runtime's threads, by
	// OS thread (for threads no thread event named).
	ManagedIDs map[uint64]uint32
}

// HeldLock is one inflated lock as its sync block has it.
type HeldLock struct {
	Object     uint64
	ObjectType string
	// OwnerOSTid is the holding thread (0: not held).
	OwnerOSTid uint64
	Recursion  uint32
	// Waiters is how many threads the lock counts as waiting for it.
	Waiters uint32
}

// Held is a lock a thread holds, as the target's memory says.
type Held struct {
	// Object is the lock object's address (hex) or, when a static field
	// holds it, that field (Class.Field; the address in ObjectAddress).
	Object        string `json:"object"`
	ObjectAddress string `json:"object_address,omitempty"`
	ObjectType    string `json:"object_type"`
	Recursion     uint32 `json:"recursion"`
	Waiters       uint32 `json:"waiters"`
}

// Where a wait's owner (and a deadlock) comes from.
const (
	SourceEvents = "contention_events" // ContentionStart, while the session ran
	SourceMemory = "target_memory"     // the sync blocks, read now
	SourceStacks = "stacks"            // suspected from the stacks alone
)

// ResultWithMemory is Result with the target's memory: each thread's
// held locks, the owner of each Monitor wait no event names, and the
// deadlocks those owners form.
func (a *Analyzer) ResultWithMemory(tasks []Task, mem *Memory) *Result {
	a.mem = mem
	defer func() { a.mem = nil }()
	return a.Result(tasks)
}

// LockObjects are the objects of the open lock waits the events named
// (for the caller to name their types through Memory.Types).
func (a *Analyzer) LockObjects() []uint64 {
	seen := map[uint64]bool{}
	for _, w := range a.open {
		if w.object != 0 {
			seen[w.object] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// objectType names obj from the memory read, "" unknown.
func (m *Memory) objectType(obj uint64) string {
	if m == nil || obj == 0 {
		return ""
	}
	if n := m.Types[obj]; n != "" {
		return n
	}
	for _, l := range m.Locks {
		if l.Object == obj {
			return l.ObjectType
		}
	}
	return ""
}

// blockedOn is the lock object the runtime's record of tid's wait names.
func (m *Memory) blockedOn(tid uint64) (uint64, bool) {
	if m == nil {
		return 0, false
	}
	o, ok := m.BlockedOn[tid]
	return o, ok
}

// managedID is tid's managed thread id as the runtime's thread store has it.
func (m *Memory) managedID(tid uint64) (uint32, bool) {
	if m == nil {
		return 0, false
	}
	id, ok := m.ManagedIDs[tid]
	return id, ok
}

// ownerOf is the thread holding obj's lock, 0 unknown.
func (m *Memory) ownerOf(obj uint64) uint64 {
	if m == nil || obj == 0 {
		return 0
	}
	for _, l := range m.Locks {
		if l.Object == obj {
			return l.OwnerOSTid
		}
	}
	return 0
}

// holds lists the locks tid holds.
func (m *Memory) holds(tid uint64) []Held {
	if m == nil {
		return nil
	}
	var out []Held
	for _, l := range m.Locks {
		if l.OwnerOSTid == tid && tid != 0 {
			out = append(out, Held{Object: fmt.Sprintf("%#x", l.Object), ObjectType: l.ObjectType, Recursion: l.Recursion, Waiters: l.Waiters})
		}
	}
	return out
}

const beforeSession = "the wait began before the session: no contention event names its owner"

// memoryWait fills a Monitor wait no event named from the target's
// memory. The runtime records a lock's holder and its count of waiters,
// not which lock a waiting thread waits for: a thread blocked in
// Monitor.Enter waits for one of the contended locks it does not hold,
// and when there is exactly one such lock, for that one.
func memoryWait(w *Wait, tid uint64, mem *Memory) {
	switch {
	case mem == nil:
		w.OwnerUnknownReason = beforeSession + ", and the target's memory was not read (a trace file, or a process outside reach)"
		return
	case mem.Reason != "":
		w.OwnerUnknownReason = beforeSession + ", and the target's memory could not be read: " + mem.Reason
		return
	case w.Kind == KindLock:
		obj, ok := mem.LockBlockedOn[tid]
		if !ok {
			w.OwnerUnknownReason = beforeSession + "; no ThreadBlockingInfo record on its stack names the System.Threading.Lock it waits for"
			if mem.LockReason != "" {
				w.OwnerUnknownReason += " (" + mem.LockReason + ")"
			}
			return
		}
		w.Object = fmt.Sprintf("%#x", obj)
		for _, l := range mem.Locks {
			if l.Object == obj {
				w.ObjectType = l.ObjectType
				if l.OwnerOSTid != 0 && l.OwnerOSTid != tid {
					o := l.OwnerOSTid
					w.OwnerOSTid, w.Source = &o, SourceMemory
					return
				}
			}
		}
		w.OwnerUnknownReason = beforeSession + "; the System.Threading.Lock it waits for names no holder among the runtime's threads"
		if mem.LockReason != "" {
			w.OwnerUnknownReason += " (" + mem.LockReason + ")"
		}
		return
	}
	if obj, ok := mem.BlockedOn[tid]; ok {
		for _, l := range mem.Locks {
			if l.Object == obj && l.OwnerOSTid != 0 && l.OwnerOSTid != tid {
				o := l.OwnerOSTid
				w.Object, w.ObjectType, w.OwnerOSTid = fmt.Sprintf("%#x", l.Object), l.ObjectType, &o
				w.Source = SourceMemory
				return
			}
		}
	}
	var cands []HeldLock
	for _, l := range mem.Locks {
		if l.Waiters > 0 && l.OwnerOSTid != 0 && l.OwnerOSTid != tid {
			cands = append(cands, l)
		}
	}
	if refs, ok := mem.StackRefs[tid]; ok && len(cands) > 1 {
		// Of several, the one its stack refers to (Monitor.Enter's
		// argument; the others it refers to it holds).
		var on []HeldLock
		for _, l := range cands {
			if slices.Contains(refs, l.Object) {
				on = append(on, l)
			}
		}
		if len(on) > 0 {
			cands = on
		}
	}
	switch len(cands) {
	case 1:
		l := cands[0]
		o := l.OwnerOSTid
		w.Object, w.ObjectType, w.OwnerOSTid = fmt.Sprintf("%#x", l.Object), l.ObjectType, &o
		w.Source = SourceMemory
		w.ObjectInferred = true
	case 0:
		w.OwnerUnknownReason = beforeSession + ", and the target's sync blocks hold no contended lock another thread holds (a lock not yet inflated, or one released since)"
	default:
		var names []string
		for _, l := range cands {
			names = append(names, fmt.Sprintf("%s %#x held by %d", orUnknownType(l.ObjectType), l.Object, l.OwnerOSTid))
		}
		w.OwnerUnknownReason = fmt.Sprintf("%s; it is blocked in Monitor.Enter on one of %d contended locks (%s): the runtime records each lock's holder, not which lock a thread waits for",
			beforeSession, len(cands), strings.Join(names, "; "))
	}
}

func orUnknownType(s string) string {
	if s == "" {
		return "an object of unknown type"
	}
	return s
}

// memoryDeadlocks reports the cycles of waits the memory named an owner
// of (with the events' waits open for the threshold), when the events
// found none.
func memoryDeadlocks(r *Result, thresholdMs float64) {
	for _, d := range r.Deadlocks {
		if !d.Suspected {
			return
		}
	}
	waitsFor := map[uint64]uint64{}
	byTid := map[uint64]*Thread{}
	for i := range r.Threads {
		t := &r.Threads[i]
		byTid[t.OSTid] = t
		w := t.Wait
		if w != nil && w.OwnerOSTid != nil && (w.Source == SourceMemory || (w.Source == SourceEvents && w.WaitingMs >= thresholdMs)) {
			waitsFor[t.OSTid] = *w.OwnerOSTid
		}
	}
	// A cycle of the events' edges alone is theirs to report (or not yet
	// old enough).
	cycles := slices.DeleteFunc(Cycles(waitsFor), func(c []uint64) bool {
		return !slices.ContainsFunc(c, func(tid uint64) bool { return byTid[tid].Wait.Source == SourceMemory })
	})
	if len(cycles) == 0 {
		return
	}
	// The memory's cycles replace the stacks' suspicion of the same threads.
	r.Deadlocks = slices.DeleteFunc(r.Deadlocks, func(d Deadlock) bool { return d.Suspected })
	for _, c := range cycles {
		reason := "read from the target's memory: each lock's holder from its sync block, the lock each thread waits for from " +
			"the runtime's record of the wait on its stack (ThreadBlockingInfo)"
		if slices.ContainsFunc(c, func(tid uint64) bool { return byTid[tid].Wait.Kind == KindLock }) {
			reason = "read from the target's memory: each lock's holder from its sync block or, for a System.Threading.Lock, its owner field; " +
				"the lock each thread waits for from the runtime's record of the wait on its stack (ThreadBlockingInfo)"
		}
		for _, tid := range c {
			if byTid[tid].Wait.ObjectInferred {
				reason = "read from the target's memory: each lock's holder from its sync block; a thread whose wait neither an event " +
					"nor the runtime's ThreadBlockingInfo names waits in Monitor.Enter for the contended lock it does not hold that its stack refers to"
			}
		}
		d := Deadlock{Threads: c, Source: SourceMemory, Reason: reason}
		for _, tid := range c {
			t := byTid[tid]
			o := *t.Wait.OwnerOSTid
			d.Locks = append(d.Locks, DeadlockLock{LockID: t.Wait.LockID, Object: t.Wait.Object, ObjectType: t.Wait.ObjectType, OwnerOSTid: &o,
				WaiterOSTid: tid, WaitingMs: t.Wait.WaitingMs, Frames: t.Frames})
		}
		r.Deadlocks = append(r.Deadlocks, d)
	}
}

// memoryHangChains reports, for the waits the memory named an owner of,
// the chains of lock waiters that end at a thread waiting for no lock
// (it sleeps, reads, runs): its root blocker. Waiters already in an
// events' chain or a deadlock are left out.
func memoryHangChains(r *Result) {
	inCycle := map[uint64]bool{}
	for _, d := range r.Deadlocks {
		if !d.Suspected {
			for _, t := range d.Threads {
				inCycle[t] = true
			}
		}
	}
	for _, c := range r.HangChains {
		for _, t := range c.Waiters {
			inCycle[t] = true
		}
	}
	byTid := map[uint64]*Thread{}
	for i := range r.Threads {
		byTid[r.Threads[i].OSTid] = &r.Threads[i]
	}
	owner := func(tid uint64) uint64 {
		t := byTid[tid]
		if t == nil || t.Wait == nil || t.Wait.OwnerOSTid == nil || (t.Wait.Kind != KindMonitor && t.Wait.Kind != KindLock) {
			return 0
		}
		return *t.Wait.OwnerOSTid
	}
	chains := map[uint64]*HangChain{}
	for i := range r.Threads {
		t := &r.Threads[i]
		if inCycle[t.OSTid] || t.Wait == nil || t.Wait.Source != SourceMemory || owner(t.OSTid) == 0 {
			continue
		}
		cur, hops := owner(t.OSTid), 0
		for ; owner(cur) != 0 && !inCycle[cur] && hops <= len(r.Threads); hops++ {
			cur = owner(cur)
		}
		if inCycle[cur] || hops > len(r.Threads) || cur == t.OSTid {
			continue
		}
		c := chains[cur]
		if c == nil {
			c = &HangChain{Root: cur}
			if rt := byTid[cur]; rt != nil {
				c.RootWait = rt.Wait
			}
			chains[cur] = c
		}
		c.Waiters = append(c.Waiters, t.OSTid)
	}
	for _, root := range slices.Sorted(maps.Keys(chains)) {
		r.HangChains = append(r.HangChains, *chains[root])
	}
}

// LockClasses are the application classes whose static fields may hold
// the lock objects of r: those of the methods on the stacks of threads
// that wait for a lock or hold one, and the classes enclosing them
// (framework classes are left out).
func LockClasses(r *Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range r.Threads {
		if len(t.Holds) == 0 && (t.Wait == nil || t.Wait.Object == "") {
			continue
		}
		for _, f := range t.Frames {
			if i := strings.IndexByte(f, '('); i >= 0 {
				f = f[:i]
			}
			i := strings.LastIndexByte(f, '.')
			if i <= 0 || strings.HasPrefix(f, "System.") || strings.HasPrefix(f, "Microsoft.") || strings.HasPrefix(f, "Interop") {
				continue
			}
			c := f[:i]
			for c != "" && !seen[c] {
				seen[c] = true
				out = append(out, c)
				j := strings.LastIndexByte(c, '+')
				if j < 0 {
					break
				}
				c = c[:j]
			}
		}
	}
	return out
}

// NameObjects gives the lock objects of r that names names (by address:
// "Class.Field", the static field that holds it) that name as their
// object, their address in object_address.
func NameObjects(r *Result, names map[uint64]string) {
	if len(names) == 0 {
		return
	}
	name := func(obj, addr *string) {
		var a uint64
		if _, err := fmt.Sscanf(*obj, "0x%x", &a); err != nil || names[a] == "" {
			return
		}
		*addr, *obj = *obj, names[a]
	}
	for i := range r.Threads {
		t := &r.Threads[i]
		if t.Wait != nil {
			name(&t.Wait.Object, &t.Wait.ObjectAddress)
		}
		for j := range t.Holds {
			name(&t.Holds[j].Object, &t.Holds[j].ObjectAddress)
		}
	}
	for i := range r.Deadlocks {
		for j := range r.Deadlocks[i].Locks {
			l := &r.Deadlocks[i].Locks[j]
			name(&l.Object, &l.ObjectAddress)
		}
	}
}
