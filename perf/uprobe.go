package perf

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// Native allocations (clrspy memory --native): uprobes on the target's
// libc malloc, calloc, realloc and free, and uretprobes on the first three
// for the pointer they return, defined once in tracefs (uprobe_tracefs.go)
// or else through the uprobe PMU (its type from
// /sys/bus/event_source/devices/uprobe/type, config1 the libc the target
// maps, config2 the symbol's file offset from libc's .dynsym), opened
// through perf_event_open per thread (on any CPU: cpu -1), the seven of a thread writing
// into one ring of its own. Every call of those functions by the target traps into the
// kernel while the probes are on (a breakpoint, about a microsecond or
// two, and a record into the ring): that is the cost to the target,
// whatever the sampling rate, because the decision which call is sampled
// is made here, per record. The entries of malloc, calloc and realloc
// carry the user registers (the arguments) and a copy of the top of the
// user stack (and, with AllocOptions.Callchain, the kernel's frame-pointer
// walk), so a sampled call's stack is unwound by the Builder as a CPU
// sample's is (DWARF CFI from malloc's entry, then frame pointers through
// JIT'd code); free and the returns carry the registers only. Records
// of all rings are handed on in time order (a block freed on one thread
// may be allocated again on another).
//
// Stopping costs too: the kernel waits for RCU grace periods as it
// removes each probe event (about 80 ms each on 6.18, serialised), so the
// probes are closed function by function, the most called first, each
// function's breakpoints leaving the target once its last event is gone.

// AllocKind is which probe a record is from.
type AllocKind uint8

// Allocator probes.
const (
	AllocMalloc  AllocKind = iota // malloc(size): Size
	AllocCalloc                   // calloc(n, m): Size = n*m
	AllocRealloc                  // realloc(ptr, size): Addr = ptr, Size
	AllocFree                     // free(ptr): Addr
	AllocReturn                   // malloc, calloc or realloc returned Addr (Call says which)
	nAllocKinds
)

// AllocEvent is one allocator call or return of the target.
type AllocEvent struct {
	Kind AllocKind
	Call AllocKind // for AllocReturn: the function returning
	Tid  int
	Time int64 // CLOCK_MONOTONIC ns
	Size uint64
	Addr uint64
	// Sampled entries carry their stack (Stack is the id for
	// AllocTracer.Frames); others have Stack -1.
	Sampled bool
	Stack   int32
}

// AllocOptions configure an AllocTracer.
type AllocOptions struct {
	// StackBytes is the user stack copied with each entry (default 4096):
	// the native frames under the managed caller and the managed frames
	// above it, walked by the unwinder (frame pointers through JIT'd code).
	StackBytes int
	// BufferBytes is the ring per thread (default: 128 MiB over the
	// threads there are when it opens, between 256 KiB and 8 MiB each;
	// halved while the kernel refuses it). An entry's record is the stack
	// copy and 150 bytes: a burst of allocations faster than clrspy reads
	// (its CPU taken by others) fills it, and the records lost are
	// counted.
	BufferBytes int
	// Callchain adds the kernel's frame-pointer walk to each entry, to
	// continue stacks deeper than the copy (measured: 3 µs more a
	// malloc/free pair in a VM, a third more than without).
	Callchain bool
	// NoTracefs opens the probes through the uprobe PMU even when
	// tracefs could define them (uprobe_tracefs.go: a consumer per
	// thread, each call costing more).
	NoTracefs bool
	// NoSession skips the EventPipe session that names managed frames
	// (the perf map, if any, names them then).
	NoSession bool
}

// AllocStats count an AllocTracer's records.
type AllocStats struct {
	Records    uint64 // allocator records read
	Lost       uint64 // records the kernel dropped (a ring full)
	Threads    int
	OpenErrors int
	FirstError error
	RingBytes  int
}

type probeSpec struct {
	kind AllocKind
	call AllocKind
	sym  string
	ret  bool
}

