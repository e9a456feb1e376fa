package perf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/clrspy/clrspy/internal/procfs"
)

// Off-CPU time: every sampled thread also gets, per CPU, an event on the
// sched:sched_switch tracepoint (period 1). The tracepoint fires in
// __schedule while the thread being switched out is still current, so
// its sample carries that thread's user registers and stack copy (taken
// at its syscall entry or where it was preempted) and the kernel's
// callchain down to schedule: it is walked like a CPU sample. The same
// event has attr.context_switch set, so the kernel also writes a
// PERF_RECORD_SWITCH when the thread comes back on a CPU: the time from
// the switch-out to that switch-in is the time the thread spent off the
// CPU (blocked, or runnable and waiting for a CPU), which weighs the
// switch-out's stack. The events write into rings of their own (one per
// CPU), so the CPU samples' rings and record layout stay as they are.

// tracefsRoots are where tracefs is usually mounted.
var tracefsRoots = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// tracepointID reads the id of tracepoint sys:name from tracefs. When
// tracefs is not mounted and clrspy may mount file systems, it reads the
// id from a private mount on a thread of its own that then exits, so
// nothing stays mounted anywhere.
func tracepointID(sys, name string) (int, error) {
	rel := filepath.Join("events", sys, name, "id")
	var firstErr error
	for _, root := range tracefsRoots {
		id, err := readID(filepath.Join(root, rel))
		if err == nil {
			return id, nil
		}
		if firstErr == nil || !errors.Is(err, os.ErrNotExist) {
			firstErr = err
		}
	}
	if errors.Is(firstErr, os.ErrNotExist) && hasCap(capSysAdmin) {
		if id, err := privateTracefsID(rel); err == nil {
			return id, nil
		}
	}
	if errors.Is(firstErr, os.ErrNotExist) {
		return 0, fmt.Errorf("tracefs is not mounted (no %s): mount it (mount -t tracefs nodev /sys/kernel/tracing) or run clrspy as root", filepath.Join(tracefsRoots[0], rel))
	}
	if errors.Is(firstErr, os.ErrPermission) {
		return 0, fmt.Errorf("tracefs is not readable by clrspy (%v): the sched_switch tracepoint needs root or CAP_PERFMON with tracefs access", firstErr)
	}
	return 0, firstErr
}

func readID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// privateTracefsID mounts tracefs in a mount namespace private to one
// locked OS thread and reads rel there. The goroutine ends without
// unlocking the thread, so the Go runtime terminates the thread and its
// namespace with it.
func privateTracefsID(rel string) (int, error) {
	type result struct {
		id  int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread must not run other goroutines.
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			ch <- result{err: err}
			return
		}
		// Private propagation first: the mount must not reach the host.
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			ch <- result{err: err}
			return
		}
		if err := unix.Mount("nodev", tracefsRoots[0], "tracefs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			ch <- result{err: err}
			return
		}
		id, err := readID(filepath.Join(tracefsRoots[0], rel))
		ch <- result{id, err}
	}()
	r := <-ch
	return r.id, r.err
}

// checkOffCPU finds out whether the off-CPU events can be opened on pid:
// the tracepoint's id, or a one-line reason why not.
func checkOffCPU(pid int, opts Options, acc Access) (int, string) {
	if !acc.Privileged && acc.Paranoid > 1 {
		return 0, fmt.Sprintf("off-CPU time unavailable: the sched_switch tracepoint needs CAP_PERFMON or root (perf_event_paranoid is %d); CPU samples only", acc.Paranoid)
	}
	id, err := tracepointID("sched", "sched_switch")
	if err != nil {
		return 0, fmt.Sprintf("off-CPU time unavailable: %v; CPU samples only", err)
	}
	a := opts.offAttr(id, acc.Kernel, 4096, true, true)
	fd, err := perfOpen(&a, pid, -1)
	if err != nil {
		errno, _ := err.(unix.Errno)
		return 0, fmt.Sprintf("off-CPU time unavailable: perf_event_open of sched:sched_switch refused (%s); CPU samples only", errnoName(errno))
	}
	unix.Close(fd)
	return id, ""
}

