package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/triage"
)

// TestTriageDeadlock: the deadlock workload (two threads take two
// Monitors in opposite order) launched under `clrspy triage`: the
// deadlock forms while the session watches, so the contention events name
// each lock's owner; the worst finding is a critical
// locks.deadlocked_threads whose cycle is the workload's two threads (its
// own record of their OS ids), and the facts list exactly that cycle
// and name the blocked lock by its type (GateA or GateB).
func TestTriageDeadlock(t *testing.T) {
	exe := workload.Exe(t)
	out := filepath.Join(t.TempDir(), "triage.json")
	_, stderr, _ := clrspyRun(t, "triage", "--json", "-o", out, "--duration", "5s", "--", exe, "deadlock")
	var tids []uint64
	holder := map[string]uint64{} // lock type → the thread that took it first
	for _, m := range regexp.MustCompile(`deadlock thread=\d managed=\d+ tid=(\d+) first=(\w+)`).FindAllStringSubmatch(stderr, -1) {
		tid, _ := strconv.ParseUint(m[1], 10, 64)
		tids = append(tids, tid)
		holder["Workload.Deadlock+"+m[2]] = tid
	}
	slices.Sort(tids)
	if len(tids) != 2 || !strings.Contains(stderr, "deadlocked") {
		t.Fatalf("the workload did not deadlock:\n%s", stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var d triageDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	t.Logf("workload's threads %v; deadlocks %v, most blocked %d; findings %+v", tids, d.Facts.Locks.Deadlocks, d.Facts.Locks.MostBlocked, d.Findings)
	if len(d.Facts.Locks.Deadlocks) != 1 || !slices.Equal(d.Facts.Locks.Deadlocks[0], tids) {
		t.Fatalf("deadlocks %v, want the workload's one cycle %v", d.Facts.Locks.Deadlocks, tids)
	}
	f := d.Findings[0]
	want := "deadlock: threads " + strconv.FormatUint(tids[0], 10) + " → " + strconv.FormatUint(tids[1], 10) + " → " + strconv.FormatUint(tids[0], 10)
	if f.Rule != "locks.deadlocked_threads" || f.Severity != triage.Critical || f.Area != triage.AreaLocks || !strings.HasPrefix(f.Title, want) {
		t.Errorf("first finding %+v, want critical locks.deadlocked_threads %q", f, want)
	}
	if d.Worst != triage.Critical {
		t.Errorf("worst %v", d.Worst)
	}
	// The blocked lock is named by its object's type, read from the
	// target's memory while it ran (.NET 9+), and held by the thread the
	// workload says took it.
	if bl := d.Facts.Locks.BlockedLock; holder[bl] == 0 || d.Facts.Locks.BlockedOwnerTid != holder[bl] {
		t.Errorf("blocked lock %q owned by %d, want GateA or GateB held by its first taker %v", bl, d.Facts.Locks.BlockedOwnerTid, holder)
	}
	// Each of the two locks has one waiter: no lock is a convoy.
	if d.Facts.Locks.MostBlocked != 1 {
		t.Errorf("most blocked on one lock %d, want 1", d.Facts.Locks.MostBlocked)
	}
}
