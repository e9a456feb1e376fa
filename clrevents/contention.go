package clrevents

import "github.com/clrspy/clrspy/nettrace"

// Contention events: the runtime fires ContentionStart on a thread that has
// finished spinning on a held Monitor (or native lock) and starts to wait,
// and ContentionStop on the same thread once it owns the lock. Version 2 of
// ContentionStart (.NET 8+) names the lock, the locked object and the owner.

// ContentionFlags values.
const (
	ContentionManaged = 0
	ContentionNative  = 1
)

// ContentionStart is ContentionStart (81) v0–v2.
type ContentionStart struct {
	Flags         uint8 // ContentionManaged or ContentionNative (v1+)
	ClrInstanceID uint16
	// HasLock is true for v2 payloads, which carry the three fields below.
	HasLock bool
	// LockID identifies the lock (the runtime's AwareLock or Lock object
	// address); stable while the lock lives.
	LockID uint64
	// AssociatedObjectID is the address of the object locked on (the
	// lock(obj) target); it moves with compacting GCs.
	AssociatedObjectID uint64
	// LockOwnerThreadID identifies the owner at the time of the start. What
	// the value is depends on the runtime (see package locks): 0 means
	// unknown.
	LockOwnerThreadID uint64
}

// DecodeContentionStart decodes ContentionStart v0 (empty), v1 (flags and
// instance id) and v2 (+ lock id, object id, owner).
func DecodeContentionStart(payload []byte, version uint32, ptrSize int) (ContentionStart, error) {
	var e ContentionStart
	if version == 0 {
		return e, nil
	}
	r := nettrace.NewCursor(payload)
	e.Flags = r.U8()
	e.ClrInstanceID = r.U16()
	if version >= 2 {
		e.LockID = r.Ptr(ptrSize)
		e.AssociatedObjectID = r.Ptr(ptrSize)
		e.LockOwnerThreadID = r.U64()
		e.HasLock = true
	}
	if !r.OK() {
		return ContentionStart{}, short("ContentionStart", version, len(payload))
	}
	return e, nil
}

// ContentionStop is ContentionStop (91) v0–v1.
type ContentionStop struct {
	Flags         uint8
	ClrInstanceID uint16
	// HasDuration is true for v1 payloads: DurationNs is the runtime's own
	// measure of the wait.
	HasDuration bool
	DurationNs  float64
}

// DecodeContentionStop decodes ContentionStop v0 (flags, instance id) and
// v1 (+ f64 DurationNs). A v0 payload may be empty on old runtimes.
func DecodeContentionStop(payload []byte, version uint32, ptrSize int) (ContentionStop, error) {
	var e ContentionStop
	if version == 0 && len(payload) == 0 {
		return e, nil
	}
	r := nettrace.NewCursor(payload)
	e.Flags = r.U8()
	e.ClrInstanceID = r.U16()
	if version >= 1 {
		e.DurationNs = r.F64()
		e.HasDuration = true
	}
	if !r.OK() {
		return ContentionStop{}, short("ContentionStop", version, len(payload))
	}
	if e.DurationNs != e.DurationNs || e.DurationNs < 0 || e.DurationNs > maxDurationNs {
		return ContentionStop{}, errBadValue("ContentionStop", version, "DurationNs", e.DurationNs)
	}
	return e, nil
}

// maxDurationNs bounds a plausible wait (a year) so a hostile payload
// cannot overflow the analyses' int64 nanosecond sums.
const maxDurationNs = 365 * 24 * 3600 * 1e9

// ContentionLockCreated is ContentionLockCreated (90) v0 (.NET 8+): the lock
// id a Monitor got when it was inflated, and the object it belongs to.
type ContentionLockCreated struct {
	LockID             uint64
	AssociatedObjectID uint64
	ClrInstanceID      uint16
}

// DecodeContentionLockCreated decodes ContentionLockCreated v0.
func DecodeContentionLockCreated(payload []byte, version uint32, ptrSize int) (ContentionLockCreated, error) {
	r := nettrace.NewCursor(payload)
	e := ContentionLockCreated{
		LockID:             r.Ptr(ptrSize),
		AssociatedObjectID: r.Ptr(ptrSize),
		ClrInstanceID:      r.U16(),
	}
	if !r.OK() {
		return ContentionLockCreated{}, short("ContentionLockCreated", version, len(payload))
	}
	return e, nil
}

// WaitSource values of WaitHandleWaitStart.
const (
	WaitSourceUnknown     = 0
	WaitSourceMonitorWait = 1
)

// WaitHandleWaitStart is WaitHandleWaitStart (301) v0 (.NET 9+): a thread
// blocks on a wait handle (Monitor.Wait, WaitHandle.WaitOne, ...).
type WaitHandleWaitStart struct {
	WaitSource         uint8
	AssociatedObjectID uint64 // the Monitor.Wait object; 0 otherwise
	ClrInstanceID      uint16
}

// DecodeWaitHandleWaitStart decodes WaitHandleWaitStart v0.
func DecodeWaitHandleWaitStart(payload []byte, version uint32, ptrSize int) (WaitHandleWaitStart, error) {
	r := nettrace.NewCursor(payload)
	e := WaitHandleWaitStart{
		WaitSource:         r.U8(),
		AssociatedObjectID: r.Ptr(ptrSize),
		ClrInstanceID:      r.U16(),
	}
	if !r.OK() {
		return WaitHandleWaitStart{}, short("WaitHandleWaitStart", version, len(payload))
	}
	return e, nil
}

// WaitHandleWaitStop is WaitHandleWaitStop (302) v0.
type WaitHandleWaitStop struct {
	ClrInstanceID uint16
}

// DecodeWaitHandleWaitStop decodes WaitHandleWaitStop v0.
func DecodeWaitHandleWaitStop(payload []byte, version uint32, ptrSize int) (WaitHandleWaitStop, error) {
	r := nettrace.NewCursor(payload)
	e := WaitHandleWaitStop{ClrInstanceID: r.U16()}
	if !r.OK() {
		return WaitHandleWaitStop{}, short("WaitHandleWaitStop", version, len(payload))
	}
	return e, nil
}