// offStackBytes bounds the stack copy of a switch-out: half the CPU
// samples' default. A blocked thread's native part (libc's syscall wrapper,
// libcoreclr's wait functions down to pthread_cond_wait) fits in it, and
// the kernel's frame-pointer chain continues the managed part; 2 KiB loses
// the Task.Wait stack under libcoreclr's Monitor.Wait (TestOffCPUTime).
const offStackBytes = 4096

// What a switch-out costs the switching thread is its sample's
// callchains, not its stack copy: BenchmarkOffCPUOverhead's parts (one
// workload process, configurations alternating with off slices; 2026-12-03,
// load 15-21, 2-core nested VM, ~15,000 switches/s) gave, as throughput
// ratios, 0.915 for the CPU sampler alone, 0.871 adding switch-out samples
// with neither copy nor callchains, 0.873 with the 4 KiB copy and no
// callchains, 0.829 with the kernel callchain alone, 0.854 with the user
// one alone, 0.810 with both and the copy (what every switch-out cost
// before). The kernel's walk of its own stack down to __schedule is most
// of it. Blocked time needs every switch-out and its switch-in; the
// walk is the same each time a thread blocks at the same place, and the
// builder takes it from the first one's (offcpu_build.go, keyed by what
// the copy holds). So each thread has two sched_switch events per CPU:
//
//   - the lean one, always on: registers and the 4 KiB copy, no
//     callchains, and the PERF_RECORD_SWITCH records. Every switch-out's
//     time stays exact: it is paired with its switch-in as before;
//   - the full one, adding the kernel's callchains (kernel frames, and
//     the frame-pointer walk past the copy), on while the thread blocks
//     at places the builder has no walk for. It is on for a new thread;
//     the builder says when a lean switch-out's walk is unknown
//     (Sample.WalkCached false), and if that switch-out was a block (not
//     a preemption: the switch record after it) the thread's full events
//     are enabled; after fullHits blocked full switch-outs whose walks
//     were known they are disabled again. While both are on, one
//     switch-out gives two samples, next to each other in the ring: the
//     lean one is dropped (offRecord).
//
// A lean switch-out whose walk is unknown (the first at a new place
// while the full event is off, and preemptions, which land anywhere) is
// walked from its copy: its user frames up to 4 KiB deep, no kernel
// frames. A smaller copy would not have saved anything.
//
// What was left then was the lean sample itself (no-chains above: 0.952
// of the CPU sampler alone; the switch records alone 0.98): about 4.5 %
// per 10,000 switch-outs a second. So the lean event samples one
// switch-out in offSampleEvery (its period; the full events still take
// every one while they are on), and the others are known from their
// switch records alone (KindUnsampled: tid and time). Every switch-out's
// time stays exact; an unsampled one's stack is estimated: the builder
// spreads each thread's unsampled time over the stacks of its sampled
// switch-outs in proportion to their own time off the CPU
// (offcpu_build.go), the ratio estimator, which is unbiased when which
// switch-outs are sampled does not depend on where they block. A count
// period can alias with a thread that blocks at places in a fixed
// cycle: an earlier try with 8 sampled the same one of pingpong's two
// alternating places every time (WaitOne, and Set while the other holds
// the event's lock). The period is a prime, so only a cycle whose length
// is a multiple of it aliases, and each CPU's event counts separately,
// so a thread that moves between CPUs shifts the phase. Tried before
// and not kept: the last sampled walk for the unsampled time (biased
// towards the places blocked at most often, not longest), and a random
// period (an ioctl per sample, an IPI where the thread runs).
const offSampleEvery = 7

const fullHits = 8

