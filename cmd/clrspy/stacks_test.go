package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStacksTraceFile: from a trace file, each thread's last sample: the
// contention fixture ends with three threads in Monitor.Enter under one
// stack (ContentionLoop.HoldLock), the holder leaving the lock, the
// benchmark host in Thread.Sleep and the EventPipe thread running.
func TestStacksTraceFile(t *testing.T) {
	out, err := runCLI(t, "stacks", "--json", filepath.Join(traces, "filtrace__contention.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	d := parseStacks(t, []byte(out))
	want := map[string]int{"monitor": 3, "running": 2, "sleep": 1}
	if len(d.ByWaitKind) != len(want) || len(d.Threads) != 6 || d.Live {
		t.Fatalf("by wait kind %v over %d threads (live %v), want %v over 6", d.ByWaitKind, len(d.Threads), d.Live, want)
	}
	for k, n := range want {
		if d.ByWaitKind[k] != n {
			t.Errorf("%s: %d threads, want %d", k, d.ByWaitKind[k], n)
		}
	}
	g := d.Groups[0]
	if g.Count != 3 || g.WaitKind != "monitor" || len(g.Frames) < 3 || !strings.HasPrefix(g.Frames[2], "TraceQ.Fixtures.HotLoopBench.ContentionLoop.HoldLock(") {
		t.Errorf("first group %+v, want the 3 threads in Monitor.Enter from HoldLock", g)
	}
	if len(d.Deadlocks) != 0 {
		t.Errorf("deadlocks %+v", d.Deadlocks)
	}
}
