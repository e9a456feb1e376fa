package cdac

import (
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// TestLiveDeadlock reads the deadlock workload's runtime after it has
// deadlocked (no event, no debugger): both locks are in the sync block
// table, held by the workload's two threads (their OS ids as the workload
// printed them), each waited for by one thread, their objects named
// Workload.Deadlock+GateA and +GateB; the thread store maps each holder's
// thin lock id to the same OS thread.
func TestLiveDeadlock(t *testing.T) {
	p := workload.Start(t, nil, "deadlock")
	re := regexp.MustCompile(`deadlock thread=\d managed=\d+ tid=(\d+) first=(Gate[AB])`)
	want := map[string]uint64{} // type → its holder's OS tid
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ms := re.FindAllStringSubmatch(p.Stderr(), -1)
		if len(ms) == 2 && regexp.MustCompile(`(?m)^deadlocked$`).MatchString(p.Stderr()) {
			for _, m := range ms {
				tid, _ := strconv.ParseUint(m[1], 10, 64)
				want["Workload.Deadlock+"+m[2]] = tid
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workload did not deadlock:\n%s", p.Stderr())
		}
	}
	// "deadlocked" is printed as the threads are about to block: give them
	// the time to inflate their locks and wait.
	time.Sleep(500 * time.Millisecond)
	pr, err := Open(p.Pid)
	if errors.Is(err, ErrNoDescriptor) {
		t.Fatalf("%s: %v", workload.TFM(), err) // .NET 9+ runs these tests
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	threads, err := pr.Threads()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[uint32]uint64{}
	for _, th := range threads {
		byID[th.ID] = th.OSTid
	}
	locks, err := pr.SyncLocks()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]SyncLock{}
	for _, l := range locks {
		n, err := pr.TypeName(l.Object)
		if err != nil {
			t.Errorf("lock %+v: %v", l, err)
			continue
		}
		got[n] = l
	}
	t.Logf("runtime %s at %#x; %d threads; locks %+v", pr.Runtime.Version, pr.Runtime.Symbol, len(threads), got)
	for typ, tid := range want {
		l, ok := got[typ]
		if !ok {
			t.Errorf("no held lock of type %s", typ)
			continue
		}
		if !l.Held || l.HolderOSTid != tid || l.Waiters != 1 || l.Recursion != 1 {
			t.Errorf("%s: %+v, want held by %d, 1 waiter, recursion 1", typ, l, tid)
		}
		if byID[l.HolderID] != tid {
			t.Errorf("%s: holder's thin lock id %d is OS thread %d in the thread store, want %d", typ, l.HolderID, byID[l.HolderID], tid)
		}
		if h, _, inflated, err := pr.ThinLock(l.Object); err != nil || !inflated || h != 0 {
			t.Errorf("%s: header says thin holder %d inflated %v (%v), want an inflated lock", typ, h, inflated, err)
		}
	}
	// Each blocked thread's stack holds both lock objects: the one it
	// holds (its caller's local) and the one it waits for.
	var objs []uint64
	for _, l := range got {
		objs = append(objs, l.Object)
	}
	sbs := map[uint64]bool{}
	sbType := map[uint64]string{}
	for typ, l := range got {
		sbs[l.SyncBlock] = true
		sbType[l.SyncBlock] = typ
	}
	for _, th := range threads {
		for typ, tid := range want {
			if th.OSTid == tid {
				on := pr.BlockedOn(th, sbs)
				t.Logf("thread %d (holds %s): blocked on %v", tid, typ, on)
				other := "Workload.Deadlock+GateA"
				if typ == other {
					other = "Workload.Deadlock+GateB"
				}
				if len(on) != 1 || sbType[on[0]] != other {
					t.Errorf("thread %d: its ThreadBlockingInfo names sync blocks %#x, want %s's", tid, on, other)
				}
				refs := pr.StackRefs(th, objs)
				t.Logf("thread %d (holds %s): stack refs %v", tid, typ, refs)
				if len(refs) != 2 {
					t.Errorf("thread %d's stack refers to %v of the lock objects %#x, want both", tid, refs, objs)
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d locks held or waited for, want %d", len(got), len(want))
	}
}