var allocProbes = []probeSpec{
	{AllocMalloc, AllocMalloc, "malloc", false},
	{AllocCalloc, AllocCalloc, "calloc", false},
	{AllocRealloc, AllocRealloc, "realloc", false},
	{AllocFree, AllocFree, "free", false},
	{AllocReturn, AllocMalloc, "malloc", true},
	{AllocReturn, AllocCalloc, "calloc", true},
	{AllocReturn, AllocRealloc, "realloc", true},
}

// Registers of the allocator records, in the kernel's order (ascending
// bits): the unwinder's and the arguments' and return value's.
const (
	regAX = 0
	regSI = 4
	regDI = 5

	allocRegsMask = regsMask | 1<<regAX | 1<<regSI | 1<<regDI
	nAllocRegs    = nSampled + 3
)

// allocSampleType: the identifier (which probe) first, then what the CPU
// samples carry but the IP and period.
const allocSampleType = unix.PERF_SAMPLE_IDENTIFIER | unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME |
	unix.PERF_SAMPLE_CALLCHAIN | unix.PERF_SAMPLE_REGS_USER | unix.PERF_SAMPLE_STACK_USER

// AllocTracer follows one process's allocator calls.
type AllocTracer struct {
	pid      int
	libc     string    // the path given to the kernel
	libcName string    // as the target maps it
	offsets  [7]uint64 // by allocProbes index
	pmuType  uint32
	retBit   uint
	opts     AllocOptions
	threads  map[int]*allocThread
	rings    []*ring // of the threads followed, in their order of opening
	gone     []int   // threads whose exit was read, to close after the drain
	closer   chan *allocThread
	closed   chan struct{}
	ids      map[uint64]int // event id -> allocProbes index
	tp       *tracefsProbes // nil: the uprobe PMU's events
	pidfd    int
	epfd     int
	exited   bool
	lastScan time.Time
	stats    AllocStats
	builder  *Builder
	sample   Sample
	batch    []AllocEvent
	pathBuf  []byte

	syms    *stacks.Symbols
	ep      *ipc.Session
	reader  *nettrace.Reader
	readEnd chan struct{}
	notes   []string
}

// uprobeTypePath is the uprobe PMU's type file (a variable for tests).
var uprobeTypePath = "/sys/bus/event_source/devices/uprobe"

