package perf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/unwind"
)

// sampleRecord encodes a PERF_RECORD_SAMPLE of sampleType.
func sampleRecord(tid int, time int64, period uint64, chain []uint64, regs *unwind.Regs, stack []byte, dyn uint64) []byte {
	le := binary.LittleEndian
	b := make([]byte, 8)
	b = le.AppendUint64(b, 0x1234)             // ip
	b = le.AppendUint32(b, 77)                 // pid
	b = le.AppendUint32(b, uint32(tid))        // tid
	b = le.AppendUint64(b, uint64(time))       // time
	b = le.AppendUint64(b, period)             // period
	b = le.AppendUint64(b, uint64(len(chain))) // nr
	for _, ip := range chain {
		b = le.AppendUint64(b, ip)
	}
	if regs == nil {
		b = le.AppendUint64(b, 0) // abi none
	} else {
		b = le.AppendUint64(b, 2) // PERF_SAMPLE_REGS_ABI_64
		for _, v := range []uint64{regs.BX, regs.BP, regs.SP, regs.IP, regs.R12, regs.R13, regs.R14, regs.R15} {
			b = le.AppendUint64(b, v)
		}
	}
	b = le.AppendUint64(b, uint64(len(stack)))
	if len(stack) > 0 {
		b = append(b, stack...)
		b = le.AppendUint64(b, dyn)
	}
	le.PutUint32(b, recordSample)
	le.PutUint16(b[6:], uint16(len(b)))
	return b
}

// TestDecodeSample decodes a record with kernel and user callchains,
// registers and a partly valid stack copy, and rejects truncations.
func TestDecodeSample(t *testing.T) {
	regs := unwind.Regs{IP: 0x401000, SP: 0x7ffc0000, BP: 0x7ffc0100, BX: 1, R12: 12, R13: 13, R14: 14, R15: 15}
	chain := []uint64{contextKernel, 0xffffffff81000010, 0xffffffff81000020, contextUser, 0x401000, 0x402000}
	stack := make([]byte, 64)
	rec := sampleRecord(42, 123456789, 10101010, chain, &regs, stack, 40)
	var s Sample
	if !decodeSample(rec, &s, true) {
		t.Fatal("not decoded")
	}
	if s.Pid != 77 || s.Tid != 42 || s.Time != 123456789 || s.Period != 10101010 || s.IP != 0x1234 {
		t.Errorf("header fields %+v", s)
	}
	if !slices.Equal(s.Kernel, chain[1:3]) || !slices.Equal(s.User, chain[4:]) {
		t.Errorf("kernel %x user %x", s.Kernel, s.User)
	}
	if !s.HasRegs || s.Regs != regs || len(s.Stack) != 40 {
		t.Errorf("regs %+v (%v), stack %d bytes (dyn_size 40)", s.Regs, s.HasRegs, len(s.Stack))
	}
	for n := 8; n < len(rec); n += 8 {
		if decodeSample(rec[:n], &s, true) {
			t.Errorf("truncated to %d bytes: decoded", n)
		}
	}
	// No user context: no registers, no stack.
	rec = sampleRecord(1, 1, 1, []uint64{contextKernel, 0xffffffff81000010}, nil, nil, 0)
	if !decodeSample(rec, &s, true) || s.HasRegs || s.Stack != nil || len(s.User) != 0 || len(s.Kernel) != 1 {
		t.Errorf("kernel-only sample %+v", s)
	}
}

// TestRingDrain: records are read in place, a record that wraps around
// the end of the data area is handed over whole, data_tail advances past
// everything read, and a torn length drops the rest.
func TestRingDrain(t *testing.T) {
	page := os.Getpagesize()
	const size = 256
	mem := make([]byte, page+size)
	r := &ring{mem: mem, meta: (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0])), data: mem[page:], mask: size - 1, fd: -1}
	put := func(at uint64, rec []byte) {
		for i, c := range rec {
			r.data[(at+uint64(i))&r.mask] = c
		}
	}
	rec := func(typ uint32, n int, fill byte) []byte {
		b := make([]byte, n)
		for i := 8; i < n; i++ {
			b[i] = fill
		}
		binary.LittleEndian.PutUint32(b, typ)
		binary.LittleEndian.PutUint16(b[6:], uint16(n))
		return b
	}
	// Start near the end so the second record wraps.
	r.meta.Data_tail = 3*size + 200
	pos := r.meta.Data_tail
	put(pos, rec(1, 40, 0xaa))
	put(pos+40, rec(2, 48, 0xbb)) // 240..288: wraps
	put(pos+88, rec(3, 16, 0xcc))
	r.meta.Data_head = pos + 104
	var got []byte
	r.drain(func(b []byte) bool {
		got = append(got, byte(binary.LittleEndian.Uint32(b)))
		for _, c := range b[8:] {
			if c != []byte{0, 0xaa, 0xbb, 0xcc}[b[0]] {
				t.Errorf("record %d: byte %#x", b[0], c)
				break
			}
		}
		return true
	})
	if string(got) != "\x01\x02\x03" || r.meta.Data_tail != pos+104 || r.pending() {
		t.Errorf("records %v, tail %d (want %d)", got, r.meta.Data_tail, pos+104)
	}
	// A record claiming more than what was written: dropped with the rest.
	put(pos+104, rec(4, 200, 0))
	r.meta.Data_head = pos + 104 + 64
	n := 0
	r.drain(func([]byte) bool { n++; return true })
	if n != 0 || r.meta.Data_tail != r.meta.Data_head {
		t.Errorf("torn record: %d delivered, tail %d head %d", n, r.meta.Data_tail, r.meta.Data_head)
	}
}

