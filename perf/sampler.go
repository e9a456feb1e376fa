package perf

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clrspy/clrspy/internal/procfs"
)

// Stats are a Sampler's counters.
type Stats struct {
	Samples    uint64 // sample records read
	Lost       uint64 // samples the kernel dropped (ring buffer full)
	Throttles  uint64 // times the kernel throttled an event
	Threads    int    // threads sampled so far
	OpenErrors int    // threads whose events could not be opened (other than exits)
	FirstError error  // the first such error
	RingBytes  int    // ring buffer data bytes per CPU
	CPUs       int

	// With Options.OffCPU: switch-outs read, records the kernel dropped
	// from the off-CPU rings, threads whose switch events could not be
	// opened (the first error).
	Switches      uint64
	OffLost       uint64
	OffRingBytes  int
	BlockedAtOpen int // threads off the CPU when their switch events were opened
	OffOpenErrors int
	OffFirstError error
	// Lean are the switch-outs read without a stack copy (the thread's
	// full events off, offcpu.go); FullOn counts the times a thread's
	// full events were switched on (one per new thread included).
	Lean   uint64
	FullOn int
	// Unsampled are the switch-outs known from their switch record
	// alone (the lean event samples one in offSampleEvery; counted in
	// Switches and Lean too).
	Unsampled uint64
	// PeriodChanges counts the lean events' period changes (sampleRate).
	PeriodChanges int
}

// Sampler samples one process's threads with perf_event. Open it, Run it
// (one goroutine), Close it.
type Sampler struct {
	pid    int
	opts   Options
	access Access
	cpus   []int
	rings  []*ring
	// offRings receive the off-CPU events (switch-outs and switch-ins),
	// one per CPU, so that a record's ring says what it is (the CPU
	// samples' layout is kept as it is).
	offRings []*ring
	offState []offRing // per off-CPU ring
	// full holds each thread's switch-out events with the stack copy.
	full map[int]*fullEvents
	// threads maps a sampled tid to its events, one per CPU.
	threads map[int][]int
	pidfd   int
	epfd    int
	exited  bool

	// wake (an eventfd in the epoll set) tells Run that want changed:
	// Run alone touches the events, so enabling and disabling them is
	// asked for, not done, by other goroutines.
	wake     int
	want     atomic.Bool // sampling wanted (true after Open)
	disabled bool        // the events' state as Run last set it

	lastScan time.Time
	stats    Stats
	sample   Sample
	// initial holds switch-outs of threads that were blocked when their
	// switch events were opened (see blockedAtOpen), for Run to hand on.
	initial []Sample
}

// scanEvery is how often /proc/PID/task is re-read for threads whose fork
// record was missed (created before their parent's events existed);
// pollMs bounds the wait for ring data between wakeups (a ring wakes the
// reader itself when a quarter full).
const (
	scanEvery = time.Second
	pollMs    = 100
)

// Open checks access (see Check), maps one ring buffer per CPU and opens
// an event on every current thread of pid for every CPU.
func Open(pid int, opts Options) (*Sampler, error) {
	acc, err := Check(pid, opts)
	if err != nil {
		return nil, err
	}
	opts.defaults()
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	s := &Sampler{pid: pid, opts: opts, access: acc, cpus: cpus, threads: make(map[int][]int), full: make(map[int]*fullEvents), pidfd: -1, epfd: -1, wake: -1}
	s.want.Store(true)
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	size := ringSize(opts.BufferBytes, len(cpus))
	for {
		err = s.mapRings(size)
		if err == nil {
			break
		}
		s.closeRings()
		// EPERM/ENOMEM: over perf_event_mlock_kb or RLIMIT_MEMLOCK.
		if (errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOMEM)) && size > 8*os.Getpagesize() {
			size /= 2
			continue
		}
		return nil, fmt.Errorf("perf ring buffers of %d KiB per CPU: %w", size>>10, err)
	}
	s.stats.RingBytes = size
	s.stats.CPUs = len(cpus)
	if acc.OffCPU {
		if err := s.mapOffRings(size); err != nil {
			for _, r := range s.offRings {
				r.close()
			}
			s.offRings = nil
			s.access.OffCPU = false
			s.access.OffCPUNote = fmt.Sprintf("off-CPU time unavailable: %v", err)
		}
	}
	if s.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	for _, r := range append(s.rings[:len(s.rings):len(s.rings)], s.offRings...) {
		if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, r.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(r.fd)}); err != nil {
			return nil, fmt.Errorf("epoll: %w", err)
		}
	}
	if s.wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, s.wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(s.wake)}); err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	// A pidfd turns readable when the process exits, whatever reuses the
	// pid afterwards.
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		s.pidfd = fd
		if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			return nil, fmt.Errorf("epoll: %w", err)
		}
	}
	s.scanTasks()
	if len(s.threads) == 0 {
		if s.stats.FirstError != nil {
			return nil, fmt.Errorf("perf_event_open on pid %d: %w", pid, s.stats.FirstError)
		}
		return nil, &UnavailableError{Pid: pid, Reason: fmt.Sprintf("pid %d has no thread left to sample", pid), Err: unix.ESRCH}
	}
	ok = true
	return s, nil
}

