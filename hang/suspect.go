package hang

import (
	"fmt"
	"strings"
)

// suspect reports a deadlock the stacks alone suggest: two or more threads
// blocked in Monitor.Enter (or Lock.Enter) whose owners no event named,
// each in the same wait for every sample of the session, entered from
// different call sites (threads that queue on one lock from one site are a
// convoy behind its owner, not a cycle). The owners cannot be named, so the
// threads are listed with the reason.
func (a *Analyzer) suspect(r *Result) {
	var blocked []int
	sites := map[string]bool{}
	for i := range r.Threads {
		t := &r.Threads[i]
		w := t.Wait
		if w == nil || (w.Kind != KindMonitor && w.Kind != KindLock) || w.OwnerOSTid != nil {
			continue
		}
		s := a.samples[t.OSTid]
		if s == nil || s.since != s.first || s.ts == s.first {
			// Not sampled, or its stack changed: not stuck throughout.
			continue
		}
		blocked = append(blocked, i)
		sites[callSite(t.Frames)] = true
	}
	if len(blocked) < 2 || len(sites) < 2 {
		return
	}
	for _, d := range r.Deadlocks {
		if !d.Suspected {
			return // the events found it: nothing to suspect
		}
	}
	d := Deadlock{Suspected: true, Source: SourceStacks}
	var span int64
	for _, i := range blocked {
		t := &r.Threads[i]
		s := a.samples[t.OSTid]
		span = max(span, s.ts-s.first)
		d.Threads = append(d.Threads, t.OSTid)
		d.Locks = append(d.Locks, DeadlockLock{WaiterOSTid: t.OSTid, Frames: t.Frames, WaitingMs: a.ms(s.ts - s.first)})
	}
	d.Reason = fmt.Sprintf("%d threads stayed blocked in %s at %d different call sites for every sample (%.0f ms), "+
		"and no contention event names their owners (the waits began before the session): a lock-order deadlock is likely; "+
		"the owners are in the objects' sync blocks, which this version does not read (a dump's SOS syncblk names them)",
		len(blocked), frameMethod(r.Threads[blocked[0]].Wait.Frame), len(sites), a.ms(span))
	r.Deadlocks = append(r.Deadlocks, d)
}

// callSite is the first frame below the lock's own frames: where the
// application asked for it.
func callSite(frames []string) string {
	for _, f := range frames {
		if !strings.HasPrefix(f, "System.Threading.Monitor.") && !strings.HasPrefix(f, "System.Threading.Lock.") {
			return f
		}
	}
	return ""
}

// frameMethod is a frame's name without its argument list.
func frameMethod(f string) string {
	if i := strings.IndexByte(f, '('); i > 0 {
		return f[:i]
	}
	return f
}
