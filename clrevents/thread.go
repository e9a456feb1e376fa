package clrevents

import (
	"fmt"

	"github.com/clrspy/clrspy/nettrace"
)

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
	r := nettrace.NewCursor(payload)
	e := Thread{
		ThreadObject:  r.U64(),
		AppDomainID:   r.U64(),
		Flags:         r.U32(),
		ManagedID:     r.U32(),
		OSThreadID:    r.U32(),
		ClrInstanceID: r.U16(),
	}
	if !r.OK() {
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
	r := nettrace.NewCursor(payload)
	e := ThreadTerminated{
		ThreadObject:  r.U64(),
		AppDomainID:   r.U64(),
		ClrInstanceID: r.U16(),
	}
	if !r.OK() {
		return ThreadTerminated{}, short("ThreadTerminated", version, len(payload))
	}
	return e, nil
}

func errBadValue(event string, version uint32, field string, v any) error {
	return fmt.Errorf("%s v%d: implausible %s %v", event, version, field, v)
}