func TestParseCPUList(t *testing.T) {
	got, err := parseCPUList("0-3,5,7-8")
	if err != nil || !slices.Equal(got, []int{0, 1, 2, 3, 5, 7, 8}) {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range []string{"", "x", "3-1", "0-"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestOptions: defaults and one-line errors for bad values.
func TestOptions(t *testing.T) {
	var o Options
	if err := o.defaults(); err != nil || o.Event != "cpu-clock" || o.Hz != 99 || o.StackBytes != 8192 {
		t.Errorf("defaults %+v %v", o, err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Event: "instructions"}, `unknown perf event "instructions" (want cpu-clock or cycles)`},
		{Options{Hz: -5}, "sampling frequency -5 Hz out of range (1..100000)"},
		{Options{StackBytes: 70000}, "stack copy of 70000 bytes out of range (0..65528)"},
	} {
		if err := c.o.defaults(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	if n := ringSize(300<<10, 2); n != 256<<10 {
		t.Errorf("ring of 300 KiB rounds to %d", n)
	}
	if os.Geteuid() == 0 {
		for _, c := range []struct{ cpus, want int }{{2, 2 << 20}, {64, 512 << 10}, {512, 256 << 10}} {
			if n := ringSize(0, c.cpus); n != c.want {
				t.Errorf("default ring on %d CPUs: %d, want %d", c.cpus, n, c.want)
			}
		}
	}
}

// TestUnavailableReasons: the one-line reasons for each refusal.
func TestUnavailableReasons(t *testing.T) {
	acc := Access{Paranoid: 2}
	cases := []struct {
		event   string
		errno   unix.Errno
		seccomp bool
		want    string
	}{
		{"cpu-clock", unix.ESRCH, false, "no process with pid 1"},
		{"cpu-clock", unix.ENOSYS, false, "perf_event_open is not available in this kernel (ENOSYS)"},
		{"cycles", unix.ENOENT, false, "the cycles hardware event is not available here (ENOENT: no PMU exposed, e.g. in a VM); use cpu-clock"},
		{"cpu-clock", unix.EPERM, true, "perf_event_open is blocked by seccomp (EPERM; perf_event_paranoid 2): in a container, grant CAP_PERFMON or allow the syscall in the seccomp profile"},
		{"cpu-clock", unix.EMFILE, false, "out of file descriptors for perf events (EMFILE)"},
	}
	defer func(f func() bool) { seccompActive = f }(seccompActive)
	for _, c := range cases {
		seccompActive = func() bool { return c.seccomp }
		if got := openFailure(1, Options{Event: c.event}, acc, c.errno); got != c.want {
			t.Errorf("%v: %q, want %q", c.errno, got, c.want)
		}
	}
	// Another user's process (pid 1 is root's; the check runs as root,
	// so fake an unprivileged uid by asking about a process whose uid
	// differs: not possible here without privileges dropping; the live
	// TestUnprivileged covers it). Our own process as ourselves:
	seccompActive = func() bool { return false }
	got := openFailure(os.Getpid(), Options{}, acc, unix.EACCES)
	if got != "perf_event_open refused (EACCES) at perf_event_paranoid 2 without CAP_PERFMON" {
		t.Errorf("own process, EACCES: %q", got)
	}
	// Check on a pid that does not exist.
	_, err := Check(math.MaxInt32, Options{})
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Error() != "no process with pid 2147483647" || !errors.Is(err, unix.ESRCH) {
		t.Errorf("Check of a missing pid: %v", err)
	}
	// cycles on this machine: it has a PMU, or the reason says it has not.
	if _, err := Check(os.Getpid(), Options{Event: "cycles"}); err != nil && !strings.Contains(err.Error(), "cycles hardware event is not available here") {
		t.Errorf("cycles: %v", err)
	}
}

// TestBuilderLabels: samples inside a GC stop get its number and phase
// (suspend until the threads stopped, pause after); samples wait while a
// suspension is open or the session's clock has not passed them; Result
// includes waiting samples with what is known.
func TestBuilderLabels(t *testing.T) {
	b, err := NewBuilder(os.Getpid(), nil, nil, BuilderOptions{Hz: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// Pretend a session: GC labels come from stops, times are session ns
	// (no header: the builder's own clock, which nanos() maps to).
	b.gc = gcpause.New(nil, gcpause.Options{})
	mono := func(ns int64) int64 { return ns + b.monoStart }
	sample := func(tid int, ns int64) {
		b.Sample(&Sample{Tid: tid, Time: mono(ns), Period: 1e6, User: []uint64{0x10, 0x20}})
	}
	const ms = int64(1e6)
	sample(1, 5*ms)
	sample(1, 15*ms) // suspend phase of GC 7
	sample(1, 25*ms) // pause phase of GC 7
	sample(2, 40*ms) // after it
	b.mu.Lock()
	b.session = true
	b.watermark = 100 * ms
	b.flush(false)
	waiting := len(b.pending)
	b.mu.Unlock()
	if waiting != 4 {
		// Horizon = 100 ms - 2 s slack: nothing passes yet.
		t.Errorf("%d samples waiting, want all 4 (the session's clock is within the slack)", waiting)
	}
	b.addStop(&gcpause.Stop{GC: &gcpause.GC{Number: 7}, StartNanos: 10 * ms, SuspendEndNanos: 20 * ms, EndNanos: 30 * ms})
	p := b.Result() // includes the waiting samples
	labels := map[string]int64{}
	for _, s := range p.Samples {
		n, ph := labelOf(&s)
		labels[fmt.Sprintf("%s gc=%d %s", p.Threads[s.Thread].Label(), n, ph)] += s.Count
	}
	want := map[string]int64{"thread 1 gc=-1 ": 1, "thread 1 gc=7 suspend": 1, "thread 1 gc=7 pause": 1, "thread 2 gc=-1 ": 1}
	if !maps.Equal(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
	if p.Total != 4 || p.External != 4 || !p.CPUTime || p.PeriodNanos != 1e6 {
		t.Errorf("profile %+v", p)
	}
	for _, s := range p.Samples {
		if s.Nanos != s.Count*ms {
			t.Errorf("sample weight %d ns for %d samples", s.Nanos, s.Count)
		}
	}
	// Finish labels everything for good.
	b.Finish()
	if len(b.pending) != 0 {
		t.Errorf("%d samples still waiting after Finish", len(b.pending))
	}
	if p2 := b.Result(); len(p2.Samples) != len(p.Samples) {
		t.Errorf("after Finish: %d sample rows, before %d", len(p2.Samples), len(p.Samples))
	}
}

// FuzzDecodeSample: arbitrary record bytes decode or are rejected, never
// panic, and decoded slices stay inside the record.
func FuzzDecodeSample(f *testing.F) {
	regs := unwind.Regs{IP: 1, SP: 2, BP: 3}
	f.Add(sampleRecord(1, 2, 3, []uint64{contextKernel, 5, contextUser, 6}, &regs, make([]byte, 32), 16))
	f.Add(sampleRecord(1, 2, 3, nil, nil, nil, 0))
	f.Fuzz(func(t *testing.T, rec []byte) {
		if len(rec) < 8 {
			return
		}
		// Records live 8-byte aligned in the ring.
		al := make([]uint64, (len(rec)+7)/8)
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&al[0])), len(rec))
		copy(buf, rec)
		var s Sample
		if decodeSample(buf, &s, true) && len(s.Stack) > len(buf) {
			t.Fatalf("stack of %d bytes from a %d-byte record", len(s.Stack), len(buf))
		}
	})
}

// TestBuilderSampleAllocations: recording a sample whose stack and thread
// were seen before allocates nothing (the walk, the stack key lookup and
// the aggregation reuse what exists).
func TestBuilderSampleAllocations(t *testing.T) {
	b, err := NewBuilder(os.Getpid(), nil, nil, BuilderOptions{Hz: 1000})
	if err != nil {
		t.Fatal(err)
	}
	s := &Sample{Tid: os.Getpid(), Time: b.monoStart, Period: 1e6, User: []uint64{0x10, 0x20, 0x30}, Kernel: []uint64{0xffffffff81000010}}
	for i := 0; i < 1000; i++ { // grow the pending queue and the map once
		b.Sample(s)
	}
	if n := testing.AllocsPerRun(2000, func() { b.Sample(s) }); n != 0 {
		t.Errorf("%v allocations per sample", n)
	}
}