// OpenAllocTracer finds the libc pid maps, the allocator's offsets in it
// and the uprobe PMU, and opens the probes on every thread of pid. The
// error says in one line why not (an *UnavailableError when perf_event
// or its uprobes cannot be used).
func OpenAllocTracer(pid int, opts AllocOptions) (*AllocTracer, error) {
	if opts.StackBytes == 0 {
		opts.StackBytes = 4096
	}
	if opts.StackBytes < 0 || opts.StackBytes > 65528 {
		return nil, fmt.Errorf("stack copy of %d bytes out of range (0..65528)", opts.StackBytes)
	}
	opts.StackBytes &^= 7
	unavailable := func(err error, format string, args ...any) (*AllocTracer, error) {
		return nil, &UnavailableError{Pid: pid, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if !procfs.Exists(pid) {
		return unavailable(unix.ESRCH, "no process with pid %d", pid)
	}
	if !hasCap(capPerfmon) && !hasCap(capSysAdmin) {
		return unavailable(unix.EACCES, "native allocation tracking needs root or CAP_PERFMON (uprobes through perf_event_open); clrspy runs as uid %d without them", os.Geteuid())
	}
	t := &AllocTracer{pid: pid, opts: opts, threads: make(map[int]*allocThread), ids: make(map[uint64]int), pidfd: -1, epfd: -1}
	var err error
	if t.pmuType, t.retBit, err = uprobePMU(); err != nil {
		return unavailable(err, "%v", err)
	}
	if t.libcName, t.libc, err = findLibc(pid); err != nil {
		return nil, err
	}
	if err := t.readOffsets(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			t.Close()
		}
	}()
	if !opts.NoTracefs {
		if t.tp, err = makeTracefsProbes(t.libc, t.offsets[:], pid); err != nil {
			t.tp = nil
			t.notes = append(t.notes, fmt.Sprintf("probes through the uprobe PMU, one consumer a thread (%v): each call costs more", err))
		}
	}
	// The first probe, on the main thread: what the kernel says of uprobes.
	a := t.attr(0, 4096)
	fd, err := t.open(&a, pid, -1)
	if err != nil {
		errno, _ := err.(unix.Errno)
		return unavailable(err, "uprobe on %s's malloc refused (%s): needs root or CAP_PERFMON and a kernel with uprobes", t.libcName, errnoName(errno))
	}
	unix.Close(fd)
	if t.builder, err = NewBuilder(pid, nil, nil, BuilderOptions{}); err != nil {
		return nil, err
	}
	if !opts.NoSession {
		if err := t.openSession(); err != nil {
			t.notes = append(t.notes, fmt.Sprintf("no EventPipe session (%v): managed frames named from the perf map only", err))
		}
	}
	t.builder.proc.LoadAll()
	tids, err := procfs.Threads(pid)
	if err != nil {
		return nil, fmt.Errorf("pid %d: listing its threads: %w", pid, err)
	}
	size := opts.BufferBytes
	if size <= 0 {
		size = min(8<<20, max(256<<10, (128<<20)/max(len(tids), 1)))
	}
	t.stats.RingBytes = ringSize(size, 1)
	if t.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		t.pidfd = fd
		unix.EpollCtl(t.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
	}
	t.closer, t.closed = make(chan *allocThread, 64), make(chan struct{})
	go t.closeExited()
	t.scanTasks()
	if len(t.threads) == 0 {
		if t.stats.FirstError != nil {
			return nil, fmt.Errorf("uprobes on pid %d: %w", pid, t.stats.FirstError)
		}
		return unavailable(unix.ESRCH, "pid %d has no thread left to follow", pid)
	}
	ok = true
	return t, nil
}

// Libc is the C library the probes are on, as the target maps it.
func (t *AllocTracer) Libc() string { return t.libcName }

// uprobePMU reads the uprobe PMU's type and its retprobe bit.
func uprobePMU() (uint32, uint, error) {
	b, err := os.ReadFile(filepath.Join(uprobeTypePath, "type"))
	if err != nil {
		return 0, 0, fmt.Errorf("this kernel has no uprobe PMU (%s: %v): native allocation tracking needs CONFIG_UPROBE_EVENTS", uprobeTypePath, errors.Unwrap(err))
	}
	typ, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("%s/type: %q", uprobeTypePath, b)
	}
	bit := uint(0)
	if f, err := os.ReadFile(filepath.Join(uprobeTypePath, "format", "retprobe")); err == nil {
		// "config:0"
		if _, v, ok := strings.Cut(strings.TrimSpace(string(f)), ":"); ok {
			if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < 64 {
				bit = uint(n)
			}
		}
	}
	return uint32(typ), bit, nil
}

