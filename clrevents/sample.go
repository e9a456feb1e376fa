package clrevents

import (
	"fmt"

	"github.com/clrspy/clrspy/nettrace"
)

// SampleType is what the sampled thread was doing when the sample profiler
// stopped it.
type SampleType uint32

// Sample types of ThreadSample.
const (
	SampleError    SampleType = 0
	SampleExternal SampleType = 1 // preemptive mode: native code, a syscall, a wait
	SampleManaged  SampleType = 2 // cooperative mode: running managed code
)

// String is "error", "external", "managed" or "type(N)".
func (t SampleType) String() string {
	switch t {
	case SampleError:
		return "error"
	case SampleExternal:
		return "external"
	case SampleManaged:
		return "managed"
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// ThreadSample is the payload of the sample profiler's ThreadSample (SP 0).
// The sampled thread is the event's ThreadID and its stack the event's
// stack; the sampler thread is CaptureThreadID.
type ThreadSample struct {
	Type SampleType
}

// DecodeThreadSample decodes ThreadSample v0.
func DecodeThreadSample(payload []byte, version uint32, ptrSize int) (ThreadSample, error) {
	r := nettrace.NewCursor(payload)
	t := ThreadSample{Type: SampleType(r.U32())}
	if !r.OK() {
		return ThreadSample{}, short("ThreadSample", version, len(payload))
	}
	return t, nil
}
