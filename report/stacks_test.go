package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/hang"
)

// TestStacksText: a deadlock, a suspected one and a group, each line
// within 100 columns, the counts per wait kind sorted.
func TestStacksText(t *testing.T) {
	o11, o12 := uint64(12), uint64(11)
	long := "Workload.Deadlock+<>c__DisplayClass6_1.<Run>b__0(class System.Collections.Generic.Dictionary`2<class System.String,class System.Object>)"
	r := &hang.Result{
		Threads: []hang.Thread{{OSTid: 11, Name: "deadlock-0"}, {OSTid: 12, Name: "deadlock-1"}},
		Groups:  []hang.Group{{Threads: []uint64{11, 12}, Count: 2, WaitKind: "monitor", Frames: []string{"System.Threading.Monitor.Enter(class System.Object,bool&)", long}}},
		Deadlocks: []hang.Deadlock{
			{Threads: []uint64{11, 12}, Locks: []hang.DeadlockLock{
				{LockID: 0x562ead5e3848, Object: "0x7f73918a7060", OwnerOSTid: &o11, WaiterOSTid: 11, WaitingMs: 2634, Frames: []string{long}},
				{LockID: 0x562ead5e38a0, Object: "0x7f73918a7048", OwnerOSTid: &o12, WaiterOSTid: 12, WaitingMs: 2634}}},
			{Suspected: true, Threads: []uint64{11, 12}, Reason: strings.Repeat("a reason long enough to wrap ", 8),
				Locks: []hang.DeadlockLock{{WaiterOSTid: 11}, {WaiterOSTid: 12}}},
		},
		ByWaitKind:   map[string]int{"monitor": 2, "futex": 1},
		TargetPaused: hang.Paused{Count: 3, TotalMs: 1.5, MaxMs: 0.75},
	}
	var b bytes.Buffer
	if err := WriteStacksText(&b, &StacksDocument{Input: Input{Source: "pid 1 (W)", Live: true, Complete: true}, Result: r}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"pid 1 (W): 2 threads, 0 with managed stacks\n",
		"cost to the target: paused 3 times, 1.5 ms in all (longest 0.75 ms)\n",
		"waits: futex 1, monitor 2\n",
		"DEADLOCK: threads 11 12\n  thread 11 (deadlock-0) waits 2634 ms for lock 0x562ead5e3848 (object 0x7f73918a7060),\n    held by thread 12 (deadlock-1)\n",
		"SUSPECTED DEADLOCK: threads 11 12\n  a reason long enough",
		"  thread 12 (deadlock-1) blocked (owner unknown)\n",
		"2 threads, monitor: 11 12\n    System.Threading.Monitor.Enter(class System.Object,bool&)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 100 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
	b.Reset()
	if err := WriteStacksJSON(&b, &StacksDocument{Input: Input{Source: "s"}, Pid: 1, Result: r}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"source", "complete", "pid", "threads", "groups", "deadlocks", "hang_chains", "by_wait_kind", "target_paused"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q in the JSON document", k)
		}
	}
}

// TestStacksFolded: one line per distinct stack and wait, root first,
// with its thread count; a thread without managed frames by its name; a
// ';' inside a frame cannot split it.
func TestStacksFolded(t *testing.T) {
	enter := []string{"System.Threading.Monitor.Enter(class System.Object,bool&)", "W.Gate()", "System.Threading.Thread.StartCallback()"}
	r := &hang.Result{Threads: []hang.Thread{
		{OSTid: 11, Frames: enter, Wait: &hang.Wait{Kind: "monitor"}},
		{OSTid: 12, Frames: enter, Wait: &hang.Wait{Kind: "monitor"}},
		{OSTid: 13, Frames: []string{"W.Spin(a;b)", "W.Main()"}},
		{OSTid: 14, Name: ".NET Finalizer", Wait: &hang.Wait{Kind: "futex"}},
	}}
	var b bytes.Buffer
	if err := WriteStacksFolded(&b, &StacksDocument{Result: r}); err != nil {
		t.Fatal(err)
	}
	want := "System.Threading.Thread.StartCallback();W.Gate();System.Threading.Monitor.Enter(class System.Object,bool&);[monitor] 2\n" +
		"W.Main();W.Spin(a:b);[running] 1\n" +
		"[native .NET Finalizer];[futex] 1\n"
	if b.String() != want {
		t.Errorf("folded:\n%s\nwant:\n%s", b.String(), want)
	}
}
