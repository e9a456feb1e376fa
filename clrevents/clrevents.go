package clrevents

import (
	"errors"
	"fmt"

	"github.com/clrspy/clrspy/nettrace"
)

// ErrShort is wrapped by decoders when a payload is shorter than its
// version's layout requires.
var ErrShort = errors.New("payload too short")

func short(event string, version uint32, n int) error {
	return fmt.Errorf("%s v%d: %w (%d bytes)", event, version, ErrShort, n)
}

// Event ids of Microsoft-Windows-DotNETRuntime (nettrace.Runtime).
const (
	IDGCStart                     = 1
	IDGCEnd                       = 2
	IDGCRestartEEEnd              = 3
	IDGCHeapStats                 = 4
	IDGCCreateSegment             = 5
	IDGCFreeSegment               = 6
	IDGCRestartEEBegin            = 7
	IDGCSuspendEEEnd              = 8
	IDGCSuspendEEBegin            = 9
	IDGCAllocationTick            = 10
	IDGCCreateConcurrentThread    = 11
	IDGCTerminateConcurrentThread = 12
	IDGCFinalizersEnd             = 13
	IDGCFinalizersBegin           = 14
	IDBulkType                    = 15
	IDGCSampledObjectAllocHigh    = 20
	IDGCBulkSurvivingObjectRanges = 21
	IDGCBulkMovedObjectRanges     = 22
	IDGCGenerationRange           = 23
	IDGCSampledObjectAllocLow     = 32
	IDGCTriggered                 = 35
	IDGCDynamicEvent              = 39
	IDContentionStart             = 81
	IDThreadCreated               = 85
	IDThreadTerminated            = 86
	IDContentionLockCreated       = 90
	IDContentionStop              = 91
	IDMethodLoad                  = 141
	IDMethodUnload                = 142
	IDMethodLoadVerbose           = 143
	IDMethodUnloadVerbose         = 144
	IDDomainModuleLoad            = 151
	IDModuleLoad                  = 152
	IDModuleUnload                = 153
	IDAssemblyLoad                = 154
	IDGCMarkWithType              = 202
	IDGCPerHeapHistory            = 204
	IDGCGlobalHeapHistory         = 205
	IDWaitHandleWaitStart         = 301
	IDWaitHandleWaitStop          = 302
	IDAllocationSampled           = 303
)

// Event ids of Microsoft-Windows-DotNETRuntimeRundown (nettrace.Rundown).
const (
	IDRundownMethodDCStartVerbose = 143
	IDRundownMethodDCEndVerbose   = 144
	IDRundownDCStartComplete      = 145
	IDRundownDCEndComplete        = 146
	IDRundownDCStartInit          = 147
	IDRundownDCEndInit            = 148
	IDRundownDomainModuleDCStart  = 151
	IDRundownDomainModuleDCEnd    = 152
	IDRundownModuleDCStart        = 153
	IDRundownModuleDCEnd          = 154
	IDRundownThreadDC             = 159
)

// IDThreadSample is the sample profiler's only event (nettrace.SampleProfiler).
const IDThreadSample = 0

// Is reports whether m is event id of the runtime provider p.
func Is(m *nettrace.Metadata, p nettrace.ProviderKind, id uint32) bool {
	return m.Runtime == p && m.EventID == id
}

// reader is a bounds-checked little-endian payload reader: after the first
// overrun every read returns zero and ok() is false.
type reader struct {
	b   []byte
	p   int
	bad bool
}

func (r *reader) need(n int) bool {
	if r.bad || n < 0 || len(r.b)-r.p < n {
		r.bad = true
		return false
	}
	return true
}

func (r *reader) ok() bool { return !r.bad }

// remaining is the number of unread bytes.
func (r *reader) remaining() int { return len(r.b) - r.p }

func (r *reader) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	v := r.b[r.p]
	r.p++
	return v
}

func (r *reader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	v := uint16(r.b[r.p]) | uint16(r.b[r.p+1])<<8
	r.p += 2
	return v
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	b := r.b[r.p:]
	r.p += 4
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func (r *reader) u64() uint64 {
	lo := uint64(r.u32())
	hi := uint64(r.u32())
	return lo | hi<<32
}

// ptr reads a pointer-sized value.
func (r *reader) ptr(size int) uint64 {
	if size == 4 {
		return uint64(r.u32())
	}
	return r.u64()
}

func (r *reader) f64() float64 {
	return float64frombits(r.u64())
}

func (r *reader) guid() nettrace.GUID {
	var g nettrace.GUID
	if r.need(16) {
		copy(g[:], r.b[r.p:])
		r.p += 16
	}
	return g
}

// str reads a NUL-terminated UTF-16LE string.
// rawStr returns a NUL-terminated UTF-16LE string's bytes, the NUL
// included, without converting them (nettrace.DecodeUTF16Z converts them).
func (r *reader) rawStr() []byte {
	if r.bad {
		return nil
	}
	for i := r.p; i+1 < len(r.b); i += 2 {
		if r.b[i] == 0 && r.b[i+1] == 0 {
			s := r.b[r.p : i+2]
			r.p = i + 2
			return s
		}
	}
	r.bad = true
	return nil
}

func (r *reader) str() string {
	if r.bad {
		return ""
	}
	s, n, ok := nettrace.DecodeUTF16Z(r.b[r.p:])
	if !ok {
		r.bad = true
		return ""
	}
	r.p += n
	return s
}
