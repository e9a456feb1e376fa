package hang

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// blockedPair is TestSuspected's process: 11 in Monitor.Enter from
// App.TakeAB, 12 from App.TakeBA, for every sample, no contention event;
// its result with mem.
func blockedPair(t *testing.T, mem *Memory) *Result {
	g := tracegen.New()
	g.Thread(1).MethodLoad(clrevents.Method{MethodID: 1, StartAddress: 0x1000, Size: 0x100, Namespace: "System.Threading.Monitor", Name: "Enter", Signature: "void  ()"})
	g.Thread(1).MethodLoad(clrevents.Method{MethodID: 2, StartAddress: 0x2000, Size: 0x100, Namespace: "App", Name: "TakeAB", Signature: "void  ()"})
	g.Thread(1).MethodLoad(clrevents.Method{MethodID: 3, StartAddress: 0x3000, Size: 0x100, Namespace: "App", Name: "TakeBA", Signature: "void  ()"})
	for i := range 3 {
		g.Thread(1).At(time.Duration(i+1)*time.Millisecond).Stack(0x1010, 0x2010).Sample(11, clrevents.SampleExternal)
		g.Thread(1).At(time.Duration(i+1)*time.Millisecond).Stack(0x1010, 0x3010).Sample(12, clrevents.SampleExternal)
	}
	sym := stacks.NewSymbols(g.Header())
	a := New(g.Header(), Options{Symbols: sym})
	g.Run(t, func(ev *nettrace.Event) { sym.Event(ev); a.Event(ev) })
	r := a.ResultWithMemory([]Task{{Tid: 11, State: 'S', Syscall: "futex"}, {Tid: 12, State: 'S', Syscall: "futex"}, {Tid: 13, State: 'S'}}, mem)
	check(t, r)
	return r
}

// TestMemoryOwners: the sync blocks say 11 holds GateA and 12 GateB, each
// with one waiter: 11 waits for GateB (the one contended lock it does not
// hold) owned by 12 and 12 for GateA owned by 11, a deadlock read from
// memory (not suspected), each thread listing what it holds.
func TestMemoryOwners(t *testing.T) {
	mem := &Memory{Locks: []HeldLock{
		{Object: 0xa0, ObjectType: "App.GateA", OwnerOSTid: 11, Recursion: 1, Waiters: 1},
		{Object: 0xb0, ObjectType: "App.GateB", OwnerOSTid: 12, Recursion: 1, Waiters: 1},
		{Object: 0xc0, ObjectType: "App.Idle", OwnerOSTid: 13, Recursion: 2}, // held, nobody waits
	}}
	r := blockedPair(t, mem)
	if len(r.Deadlocks) != 1 {
		t.Fatalf("deadlocks %+v, want one", r.Deadlocks)
	}
	d := r.Deadlocks[0]
	if d.Suspected || d.Source != SourceMemory || !slices.Equal(d.Threads, []uint64{11, 12}) || len(d.Locks) != 2 {
		t.Fatalf("deadlock %+v, want 11 → 12 from memory", d)
	}
	if l := d.Locks[0]; l.WaiterOSTid != 11 || *l.OwnerOSTid != 12 || l.ObjectType != "App.GateB" || l.Object != "0xb0" || l.Frames[1] != "App.TakeAB()" {
		t.Errorf("edge 0 %+v", l)
	}
	if l := d.Locks[1]; l.WaiterOSTid != 12 || *l.OwnerOSTid != 11 || l.ObjectType != "App.GateA" {
		t.Errorf("edge 1 %+v", l)
	}
	w := r.Threads[0].Wait
	if w.Source != SourceMemory || !w.ObjectInferred || w.OwnerUnknownReason != "" || w.ObjectType != "App.GateB" {
		t.Errorf("thread 11's wait %+v", w)
	}
	if h := r.Threads[0].Holds; len(h) != 1 || h[0].ObjectType != "App.GateA" || h[0].Object != "0xa0" || h[0].Waiters != 1 {
		t.Errorf("thread 11 holds %+v", h)
	}
	if h := r.Threads[2].Holds; len(h) != 1 || h[0].ObjectType != "App.Idle" || h[0].Recursion != 2 || r.Threads[2].Wait.Kind != "other" {
		t.Errorf("thread 13: holds %+v wait %+v", h, r.Threads[2].Wait)
	}
}

