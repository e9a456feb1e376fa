package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// deadlockedWorkload starts the deadlock workload and waits until it has
// deadlocked: its two threads' OS ids, by the type of the lock each took
// first (Workload.Deadlock+GateA, +GateB), as the workload printed them.
func deadlockedWorkload(t *testing.T, args ...string) (*workload.Proc, map[string]uint64) {
	t.Helper()
	p := workload.Start(t, nil, "deadlock", args...)
	n := 2
	if slices.Contains(args, "ring=3") {
		n = 3
	}
	ms := waitHangStderr(t, p, regexp.MustCompile(`deadlock thread=\d managed=\d+ tid=(\d+) first=(Gate[ABC]|Lock[AB])`), n)
	waitHangStderr(t, p, regexp.MustCompile(`(?m)^deadlocked$`), 1)
	holder := map[string]uint64{}
	for _, m := range ms {
		tid, _ := strconv.ParseUint(m[1], 10, 64)
		if strings.HasPrefix(m[2], "Lock") {
			// The static field that holds the System.Threading.Lock.
			holder["Workload.Deadlock."+m[2]] = tid
		} else {
			holder["Workload.Deadlock+"+m[2]] = tid
		}
	}
	// "deadlocked" is printed as the threads are about to ask for their
	// second lock: let them block.
	time.Sleep(time.Second)
	return p, holder
}

// TestStacksDeadlockedBeforeAttach: clrspy attaches to the deadlock
// workload only after it has deadlocked (no contention event will fire):
// `clrspy stacks --pid` reads the owners from the target's memory (the
// runtime's data descriptor, its sync blocks; the lock each waits for
// from the runtime's ThreadBlockingInfo on its stack, not inferred): both
// threads blocked in Monitor.Enter, each waiting for the lock of the type
// the other took first (named by the static field that holds it:
// Workload.Deadlock.A or .B), owned by the other (OS ids equal the workload's own), each
// holding its first lock, and the cycle reported as a deadlock that is no
// suspicion. .NET 8 exports no descriptor and has no Monitor frame to
// classify the wait by; .NET 9 has no such frame either, and the runtime's
// record of the wait classifies it.
func TestStacksDeadlockedBeforeAttach(t *testing.T) {
	p, holder := deadlockedWorkload(t)
	out, stderr, code := clrspyRun(t, "stacks", "--pid", strconv.Itoa(p.Pid), "--json")
	if code != 0 {
		t.Fatalf("clrspy stacks: exit %d\n%s", code, stderr)
	}
	d := parseStacks(t, []byte(out))
	tids := []uint64{holder["Workload.Deadlock+GateA"], holder["Workload.Deadlock+GateB"]}
	waitsFor := map[uint64]string{tids[0]: "Workload.Deadlock+GateB", tids[1]: "Workload.Deadlock+GateA"}
	if !ownersFromMemory() {
		// .NET 8: no frame says the threads wait in Monitor.Enter and no
		// data descriptor: no wait to fill, no cycle, nothing held known.
		if d.ByWaitKind["monitor"] != 0 || len(d.Deadlocks) != 0 {
			t.Errorf("%s: %d monitor waits, deadlocks %+v: the stacks cannot say", workload.TFM(), d.ByWaitKind["monitor"], d.Deadlocks)
		}
		for _, th := range d.Threads {
			if _, ok := waitsFor[th.OSTid]; ok && len(th.Holds) != 0 {
				t.Errorf("%s (no data descriptor): thread %d holds %+v", workload.TFM(), th.OSTid, th.Holds)
			}
		}
		return
	}
	t.Logf("workload's holders %v; deadlocks %+v", holder, d.Deadlocks)
	seen := forWaiters(d, waitsFor, func(i int, want string) {
		th := &d.Threads[i]
		w := th.Wait
		field := objectOr("Workload.Deadlock." + strings.TrimPrefix(want, "Workload.Deadlock+Gate")) // the static field A or B
		if w == nil || w.Kind != "monitor" || w.ObjectType != want || !strings.HasPrefix(w.Object, field) || w.OwnerOSTid == nil || *w.OwnerOSTid != holder[want] ||
			w.Source != "target_memory" || w.ObjectInferred || w.OwnerUnknownReason != "" {
			t.Errorf("thread %d: wait %+v, want monitor on %s (%s) owned by %d from the target's memory", th.OSTid, w, field, want, holder[want])
		}
		first := "Workload.Deadlock+GateA"
		if want == first {
			first = "Workload.Deadlock+GateB"
		}
		checkMixed(t, th.OSTid, th.Frames, th.MixedFrames, th.MixedNote)
		if len(th.Holds) != 1 || th.Holds[0].ObjectType != first || th.Holds[0].Recursion != 1 || th.Holds[0].Waiters != 1 {
			t.Errorf("thread %d holds %+v, want %s once with one waiter", th.OSTid, th.Holds, first)
		}
	})
	if seen != 2 {
		t.Fatalf("%d of the workload's threads %v listed", seen, tids)
	}
	// Their managed thread ids, which no thread event named (the threads
	// began before the session), from the runtime's thread store.
	for _, m := range regexp.MustCompile(`managed=(\d+) tid=(\d+)`).FindAllStringSubmatch(p.Stderr(), -1) {
		mid, _ := strconv.ParseUint(m[1], 10, 32)
		tid, _ := strconv.ParseUint(m[2], 10, 64)
		for _, th := range d.Threads {
			if th.OSTid == tid && (th.ManagedID == nil || uint64(*th.ManagedID) != mid) {
				t.Errorf("thread %d: managed id %v, the workload's is %d", tid, th.ManagedID, mid)
			}
		}
	}
	slices.Sort(tids)
	if len(d.Deadlocks) != 1 {
		t.Fatalf("deadlocks %+v, want one", d.Deadlocks)
	}
	dl := d.Deadlocks[0]
	if dl.Suspected || dl.Source != "target_memory" || !slices.Equal(dl.Threads, tids) || len(dl.Locks) != 2 {
		t.Fatalf("deadlock %+v, want threads %v from the target's memory", dl, tids)
	}
	for i, l := range dl.Locks {
		want := waitsFor[l.WaiterOSTid]
		if l.WaiterOSTid != tids[i] || l.ObjectType != want || l.OwnerOSTid == nil || *l.OwnerOSTid != holder[want] {
			t.Errorf("edge %d: %+v, want %d waiting for %s held by %d", i, l, tids[i], want, holder[want])
		}
	}
	// The text report says the same in words.
	txt, _, _ := clrspyRun(t, "stacks", "--pid", strconv.Itoa(p.Pid))
	for _, s := range []string{"DEADLOCK: threads " + strconv.FormatUint(tids[0], 10), "waits for the lock of Workload.Deadlock+GateB", "read from the target's memory",
		"ThreadBlockingInfo"} {
		if !strings.Contains(txt, s) {
			t.Errorf("text report lacks %q:\n%s", s, txt)
		}
	}
}