// Access is what the permission check found (kernel frames or not, and
// why).
func (s *Sampler) Access() Access { return s.access }

// ringSize picks the ring's data size: the request rounded down to a
// power-of-two number of pages, or the default: 2 MiB per CPU when memory
// locking is not limited, but at most 32 MiB in all (at least 256 KiB per
// CPU); else what perf_event_mlock_kb allows, at most 512 KiB.
func ringSize(req, cpus int) int {
	page := os.Getpagesize()
	if req <= 0 {
		req = 512 << 10
		if hasCap(capIPCLock) || os.Geteuid() == 0 {
			req = min(2<<20, max(256<<10, (32<<20)/max(cpus, 1)))
		} else if b, err := os.ReadFile("/proc/sys/kernel/perf_event_mlock_kb"); err == nil {
			// The limit is per CPU (times the number of CPUs), including
			// each buffer's metadata page.
			if kb, err := strconv.Atoi(string(trimNL(b))); err == nil && kb*1024-page < req {
				req = kb*1024 - page
			}
		}
	}
	n := page
	for n*2 <= req {
		n *= 2
	}
	return n
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

func (s *Sampler) mapRings(size int) error { return s.ownerRings(size, &s.rings) }

// ownerRings maps one ring of size bytes a CPU, each owned by a dummy
// event of clrspy's, appending them to rings as they are made (so that
// those made before a failure are closed with the others).
func (s *Sampler) ownerRings(size int, rings *[]*ring) error {
	da := s.opts.dummyAttr(s.access.Kernel, size)
	for _, cpu := range s.cpus {
		fd, err := perfOpen(&da, os.Getpid(), cpu)
		if err != nil {
			return fmt.Errorf("ring owner on CPU %d: %w", cpu, err)
		}
		r, err := mapRing(fd, size)
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("mmap on CPU %d: %w", cpu, err)
		}
		*rings = append(*rings, r)
	}
	return nil
}

func (s *Sampler) closeRings() {
	for _, r := range s.rings {
		r.close()
	}
	s.rings = nil
	for _, r := range s.offRings {
		r.close()
	}
	s.offRings = nil
}

// scanTasks opens events for threads of /proc/PID/task not sampled yet.
func (s *Sampler) scanTasks() {
	s.lastScan = time.Now()
	tids, err := procfs.Threads(s.pid)
	if err != nil {
		return
	}
	for _, tid := range tids {
		s.openThread(int(tid))
	}
}

// openThread opens tid's events (one per CPU), each writing into its CPU's
// ring.
func (s *Sampler) openThread(tid int) {
	if _, ok := s.threads[tid]; ok {
		return
	}
	a := s.opts.attr(s.access.Kernel, s.stats.RingBytes)
	if s.disabled {
		a.Bits |= unix.PerfBitDisabled
	}
	fds := make([]int, 0, len(s.cpus))
	for i, cpu := range s.cpus {
		fd, err := perfOpen(&a, tid, cpu)
		if err == nil {
			if err = unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, s.rings[i].fd); err != nil {
				unix.Close(fd)
			}
		}
		if err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
			if err != unix.ESRCH {
				s.stats.OpenErrors++
				if s.stats.FirstError == nil {
					s.stats.FirstError = fmt.Errorf("thread %d on CPU %d: %w", tid, cpu, err)
				}
			}
			return
		}
		fds = append(fds, fd)
	}
	if s.access.OffCPU {
		fds = s.openOffThread(tid, fds)
	}
	s.threads[tid] = fds
	s.stats.Threads++
}

func (s *Sampler) closeThread(tid int) {
	for _, fd := range s.threads[tid] {
		unix.Close(fd)
	}
	delete(s.threads, tid)
	if f := s.full[tid]; f != nil {
		for _, fd := range f.fds {
			unix.Close(fd)
		}
		delete(s.full, tid)
	}
}

