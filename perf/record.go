package perf

import (
	"encoding/binary"
	"unsafe"

	"github.com/clrspy/clrspy/unwind"
)

// Record types (perf_event_type) the sampler reads.
const (
	recordLost        = 2
	recordExit        = 4
	recordThrottle    = 5
	recordUnthrottle  = 6
	recordFork        = 7
	recordSample      = 9
	recordLostSamples = 13
	recordSwitch      = 14
)

// lostCount is what a PERF_RECORD_LOST or PERF_RECORD_LOST_SAMPLES record
// says the kernel dropped (0 for a short record or another type).
func lostCount(rec []byte) uint64 {
	le := binary.LittleEndian
	switch le.Uint32(rec) {
	case recordLost:
		if len(rec) >= 24 {
			return le.Uint64(rec[16:])
		}
	case recordLostSamples:
		if len(rec) >= 16 {
			return le.Uint64(rec[8:])
		}
	}
	return 0
}

// PERF_RECORD_SWITCH's misc bits: a switch-out, and one that preempted
// a runnable thread (not a block).
const (
	miscSwitchOut        = 1 << 13
	miscSwitchOutPreempt = 1 << 14
)

// SampleKind says what a Sample records.
type SampleKind uint8

// Sample kinds. Switch-ins and exits carry only Pid, Tid and Time.
const (
	KindCPU       SampleKind = iota // a CPU sample
	KindSwitchOut                   // the thread left the CPU (Options.OffCPU): stack as for a CPU sample
	KindSwitchIn                    // the thread came back on a CPU
	KindExit                        // the thread exited (with Options.OffCPU only)
	KindPreempted                   // the switch-out just before was a preemption: the thread stayed runnable
	// KindUnsampled is a switch-out the lean event did not sample (one
	// in offSampleEvery is, offcpu.go): Pid, Tid and Time only, from
	// its PERF_RECORD_SWITCH. Its time off the CPU is exact; its stack
	// is estimated from the thread's sampled switch-outs.
	KindUnsampled
)

// Callchain context markers (PERF_CONTEXT_*).
const (
	contextKernel = ^uint64(128) + 1 // -128
	contextUser   = ^uint64(512) + 1 // -512
	contextMax    = ^uint64(4095) + 1
)

// Sample is one perf sample, decoded in place: its slices point into the
// ring buffer and are valid only during the Run callback.
type Sample struct {
	Kind     SampleKind
	Pid, Tid int
	Time     int64  // CLOCK_MONOTONIC nanoseconds
	Period   uint64 // nanoseconds of CPU time for cpu-clock, cycles for cycles
	IP       uint64
	// Kernel holds the kernel frames, leaf first (empty when kernel
	// sampling is off or the sample was taken in user mode).
	Kernel []uint64
	// User is the kernel's frame-pointer walk of the user stack (the user
	// IP first): where a DWARF walk of the copied stack ends early, its
	// remainder continues it.
	User []uint64
	// Regs and Stack are the user registers and the copy of the user
	// stack from Regs.SP; HasRegs is false for a sample with no user
	// context.
	Regs    unwind.Regs
	HasRegs bool
	Stack   []byte
	// WalkCached is the consumer's answer for a switch-out (set by
	// Builder.Sample): it already had this switch-out's walk (the same
	// thread blocked at the same place before). The Sampler copies the
	// stack of a thread's switch-outs only while they are not (offcpu.go).
	WalkCached bool
}

// decodeSample parses a PERF_RECORD_SAMPLE of sampleType (without
// PERF_SAMPLE_PERIOD unless period: the off-CPU events, offAttr) into s.
// It reports false for a record too short for its own fields.
func decodeSample(rec []byte, s *Sample, period bool) bool {
	d := rec[8:] // after the header
	if len(d) < 8+8+8+8+8 {
		return false
	}
	le := binary.LittleEndian
	s.IP = le.Uint64(d)
	s.Pid = int(le.Uint32(d[8:]))
	s.Tid = int(le.Uint32(d[12:]))
	s.Time = int64(le.Uint64(d[16:]))
	s.Period = 0
	d = d[24:]
	if period {
		s.Period = le.Uint64(d)
		d = d[8:]
	}
	nr := le.Uint64(d)
	d = d[8:]
	if nr > uint64(len(d)/8) {
		return false
	}
	chain := u64s(d[:nr*8])
	d = d[nr*8:]
	s.Kernel, s.User = splitChain(chain)
	if len(d) < 8 {
		return false
	}
	abi := le.Uint64(d)
	d = d[8:]
	s.HasRegs = abi != 0
	s.Stack = nil
	if s.HasRegs {
		if len(d) < nSampled*8 {
			return false
		}
		// Ascending bit order: BX, BP, SP, IP, R12..R15.
		s.Regs = unwind.Regs{
			BX: le.Uint64(d), BP: le.Uint64(d[8:]), SP: le.Uint64(d[16:]), IP: le.Uint64(d[24:]),
			R12: le.Uint64(d[32:]), R13: le.Uint64(d[40:]), R14: le.Uint64(d[48:]), R15: le.Uint64(d[56:]),
		}
		d = d[nSampled*8:]
	}
	if len(d) < 8 {
		return false
	}
	size := le.Uint64(d)
	d = d[8:]
	if size > 0 {
		if size > uint64(len(d)) || len(d)-int(size) < 8 {
			return false
		}
		dyn := le.Uint64(d[size:])
		s.Stack = d[:min(dyn, size)]
	}
	return true
}

// splitChain separates a callchain into its kernel and user parts, without
// the context markers.
func splitChain(c []uint64) (kernel, user []uint64) {
	var cur *[]uint64
	start := 0
	for i, ip := range c {
		if ip >= contextMax {
			if cur != nil {
				*cur = c[start:i]
			}
			switch ip {
			case contextKernel:
				cur = &kernel
			case contextUser:
				cur = &user
			default:
				cur = nil // guest or other contexts: not ours
			}
			start = i + 1
		}
	}
	if cur != nil {
		*cur = c[start:]
	}
	return kernel, user
}

// u64s views b (8-byte aligned: ring records are) as uint64s.
func u64s(b []byte) []uint64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
}
