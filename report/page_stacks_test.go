package report

import (
	"strings"
	"testing"

	"github.com/clrspy/clrspy/hang"
)

// TestPageStacks: the page's threads section says the deadlock in one
// line with each waiter, lock and owner, and keeps the groups.
func TestPageStacks(t *testing.T) {
	o1, o2 := uint64(11), uint64(10)
	r := &hang.Result{Threads: make([]hang.Thread, 3), Sampled: 2, ByWaitKind: map[string]int{"monitor": 2, "running": 1},
		Deadlocks: []hang.Deadlock{{Threads: []uint64{10, 11}, Locks: []hang.DeadlockLock{
			{Object: "App.A", ObjectType: "App+Gate", OwnerOSTid: &o1, WaiterOSTid: 10},
			{Object: "App.B", ObjectType: "App+Gate", OwnerOSTid: &o2, WaiterOSTid: 11}}}},
		Groups: []hang.Group{{Threads: []uint64{10, 11}, Count: 2, WaitKind: "monitor", Frames: []string{"M.Enter()", "App.Run()"}}}}
	p := newPageStacks(r)
	want := "DEADLOCK: threads 10 11; 10 waits for App.A (App+Gate) held by 11; 11 waits for App.B (App+Gate) held by 10"
	if p.Threads != 3 || len(p.Deadlocks) != 1 || p.Deadlocks[0] != want || len(p.Groups) != 1 || p.Groups[0].Count != 2 {
		t.Errorf("section %+v, want 3 threads, %q, one group of 2", p, want)
	}
	var b strings.Builder
	if err := WritePage(&b, NewPage(PageParts{Title: "t", Threads: r})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"stacks":{"threads":3`) {
		t.Errorf("the page's data has no stacks section")
	}
}