// offAttr is a switch-out event: sched:sched_switch, every occurrence,
// with the CPU samples' layout (so one decoder reads both), callchains or
// not, and with switches the context_switch bit for the switch-in
// records. A tracepoint fires in kernel mode: exclude_kernel
// would drop every sample, so only the kernel's callchain is left out
// when kernel frames are.
func (o *Options) offAttr(id int, kernel bool, ringBytes int, chains, switches bool) unix.PerfEventAttr {
	a := o.attr(kernel, ringBytes)
	a.Type = unix.PERF_TYPE_TRACEPOINT
	a.Config = uint64(id)
	a.Sample = 1
	a.Sample_stack_user = uint32(min(o.StackBytes, offStackBytes))
	// With PERF_SAMPLE_PERIOD a tracepoint event samples every
	// occurrence whatever its period (perf_swevent_event): the off-CPU
	// samples go without it (decodeSample).
	a.Sample_type &^= unix.PERF_SAMPLE_PERIOD
	a.Bits &^= unix.PerfBitFreq | unix.PerfBitTask | unix.PerfBitExcludeKernel
	if switches {
		a.Bits |= unix.PerfBitContextSwitch
	}
	if !chains {
		a.Bits |= unix.PerfBitExcludeCallchainKernel | unix.PerfBitExcludeCallchainUser
	}
	if o.offParts != 0 && !o.everyStack {
		a.Sample_stack_user = 0
	}
	if o.offParts&offNoKernelChain != 0 {
		a.Bits |= unix.PerfBitExcludeCallchainKernel
	}
	if o.offParts&offNoUserChain != 0 {
		a.Bits |= unix.PerfBitExcludeCallchainUser
	}
	if o.offParts&offRecordsOnly != 0 {
		a.Type, a.Config, a.Sample = unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_DUMMY, 0
	}
	return a
}

// mapOffRings maps one ring per CPU for the off-CPU events, owned like
// the CPU rings by a dummy event on clrspy itself. Switches come far
// faster than 99 Hz samples (10,000/s is a busy service): the rings are
// four times the CPU rings' size where memory locking allows (at most 64
// MiB in all), halved down to that size if the kernel refuses.
func (s *Sampler) mapOffRings(size int) error {
	big := size
	if s.opts.BufferBytes <= 0 && (hasCap(capIPCLock) || os.Geteuid() == 0) {
		big = max(size, min(4*size, ringSize((64<<20)/max(len(s.cpus), 1), len(s.cpus))))
	}
	for ; big > size; big /= 2 {
		if err := s.mapOffRingsOf(big); err == nil {
			return nil
		}
		for _, r := range s.offRings {
			r.close()
		}
		s.offRings = nil
	}
	return s.mapOffRingsOf(size)
}

func (s *Sampler) mapOffRingsOf(size int) error {
	s.stats.OffRingBytes = size
	return s.ownerRings(size, &s.offRings)
}

// fullEvents are a thread's switch-out events with the callchains, and
// its lean ones' period (sampleRate).
type fullEvents struct {
	fds  []int
	on   bool
	hits int // full switch-outs whose walk the consumer had, since on

	lean  []int // the lean events, one per CPU
	every int   // their period now (0: 1)
	n     int   // switch-outs since since
	since int64 // record time (CLOCK_MONOTONIC ns)
}

// openOffThread opens tid's switch events (one lean and one full per CPU,
// or with Options.everyStack one with callchains and the switch records), appends
// the always-on ones to fds and keeps the full ones in s.full. A thread
// whose switch events cannot be opened is still sampled on the CPU; the
// failure is counted.
func (s *Sampler) openOffThread(tid int, fds []int) []int {
	n := len(fds)
	opened := monoNow()
	every := s.opts.everyStack || s.opts.offParts != 0
	fds, ok := s.openSwitchEvents(tid, s.opts.offAttr(s.access.SwitchID, s.access.Kernel, s.stats.OffRingBytes, every, true), s.disabled, fds)
	if !ok {
		return fds[:n]
	}
	if !every {
		full, ok := s.openSwitchEvents(tid, s.opts.offAttr(s.access.SwitchID, s.access.Kernel, s.stats.OffRingBytes, true, false), s.disabled, nil)
		if !ok {
			for _, fd := range fds[n:] {
				unix.Close(fd)
			}
			return fds[:n]
		}
		s.full[tid] = &fullEvents{fds: full, on: true, lean: fds[n:len(fds):len(fds)]}
		s.stats.FullOn++
	}
	s.blockedAtOpen(tid, opened)
	return fds
}