// forWaiters calls fn for each thread of d that waitsFor lists (with
// what it waits for) and returns how many there were.
func forWaiters(d *stacksDoc, waitsFor map[uint64]string, fn func(i int, want string)) int {
	n := 0
	for i, th := range d.Threads {
		if want, ok := waitsFor[th.OSTid]; ok {
			n++
			fn(i, want)
		}
	}
	return n
}

// checkMixed: a thread blocked in a futex wait, walked from outside
// without stopping it (clrspy runs as root in the tests, or says why
// not): its joined stack is the kernel's frames (the futex wait), then
// libc's and the runtime's native frames, then exactly its managed
// frames, newest first.
func checkMixed(t *testing.T, tid uint64, frames, mixed []string, note string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if !strings.Contains(note, "root") {
			t.Errorf("thread %d: not root, mixed note %q says nothing of it", tid, note)
		}
		return
	}
	k := slices.IndexFunc(mixed, func(f string) bool { return strings.HasPrefix(f, "futex") && strings.HasSuffix(f, " [kernel]") })
	libc := slices.IndexFunc(mixed, func(f string) bool { return strings.HasSuffix(f, " [libc.so.6]") })
	m := -1
	if len(frames) > 0 {
		m = slices.Index(mixed, frames[0])
	}
	if k != 0 || libc <= k || m <= libc || m+len(frames) > len(mixed) || !slices.Equal(mixed[m:m+len(frames)], frames) {
		t.Errorf("thread %d: mixed stack %q (kernel futex frame at %d, libc at %d, managed from %d), want kernel, native, then its managed frames %q (note %q)",
			tid, mixed, k, libc, m, frames, note)
	}
	for _, f := range mixed[libc:m] {
		if strings.HasSuffix(f, " [kernel]") {
			t.Errorf("thread %d: kernel frame %q among its user frames", tid, f)
		}
	}
}

