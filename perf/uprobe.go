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
// for the pointer they return, opened through perf_event_open (the uprobe
// PMU: its type from /sys/bus/event_source/devices/uprobe/type, config1 the
// libc the target maps, config2 the symbol's file offset from libc's
// .dynsym) per thread × CPU like the CPU sampler's events, into one ring
// per CPU. Every call of those functions by the target traps into the
// kernel while the probes are on (a breakpoint, about a microsecond or
// two, and a record into the ring): that is the cost to the target,
// whatever the sampling rate, because the decision which call is sampled
// is made here, per record. The entries of malloc, calloc and realloc
// carry the user registers (the arguments), a copy of the top of the user
// stack and the kernel's frame-pointer walk, so a sampled call's stack is
// unwound by the Builder as a CPU sample's is (DWARF CFI from malloc's
// first instruction, then frame pointers through JIT'd code, then the
// kernel's walk); free and the returns carry the registers only. Records
// of all rings are handed on in time order (a thread's entry and its
// return may be on two CPUs' rings).

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
	// StackBytes is the user stack copied with each entry (default 2048):
	// enough for the native frames under the managed caller; the rest of
	// the stack comes from the kernel's frame-pointer walk.
	StackBytes int
	// BufferBytes is the ring per CPU (default 8 MiB as root, else what
	// perf_event_mlock_kb allows).
	BufferBytes int
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
	cpus     []int
	rings    []*ring
	threads  map[int][]int
	ids      map[uint64]int // event id -> allocProbes index
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
		opts.StackBytes = 2048
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
	t := &AllocTracer{pid: pid, opts: opts, threads: make(map[int][]int), ids: make(map[uint64]int), pidfd: -1, epfd: -1}
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
	// The first probe, on the main thread: what the kernel says of uprobes.
	a := t.attr(0, 4096)
	fd, err := t.open(&a, pid, -1)
	if err != nil {
		errno, _ := err.(unix.Errno)
		return unavailable(err, "uprobe on %s's malloc refused (%s): needs root or CAP_PERFMON and a kernel with uprobes", t.libcName, errnoName(errno))
	}
	unix.Close(fd)
	if t.cpus, err = onlineCPUs(); err != nil {
		return nil, err
	}
	if t.builder, err = NewBuilder(pid, nil, nil, BuilderOptions{}); err != nil {
		return nil, err
	}
	if !opts.NoSession {
		if err := t.openSession(); err != nil {
			t.notes = append(t.notes, fmt.Sprintf("no EventPipe session (%v): managed frames named from the perf map only", err))
		}
	}
	t.builder.proc.LoadAll()
	size := opts.BufferBytes
	if size <= 0 {
		size = 8 << 20
		if !hasCap(capIPCLock) && os.Geteuid() != 0 {
			size = 0 // ringSize's default for the unprivileged
		}
	}
	size = ringSize(size, len(t.cpus))
	for {
		err = t.mapRings(size)
		if err == nil {
			break
		}
		for _, r := range t.rings {
			r.close()
		}
		t.rings = nil
		if (errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOMEM)) && size > 8*os.Getpagesize() {
			size /= 2
			continue
		}
		return nil, fmt.Errorf("perf ring buffers of %d KiB per CPU: %w", size>>10, err)
	}
	t.stats.RingBytes = size
	if t.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	for _, r := range t.rings {
		if err := unix.EpollCtl(t.epfd, unix.EPOLL_CTL_ADD, r.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(r.fd)}); err != nil {
			return nil, fmt.Errorf("epoll: %w", err)
		}
	}
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		t.pidfd = fd
		unix.EpollCtl(t.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
	}
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
	f, err := elf.Open(t.libc)
	if err != nil {
		return fmt.Errorf("reading %s: %w", t.libcName, err)
	}
	defer f.Close()
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
		t.offsets[i] = off
	}
	return nil
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
	if p.ret {
		a.Config = 1 << t.retBit
	}
	if p.kind == AllocMalloc || p.kind == AllocCalloc || p.kind == AllocRealloc {
		a.Sample_stack_user = uint32(t.opts.StackBytes)
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
	if t.pathBuf == nil {
		t.pathBuf = append([]byte(t.libc), 0)
	}
	a.Ext1 = uint64(uintptr(unsafe.Pointer(&t.pathBuf[0])))
	fd, err := perfOpen(a, tid, cpu)
	runtime.KeepAlive(t.pathBuf)
	return fd, err
}

func (t *AllocTracer) mapRings(size int) error {
	da := unix.PerfEventAttr{
		Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_DUMMY,
		Sample_type: allocSampleType, Sample_regs_user: allocRegsMask, Clockid: unix.CLOCK_MONOTONIC,
		Bits:   unix.PerfBitSampleIDAll | unix.PerfBitUseClockID | unix.PerfBitExcludeHv | unix.PerfBitWatermark,
		Wakeup: uint32(size / 4),
	}
	da.Size = uint32(unsafe.Sizeof(da))
	for _, cpu := range t.cpus {
		fd, err := perfOpen(&da, os.Getpid(), cpu)
		if err != nil {
			return fmt.Errorf("ring owner on CPU %d: %w", cpu, err)
		}
		r, err := mapRing(fd, size)
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("mmap on CPU %d: %w", cpu, err)
		}
		t.rings = append(t.rings, r)
	}
	return nil
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

// openThread opens tid's probes, one per probe × CPU.
func (t *AllocTracer) openThread(tid int) {
	if _, ok := t.threads[tid]; ok {
		return
	}
	fds := make([]int, 0, len(allocProbes)*len(t.cpus))
	fail := func(err error, what string) {
		for _, fd := range fds {
			unix.Close(fd)
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
		for c, cpu := range t.cpus {
			fd, err := t.open(&a, tid, cpu)
			if err == nil {
				if err = unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, t.rings[c].fd); err != nil {
					unix.Close(fd)
				}
			}
			var id uint64
			if err == nil {
				if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.PERF_EVENT_IOC_ID), uintptr(unsafe.Pointer(&id))); e != 0 {
					unix.Close(fd)
					err = e
				}
			}
			if err != nil {
				fail(err, fmt.Sprintf("%s probe on CPU %d", allocProbes[i].sym, cpu))
				return
			}
			fds = append(fds, fd)
			t.ids[id] = i
		}
	}
	t.threads[tid] = fds
	t.stats.Threads++
}

func (t *AllocTracer) closeThread(tid int) {
	for _, fd := range t.threads[tid] {
		unix.Close(fd)
	}
	delete(t.threads, tid)
}

// Run reads the probes' records until ctx is done or the process exits.
// sample decides, for each entry of malloc, calloc or realloc, whether it
// is sampled (from the bytes asked for); fn gets every event in time
// order, on Run's goroutine (the event is reused after fn returns).
func (t *AllocTracer) Run(ctx context.Context, sample func(size uint64) bool, fn func(*AllocEvent)) error {
	events := make([]unix.EpollEvent, len(t.rings)+1)
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
		} else {
			t.closeThread(tid)
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
		notes = append(notes, fmt.Sprintf("%d allocator records lost: the ring buffers (%d KiB per CPU) overflowed; the estimates miss those calls", t.stats.Lost, t.stats.RingBytes>>10))
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
	for tid := range t.threads {
		t.closeThread(tid)
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
	for _, r := range t.rings {
		r.close()
	}
	t.rings = nil
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
