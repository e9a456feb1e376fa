package perf

import (
	"os"
	"testing"

	"github.com/clrspy/clrspy/symtab"
)

// TestSwitchPairing feeds a Builder switch events in the order two rings
// can deliver them and checks the off-CPU time per thread: a switch-in
// read before its switch-out (another CPU's ring read first) still ends
// it; a switch-out whose switch-in was lost is counted, not weighed; a
// thread that exits while blocked is off the CPU until its exit; one
// still blocked at the end counts until the last record.
func TestSwitchPairing(t *testing.T) {
	proc, err := symtab.NewProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(os.Getpid(), proc, nil, nil, BuilderOptions{OffCPU: true})
	ms := int64(1_000_000)
	ev := func(kind SampleKind, tid int, at int64, ip uint64) {
		b.Sample(&Sample{Kind: kind, Tid: tid, Time: b.monoStart + at*ms, User: []uint64{ip}})
	}
	// Thread 1: out at 10 (stack A), in at 30 read first; out at 40
	// (stack B), in at 45.
	ev(KindSwitchIn, 1, 30, 0)
	ev(KindSwitchOut, 1, 10, 0xA)
	ev(KindSwitchOut, 1, 40, 0xB)
	ev(KindSwitchIn, 1, 45, 0)
	// Thread 2: out at 5 whose switch-in was lost, out at 50, exit at 70.
	ev(KindSwitchOut, 2, 5, 0xC)
	ev(KindSwitchOut, 2, 50, 0xC)
	ev(KindExit, 2, 70, 0)
	// Thread 3: in at 2 (blocked since before), out at 80, still off at
	// the end; a CPU sample of thread 1 at 100 is the last record.
	ev(KindSwitchIn, 3, 2, 0)
	ev(KindSwitchOut, 3, 80, 0xD)
	// Thread 4: preempted at 90 (the switch record after the sample, read
	// first), back at 96.
	ev(KindPreempted, 4, 90, 0)
	ev(KindSwitchOut, 4, 90, 0xF)
	ev(KindSwitchIn, 4, 96, 0)
	ev(KindCPU, 1, 100, 0xE)
	b.Finish()
	off := map[uint64]int64{}
	stacksOf := map[uint64]map[uint64]int64{}
	var cpu int64
	runnable := map[uint64]int64{}
	for k, a := range b.accs {
		tid := b.threads[k.thread].ID
		if k.preempted {
			runnable[tid] += a.nanos
		}
		if !k.off {
			cpu += a.count
			continue
		}
		off[tid] += a.nanos
		if stacksOf[tid] == nil {
			stacksOf[tid] = map[uint64]int64{}
		}
		stacksOf[tid][b.raws[k.raw].user[0]] += a.nanos / ms
	}
	want := map[uint64]int64{1: 25 * ms, 2: 20 * ms, 3: 20 * ms, 4: 6 * ms}
	if len(runnable) != 1 || runnable[4] != 6*ms {
		t.Errorf("runnable time %v, want thread 4's 6 ms alone", runnable)
	}
	for tid, w := range want {
		if off[tid] != w {
			t.Errorf("thread %d: %d ns off the CPU, want %d (stacks %v)", tid, off[tid], w, stacksOf[tid])
		}
	}
	if stacksOf[1][0xA] != 20 || stacksOf[1][0xB] != 5 {
		t.Errorf("thread 1 by stack: %v, want A 20 ms, B 5 ms", stacksOf[1])
	}
	if cpu != 1 || b.off.unmatched != 1 || b.off.atEnd != 1 {
		t.Errorf("%d CPU samples, %d unmatched, %d at the end: want 1, 1, 1", cpu, b.off.unmatched, b.off.atEnd)
	}
}

// TestOffCPUUnavailable checks the one-line reasons off-CPU time is left
// out: no privilege, and no tracefs (here: the roots point at an empty
// directory; the private mount clrspy tries as root targets a path that
// does not exist and fails).
func TestOffCPUUnavailable(t *testing.T) {
	_, note := checkOffCPU(os.Getpid(), Options{}, Access{Paranoid: 2})
	if want := "off-CPU time unavailable: the sched_switch tracepoint needs CAP_PERFMON or root (perf_event_paranoid is 2); CPU samples only"; note != want {
		t.Errorf("unprivileged:\n got %q\nwant %q", note, want)
	}
	dir := t.TempDir()
	saved := tracefsRoots
	defer func() { tracefsRoots = saved }()
	tracefsRoots = []string{dir + "/tracing", dir + "/debug/tracing"}
	_, note = checkOffCPU(os.Getpid(), Options{}, Access{Paranoid: 2, Privileged: true})
	if want := "off-CPU time unavailable: tracefs is not mounted (no " + dir + "/tracing/events/sched/sched_switch/id): mount it (mount -t tracefs nodev /sys/kernel/tracing) or run clrspy as root; CPU samples only"; note != want {
		t.Errorf("no tracefs:\n got %q\nwant %q", note, want)
	}
}

// TestSwitchAllocations: a thread blocking again and again at the same
// place costs no allocation per switch once the buffers have grown, the
// walk taken from the cache (registers present) or made again (none).
func TestSwitchAllocations(t *testing.T) {
	b, err := NewBuilder(os.Getpid(), nil, nil, BuilderOptions{Hz: 1000, OffCPU: true})
	if err != nil {
		t.Fatal(err)
	}
	now := b.monoStart
	out := &Sample{Kind: KindSwitchOut, Tid: os.Getpid(), User: []uint64{0x10, 0x20, 0x30}, Kernel: []uint64{0xffffffff81000010}}
	in := &Sample{Kind: KindSwitchIn, Tid: os.Getpid()}
	step := func() {
		now += 100_000 // 10,000 switches per second
		out.Time, in.Time = now, now+50_000
		b.Sample(out)
		b.Sample(in)
	}
	for i := 0; i < 50_000; i++ { // 5 s: the buffers reach their steady size
		step()
	}
	if n := testing.AllocsPerRun(5000, step); n != 0 {
		t.Errorf("%v allocations per switch", n)
	}
	b.Finish()
	var off int64
	for k, a := range b.accs {
		if k.off {
			off += a.nanos
		}
	}
	if want := int64(55_001) * 50_000; off != want { // 50,000 + 5,000 + AllocsPerRun's warm-up run
		t.Errorf("%d ns off the CPU, want %d", off, want)
	}
}
