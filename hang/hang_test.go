package hang

import (
	"slices"
	"testing"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

type waits []analysis.Wait

func (w *waits) Wait(x *analysis.Wait) { *w = append(*w, *x) }

// handleStart writes WaitHandleWaitStart v0 (no typed writer in tracegen).
func handleStart(th *tracegen.Thread) *tracegen.Thread {
	return th.Runtime(clrevents.IDWaitHandleWaitStart, 0, tracegen.Payload(nil).U8(0).U64(0).U16(1))
}

func handleStop(th *tracegen.Thread) *tracegen.Thread {
	return th.Runtime(clrevents.IDWaitHandleWaitStop, 0, tracegen.Payload(nil).U16(1))
}

// TestDeadlockCycle: 100 holds lock A and waits for B, 101 holds B and
// waits for A (owners as ContentionStart v2 names them); 102 waits for C,
// held by 103, which sleeps; 104 waited for A before and got it. At 3 s
// the cycle of 100 and 101 is a deadlock (open 2.5 s > 1 s), 102 a hang
// chain rooted at 103, and the closed wait of 104 was published.
func TestDeadlockCycle(t *testing.T) {
	g := tracegen.New()
	g.Thread(104).At(100*time.Millisecond).Stack(0x10).ContentionStart(0xA, 0xAA, 100).
		At(200 * time.Millisecond).ContentionStop(1e8)
	g.Thread(100).At(500*time.Millisecond).Stack(0x20).ContentionStart(0xB, 0xBB, 101)
	g.Thread(102).At(600*time.Millisecond).ContentionStart(0xC, 0xCC, 103)
	g.Thread(101).At(500*time.Millisecond+time.Microsecond).Stack(0x30).ContentionStart(0xA, 0xAA, 104)
	g.Thread(104).At(time.Second).ContentionStart(0xB, 0xBB, 101)
	g.Thread(104).At(1100 * time.Millisecond).ContentionStop(1e8) // 104 gets B: 100 now waits for 104
	g.Thread(105).At(3*time.Second).RundownThread(0x7f00, 5, 101)
	var seen waits
	var cycles []Cycle
	a := New(g.Header(), Options{Threshold: time.Second, Observers: []analysis.WaitObserver{&seen},
		OnCycle: func(c Cycle) { cycles = append(cycles, c) }})
	g.Run(t, a.Event)
	r := a.Result(nil)
	check(t, r)
	// At the end 100 waits for B and 101 for A, both held by 104, which
	// waits for nothing: no cycle remains.
	if len(r.Deadlocks) != 0 {
		t.Errorf("deadlocks %+v, want none (104 holds both locks and runs)", r.Deadlocks)
	}
	// From 1 s to 1.1 s the events said 101 waits for 104's A while 104
	// waits for 101's B: announced as it formed, gone when 104 got B.
	if len(cycles) != 1 || !slices.Equal(cycles[0].Threads, []uint64{101, 104}) {
		t.Errorf("cycles announced %v, want the transient one of 101 and 104", cycles)
	}
	if len(seen) != 2 || seen[0].Thread != 104 || seen[0].Owner != 100 || seen[0].Kind != analysis.WaitLock ||
		seen[0].EndNanos-seen[0].BeginNanos != int64(100*time.Millisecond) || seen[0].Object != 0xAA {
		t.Errorf("published waits %+v", seen)
	}
	if len(r.HangChains) != 2 || r.HangChains[0].Root != 103 || !slices.Equal(r.HangChains[0].Waiters, []uint64{102}) ||
		r.HangChains[1].Root != 104 || !slices.Equal(r.HangChains[1].Waiters, []uint64{100, 101}) {
		t.Errorf("hang chains %+v, want 102 behind 103, 100 and 101 behind 104", r.HangChains)
	}
}

// TestDeadlockTwoThreads: the workload's deadlock as events: both edges
// open past the threshold make one deadlock; under it, none; a stop of one
// wait breaks it.
func TestDeadlockTwoThreads(t *testing.T) {
	build := func(end time.Duration, stop bool) (*Result, []Cycle) {
		g := tracegen.New()
		g.Thread(11).At(100*time.Millisecond).Stack(0x20).ContentionStart(0xB, 0xBB, 12)
		g.Thread(12).At(110*time.Millisecond).Stack(0x30).ContentionStart(0xA, 0xAA, 11)
		if stop {
			g.Thread(12).At(200 * time.Millisecond).ContentionStop(9e7)
		}
		g.Thread(1).At(end).RundownThread(0x7f00, 1, 1)
		var cycles []Cycle
		a := New(g.Header(), Options{Threshold: time.Second, OnCycle: func(c Cycle) { cycles = append(cycles, c) }})
		g.Run(t, a.Event)
		r := a.Result(nil)
		check(t, r)
		return r, cycles
	}
	r, cycles := build(2*time.Second, false)
	if len(cycles) != 1 || !slices.Equal(cycles[0].Threads, []uint64{11, 12}) || !slices.Equal(cycles[0].Locks, []uint64{0xB, 0xA}) {
		t.Errorf("cycles announced %+v, want 11 → 12 (lock B), 12 → 11 (lock A)", cycles)
	}
	if len(r.Deadlocks) != 1 || !slices.Equal(r.Deadlocks[0].Threads, []uint64{11, 12}) || r.Deadlocks[0].Suspected {
		t.Fatalf("deadlocks %+v", r.Deadlocks)
	}
	for i, l := range r.Deadlocks[0].Locks {
		want := []uint64{12, 11}[i]
		if l.OwnerOSTid == nil || *l.OwnerOSTid != want || l.WaiterOSTid != []uint64{11, 12}[i] {
			t.Errorf("edge %d: %+v", i, l)
		}
	}
	if w := r.Deadlocks[0].Locks[0].WaitingMs; w != 1900 {
		t.Errorf("11 waited %v ms, want 1900", w)
	}
	if r.ByWaitKind[KindMonitor] != 2 || len(r.Threads) != 2 || *r.Threads[0].Wait.OwnerOSTid != 12 {
		t.Errorf("threads %+v by kind %v", r.Threads, r.ByWaitKind)
	}
	if r, _ := build(900*time.Millisecond, false); len(r.Deadlocks) != 0 {
		t.Errorf("under the threshold: %+v", r.Deadlocks)
	}
	if r, _ := build(2*time.Second, true); len(r.Deadlocks) != 0 {
		t.Errorf("after a stop: %+v", r.Deadlocks)
	}
}

// TestMonitorOwnWait: a contended Monitor blocks on a wait handle of its
// own inside its lock wait (.NET 9+ fires WaitHandleWaitStart for it):
// the thread still waits for the lock, and the handle's stop does not end
// the lock wait.
func TestMonitorOwnWait(t *testing.T) {
	g := tracegen.New()
	th := g.Thread(11).At(time.Millisecond).ContentionStart(0xA, 0xAA, 12)
	handleStart(th.At(2 * time.Millisecond))
	handleStop(th.At(3 * time.Millisecond))
	handleStart(th.At(4 * time.Millisecond))
	handleStart(g.Thread(13).At(5 * time.Millisecond))
	var seen waits
	a := New(g.Header(), Options{Observers: []analysis.WaitObserver{&seen}})
	g.Run(t, a.Event)
	r := a.Result(nil)
	check(t, r)
	if len(seen) != 0 {
		t.Errorf("published %+v: no wait closed", seen)
	}
	kinds := map[uint64]string{}
	for _, th := range r.Threads {
		kinds[th.OSTid] = th.Wait.Kind
	}
	if kinds[11] != KindMonitor || kinds[13] != KindWaitHandle || len(kinds) != 2 {
		t.Errorf("waits %v, want 11 monitor, 13 wait_handle", kinds)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		frames  []string
		state   byte
		syscall string
		want    string // "" running
		sync    bool
	}{
		{[]string{"System.Threading.Monitor.Enter_Slowpath(class System.Object)", "System.Threading.Monitor.Enter(class System.Object,bool&)", "App.Take()"}, 'S', "futex", KindMonitor, false},
		{[]string{"System.Threading.Lock.EnterAndGetCurrentThreadId()", "App.Take()"}, 'S', "futex", KindLock, false},
		{[]string{"System.Threading.Thread.Sleep(int32)", "App.Nap()"}, 'S', "futex", KindSleep, false},
		{[]string{"System.Threading.WaitHandle.WaitOneNoCheck(int32,bool,class System.Object,value class WaitHandleWaitSourceMap)", "App.Wait()"}, 'S', "futex", KindWaitHandle, false},
		{[]string{"System.Threading.Monitor.Wait(class System.Object,int32)", "System.Threading.ManualResetEventSlim.Wait(int32,value class System.Threading.CancellationToken)",
			"System.Threading.Tasks.Task.SpinThenBlockingWait(int32,value class System.Threading.CancellationToken)", "System.Threading.Tasks.Task.Wait()", "App.Handler()"}, 'S', "futex", KindWaitHandle, true},
		{[]string{"System.Threading.LowLevelLifoSemaphore.WaitForSignal(int32)", "System.Threading.LowLevelLifoSemaphore.Wait(int32,bool)",
			"System.Threading.PortableThreadPool+WorkerThread.WorkerDoWork(class System.Threading.PortableThreadPool,bool&)"}, 'S', "futex", KindPoolIdle, false},
		{[]string{"Interop+Sys.Read(class System.Runtime.InteropServices.SafeHandle,unsigned int8*,int32)", "App.ReadPipe()"}, 'S', "read", KindIO, false},
		{[]string{"App.Spin()"}, 'R', "", "", false},
		{nil, 'S', "futex", KindFutex, false},
		{nil, 'S', "epoll_wait", KindIO, false},
		{nil, 'D', "", KindIO, false},
		{nil, 'S', "openat", KindOther, false},
		{[]string{"App.Native()"}, 'S', "clock_nanosleep", KindSleep, false},
	} {
		w := Classify(c.frames, c.state, c.syscall)
		got := ""
		if w != nil {
			got = w.Kind
		}
		if got != c.want || (w != nil && w.SyncOverAsync != c.sync) {
			t.Errorf("Classify(%v, %c, %q) = %+v, want %q sync %v", c.frames, c.state, c.syscall, w, c.want, c.sync)
		}
	}
}

// TestSuspected: two threads in Monitor.Enter through every sample, from
// two call sites, no contention event: a suspected deadlock; from one
// site (a convoy), or with a stack that changed, none.
func TestSuspected(t *testing.T) {
	run := func(byTid map[uint64][][]uint64) *Result {
		g := tracegen.New()
		g.Thread(1).MethodLoad(clrevents.Method{MethodID: 1, StartAddress: 0x1000, Size: 0x100, Namespace: "System.Threading.Monitor", Name: "Enter", Signature: "void  ()"})
		g.Thread(1).MethodLoad(clrevents.Method{MethodID: 2, StartAddress: 0x2000, Size: 0x100, Namespace: "App", Name: "TakeAB", Signature: "void  ()"})
		g.Thread(1).MethodLoad(clrevents.Method{MethodID: 3, StartAddress: 0x3000, Size: 0x100, Namespace: "App", Name: "TakeBA", Signature: "void  ()"})
		for i := range 3 {
			for _, tid := range []uint64{11, 12} {
				s := byTid[tid]
				g.Thread(1).At(time.Duration(i+1)*time.Millisecond).Stack(s[min(i, len(s)-1)]...).Sample(tid, clrevents.SampleExternal)
			}
		}
		sym := stacks.NewSymbols(g.Header())
		a := New(g.Header(), Options{Symbols: sym})
		g.Run(t, func(ev *nettrace.Event) { sym.Event(ev); a.Event(ev) })
		r := a.Result([]Task{{Tid: 11, State: 'S', Syscall: "futex"}, {Tid: 12, State: 'S', Syscall: "futex"}})
		check(t, r)
		return r
	}
	ab, ba := []uint64{0x1010, 0x2010}, []uint64{0x1010, 0x3010}
	r := run(map[uint64][][]uint64{11: {ab}, 12: {ba}})
	if len(r.Deadlocks) != 1 || !r.Deadlocks[0].Suspected || !slices.Equal(r.Deadlocks[0].Threads, []uint64{11, 12}) || r.Deadlocks[0].Reason == "" {
		t.Fatalf("deadlocks %+v, want one suspected of 11 and 12", r.Deadlocks)
	}
	if r.ByWaitKind[KindMonitor] != 2 || r.Threads[0].Wait.OwnerUnknownReason == "" || r.Threads[0].Frames[1] != "App.TakeAB()" {
		t.Errorf("threads %+v", r.Threads)
	}
	if r := run(map[uint64][][]uint64{11: {ab}, 12: {ab}}); len(r.Deadlocks) != 0 {
		t.Errorf("one call site: %+v", r.Deadlocks)
	}
	if r := run(map[uint64][][]uint64{11: {ab}, 12: {{0x3010}, ba}}); len(r.Deadlocks) != 0 {
		t.Errorf("a stack that changed: %+v", r.Deadlocks)
	}
	if len(r.Groups) != 2 || r.Groups[0].Count != 1 {
		t.Errorf("groups %+v", r.Groups)
	}
}

// TestMerge: the snapshot's threads and stacks, the watch's waits (owner,
// age) and deadlocks, counts recomputed.
func TestMerge(t *testing.T) {
	owner := uint64(12)
	var mid uint32 = 7
	snap := &Result{Threads: []Thread{
		{OSTid: 11, Frames: []string{"System.Threading.Monitor.Enter_Slowpath()", "App.TakeAB()"},
			Wait: &Wait{Kind: KindMonitor, Frame: "System.Threading.Monitor.Enter_Slowpath()", OwnerUnknownReason: "x"}},
		{OSTid: 13, Frames: []string{"System.Threading.Thread.Sleep(int32)"}, Wait: &Wait{Kind: KindSleep, Frame: "System.Threading.Thread.Sleep(int32)"}},
	}, Deadlocks: []Deadlock{{Suspected: true, Threads: []uint64{11, 12}}}, TargetPaused: Paused{Count: 2, TotalMs: 1, MaxMs: 0.5}}
	watch := &Result{Threads: []Thread{
		{OSTid: 11, ManagedID: &mid, Wait: &Wait{Kind: KindMonitor, LockID: 0xA, OwnerOSTid: &owner, WaitingMs: 1500}},
		{OSTid: 13},
	}, Deadlocks: []Deadlock{{Threads: []uint64{11, 12}}}, TargetPaused: Paused{Count: 1, TotalMs: 2, MaxMs: 2}}
	r := Merge(snap, watch)
	w := r.Threads[0].Wait
	if w.LockID != 0xA || *w.OwnerOSTid != 12 || w.OwnerUnknownReason != "" || w.Frame != "System.Threading.Monitor.Enter_Slowpath()" ||
		*r.Threads[0].ManagedID != 7 || len(r.Threads[0].Frames) != 2 {
		t.Errorf("thread 11: %+v wait %+v", r.Threads[0], w)
	}
	if r.Threads[1].Wait.Kind != KindSleep || r.ByWaitKind[KindMonitor] != 1 || r.ByWaitKind[KindSleep] != 1 {
		t.Errorf("thread 13 %+v, by kind %v", r.Threads[1], r.ByWaitKind)
	}
	if len(r.Deadlocks) != 1 || r.Deadlocks[0].Suspected || len(r.Groups) != 2 {
		t.Errorf("deadlocks %+v groups %+v", r.Deadlocks, r.Groups)
	}
	if r.TargetPaused != (Paused{Count: 3, TotalMs: 3, MaxMs: 2}) {
		t.Errorf("paused %+v", r.TargetPaused)
	}
	if snap.Threads[0].Wait.LockID != 0 {
		t.Error("Merge changed the snapshot")
	}
}

func check(t *testing.T, r *Result) {
	t.Helper()
	if err := r.CheckValid(); err != nil {
		t.Fatal(err)
	}
}

func TestCycles(t *testing.T) {
	got := Cycles(map[uint64]uint64{
		20: 10, 10: 20, // a cycle of two
		7: 9, 9: 8, 8: 7, // of three, found from 7
		30: 10, // waits for a cycle's thread: not in it
		40: 40, // waits for itself: no cycle
		50: 51, // a chain that ends at a thread waiting for nothing
		60: 0,  // owner unknown
	})
	want := [][]uint64{{7, 9, 8}, {10, 20}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Cycles = %v, want %v", got, want)
	}
}
