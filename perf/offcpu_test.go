package perf

import (
	"encoding/binary"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/symtab"
	"github.com/clrspy/clrspy/unwind"
)

// TestSwitchPairing feeds a Builder switch events in the order two rings
// can deliver them and checks the off-CPU time per thread: a switch-in
// read before its switch-out (another CPU's ring read first) still ends
// it; a switch-out whose switch-in was lost is counted, not weighed; a
// thread that exits while blocked is off the CPU until its exit; one
// still blocked at the end counts until the last record.
func TestSwitchPairing(t *testing.T) {
	b := offBuilder(t)
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

// switchRecord encodes a PERF_RECORD_SWITCH with sample_id_all's pid,
// tid and time.
func switchRecord(misc uint16, tid int, time int64) []byte {
	le := binary.LittleEndian
	b := make([]byte, 8, 24)
	le.PutUint32(b, recordSwitch)
	le.PutUint16(b[4:], misc)
	le.PutUint16(b[6:], 24)
	b = le.AppendUint32(b, 77)
	b = le.AppendUint32(b, uint32(tid))
	return le.AppendUint64(b, uint64(time))
}

// TestLeanAndFullSwitchOuts feeds one off-CPU ring's records to the
// sampler: a switch-out with both events on gives one switch-out (the
// full one, whichever of the two samples comes first); a lean switch-out
// whose walk the consumer lacks switches the thread's full events on if
// it blocked, not if it was preempted; fullHits blocked full switch-outs
// whose walks the consumer had switch them off again.
func TestLeanAndFullSwitchOuts(t *testing.T) {
	s := &Sampler{pid: 77, full: map[int]*fullEvents{42: {on: true}}}
	regs := unwind.Regs{IP: 0x401000, SP: 0x7ffc0000, BP: 0x7ffc0040}
	stack := make([]byte, 256)
	chain := []uint64{contextKernel, 0xffffffff81000010, contextUser, 0x401000, 0x402000}
	full := func(at int64) []byte { return offSampleRecord(sampleRecord(42, at, 1, chain, &regs, stack, 256)) }
	lean := func(at int64) []byte { return offSampleRecord(sampleRecord(42, at, 1, nil, &regs, stack, 256)) }
	blocked := func(at int64) []byte { return switchRecord(miscSwitchOut, 42, at) }
	preempted := func(at int64) []byte { return switchRecord(miscSwitchOut|miscSwitchOutPreempt, 42, at) }
	type got struct {
		kind SampleKind
		time int64
		full bool
	}
	var out []got
	cached := false
	fn := func(p *Sample) {
		out = append(out, got{p.Kind, p.Time, len(p.Kernel) > 0})
		if p.Kind == KindSwitchOut {
			if len(p.Stack) != 256 {
				t.Errorf("switch-out at %d: %d bytes of stack", p.Time, len(p.Stack))
			}
			p.WalkCached = cached
		}
	}
	var r offRing
	feed := func(recs ...[]byte) {
		out = out[:0]
		for _, rec := range recs {
			s.offRecord(&r, rec, fn)
		}
	}
	check := func(what string, want []got, on bool) {
		t.Helper()
		if !slices.Equal(out, want) || s.full[42].on != on {
			t.Errorf("%s: handed on %+v, full events on %v; want %+v, %v", what, out, s.full[42].on, want, on)
		}
	}
	feed(full(10), lean(11), blocked(12), switchRecord(0, 42, 20))
	check("full then lean", []got{{KindSwitchOut, 10, true}, {KindSwitchIn, 20, false}}, true)
	feed(lean(30), full(31), blocked(32))
	check("lean then full", []got{{KindSwitchOut, 31, true}}, true)
	// The consumer has the walks now: fullHits blocked ones switch the
	// full events off; preempted ones do not count.
	cached = true
	for i := int64(0); i < fullHits-1; i++ {
		feed(full(100+10*i), lean(101+10*i), blocked(102+10*i), full(105+10*i), lean(106+10*i), preempted(107+10*i))
	}
	check("7 blocked hits", []got{{KindSwitchOut, 160, true}, {KindSwitchOut, 165, true}, {KindPreempted, 167, false}}, true)
	feed(full(200), lean(201), blocked(202))
	check("8th blocked hit", []got{{KindSwitchOut, 200, true}}, false)
	feed(lean(300), blocked(302))
	check("lean, walk known", []got{{KindSwitchOut, 300, false}}, false)
	cached = false
	feed(lean(400), preempted(402))
	check("lean, walk unknown, preempted", []got{{KindSwitchOut, 400, false}, {KindPreempted, 402, false}}, false)
	feed(lean(500), blocked(502))
	check("lean, walk unknown, blocked", []got{{KindSwitchOut, 500, false}}, true)
	// A switch record with no sample before it: a switch-out the lean
	// event's period skipped.
	feed(blocked(600), switchRecord(0, 42, 610), preempted(620))
	check("unsampled", []got{{KindUnsampled, 600, false}, {KindSwitchIn, 610, false}, {KindUnsampled, 620, false}, {KindPreempted, 620, false}}, true)
	if st := s.Stats(); st.Switches != 22 || st.Lean != 5 || st.Unsampled != 2 || st.FullOn != 1 {
		t.Errorf("stats: %d switch-outs, %d lean, %d unsampled, full events on %d times; want 22, 5, 2, 1", st.Switches, st.Lean, st.Unsampled, st.FullOn)
	}
}

// offSampleRecord drops the period from a sampleRecord: the off-CPU
// events' layout (offAttr).
func offSampleRecord(rec []byte) []byte {
	rec = append(rec[:32:32], rec[40:]...)
	binary.LittleEndian.PutUint16(rec[6:], uint16(len(rec)))
	return rec
}

// TestSpreadUnsampled: a thread's unsampled switch-outs' time goes to the
// stacks of its lean-sampled switch-outs in proportion to their time
// (full-sampled ones only where it has no lean one), blocked time to
// blocked stacks and runnable time to runnable ones; each thread's total
// is exact.
func TestSpreadUnsampled(t *testing.T) {
	b := offBuilder(t)
	ms := int64(1_000_000)
	ev := func(kind SampleKind, tid int, at int64, ip uint64, lean bool) {
		raw := int32(-1)
		if kind == KindSwitchOut {
			raw = int32(ip)
		}
		b.switchEvent(kind, tid, at*ms, raw, lean)
	}
	// Thread 1: full-sampled at A 100 ms (not a lean one: does not
	// share); lean-sampled at A 30 ms and B 10 ms; unsampled 80 ms
	// blocked and 5 ms preempted (no lean-sampled preemption: its full
	// preempted one at C takes it).
	ev(KindSwitchOut, 1, 0, 0, false)
	ev(KindSwitchIn, 1, 100, 0, false)
	ev(KindSwitchOut, 1, 110, 0, true)
	ev(KindSwitchIn, 1, 140, 0, false)
	ev(KindUnsampled, 1, 150, 0, false)
	ev(KindSwitchIn, 1, 200, 0, false)
	ev(KindSwitchOut, 1, 210, 1, true)
	ev(KindSwitchIn, 1, 220, 0, false)
	ev(KindUnsampled, 1, 230, 0, false)
	ev(KindSwitchIn, 1, 260, 0, false)
	ev(KindSwitchOut, 1, 270, 2, false)
	ev(KindPreempted, 1, 270, 0, false)
	ev(KindSwitchIn, 1, 272, 0, false)
	ev(KindUnsampled, 1, 280, 0, false)
	ev(KindPreempted, 1, 280, 0, false)
	ev(KindSwitchIn, 1, 285, 0, false)
	// Thread 2: unsampled time only: not placed, noted.
	ev(KindUnsampled, 2, 10, 0, false)
	ev(KindSwitchIn, 2, 17, 0, false)
	b.Finish()
	got := map[[2]int64]int64{} // {raw, preempted}: ms
	for k, a := range b.accs {
		if k.off && b.threads[k.thread].ID == 1 {
			got[[2]int64{int64(k.raw), int64(b2i(k.preempted))}] += a.nanos / ms
		}
	}
	want := map[[2]int64]int64{{0, 0}: 100 + 30 + 60, {1, 0}: 10 + 20, {2, 1}: 2 + 5}
	if !maps.Equal(got, want) {
		t.Errorf("thread 1 by stack: %v, want %v", got, want)
	}
	if b.off.unplaced != 7*ms {
		t.Errorf("%d ns unplaced, want thread 2's 7 ms", b.off.unplaced)
	}
}

// TestLeanSwitchWalk: a lean switch-out (copy, no callchains) takes the
// walk of a full one of the same thread at the same IP and SP with the
// same frame-pointer chain inside the copy, kernel frames included; a
// chain with another return address does not.
func TestLeanSwitchWalk(t *testing.T) {
	proc, err := symtab.NewProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(os.Getpid(), proc, nil, nil, BuilderOptions{OffCPU: true})
	le := binary.LittleEndian
	const sp = 0x7ffc0000
	stack := make([]byte, 256)
	// RBP at SP+0x40: saved RBP SP+0x80, return address 0x401111; at
	// SP+0x80: saved RBP 0 (the end), return address 0x402222.
	le.PutUint64(stack[0x40:], sp+0x80)
	le.PutUint64(stack[0x48:], 0x401111)
	le.PutUint64(stack[0x88:], 0x402222)
	regs := unwind.Regs{IP: 0x400100, SP: sp, BP: sp + 0x40}
	mk := func(at int64, chains bool, st []byte) *Sample {
		s := &Sample{Kind: KindSwitchOut, Tid: 7, Time: b.monoStart + at, Regs: regs, HasRegs: true, Stack: st}
		if chains {
			s.Kernel, s.User = []uint64{0xffffffff81000010}, []uint64{0x400100, 0x401111, 0x402222, 0x403333}
		}
		return s
	}
	full := mk(1000, true, stack)
	b.Sample(full)
	lean := mk(2000, false, stack)
	b.Sample(lean)
	other := append([]byte(nil), stack...)
	le.PutUint64(other[0x88:], 0x402223)
	miss := mk(3000, false, other)
	b.Sample(miss)
	if full.WalkCached || !lean.WalkCached || miss.WalkCached {
		t.Errorf("walk cached: full %v, lean %v, other chain %v; want false, true, false", full.WalkCached, lean.WalkCached, miss.WalkCached)
	}
	ev := b.off.events
	if len(ev) != 3 || ev[0].raw != ev[1].raw || ev[2].raw == ev[0].raw {
		t.Fatalf("switch events %+v: want 3, the lean one with the full one's stack", ev)
	}
	if r := b.raws[ev[1].raw]; len(r.kernel) != 1 || r.kernel[0] != 0xffffffff81000010 {
		t.Errorf("lean switch-out's kernel frames %x, want the full one's", r.kernel)
	}
	if r := b.raws[ev[2].raw]; len(r.kernel) != 0 {
		t.Errorf("uncached lean switch-out's kernel frames %x, want none", r.kernel)
	}
	if b.off.cached != 1 || b.off.lean != 1 {
		t.Errorf("%d cached, %d lean walks; want 1, 1", b.off.cached, b.off.lean)
	}
}

// offBuilder is an off-CPU Builder for clrspy's own process.
func offBuilder(t *testing.T) *Builder {
	t.Helper()
	proc, err := symtab.NewProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return newBuilder(os.Getpid(), proc, nil, nil, BuilderOptions{OffCPU: true})
}
