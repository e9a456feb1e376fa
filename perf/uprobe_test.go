package perf

import (
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// allocRecord builds a PERF_RECORD_SAMPLE of the allocator layout:
// identifier, pid/tid, time, callchain, registers (AX, BX, SI, DI, BP, SP,
// IP, R12..R15), the stack copy.
func allocRecord(id uint64, pid, tid int, time int64, chain []uint64, regs [nAllocRegs]uint64, stack []byte) []byte {
	le := binary.LittleEndian
	var b []byte
	u64 := func(v uint64) { b = le.AppendUint64(b, v) }
	u64(0) // header, filled below
	u64(id)
	b = le.AppendUint32(b, uint32(pid))
	b = le.AppendUint32(b, uint32(tid))
	u64(uint64(time))
	u64(uint64(len(chain)))
	for _, ip := range chain {
		u64(ip)
	}
	u64(2) // PERF_SAMPLE_REGS_ABI_64
	for _, r := range regs {
		u64(r)
	}
	u64(uint64(len(stack)))
	if len(stack) > 0 {
		b = append(b, stack...)
		u64(uint64(len(stack)))
	}
	le.PutUint32(b, recordSample)
	le.PutUint16(b[6:], uint16(len(b)))
	return b
}

// TestAllocRecordDecode: each probe's record gives its event: malloc's
// size from RDI, calloc's the product of RDI and RSI (saturated when it
// overflows), realloc's pointer and size, free's pointer, a return's RAX;
// records of other processes, of unknown events and without user
// registers are dropped; the sampler is asked about entries only, and
// only sampled entries get a stack.
func TestAllocRecordDecode(t *testing.T) {
	b, err := NewBuilder(os.Getpid(), nil, nil, BuilderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tr := &AllocTracer{pid: 42, builder: b, ids: map[uint64]int{}}
	for i := range allocProbes {
		tr.ids[uint64(100+i)] = i
	}
	regs := func(ax, si, di uint64) (r [nAllocRegs]uint64) {
		r[0], r[2], r[3] = ax, si, di
		r[5] = 0x7ffc0000 // SP
		r[6] = 0x1234     // IP
		return r
	}
	var asked []uint64
	sample := func(size uint64) bool {
		asked = append(asked, size)
		return size == 4096
	}
	stack := make([]byte, 64)
	recs := [][]byte{
		allocRecord(100, 42, 7, 10, []uint64{contextUser, 0x1234, 0x5678}, regs(0, 0, 4096), stack), // malloc(4096): sampled
		allocRecord(104, 42, 7, 11, nil, regs(0xa000, 0, 0), nil),                                   // malloc returned
		allocRecord(101, 42, 8, 12, nil, regs(0, 24, 10), stack),                                    // calloc(10, 24)
		allocRecord(101, 42, 8, 13, nil, regs(0, 1<<40, 1<<40), stack),                              // calloc overflowing
		allocRecord(102, 42, 9, 14, nil, regs(0, 300, 0xb000), stack),                               // realloc(0xb000, 300)
		allocRecord(103, 42, 9, 15, nil, regs(0, 0, 0xa000), nil),                                   // free(0xa000)
		allocRecord(106, 42, 9, 16, nil, regs(0xc000, 0, 0), nil),                                   // realloc returned
		allocRecord(103, 43, 9, 17, nil, regs(0, 0, 0xa000), nil),                                   // another process
		allocRecord(999, 42, 9, 18, nil, regs(0, 0, 0xa000), nil),                                   // unknown event
	}
	noRegs := allocRecord(103, 42, 9, 19, nil, regs(0, 0, 0xa000), nil)
	binary.LittleEndian.PutUint64(noRegs[40:], 0) // abi 0: no user registers
	recs = append(recs, noRegs, noRegs[:20])      // and a short one
	for _, r := range recs {
		tr.record(r, sample)
	}
	type ev struct {
		Kind, Call AllocKind
		Tid        int
		Time       int64
		Size, Addr uint64
		Sampled    bool
		HasStack   bool
	}
	var got []ev
	for _, e := range tr.batch {
		got = append(got, ev{e.Kind, e.Call, e.Tid, e.Time, e.Size, e.Addr, e.Sampled, e.Stack >= 0})
	}
	want := []ev{
		{AllocMalloc, AllocMalloc, 7, 10, 4096, 0, true, true},
		{AllocReturn, AllocMalloc, 7, 11, 0, 0xa000, false, false},
		{AllocCalloc, AllocCalloc, 8, 12, 240, 0, false, false},
		{AllocCalloc, AllocCalloc, 8, 13, ^uint64(0), 0, false, false},
		{AllocRealloc, AllocRealloc, 9, 14, 300, 0xb000, false, false},
		{AllocFree, AllocFree, 9, 15, 0, 0xa000, false, false},
		{AllocReturn, AllocRealloc, 9, 16, 0, 0xc000, false, false},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events\n%v\nwant\n%v", got, want)
	}
	if fmt.Sprint(asked) != fmt.Sprint([]uint64{4096, 240, ^uint64(0), 300}) {
		t.Errorf("sampler asked about %v, want the four entries' sizes", asked)
	}
	if tr.stats.Records != 7 {
		t.Errorf("%d records counted, want 7", tr.stats.Records)
	}
	// Delivered in time order whatever the order read.
	tr.batch[0].Time, tr.batch[6].Time = 16, 10
	var times []int64
	tr.deliver(func(e *AllocEvent) { times = append(times, e.Time) }, true)
	if fmt.Sprint(times) != "[10 11 12 13 14 15 16]" || len(tr.batch) != 0 {
		t.Errorf("delivered at %v (left %d), want 10..16 in order", times, len(tr.batch))
	}
	// Not final: what is younger than the lag waits.
	now := monoNow()
	tr.batch = append(tr.batch, AllocEvent{Time: now - 2*deliverLag}, AllocEvent{Time: now + deliverLag})
	times = nil
	tr.deliver(func(e *AllocEvent) { times = append(times, e.Time) }, false)
	if len(times) != 1 || len(tr.batch) != 1 {
		t.Errorf("delivered %d, kept %d; want 1 and 1", len(times), len(tr.batch))
	}
}

func TestMul64(t *testing.T) {
	for _, c := range []struct{ a, b, hi, lo uint64 }{
		{10, 24, 0, 240},
		{1 << 32, 1 << 32, 1, 0},
		{^uint64(0), 2, 1, ^uint64(0) - 1},
		{1 << 40, 1 << 40, 1 << 16, 0},
	} {
		if hi, lo := mul64(c.a, c.b); hi != c.hi || lo != c.lo {
			t.Errorf("mul64(%#x, %#x) = %#x:%#x, want %#x:%#x", c.a, c.b, hi, lo, c.hi, c.lo)
		}
	}
}

// TestFileOffset: a symbol's address becomes its file offset through the
// loadable segment that holds it.
func TestFileOffset(t *testing.T) {
	f := &elf.File{Progs: []*elf.Prog{
		{ProgHeader: elf.ProgHeader{Type: elf.PT_LOAD, Off: 0, Vaddr: 0, Filesz: 0x1000}},
		{ProgHeader: elf.ProgHeader{Type: elf.PT_LOAD, Off: 0x1000, Vaddr: 0x401000, Filesz: 0x2000}},
		{ProgHeader: elf.ProgHeader{Type: elf.PT_DYNAMIC, Off: 0x5000, Vaddr: 0x5000, Filesz: 0x100}},
	}}
	for _, c := range []struct {
		vaddr, off uint64
		ok         bool
	}{{0x10, 0x10, true}, {0x401234, 0x1234, true}, {0x403000, 0, false}, {0x5010, 0, false}} {
		if off, ok := fileOffset(f, c.vaddr); off != c.off || ok != c.ok {
			t.Errorf("fileOffset(%#x) = %#x, %v; want %#x, %v", c.vaddr, off, ok, c.off, c.ok)
		}
	}
}

// TestAllocOffsetsLibc: the offsets found in the C library a process maps
// (sleep's) are its malloc, calloc, realloc and free: the process's own
// code at those offsets of the mapping is the file's bytes there, and
// the four are distinct, the returns at their function's offset.
func TestAllocOffsetsLibc(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var name, path string
	var err error
	for i := 0; i < 100; i++ {
		if name, path, err = findLibc(cmd.Process.Pid); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(filepath.Base(name), "libc") {
		t.Fatalf("libc %q", name)
	}
	tr := &AllocTracer{pid: cmd.Process.Pid, libc: path, libcName: name}
	if err := tr.readOffsets(); err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]string{}
	for i, p := range allocProbes {
		off := tr.offsets[i]
		if p.ret {
			if off != tr.offsets[p.call] {
				t.Errorf("%s's return probe at %#x, its entry at %#x", p.sym, off, tr.offsets[p.call])
			}
			continue
		}
		if s, ok := seen[off]; ok || off == 0 {
			t.Errorf("%s at %#x (also %s)", p.sym, off, s)
		}
		seen[off] = p.sym
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	maps, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", cmd.Process.Pid))
	for off, sym := range seen {
		addr, ok := mappedAt(string(maps), name, off)
		if !ok {
			t.Errorf("%s's offset %#x is in no executable mapping of %s", sym, off, name)
			continue
		}
		code := make([]byte, 16)
		if _, err := mem.ReadAt(code, int64(addr)); err != nil {
			t.Fatal(err)
		}
		if string(code) != string(file[off:off+16]) {
			t.Errorf("%s: the process's code at %#x is % x, the file's at %#x % x", sym, addr, code, off, file[off:off+16])
		}
	}
}

// mappedAt is the address where file offset off of path is mapped
// executable, from a maps text.
func mappedAt(maps, path string, off uint64) (uint64, bool) {
	for _, l := range strings.Split(maps, "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || f[5] != path || !strings.Contains(f[1], "x") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, _ := strconv.ParseUint(lo, 16, 64)
		end, _ := strconv.ParseUint(hi, 16, 64)
		foff, _ := strconv.ParseUint(f[2], 16, 64)
		if off >= foff && off < foff+(end-start) {
			return start + off - foff, true
		}
	}
	return 0, false
}

// TestUprobePMU: the type and the retprobe bit from the PMU's files, and
// one line naming what is missing when the kernel has no uprobe PMU.
func TestUprobePMU(t *testing.T) {
	old := uprobeTypePath
	defer func() { uprobeTypePath = old }()
	dir := t.TempDir()
	uprobeTypePath = dir
	if _, _, err := uprobePMU(); err == nil || !strings.Contains(err.Error(), "this kernel has no uprobe PMU") || strings.Contains(err.Error(), "\n") {
		t.Errorf("no PMU: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, "format"), 0o755)
	os.WriteFile(filepath.Join(dir, "type"), []byte("9\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "format", "retprobe"), []byte("config:3\n"), 0o644)
	typ, bit, err := uprobePMU()
	if err != nil || typ != 9 || bit != 3 {
		t.Errorf("uprobePMU = %d, %d, %v; want 9, 3", typ, bit, err)
	}
}

// allocHelperEnv makes the test binary, re-executed as nobody by
// TestAllocTracerUnprivileged, open the allocator probes on a pid and
// print the error.
const allocHelperEnv = "CLRSPY_ALLOC_HELPER"

func init() {
	if os.Getenv(allocHelperEnv) == "" {
		return
	}
	pid, _ := strconv.Atoi(os.Getenv("CLRSPY_PERF_PID"))
	var h helperResult
	tr, err := OpenAllocTracer(pid, AllocOptions{NoSession: true})
	if err != nil {
		h.Err = err.Error()
		_, h.Fill = err.(*UnavailableError)
	} else {
		tr.Close()
	}
	json.NewEncoder(os.Stdout).Encode(&h)
	os.Exit(0)
}

// TestAllocTracerUnprivileged: as nobody, on its own process, the
// allocator probes are refused before anything is opened, in one line
// (an *UnavailableError, for the command's error).
func TestAllocTracerUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test runs the target and the tracer under another uid: it needs root")
	}
	dir, err := os.MkdirTemp("", "clrspy-alloc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(dir, "perf.test")
	if err := copyFile(self, helper); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}
	target := exec.Command("sleep", "30")
	target.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	t.Setenv(allocHelperEnv, "1")
	h := runHelper(t, helper, nobody, target.Process.Pid, nil)
	want := "native allocation tracking needs root or CAP_PERFMON (uprobes through perf_event_open); clrspy runs as uid 65534 without them"
	if h.Err != want || !h.Fill {
		t.Errorf("as nobody: %q (UnavailableError %v), want %q", h.Err, h.Fill, want)
	}
	// As root: no such process, in one line.
	if _, err := OpenAllocTracer(1<<22+12345, AllocOptions{NoSession: true}); err == nil || err.Error() != fmt.Sprintf("no process with pid %d", 1<<22+12345) {
		t.Errorf("no such pid: %v", err)
	}
}

// TestProbeSkip: an entry probe moves past a register-to-register test
// or cmp onto the emulated jump after it (glibc's free begins test rdi,
// rdi; je), and stays on any other first instruction.
func TestProbeSkip(t *testing.T) {
	for _, c := range []struct {
		code string
		skip int
	}{
		{"48 85 ff 0f 84 bf 00 00 00 55", 3}, // free: test rdi,rdi; je rel32
		{"85 ff 74 10", 2},                   // test edi,edi; je rel8
		{"48 39 f7 72 05", 3},                // cmp rdi,rsi; jb
		{"48 85 ff 55", 3},                   // test; push rbp (emulated)
		{"48 85 ff 48 89 fb", 0},             // test; mov: single-stepped either way
		{"48 85 07 74 10", 0},                // test [rdi],rax: reads memory
		{"41 54 55 53", 0},                   // malloc: push r12, emulated already
		{"f3 0f 1e fa 55", 0},                // endbr64
		{"48", 0},
		{"", 0},
	} {
		var b []byte
		for _, h := range strings.Fields(c.code) {
			v, _ := strconv.ParseUint(h, 16, 8)
			b = append(b, byte(v))
		}
		if got := probeSkip(b); got != c.skip {
			t.Errorf("probeSkip(% x) = %d, want %d", b, got, c.skip)
		}
	}
}

// TestAllocRecordNoAlloc: decoding an unsampled record and handing it on
// allocate nothing once the batch has grown (every allocator call of the
// target goes through here).
func TestAllocRecordNoAlloc(t *testing.T) {
	tr := &AllocTracer{pid: 42, ids: map[uint64]int{100: 0, 104: 4, 103: 3}}
	var regs [nAllocRegs]uint64
	regs[3] = 64
	recs := [][]byte{
		allocRecord(100, 42, 7, 10, nil, regs, make([]byte, 4096)),
		allocRecord(104, 42, 7, 11, nil, regs, nil),
		allocRecord(103, 42, 7, 12, nil, regs, nil),
	}
	no := func(uint64) bool { return false }
	var n int
	fn := func(*AllocEvent) { n++ }
	tr.batch = make([]AllocEvent, 0, 16)
	allocs := testing.AllocsPerRun(1000, func() {
		for _, r := range recs {
			tr.record(r, no)
		}
		tr.batch = tr.batch[:0]
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per 3 records, want 0", allocs)
	}
	for _, r := range recs {
		tr.record(r, no)
	}
	tr.deliver(fn, true)
	if n != 3 {
		t.Errorf("%d events delivered, want 3", n)
	}
}