// Run reads samples until ctx is done or the process exits and calls fn
// for each (on Run's goroutine; the Sample and its slices are reused after
// fn returns). A process that exits ends the run without error, with
// everything it wrote before read.
func (s *Sampler) Run(ctx context.Context, fn func(*Sample)) error {
	events := make([]unix.EpollEvent, len(s.rings)+len(s.offRings)+1)
	for {
		if ctx.Err() != nil {
			s.flushInitial(fn)
			s.drain(fn)
			s.flushAllHeld(fn)
			return nil
		}
		n, err := unix.EpollWait(s.epfd, events, pollMs)
		if err != nil && err != unix.EINTR {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for i := 0; i < n; i++ {
			switch int(events[i].Fd) {
			case s.pidfd:
				s.exited = s.pidfd >= 0
			case s.wake:
				var b [8]byte
				unix.Read(s.wake, b[:])
			}
		}
		if want := s.want.Load(); want == s.disabled {
			s.setEnabled(want)
		}
		s.flushInitial(fn)
		s.drain(fn)
		if s.exited || (s.pidfd < 0 && !processAlive(s.pid)) {
			s.exited = true
			s.drain(fn)
			s.flushAllHeld(fn)
			return nil
		}
		if time.Since(s.lastScan) >= scanEvery {
			s.scanTasks()
		}
	}
}

// SetEnabled switches sampling on or off without closing anything (the
// events stay open, threads keep being tracked): Run applies it at once.
// Safe to call from any goroutine.
func (s *Sampler) SetEnabled(on bool) {
	s.want.Store(on)
	if s.wake >= 0 {
		var b [8]byte
		b[0] = 1
		unix.Write(s.wake, b[:])
	}
}

// setEnabled enables or disables every event (Run's goroutine).
func (s *Sampler) setEnabled(on bool) {
	req := uint(unix.PERF_EVENT_IOC_DISABLE)
	if on {
		req = unix.PERF_EVENT_IOC_ENABLE
	}
	for _, fds := range s.threads {
		for _, fd := range fds {
			unix.IoctlSetInt(fd, req, 0)
		}
	}
	for _, f := range s.full {
		if f.on || !on {
			for _, fd := range f.fds {
				unix.IoctlSetInt(fd, req, 0)
			}
		}
	}
	s.disabled = !on
}

// Exited reports whether Run ended because the process exited.
func (s *Sampler) Exited() bool { return s.exited }

func processAlive(pid int) bool {
	return unix.Kill(pid, 0) != unix.ESRCH
}

// drain reads every ring.
func (s *Sampler) drain(fn func(*Sample)) {
	for _, r := range s.rings {
		if r.pending() {
			r.drain(func(rec []byte) bool {
				s.record(rec, fn)
				return true
			})
		}
	}
	if len(s.offState) != len(s.offRings) {
		s.offState = make([]offRing, len(s.offRings))
	}
	for i, r := range s.offRings {
		if r.pending() {
			st := &s.offState[i]
			r.drain(func(rec []byte) bool {
				s.offRecord(st, rec, fn)
				return true
			})
		}
	}
}

// record handles one ring record.
func (s *Sampler) record(rec []byte, fn func(*Sample)) {
	le := binary.LittleEndian
	switch le.Uint32(rec) {
	case recordSample:
		s.ownSample(rec, KindCPU, &s.stats.Samples, fn)
	case recordLost, recordLostSamples:
		s.stats.Lost += lostCount(rec)
	case recordThrottle:
		s.stats.Throttles++
	case recordFork, recordExit:
		if len(rec) < 24 {
			return
		}
		pid, tid := int(le.Uint32(rec[8:])), int(le.Uint32(rec[16:]))
		if pid != s.pid {
			return
		}
		if le.Uint32(rec) == recordFork {
			s.openThread(tid)
		} else {
			s.closeThread(tid)
			if s.access.OffCPU && len(rec) >= 32 {
				// The builder forgets a switch-out the thread never
				// came back from.
				s.sample.Kind, s.sample.Pid, s.sample.Tid = KindExit, pid, tid
				s.sample.Time = int64(le.Uint64(rec[24:]))
				fn(&s.sample)
			}
		}
	}
}

// ownSample decodes a sample record of either ring and hands it to fn
// as kind if it is of the sampled process, counting it in *n.
func (s *Sampler) ownSample(rec []byte, kind SampleKind, n *uint64, fn func(*Sample)) {
	if decodeSample(rec, &s.sample, true) && s.sample.Pid == s.pid {
		*n++
		s.sample.Kind = kind
		fn(&s.sample)
	}
}

// flushAllHeld hands on the lean switch-outs still held (end of a run).
func (s *Sampler) flushAllHeld(fn func(*Sample)) {
	for i := range s.offState {
		s.flushHeld(&s.offState[i], fn)
	}
}

// Stats returns the counters so far.
func (s *Sampler) Stats() Stats { return s.stats }

// Close releases every event, ring and descriptor.
func (s *Sampler) Close() error {
	for tid := range s.threads {
		s.closeThread(tid)
	}
	s.closeRings()
	if s.pidfd >= 0 {
		unix.Close(s.pidfd)
		s.pidfd = -1
	}
	if s.epfd >= 0 {
		unix.Close(s.epfd)
		s.epfd = -1
	}
	if s.wake >= 0 {
		unix.Close(s.wake)
		s.wake = -1
	}
	return nil
}