// TestMemoryUnknown: without memory, with memory that could not be read,
// or with two contended locks a thread might wait for, the owner stays
// unknown with the reason, and the stacks' suspicion stands.
func TestMemoryUnknown(t *testing.T) {
	cases := map[string]struct {
		mem  *Memory
		want string
	}{
		"none":       {nil, "the target's memory was not read"},
		"unreadable": {&Memory{Reason: ".NET 8.0.11 exports no data contract descriptor"}, "could not be read: .NET 8.0.11 exports"},
		"ambiguous": {&Memory{Locks: []HeldLock{
			{Object: 0xa0, ObjectType: "App.GateA", OwnerOSTid: 13, Waiters: 1},
			{Object: 0xb0, OwnerOSTid: 14, Waiters: 1},
		}}, "one of 2 contended locks (App.GateA 0xa0 held by 13; an object of unknown type 0xb0 held by 14)"},
		"no locks": {&Memory{}, "hold no contended lock"},
	}
	for name, c := range cases {
		r := blockedPair(t, c.mem)
		for _, th := range r.Threads[:2] {
			if th.Wait == nil || th.Wait.OwnerOSTid != nil || !strings.Contains(th.Wait.OwnerUnknownReason, c.want) {
				t.Errorf("%s: thread %d wait %+v, want an unknown owner saying %q", name, th.OSTid, th.Wait, c.want)
			}
		}
		if len(r.Deadlocks) != 1 || !r.Deadlocks[0].Suspected || r.Deadlocks[0].Source != SourceStacks {
			t.Errorf("%s: deadlocks %+v, want the stacks' suspicion", name, r.Deadlocks)
		}
	}
}

// TestMemoryNamesEventWaits: a wait the events named without an owner
// (ContentionStart's owner 0) gets it from the lock's object in memory,
// and the events' lock objects get their types; LockObjects lists them.
func TestMemoryNamesEventWaits(t *testing.T) {
	g := tracegen.New()
	g.Thread(11).At(100*time.Millisecond).Stack(0x20).ContentionStart(0xB, 0xBB, 0)
	g.Thread(12).At(110*time.Millisecond).Stack(0x30).ContentionStart(0xA, 0xAA, 11)
	g.Thread(1).At(2*time.Second).RundownThread(0x7f00, 1, 1)
	a := New(g.Header(), Options{})
	g.Run(t, a.Event)
	if got := a.LockObjects(); !slices.Equal(got, []uint64{0xAA, 0xBB}) {
		t.Errorf("lock objects %#x", got)
	}
	mem := &Memory{Locks: []HeldLock{{Object: 0xBB, ObjectType: "App.GateB", OwnerOSTid: 12, Waiters: 1}},
		Types: map[uint64]string{0xAA: "App.GateA"}, Note: "read in 1 ms"}
	r := a.ResultWithMemory(nil, mem)
	check(t, r)
	w11, w12 := r.Threads[0].Wait, r.Threads[1].Wait
	if w11.OwnerOSTid == nil || *w11.OwnerOSTid != 12 || w11.Source != SourceMemory || w11.ObjectType != "App.GateB" || w11.ObjectInferred {
		t.Errorf("11's wait %+v, want GateB owned by 12 from memory", w11)
	}
	if *w12.OwnerOSTid != 11 || w12.Source != SourceEvents || w12.ObjectType != "App.GateA" {
		t.Errorf("12's wait %+v, want GateA owned by 11 from its event", w12)
	}
	if !slices.Contains(r.Notes, "read in 1 ms") {
		t.Errorf("notes %v", r.Notes)
	}
	// 11 → 12 from memory, 12 → 11 from its event (open 1.89 s): a cycle.
	if len(r.Deadlocks) != 1 || r.Deadlocks[0].Source != SourceMemory || !slices.Equal(r.Deadlocks[0].Threads, []uint64{11, 12}) {
		t.Fatalf("deadlocks %+v, want 11 → 12 → 11 with memory's edge", r.Deadlocks)
	}
	if l := r.Deadlocks[0].Locks[1]; l.LockID != 0xA || l.WaitingMs != 1890 || l.ObjectType != "App.GateA" {
		t.Errorf("edge of 12: %+v", l)
	}
}

// TestMemoryStackRefs: three contended locks, so each blocked thread
// could wait for two; their stacks refer to the one each holds and the
// one it waits for: 11 waits for GateB (12's), 12 for GateA (11's), a
// cycle; without the stacks' references the owners stay unknown.
func TestMemoryStackRefs(t *testing.T) {
	locks := []HeldLock{
		{Object: 0xa0, ObjectType: "App.GateA", OwnerOSTid: 11, Waiters: 1},
		{Object: 0xb0, ObjectType: "App.GateB", OwnerOSTid: 12, Waiters: 1},
		{Object: 0xc0, ObjectType: "App.GateC", OwnerOSTid: 13, Waiters: 1},
	}
	r := blockedPair(t, &Memory{Locks: locks, StackRefs: map[uint64][]uint64{11: {0xa0, 0xb0}, 12: {0xa0, 0xb0}}})
	if len(r.Deadlocks) != 1 || r.Deadlocks[0].Source != SourceMemory || !slices.Equal(r.Deadlocks[0].Threads, []uint64{11, 12}) {
		t.Fatalf("deadlocks %+v, want 11 → 12 → 11 from memory", r.Deadlocks)
	}
	if w := r.Threads[0].Wait; w.ObjectType != "App.GateB" || *w.OwnerOSTid != 12 {
		t.Errorf("11 waits %+v", w)
	}
	r = blockedPair(t, &Memory{Locks: locks})
	if w := r.Threads[0].Wait; w.OwnerOSTid != nil || !strings.Contains(w.OwnerUnknownReason, "one of 2 contended locks") {
		t.Errorf("without stack references: 11 waits %+v", w)
	}
}