// openSwitchEvents opens a on tid for every CPU (disabled if so), output
// into the off-CPU rings, and appends them to fds. On failure it closes
// what it opened, counts the error and reports false.
func (s *Sampler) openSwitchEvents(tid int, a unix.PerfEventAttr, disabled bool, fds []int) ([]int, bool) {
	if disabled {
		a.Bits |= unix.PerfBitDisabled
	}
	n := len(fds)
	for i, cpu := range s.cpus {
		fd, err := perfOpen(&a, tid, cpu)
		if err == nil {
			if err = unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, s.offRings[i].fd); err != nil {
				unix.Close(fd)
			}
		}
		if err != nil {
			for _, fd := range fds[n:] {
				unix.Close(fd)
			}
			if err != unix.ESRCH {
				s.stats.OffOpenErrors++
				if s.stats.OffFirstError == nil {
					s.stats.OffFirstError = fmt.Errorf("switch events of thread %d on CPU %d: %w", tid, cpu, err)
				}
			}
			return fds[:n], false
		}
		fds = append(fds, fd)
	}
	return fds, true
}

// setFull switches tid's full switch-out events on or off.
func (s *Sampler) setFull(tid int, on bool) {
	f := s.full[tid]
	if f == nil || f.on == on {
		return
	}
	f.on, f.hits = on, 0
	if on {
		s.stats.FullOn++
	}
	if s.disabled {
		return // setEnabled applies f.on
	}
	req := uint(unix.PERF_EVENT_IOC_DISABLE)
	if on {
		req = unix.PERF_EVENT_IOC_ENABLE
	}
	for _, fd := range f.fds {
		unix.IoctlSetInt(fd, req, 0)
	}
}

// A thread's lean events sample every switch-out (period 1) until it
// switches out at least busySwitches times a second, then one in
// offSampleEvery; back to every one under half that. Counted over
// rateWindow switch-outs, from the records' times; one
// PERF_EVENT_IOC_PERIOD per CPU at each change. A thread that blocks a
// few times a second costs nothing worth saving and its few blocks would
// leave the estimate of its unsampled ones (offcpu_build.go) with few
// samples; from 100 a second it has 14 sampled ones a second.
const (
	busySwitches = 100
	rateWindow   = 64
)

// sampleRate counts a switch-out of tid at ts (ns) and changes its lean
// events' period when its rate crosses busySwitches.
func (s *Sampler) sampleRate(tid int, ts int64) {
	f := s.full[tid]
	every := s.opts.offEvery()
	if f == nil || every <= 1 {
		return
	}
	if f.n == 0 {
		f.since = ts
	}
	if f.n++; f.n < rateWindow {
		return
	}
	d := ts - f.since
	f.n = 0
	want := f.every
	switch {
	case d < int64(rateWindow)*1e9/busySwitches:
		want = every
	case d > 2*int64(rateWindow)*1e9/busySwitches:
		want = 0
	}
	if want == f.every {
		return
	}
	f.every = want
	s.stats.PeriodChanges++
	period := uint64(max(want, 1))
	for _, fd := range f.lean {
		setPeriod(fd, period)
	}
}

// setPeriod sets a sampling event's period (PERF_EVENT_IOC_PERIOD takes a
// pointer to a u64).
func setPeriod(fd int, period uint64) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.PERF_EVENT_IOC_PERIOD, uintptr(unsafe.Pointer(&period)))
	if e != 0 {
		return e
	}
	return nil
}