// findLibc finds the C library pid maps: its path as the target sees it,
// and the path clrspy gives the kernel (the same file through
// /proc/PID/root when the target's mount namespace is not clrspy's).
func findLibc(pid int) (name, path string, err error) {
	ms, err := procfs.Maps(pid)
	if err != nil {
		return "", "", fmt.Errorf("pid %d: reading its maps: %w", pid, err)
	}
	for _, m := range ms {
		if !m.FileBacked() {
			continue
		}
		base := filepath.Base(m.Path)
		if base != "libc.so.6" && !(strings.HasPrefix(base, "libc-") && strings.HasSuffix(base, ".so")) && !strings.HasPrefix(base, "libc.musl") && !strings.HasPrefix(base, "ld-musl") {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(m.Path, &st) == nil && st.Ino == m.Inode {
			return m.Path, m.Path, nil
		}
		return m.Path, procfs.Root(pid) + m.Path, nil
	}
	return "", "", fmt.Errorf("pid %d maps no C library (libc.so.6): nothing to put native allocation probes on", pid)
}

// readOffsets finds the allocator's entry points in libc's .dynsym as
// file offsets (what a uprobe is placed at).
func (t *AllocTracer) readOffsets() error {
	file, err := os.Open(t.libc)
	if err != nil {
		return fmt.Errorf("reading %s: %w", t.libcName, err)
	}
	defer file.Close()
	f, err := elf.NewFile(file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", t.libcName, err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return fmt.Errorf("%s: no dynamic symbols: %w", t.libcName, err)
	}
	want := map[string]uint64{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || s.Value == 0 {
			continue
		}
		switch s.Name {
		case "malloc", "calloc", "realloc", "free":
			if _, ok := want[s.Name]; !ok || !strings.Contains(s.Version, "@") {
				want[s.Name] = s.Value
			}
		}
	}
	for i, p := range allocProbes {
		v, ok := want[p.sym]
		if !ok {
			return fmt.Errorf("%s has no %s in its .dynsym", t.libcName, p.sym)
		}
		off, ok := fileOffset(f, v)
		if !ok {
			return fmt.Errorf("%s: %s at %#x is in no loadable segment", t.libcName, p.sym, v)
		}
		if !p.ret {
			var code [16]byte
			if n, _ := file.ReadAt(code[:], int64(off)); n == len(code) {
				off += uint64(probeSkip(code[:]))
			}
		}
		t.offsets[i] = off
	}
	return nil
}

// probeSkip is how far past a function's first instruction its entry
// probe goes: the kernel emulates a probed push, jump or conditional
// jump, but single-steps any other instruction out of line, a second trap
// (measured: free's probe on its first instruction, a test, cost the
// target 18 µs a call in a VM, 3 µs on the conditional jump after it).
// A register-to-register test or cmp changes nothing but the flags, which
// the jump after it reads from the trapped registers: the probe goes on
// the jump, where the arguments are the same. Anything else stays at the
// entry.
func probeSkip(code []byte) int {
	n := 0
	if len(code) > 0 && code[0]&0xf0 == 0x40 { // REX
		n = 1
	}
	if len(code) < n+2 || (code[n] != 0x85 && code[n] != 0x39 && code[n] != 0x3b) || code[n+1]>>6 != 3 {
		return 0
	}
	n += 2
	if emulated(code[n:]) {
		return n
	}
	return 0
}

// emulated reports whether code starts with an instruction x86 uprobes
// emulate: jcc (short and near), jmp rel8/rel32, push of a register.
func emulated(code []byte) bool {
	switch {
	case len(code) == 0:
		return false
	case code[0] >= 0x70 && code[0] <= 0x7f, code[0] == 0xeb, code[0] == 0xe9, code[0] >= 0x50 && code[0] <= 0x57:
		return true
	case len(code) > 1 && code[0] == 0x0f && code[1] >= 0x80 && code[1] <= 0x8f:
		return true
	case len(code) > 1 && code[0] == 0x41 && code[1] >= 0x50 && code[1] <= 0x57:
		return true
	}
	return false
}

// fileOffset converts a virtual address of an ELF file to its file offset.
func fileOffset(f *elf.File, vaddr uint64) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && vaddr >= p.Vaddr && vaddr < p.Vaddr+p.Filesz {
			return vaddr - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}

// attr is probe i's event: period 1, the allocator layout; entries of
// the allocating functions copy the stack and have the kernel's user
// callchain, free and the returns neither.
func (t *AllocTracer) attr(i int, ringBytes int) unix.PerfEventAttr {
	p := allocProbes[i]
	a := unix.PerfEventAttr{
		Type:             t.pmuType,
		Sample:           1,
		Sample_type:      allocSampleType,
		Sample_regs_user: allocRegsMask,
		Clockid:          unix.CLOCK_MONOTONIC,
		Sample_max_stack: maxStack,
		Bits: unix.PerfBitSampleIDAll | unix.PerfBitUseClockID | unix.PerfBitExcludeHv |
			unix.PerfBitExcludeCallchainKernel | unix.PerfBitWatermark,
		Wakeup: uint32(ringBytes / 4),
		Ext2:   t.offsets[i],
	}
	a.Size = uint32(unsafe.Sizeof(a))
	switch {
	case t.tp != nil:
		a.Type, a.Config, a.Ext2 = unix.PERF_TYPE_TRACEPOINT, t.tp.ids[i], 0
	case p.ret:
		a.Config = 1 << t.retBit
	}
	if p.kind == AllocMalloc || p.kind == AllocCalloc || p.kind == AllocRealloc {
		a.Sample_stack_user = uint32(t.opts.StackBytes)
		if !t.opts.Callchain {
			a.Bits |= unix.PerfBitExcludeCallchainUser
		}
	} else {
		a.Bits |= unix.PerfBitExcludeCallchainUser
	}
	if i == 0 {
		a.Bits |= unix.PerfBitTask // fork and exit records: threads to follow
	}
	return a
}

// open opens a probe event, config1 pointing at libc's path.
func (t *AllocTracer) open(a *unix.PerfEventAttr, tid, cpu int) (int, error) {
	if t.tp != nil {
		return perfOpen(a, tid, cpu)
	}
	if t.pathBuf == nil {
		t.pathBuf = append([]byte(t.libc), 0)
	}
	a.Ext1 = uint64(uintptr(unsafe.Pointer(&t.pathBuf[0])))
	fd, err := perfOpen(a, tid, cpu)
	runtime.KeepAlive(t.pathBuf)
	return fd, err
}

func (t *AllocTracer) scanTasks() {
	t.lastScan = time.Now()
	tids, err := procfs.Threads(t.pid)
	if err != nil {
		return
	}
	for _, tid := range tids {
		t.openThread(int(tid))
	}
}

// allocThread is a followed thread's probe events (by allocProbes index)
// and the ring they write into (the first event's).
type allocThread struct {
	tid  int
	fds  []int
	ids  []uint64
	ring *ring
}

// openThread opens tid's probes and maps their ring.
func (t *AllocTracer) openThread(tid int) {
	if _, ok := t.threads[tid]; ok {
		return
	}
	th := &allocThread{tid: tid, fds: make([]int, 0, len(allocProbes))}
	fail := func(err error, what string) {
		th.close()
		for _, id := range th.ids {
			delete(t.ids, id)
		}
		if err != unix.ESRCH {
			t.stats.OpenErrors++
			if t.stats.FirstError == nil {
				t.stats.FirstError = fmt.Errorf("thread %d: %s: %w", tid, what, err)
			}
		}
	}
	for i := range allocProbes {
		a := t.attr(i, t.stats.RingBytes)
		fd, err := t.open(&a, tid, -1)
		if err != nil {
			fail(err, allocProbes[i].sym+" probe")
			return
		}
		th.fds = append(th.fds, fd)
		var id uint64
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.PERF_EVENT_IOC_ID), uintptr(unsafe.Pointer(&id))); e != 0 {
			fail(e, "event id")
			return
		}
		t.ids[id] = i
		th.ids = append(th.ids, id)
		if i == 0 {
			for {
				th.ring, err = mapRing(fd, t.stats.RingBytes)
				if err == nil {
					break
				}
				if (errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOMEM)) && t.stats.RingBytes > 8*os.Getpagesize() {
					t.stats.RingBytes /= 2 // over perf_event_mlock_kb or RLIMIT_MEMLOCK
					continue
				}
				fail(err, "ring buffer")
				return
			}
			th.ring.fd = -1 // the event's: closed with th.fds
			if err := unix.EpollCtl(t.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
				fail(err, "epoll")
				return
			}
			continue
		}
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, th.fds[0]); err != nil {
			fail(err, allocProbes[i].sym+" probe's output")
			return
		}
	}
	t.threads[tid] = th
	t.rings = append(t.rings, th.ring)
	t.stats.Threads++
}

