package clrevents

import "fmt"

// Thread events tie the runtime's Thread object (its address, which
// ContentionStart v2 may report as the lock owner) to the OS thread id and
// the managed thread id. ThreadCreated fires when a thread starts running
// managed code; the rundown provider's ThreadDC lists every live thread
// when a session stops.

// Thread flags (ThreadCreated.Flags).
const (
	ThreadGCSpecial        = 1
	ThreadFinalizer        = 2
	ThreadThreadPoolWorker = 4
)

// Thread is ThreadCreated (85) v0 and rundown ThreadDC (159) v0, which share
// a layout.
type Thread struct {
	// ThreadObject is the address of the runtime's Thread object (the
	// manifest calls it ManagedThreadID).
	ThreadObject  uint64
	AppDomainID   uint64
	Flags         uint32
	ManagedID     uint32 // Environment.CurrentManagedThreadId
	OSThreadID    uint32
	ClrInstanceID uint16
}

// DecodeThreadCreated decodes ThreadCreated v0; use it for rundown
// ThreadDC too.
func DecodeThreadCreated(payload []byte, version uint32, ptrSize int) (Thread, error) {
	r := reader{b: payload}
	e := Thread{
		ThreadObject:  r.u64(),
		AppDomainID:   r.u64(),
		Flags:         r.u32(),
		ManagedID:     r.u32(),
		OSThreadID:    r.u32(),
		ClrInstanceID: r.u16(),
	}
	if !r.ok() {
		return Thread{}, short("ThreadCreated", version, len(payload))
	}
	return e, nil
}

// ThreadTerminated is ThreadTerminated (86) v0.
type ThreadTerminated struct {
	ThreadObject  uint64
	AppDomainID   uint64
	ClrInstanceID uint16
}

// DecodeThreadTerminated decodes ThreadTerminated v0.
func DecodeThreadTerminated(payload []byte, version uint32, ptrSize int) (ThreadTerminated, error) {
	r := reader{b: payload}
	e := ThreadTerminated{
		ThreadObject:  r.u64(),
		AppDomainID:   r.u64(),
		ClrInstanceID: r.u16(),
	}
	if !r.ok() {
		return ThreadTerminated{}, short("ThreadTerminated", version, len(payload))
	}
	return e, nil
}

func errBadValue(event string, version uint32, field string, v any) error {
	return fmt.Errorf("%s v%d: implausible %s %v", event, version, field, v)
}