// TestStacksLockDeadlockedBeforeAttach: two threads take two
// System.Threading.Locks (.NET 9+: the static fields LockA and LockB) in
// opposite order and deadlock before clrspy attaches: each thread's wait
// is a lock wait on the Lock the other took first, its owner read from
// the Lock's own owner field (found through the runtime's
// ThreadBlockingInfo on the waiting thread's stack) and equal to the OS
// thread id the workload printed, each Lock named by the static field
// that holds it (Workload.Deadlock.LockA, .LockB), and the cycle of the
// two a deadlock read from the target's memory.
func TestStacksLockDeadlockedBeforeAttach(t *testing.T) {
	if workload.TFM() == "net8.0" {
		t.Skip("System.Threading.Lock is .NET 9+")
	}
	p, holder := deadlockedWorkload(t, "kind=lock")
	out, stderr, code := clrspyRun(t, "stacks", "--pid", strconv.Itoa(p.Pid), "--json")
	if code != 0 {
		t.Fatalf("clrspy stacks: exit %d\n%s", code, stderr)
	}
	d := parseStacks(t, []byte(out))
	a, b := holder["Workload.Deadlock.LockA"], holder["Workload.Deadlock.LockB"]
	waitsFor := map[uint64]string{a: "Workload.Deadlock.LockB", b: "Workload.Deadlock.LockA"}
	t.Logf("workload's holders %v; deadlocks %+v", holder, d.Deadlocks)
	seen := forWaiters(d, waitsFor, func(i int, want string) {
		th := &d.Threads[i]
		w := th.Wait
		if w == nil || w.Kind != "lock" || w.ObjectType != "System.Threading.Lock" || !strings.HasPrefix(w.Object, objectOr(want)) || w.OwnerOSTid == nil ||
			*w.OwnerOSTid != holder[want] || w.Source != "target_memory" || w.OwnerUnknownReason != "" {
			t.Errorf("thread %d: wait %+v, want a lock wait on %s held by %d from the target's memory", th.OSTid, w, want, holder[want])
		}
		checkMixed(t, th.OSTid, th.Frames, th.MixedFrames, th.MixedNote)
		if len(th.Holds) != 1 || th.Holds[0].ObjectType != "System.Threading.Lock" || th.Holds[0].Recursion != 1 || th.Holds[0].Waiters != 1 {
			t.Errorf("thread %d holds %+v, want one System.Threading.Lock once with one waiter", th.OSTid, th.Holds)
		}
	})
	if seen != 2 {
		t.Fatalf("%d of the workload's threads %v listed", seen, holder)
	}
	tids := []uint64{a, b}
	slices.Sort(tids)
	if len(d.Deadlocks) != 1 || d.Deadlocks[0].Suspected || d.Deadlocks[0].Source != "target_memory" || !slices.Equal(d.Deadlocks[0].Threads, tids) {
		t.Fatalf("deadlocks %+v, want one of threads %v from the target's memory", d.Deadlocks, tids)
	}
	for _, l := range d.Deadlocks[0].Locks {
		want := waitsFor[l.WaiterOSTid]
		if !strings.HasPrefix(l.Object, objectOr(want)) || l.ObjectType != "System.Threading.Lock" || l.OwnerOSTid == nil || *l.OwnerOSTid != holder[want] {
			t.Errorf("edge %+v, want %d waiting for %s held by %d", l, l.WaiterOSTid, want, holder[want])
		}
	}
}

// TestStacksDeadlockRingBeforeAttach: three threads in a ring (each holds
// its gate and waits for the next one's), deadlocked before clrspy
// attaches. Each blocked thread could wait for either of two contended
// locks it does not hold: the runtime's ThreadBlockingInfo on its stack
// says which (exact, not inferred). The three waits, owners and types,
// and one cycle of the three threads.
func TestStacksDeadlockRingBeforeAttach(t *testing.T) {
	p, holder := deadlockedWorkload(t, "ring=3")
	out, stderr, code := clrspyRun(t, "stacks", "--pid", strconv.Itoa(p.Pid), "--json")
	if code != 0 {
		t.Fatalf("clrspy stacks: exit %d\n%s", code, stderr)
	}
	d := parseStacks(t, []byte(out))
	if !ownersFromMemory() {
		// .NET 8: no Monitor frame, no memory read.
		if d.ByWaitKind["monitor"] != 0 || len(d.Deadlocks) != 0 {
			t.Errorf("%s: %d monitor waits, deadlocks %+v", workload.TFM(), d.ByWaitKind["monitor"], d.Deadlocks)
		}
		return
	}
	next := map[string]string{"Workload.Deadlock+GateA": "Workload.Deadlock+GateB", "Workload.Deadlock+GateB": "Workload.Deadlock+GateC",
		"Workload.Deadlock+GateC": "Workload.Deadlock+GateA"}
	t.Logf("holders %v; deadlocks %+v", holder, d.Deadlocks)
	var tids []uint64
	for first, tid := range holder {
		tids = append(tids, tid)
		want := next[first]
		found := false
		for _, th := range d.Threads {
			if th.OSTid != tid {
				continue
			}
			found = true
			if w := th.Wait; w == nil || w.ObjectType != want || w.OwnerOSTid == nil || *w.OwnerOSTid != holder[want] || w.Source != "target_memory" || w.ObjectInferred {
				t.Errorf("thread %d (holds %s): wait %+v, want %s owned by %d", tid, first, w, want, holder[want])
			}
		}
		if !found {
			t.Errorf("thread %d not listed", tid)
		}
	}
	slices.Sort(tids)
	if len(d.Deadlocks) != 1 || d.Deadlocks[0].Suspected || !slices.Equal(d.Deadlocks[0].Threads, tids) {
		t.Fatalf("deadlocks %+v, want one of the ring %v", d.Deadlocks, tids)
	}
}