// close closes the thread's events and unmaps its ring.
func (th *allocThread) close() {
	if th.ring != nil {
		th.ring.close()
		th.ring = nil
	}
	for _, fd := range th.fds {
		unix.Close(fd)
	}
	th.fds = nil
}

// closeGone stops following the threads whose exit was read: their rings
// are drained, then their events closed on the closer's goroutine (each
// close waits for the kernel, see StopProbes).
func (t *AllocTracer) closeGone(sample func(uint64) bool) {
	for _, tid := range t.gone {
		th := t.threads[tid]
		if th == nil {
			continue
		}
		th.ring.drain(func(rec []byte) bool {
			t.record(rec, sample)
			return true
		})
		delete(t.threads, tid)
		for _, id := range th.ids {
			delete(t.ids, id)
		}
		for i, r := range t.rings {
			if r == th.ring {
				t.rings = append(t.rings[:i], t.rings[i+1:]...)
				break
			}
		}
		unix.EpollCtl(t.epfd, unix.EPOLL_CTL_DEL, th.fds[0], nil)
		t.closer <- th
	}
	t.gone = t.gone[:0]
}

func (t *AllocTracer) closeExited() {
	defer close(t.closed)
	for th := range t.closer {
		th.close()
	}
}

// Run reads the probes' records until ctx is done or the process exits.
// sample decides, for each entry of malloc, calloc or realloc, whether it
// is sampled (from the bytes asked for); fn gets every event in time
// order, on Run's goroutine (the event is reused after fn returns).
func (t *AllocTracer) Run(ctx context.Context, sample func(size uint64) bool, fn func(*AllocEvent)) error {
	events := make([]unix.EpollEvent, 64)
	for {
		if ctx.Err() != nil {
			t.drain(sample)
			t.deliver(fn, true)
			return nil
		}
		n, err := unix.EpollWait(t.epfd, events, pollMs)
		if err != nil && err != unix.EINTR {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for i := 0; i < n; i++ {
			if int(events[i].Fd) == t.pidfd {
				t.exited = t.pidfd >= 0
			}
		}
		t.drain(sample)
		t.closeGone(sample)
		if t.exited || (t.pidfd < 0 && !processAlive(t.pid)) {
			t.exited = true
			t.drain(sample)
			t.deliver(fn, true)
			return nil
		}
		t.deliver(fn, false)
		if time.Since(t.lastScan) >= scanEvery {
			t.scanTasks()
		}
	}
}

// deliverLag is how long records wait before they are handed on in time
// order: a record of one CPU's ring older than another's already read
// arrives within it.
const deliverLag = int64(50 * time.Millisecond)

// deliver hands on the batched events older than the lag (all if final),
// in time order.
func (t *AllocTracer) deliver(fn func(*AllocEvent), final bool) {
	if len(t.batch) == 0 {
		return
	}
	sort.SliceStable(t.batch, func(i, j int) bool { return t.batch[i].Time < t.batch[j].Time })
	n := len(t.batch)
	if !final {
		h := monoNow() - deliverLag
		n = sort.Search(len(t.batch), func(i int) bool { return t.batch[i].Time >= h })
	}
	for i := 0; i < n; i++ {
		fn(&t.batch[i])
	}
	t.batch = append(t.batch[:0], t.batch[n:]...)
}

func (t *AllocTracer) drain(sample func(uint64) bool) {
	for _, r := range t.rings {
		if r.pending() {
			r.drain(func(rec []byte) bool {
				t.record(rec, sample)
				return true
			})
		}
	}
}

func (t *AllocTracer) record(rec []byte, sample func(uint64) bool) {
	le := binary.LittleEndian
	switch le.Uint32(rec) {
	case recordSample:
		t.probeRecord(rec, sample)
	case recordLost, recordLostSamples:
		t.stats.Lost += lostCount(rec)
	case recordFork, recordExit:
		if len(rec) < 24 {
			return
		}
		pid, tid := int(le.Uint32(rec[8:])), int(le.Uint32(rec[16:]))
		if pid != t.pid {
			return
		}
		if le.Uint32(rec) == recordFork {
			t.openThread(tid)
		} else if t.threads[tid] != nil {
			t.gone = append(t.gone, tid)
		}
	}
}

// probeRecord decodes one probe's sample: identifier, pid/tid, time,
// callchain, user registers, user stack.
func (t *AllocTracer) probeRecord(rec []byte, sample func(uint64) bool) {
	le := binary.LittleEndian
	d := rec[8:]
	if len(d) < 8+8+8+8 {
		return
	}
	pi, ok := t.ids[le.Uint64(d)]
	if !ok {
		return
	}
	s := &t.sample
	s.Pid = int(le.Uint32(d[8:]))
	s.Tid = int(le.Uint32(d[12:]))
	s.Time = int64(le.Uint64(d[16:]))
	if s.Pid != t.pid {
		return
	}
	nr := le.Uint64(d[24:])
	d = d[32:]
	if nr > uint64(len(d)/8) {
		return
	}
	s.Kernel, s.User = splitChain(u64s(d[:nr*8]))
	s.Kernel = nil
	d = d[nr*8:]
	if len(d) < 8 || le.Uint64(d) == 0 || len(d) < 8+nAllocRegs*8 {
		return // no user registers: not a call of the target's
	}
	r := d[8:]
	// Ascending bit order: AX, BX, SI, DI, BP, SP, IP, R12..R15.
	ax, si, di := le.Uint64(r), le.Uint64(r[16:]), le.Uint64(r[24:])
	s.Regs.BX, s.Regs.BP, s.Regs.SP, s.Regs.IP = le.Uint64(r[8:]), le.Uint64(r[32:]), le.Uint64(r[40:]), le.Uint64(r[48:])
	s.Regs.R12, s.Regs.R13, s.Regs.R14, s.Regs.R15 = le.Uint64(r[56:]), le.Uint64(r[64:]), le.Uint64(r[72:]), le.Uint64(r[80:])
	s.HasRegs = true
	d = r[nAllocRegs*8:]
	s.Stack = nil
	if len(d) >= 8 {
		if size := le.Uint64(d); size > 0 && size <= uint64(len(d)-8) && len(d)-8-int(size) >= 8 {
			dyn := le.Uint64(d[8+size:])
			s.Stack = d[8 : 8+min(dyn, size)]
		}
	}
	t.stats.Records++
	p := allocProbes[pi]
	ev := AllocEvent{Kind: p.kind, Call: p.call, Tid: s.Tid, Time: s.Time, Stack: -1}
	switch p.kind {
	case AllocMalloc:
		ev.Size = di
	case AllocCalloc:
		hi, lo := mul64(di, si)
		ev.Size = lo
		if hi != 0 {
			ev.Size = ^uint64(0) // overflows: calloc fails
		}
	case AllocRealloc:
		ev.Addr, ev.Size = di, si
	case AllocFree:
		ev.Addr = di
	case AllocReturn:
		ev.Addr = ax
	}
	if p.kind <= AllocRealloc && sample(ev.Size) {
		ev.Sampled = true
		t.builder.mu.Lock()
		ev.Stack, _ = t.builder.stackOf(s)
		t.builder.mu.Unlock()
	}
	t.batch = append(t.batch, ev)
}

func mul64(a, b uint64) (hi, lo uint64) {
	const mask32 = 1<<32 - 1
	a0, a1 := a&mask32, a>>32
	b0, b1 := b&mask32, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1 := t&mask32 + a0*b1
	hi = a1*b1 + t>>32 + w1>>32
	return hi, a * b
}

// Frames names stack ids of sampled events, leaf first: each frame's
// name (managed methods from the session, native symbols from the ELF
// files). Call after Stop.
func (t *AllocTracer) Frames(ids []int32) [][]stacks.Frame { return t.builder.Frames(ids) }

// Stats are the counters so far.
func (t *AllocTracer) Stats() AllocStats { return t.stats }

// Exited reports whether Run ended because the process exited.
func (t *AllocTracer) Exited() bool { return t.exited }

// Notes are one-line remarks on the run: records lost, threads not
// followed, no session.
func (t *AllocTracer) Notes() []string {
	notes := append([]string(nil), t.notes...)
	if t.stats.Lost > 0 {
		notes = append(notes, fmt.Sprintf("%d allocator records lost: the ring buffers (%d KiB a thread) overflowed; the estimates miss those calls", t.stats.Lost, t.stats.RingBytes>>10))
	}
	if t.stats.OpenErrors > 0 {
		notes = append(notes, fmt.Sprintf("%d threads not followed: %v", t.stats.OpenErrors, t.stats.FirstError))
	}
	return notes
}

// StopProbes closes every probe (the target stops paying for them) and
// ends the EventPipe session, whose rundown names the code compiled
// before it; Frames can name stacks afterwards.
func (t *AllocTracer) StopProbes() {
	// Each event's close waits for the kernel's RCU grace periods (80 ms
	// here), serialised in the kernel: 56 events of 8 threads take 4.5 s.
	// A function's breakpoints leave the target once the last of its
	// events is closed, so they go function by function, the most called
	// first; the ring goes with its owner, malloc's entry.
	for _, i := range closeOrder {
		for _, th := range t.threads {
			if i >= len(th.fds) {
				continue
			}
			if i == 0 && th.ring != nil {
				th.ring.close()
				th.ring = nil
			}
			unix.Close(th.fds[i])
		}
	}
	for tid, th := range t.threads {
		th.fds = nil
		delete(t.threads, tid)
	}
	t.rings = nil
	if t.closer != nil {
		close(t.closer)
		<-t.closed
		t.closer = nil
	}
	if t.tp != nil {
		t.tp.remove() // every perf event on them is closed
	}
	if t.ep != nil {
		stopped := make(chan struct{})
		go func() { t.ep.Stop(); close(stopped) }()
		select {
		case <-t.readEnd:
		case <-time.After(rundownTimeout):
			t.notes = append(t.notes, "the EventPipe session did not end within 30 s: names from its rundown may be missing")
		}
		t.ep.Close()
		<-t.readEnd
		t.ep = nil
	}
}

// closeOrder is the order StopProbes closes the probes in (allocProbes
// indexes): malloc's entry and return, free, then calloc's and realloc's.
var closeOrder = []int{0, 4, 3, 1, 5, 2, 6}

func (t *AllocTracer) openSession() error {
	c, ep, r, err := openSymbolSession(t.pid)
	if err != nil {
		return err
	}
	_ = c
	t.ep, t.reader = ep, r
	t.syms = stacks.NewSymbols(r.Header())
	t.builder.syms = t.syms
	t.builder.hdr = r.Header()
	t.readEnd = make(chan struct{})
	go func() {
		defer close(t.readEnd)
		for {
			ev, err := t.reader.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, nettrace.ErrTruncated) && !errors.Is(err, syscall.ECONNRESET) {
					t.notes = append(t.notes, fmt.Sprintf("EventPipe session: %v", err))
				}
				return
			}
			t.syms.Event(ev)
		}
	}()
	return nil
}

// Close releases everything.
func (t *AllocTracer) Close() error {
	t.StopProbes()
	if t.pidfd >= 0 {
		unix.Close(t.pidfd)
		t.pidfd = -1
	}
	if t.epfd >= 0 {
		unix.Close(t.epfd)
		t.epfd = -1
	}
	if t.builder != nil {
		t.builder.Close()
		t.builder = nil
	}
	return nil
}