// offRing is what offRecord keeps per off-CPU ring between records.
type offRing struct {
	// held is a lean switch-out waiting for the record after it (a full
	// sample of the same switch-out replaces it); its stack is copied
	// into stack.
	held    Sample
	hasHeld bool
	stack   []byte
	// last is the full switch-out just handed on (a lean sample of the
	// same switch-out after it is dropped).
	last    switchID
	hasLast bool
	// want is the thread whose lean switch-out had no known walk: its
	// full events are switched on if the switch record after it says it
	// blocked. hit is the thread whose full switch-out's walk was known:
	// a hit towards switching them off, if it blocked (a thread spinning
	// between blocks is preempted at the same few places: those hits
	// would switch the full events off before its next block).
	want, hit int
	// sampled is the thread of the last switch-out sample read since
	// the last switch record: a switch-out record of another thread was
	// not sampled.
	sampled int
}

type switchID struct {
	tid    int
	ip, sp uint64
}

func idOf(p *Sample) switchID { return switchID{p.Tid, p.Regs.IP, p.Regs.SP} }

// offRecord handles one record of off-CPU ring r: switch-outs (samples)
// and switch-ins.
func (s *Sampler) offRecord(r *offRing, rec []byte, fn func(*Sample)) {
	le := binary.LittleEndian
	switch le.Uint32(rec) {
	case recordSample:
		if !decodeSample(rec, &s.sample, false) || s.sample.Pid != s.pid {
			return
		}
		s.sample.Kind = KindSwitchOut
		s.sample.WalkCached = false
		id := idOf(&s.sample)
		if len(s.sample.Kernel) == 0 && len(s.sample.User) == 0 && s.opts.offParts == 0 && !s.opts.everyStack {
			if r.hasLast && r.last == id {
				r.hasLast = false // the full sample had it
				return
			}
			s.flushHeld(r, fn)
			if r.stack == nil {
				r.stack = make([]byte, 0, 65536)
			}
			r.held = s.sample
			r.stack = append(r.stack[:0], s.sample.Stack...)
			r.held.Stack = r.stack
			r.hasHeld = true
			r.sampled = id.tid
			return
		}
		if r.hasHeld && idOf(&r.held) == id {
			r.hasHeld = false // this full sample replaces it
		} else {
			s.flushHeld(r, fn)
		}
		r.last, r.hasLast = id, true
		r.sampled = id.tid
		s.stats.Switches++
		fn(&s.sample)
		if s.sample.WalkCached {
			r.hit = id.tid
		}
	case recordSwitch:
		s.flushHeld(r, fn)
		r.hasLast = false
		// sample_id_all: pid, tid, time follow the (empty) body. Of the
		// switch-outs only preemptions matter (the sched_switch sample
		// before has the rest).
		misc := le.Uint16(rec[4:])
		if len(rec) < 24 {
			return
		}
		tid := int(le.Uint32(rec[12:]))
		want, hit := r.want, r.hit
		sampled := r.sampled
		r.want, r.hit, r.sampled = 0, 0, 0
		pid := int(le.Uint32(rec[8:]))
		if misc&miscSwitchOut != 0 && pid == s.pid {
			s.sampleRate(tid, int64(le.Uint64(rec[16:])))
		}
		if misc&miscSwitchOut != 0 && sampled != tid && pid == s.pid && s.opts.offParts == 0 {
			s.stats.Switches++
			s.stats.Lean++
			s.stats.Unsampled++
			s.sample.Kind, s.sample.Pid, s.sample.Tid = KindUnsampled, pid, tid
			s.sample.Time = int64(le.Uint64(rec[16:]))
			fn(&s.sample)
		}
		if misc&miscSwitchOut != 0 && misc&miscSwitchOutPreempt == 0 {
			if want == tid {
				s.setFull(tid, true)
			}
			if f := s.full[tid]; hit == tid && f != nil && f.on {
				if f.hits++; f.hits >= fullHits {
					s.setFull(tid, false)
				}
			}
			return
		}
		if pid == s.pid {
			s.sample.Kind, s.sample.Pid = KindSwitchIn, pid
			if misc&miscSwitchOut != 0 {
				s.sample.Kind = KindPreempted
			}
			s.sample.Tid = tid
			s.sample.Time = int64(le.Uint64(rec[16:]))
			fn(&s.sample)
		}
	case recordLost, recordLostSamples:
		s.flushHeld(r, fn)
		r.hasLast = false
		s.stats.OffLost += lostCount(rec)
	}
}