// TestStacksGenericLockType: the hang workload's waiters block on a lock
// whose object is a List<HangGate> held by a static field, taken before
// clrspy attached: its type is named with its type argument (.NET 9+)
// and the object by the field (.NET 10), read from the target's memory.
func TestStacksGenericLockType(t *testing.T) {
	if !ownersFromMemory() {
		t.Skip("no data descriptor before .NET 9")
	}
	p := workload.Start(t, nil, "hang", "gate=list", "monitor=2", "handle=0", "sleep=0")
	m := waitHangStderr(t, p, regexp.MustCompile(`hung monitor=\d+ wait_handle=\d+ sleep=\d+ holder=(\d+)`), 1)[0]
	holder, _ := strconv.ParseUint(m[1], 10, 64)
	out, stderr, code := clrspyRun(t, "stacks", "--pid", strconv.Itoa(p.Pid), "--json")
	if code != 0 {
		t.Fatalf("clrspy stacks: exit %d\n%s", code, stderr)
	}
	d := parseStacks(t, []byte(out))
	n := 0
	for _, th := range d.Threads {
		w := th.Wait
		if !strings.HasPrefix(th.Name, "hang-monitor-") {
			continue
		}
		n++
		if w == nil || w.Kind != "monitor" || w.ObjectType != "System.Collections.Generic.List<Workload.Hang+HangGate>" ||
			!strings.HasPrefix(w.Object, objectOr("Workload.Hang.ListGate")) || w.OwnerOSTid == nil || *w.OwnerOSTid != holder {
			t.Errorf("%s: wait %+v, want monitor on Workload.Hang.ListGate, a List<Workload.Hang+HangGate>, held by %d", th.Name, w, holder)
		}
	}
	if n != 2 {
		t.Errorf("%d hang-monitor threads, want 2", n)
	}
}

// TestReportStacksSection: clrspy report --stacks on the deadlocked
// workload ends with clrspy stacks' snapshot: the page's Threads section
// has the deadlock of the workload's two threads, each lock named (on
// .NET 9+, by its static field) and its owner.
func TestReportStacksSection(t *testing.T) {
	p, holder := deadlockedWorkload(t)
	out := filepath.Join(t.TempDir(), "r.html")
	_, stderr, code := clrspyRun(t, "report", "--pid", strconv.Itoa(p.Pid), "--duration", "2s", "--stacks", "-o", out)
	if code != 0 {
		t.Fatalf("clrspy report --stacks: exit %d\n%s", code, stderr)
	}
	b, _ := os.ReadFile(out)
	m := pageDataRE.FindSubmatch(b)
	if m == nil {
		t.Fatal("no page data")
	}
	var page struct {
		Stacks *struct {
			Threads   int      `json:"threads"`
			Deadlocks []string `json:"deadlocks"`
		} `json:"stacks"`
	}
	if err := json.Unmarshal(m[1], &page); err != nil {
		t.Fatal(err)
	}
	if page.Stacks == nil || page.Stacks.Threads < 4 {
		t.Fatalf("threads section %+v", page.Stacks)
	}
	if !ownersFromMemory() {
		return
	}
	a, bt := holder["Workload.Deadlock+GateA"], holder["Workload.Deadlock+GateB"]
	want := fmt.Sprintf("%d waits for %s", a, objectOr("Workload.Deadlock.B (Workload.Deadlock+GateB) held by "+strconv.FormatUint(bt, 10)))
	if len(page.Stacks.Deadlocks) != 1 || !strings.Contains(page.Stacks.Deadlocks[0], want) {
		t.Errorf("deadlocks %q, want one with %q", page.Stacks.Deadlocks, want)
	}
}