// TestMemoryHangChain: 11 and 12 wait in Monitor.Enter for the one
// contended lock, held by 13, which sleeps: a hang chain rooted at 13
// with both waiters (read from memory), no deadlock.
func TestMemoryHangChain(t *testing.T) {
	r := blockedPair(t, &Memory{Locks: []HeldLock{{Object: 0xa0, ObjectType: "App.Gate", OwnerOSTid: 13, Waiters: 2}}})
	if len(r.HangChains) != 1 || r.HangChains[0].Root != 13 || !slices.Equal(r.HangChains[0].Waiters, []uint64{11, 12}) {
		t.Fatalf("hang chains %+v, want 11 and 12 behind 13", r.HangChains)
	}
	if rw := r.HangChains[0].RootWait; rw == nil || rw.Kind != "other" {
		t.Errorf("root's wait %+v", rw)
	}
	for _, d := range r.Deadlocks {
		if !d.Suspected {
			t.Errorf("deadlock %+v", d)
		}
	}
}

// TestMemoryBlockedOn: the runtime's record of each wait (BlockedOn)
// names the lock exactly, where three contended locks leave the
// candidates ambiguous: not inferred, and the deadlock says so.
func TestMemoryBlockedOn(t *testing.T) {
	r := blockedPair(t, &Memory{Locks: []HeldLock{
		{Object: 0xa0, ObjectType: "App.GateA", OwnerOSTid: 11, Waiters: 1},
		{Object: 0xb0, ObjectType: "App.GateB", OwnerOSTid: 12, Waiters: 1},
		{Object: 0xc0, ObjectType: "App.GateC", OwnerOSTid: 13, Waiters: 1},
	}, BlockedOn: map[uint64]uint64{11: 0xb0, 12: 0xa0}})
	w := r.Threads[0].Wait
	if w.ObjectType != "App.GateB" || *w.OwnerOSTid != 12 || w.ObjectInferred || w.Source != SourceMemory {
		t.Errorf("11 waits %+v, want GateB owned by 12, not inferred", w)
	}
	if len(r.Deadlocks) != 1 || !strings.Contains(r.Deadlocks[0].Reason, "ThreadBlockingInfo") || !slices.Equal(r.Deadlocks[0].Threads, []uint64{11, 12}) {
		t.Errorf("deadlocks %+v", r.Deadlocks)
	}
}

// TestMemoryBlockedOnWithoutFrames: .NET 8 and 9 enter Monitor.Enter in
// native code, so the stacks end at its caller and the threads are futex
// waits; the runtime's records of the waits make them Monitor waits,
// owned as the sync blocks say: a deadlock. A running thread's record is
// not taken.
func TestMemoryBlockedOnWithoutFrames(t *testing.T) {
	g := tracegen.New()
	g.Thread(1).MethodLoad(clrevents.Method{MethodID: 2, StartAddress: 0x2000, Size: 0x100, Namespace: "App", Name: "TakeAB", Signature: "void  ()"})
	g.Thread(1).MethodLoad(clrevents.Method{MethodID: 3, StartAddress: 0x3000, Size: 0x100, Namespace: "App", Name: "TakeBA", Signature: "void  ()"})
	for i := range 3 {
		g.Thread(1).At(time.Duration(i+1)*time.Millisecond).Stack(0x2010).Sample(11, clrevents.SampleExternal)
		g.Thread(1).At(time.Duration(i+1)*time.Millisecond).Stack(0x3010).Sample(12, clrevents.SampleExternal)
	}
	sym := stacks.NewSymbols(g.Header())
	a := New(g.Header(), Options{Symbols: sym})
	g.Run(t, func(ev *nettrace.Event) { sym.Event(ev); a.Event(ev) })
	mem := &Memory{Locks: []HeldLock{
		{Object: 0xa0, ObjectType: "App.GateA", OwnerOSTid: 11, Waiters: 1},
		{Object: 0xb0, ObjectType: "App.GateB", OwnerOSTid: 12, Waiters: 1},
	}, BlockedOn: map[uint64]uint64{11: 0xb0, 12: 0xa0, 13: 0xa0}}
	r := a.ResultWithMemory([]Task{{Tid: 11, State: 'S', Syscall: "futex"}, {Tid: 12, State: 'S', Syscall: "futex"}, {Tid: 13, State: 'R'}}, mem)
	check(t, r)
	if r.ByWaitKind[KindMonitor] != 2 || r.Threads[0].Wait.ObjectType != "App.GateB" || *r.Threads[0].Wait.OwnerOSTid != 12 {
		t.Errorf("waits %v; 11 waits %+v", r.ByWaitKind, r.Threads[0].Wait)
	}
	if r.Threads[2].Wait != nil {
		t.Errorf("running 13 waits %+v", r.Threads[2].Wait)
	}
	if len(r.Deadlocks) != 1 || !slices.Equal(r.Deadlocks[0].Threads, []uint64{11, 12}) || r.Deadlocks[0].Suspected {
		t.Errorf("deadlocks %+v", r.Deadlocks)
	}
}