// flushHeld hands on r's held lean switch-out.
func (s *Sampler) flushHeld(r *offRing, fn func(*Sample)) {
	if !r.hasHeld {
		return
	}
	r.hasHeld = false
	s.stats.Switches++
	s.stats.Lean++
	r.held.WalkCached = false
	fn(&r.held)
	if !r.held.WalkCached {
		r.want = r.held.Tid
	}
}

// OffCPUNotes are the one-line remarks on the off-CPU part of a run: why
// it is missing, or what it lost.
func (s *Sampler) OffCPUNotes() []string {
	if !s.opts.OffCPU {
		return nil
	}
	if !s.access.OffCPU {
		return []string{s.access.OffCPUNote}
	}
	var notes []string
	if s.stats.OffLost > 0 {
		notes = append(notes, fmt.Sprintf("%d switch records lost: the off-CPU ring buffers (%d KiB per CPU) overflowed, some off-CPU time is missing", s.stats.OffLost, s.stats.OffRingBytes>>10))
	}
	if s.stats.BlockedAtOpen > 0 {
		notes = append(notes, fmt.Sprintf("%d threads were off the CPU when their switch events were opened: their time until they first ran is under the one frame their system call returns to (no stack walked)", s.stats.BlockedAtOpen))
	}
	if s.stats.OffOpenErrors > 0 {
		notes = append(notes, fmt.Sprintf("%d threads without off-CPU time: %v", s.stats.OffOpenErrors, s.stats.OffFirstError))
	}
	return notes
}

// blockedAtOpen queues a switch-out for a thread that was already off the
// CPU when its switch events were opened (state S or D), at the time
// before they were opened, so its time until it first runs is counted.
// Its registers are not to be had without stopping it: the stack is the
// one frame its syscall returns to (/proc/PID/task/TID/syscall's PC), and
// a note says so.
func (s *Sampler) blockedAtOpen(tid int, opened int64) {
	st, err := procfs.TaskFile(s.pid, tid, "stat")
	if err != nil {
		return
	}
	// The state follows the ")" that ends the command name.
	i := strings.LastIndexByte(string(st), ')')
	if i < 0 || i+2 >= len(st) || (st[i+2] != 'S' && st[i+2] != 'D') {
		return
	}
	sc, err := procfs.TaskFile(s.pid, tid, "syscall")
	if err != nil {
		return
	}
	f := strings.Fields(string(sc))
	if len(f) < 3 || f[0] == "running" {
		return
	}
	pc, err := strconv.ParseUint(strings.TrimPrefix(f[len(f)-1], "0x"), 16, 64)
	if err != nil || pc == 0 {
		return
	}
	s.initial = append(s.initial, Sample{Kind: KindSwitchOut, Pid: s.pid, Tid: tid, Time: opened, IP: pc, User: []uint64{pc}})
	s.stats.BlockedAtOpen++
}

// flushInitial hands the queued switch-outs of blockedAtOpen to fn.
func (s *Sampler) flushInitial(fn func(*Sample)) {
	for i := range s.initial {
		fn(&s.initial[i])
	}
	s.initial = s.initial[:0]
}

func monoNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
