package perf

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Options configure a Sampler.
type Options struct {
	// Event is "cpu-clock" (default: a software timer on the thread's CPU
	// time) or "cycles" (the hardware counter, where the machine has a PMU).
	Event string
	// Hz is the sampling frequency per thread (default 99).
	Hz int
	// StackBytes is how much user stack is copied with each sample for
	// DWARF unwinding (default 8192; at most 65528). Stacks deeper than the
	// copy continue with the kernel's frame-pointer walk.
	StackBytes int
	// BufferBytes is the ring buffer per CPU (a power of two of pages;
	// default 2 MiB with CAP_IPC_LOCK, 32 MiB at most over all CPUs; else
	// what perf_event_mlock_kb allows, at most 512 KiB). Halved until the
	// kernel accepts it.
	BufferBytes int
	// NoKernel leaves kernel frames out even where they are permitted.
	NoKernel bool
	// OffCPU also records every switch-out of a sampled thread (the
	// sched:sched_switch tracepoint, with the same stack copy and
	// registers) and its switch-in (PERF_RECORD_SWITCH), so time off the
	// CPU is weighed by where the thread blocked. Where the kernel does not
	// permit it, Access.OffCPUNote says why and only CPU samples are taken.
	OffCPU bool

	// everyStack (benchmarks) copies the stack of every switch-out, as
	// clrspy did before the lean events (offcpu.go).
	everyStack bool
	// offParts (benchmarks) takes one switch-out event per thread and
	// CPU, without stack copy unless everyStack, and leaves parts of it
	// out, to measure what each costs: offNoCopy (nothing else),
	// offNoKernelChain, offNoUserChain, offRecordsOnly.
	offParts int
	// sampleEvery (benchmarks) is the lean event's period: 0 for
	// offSampleEvery, 1 for every switch-out (clrspy before sampling).
	sampleEvery int
}

func (o *Options) offEvery() int {
	if o.sampleEvery > 0 {
		return o.sampleEvery
	}
	return offSampleEvery
}

const (
	offNoKernelChain = 1 << iota // no kernel callchain
	offNoUserChain               // no user callchain
	offRecordsOnly               // no sample at all: the switch records alone
	offNoCopy                    // nothing left out but the stack copy
)

func (o *Options) defaults() error {
	switch o.Event {
	case "", "cpu-clock":
		o.Event = "cpu-clock"
	case "cycles":
	default:
		return fmt.Errorf("unknown perf event %q (want cpu-clock or cycles)", o.Event)
	}
	if o.Hz == 0 {
		o.Hz = 99
	}
	if o.Hz < 1 || o.Hz > 100000 {
		return fmt.Errorf("sampling frequency %d Hz out of range (1..100000)", o.Hz)
	}
	if o.StackBytes == 0 {
		o.StackBytes = 8192
	}
	if o.StackBytes < 0 || o.StackBytes > 65528 {
		return fmt.Errorf("stack copy of %d bytes out of range (0..65528)", o.StackBytes)
	}
	o.StackBytes &^= 7
	return nil
}

// Sampled registers (perf_event_x86_regs bit numbers), in the order the
// kernel writes them (ascending bits).
const (
	regBX  = 1
	regBP  = 6
	regSP  = 7
	regIP  = 8
	regR12 = 20
	regR13 = 21
	regR14 = 22
	regR15 = 23

	regsMask = 1<<regBX | 1<<regBP | 1<<regSP | 1<<regIP | 1<<regR12 | 1<<regR13 | 1<<regR14 | 1<<regR15
	nSampled = 8
)

// sampleType is what every sample record carries, in record order: ip,
// pid/tid, time, period, callchain, user registers, user stack.
const sampleType = unix.PERF_SAMPLE_IP | unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME | unix.PERF_SAMPLE_PERIOD |
	unix.PERF_SAMPLE_CALLCHAIN | unix.PERF_SAMPLE_REGS_USER | unix.PERF_SAMPLE_STACK_USER

// maxStack is the callchain depth asked for (the default of
// kernel.perf_event_max_stack).
const maxStack = 127

// attr builds the sampling event's attributes. kernel false excludes
// kernel samples and callchains (what unprivileged users get at
// perf_event_paranoid 2).
func (o *Options) attr(kernel bool, ringBytes int) unix.PerfEventAttr {
	a := unix.PerfEventAttr{
		Type:              unix.PERF_TYPE_SOFTWARE,
		Config:            unix.PERF_COUNT_SW_CPU_CLOCK,
		Sample:            uint64(o.Hz),
		Sample_type:       sampleType,
		Sample_regs_user:  regsMask,
		Sample_stack_user: uint32(o.StackBytes),
		Clockid:           unix.CLOCK_MONOTONIC,
		Sample_max_stack:  maxStack,
		Bits: unix.PerfBitFreq | unix.PerfBitSampleIDAll | unix.PerfBitUseClockID | unix.PerfBitTask |
			unix.PerfBitExcludeHv | unix.PerfBitWatermark,
		// Wake the reader when a quarter of the ring is full; it also
		// drains on a timer, so low rates need no wakeup at all.
		Wakeup: uint32(ringBytes / 4),
	}
	a.Size = uint32(unsafe.Sizeof(a))
	if o.Event == "cycles" {
		a.Type = unix.PERF_TYPE_HARDWARE
		a.Config = unix.PERF_COUNT_HW_CPU_CYCLES
	}
	if !kernel {
		a.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeCallchainKernel
	}
	return a
}

// dummyAttr is the ring buffer owner per CPU: a software event that never
// samples, on one of clrspy's own threads, so the ring outlives any target
// thread. Its clock and sample layout must match the sampling events'
// (the kernel also rejects an empty register mask).
func (o *Options) dummyAttr(kernel bool, ringBytes int) unix.PerfEventAttr {
	a := o.attr(kernel, ringBytes)
	a.Type = unix.PERF_TYPE_SOFTWARE
	a.Config = unix.PERF_COUNT_SW_DUMMY
	a.Sample = 0
	a.Bits &^= unix.PerfBitFreq | unix.PerfBitTask
	return a
}

func perfOpen(a *unix.PerfEventAttr, pid, cpu int) (int, error) {
	return unix.PerfEventOpen(a, pid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
}

// onlineCPUs lists the CPUs events can be opened on.
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("listing CPUs: %w", err)
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

// parseCPUList reads a kernel CPU list ("0-3,5,7-8").
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("CPU list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("CPU list %q is empty", s)
	}
	return out, nil
}
