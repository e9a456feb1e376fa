package clrevents

import "github.com/clrspy/clrspy/nettrace"

// Exception events (Exception keyword 0x8000): the runtime fires
// ExceptionThrown_V1 on the throwing thread with the throw's stack when an
// exception is raised (first chance, rethrows included), then, as it
// dispatches it, a Start/Stop pair around every filter, finally and catch
// funclet it runs, and ExceptionThrownStop when the dispatch ends (the
// managed exception handling of .NET 9+; older runtimes may not send it).
// Layouts: dotnet/runtime src/coreclr/vm/ClrEtwAll.man (Exception,
// ExceptionHandling templates); TraceEvent names them Exception/Start,
// ExceptionCatch/Start, ... and Exception/Stop.

// Event ids of the exception events (nettrace.Runtime).
const (
	IDExceptionThrown       = 80
	IDExceptionCatchStart   = 250
	IDExceptionCatchStop    = 251
	IDExceptionFinallyStart = 252
	IDExceptionFinallyStop  = 253
	IDExceptionFilterStart  = 254
	IDExceptionFilterStop   = 255
	IDExceptionThrownStop   = 256
)

// ExceptionFlags bits of ExceptionThrown_V1.
const (
	ExceptionHasInner       = 0x01
	ExceptionNested         = 0x02
	ExceptionRethrown       = 0x04
	ExceptionCorruptedState = 0x08
	ExceptionCLSCompliant   = 0x10
)

// ExceptionThrown is ExceptionThrown_V1 (80, v1). Version 0 carries no
// payload at all (the .NET Framework's first event), so it decodes empty.
type ExceptionThrown struct {
	Type    string // e.g. System.InvalidOperationException
	Message string
	// EIP is the instruction pointer of the throw.
	EIP           uint64
	HResult       uint32
	Flags         uint16 // Exception* bits
	ClrInstanceID uint16
}

// DecodeExceptionThrown decodes ExceptionThrown v0 (empty) and v1.
func DecodeExceptionThrown(payload []byte, version uint32, ptrSize int) (ExceptionThrown, error) {
	e, typ, msg, err := DecodeExceptionThrownRaw(payload, version, ptrSize)
	if err != nil {
		return ExceptionThrown{}, err
	}
	if len(typ) >= 2 {
		e.Type, _, _ = nettrace.DecodeUTF16Z(typ)
	}
	if len(msg) >= 2 {
		e.Message, _, _ = nettrace.DecodeUTF16Z(msg)
	}
	return e, nil
}

// DecodeExceptionThrownRaw is DecodeExceptionThrown leaving the two strings
// as UTF-16LE bytes with their terminating NUL (slices of payload, nil for
// v0): an analysis that counts by type looks the bytes up and converts a
// type's name once, so the event costs no allocation. The returned value's
// Type and Message are empty.
func DecodeExceptionThrownRaw(payload []byte, version uint32, ptrSize int) (e ExceptionThrown, typ, msg []byte, err error) {
	if version == 0 {
		return e, nil, nil, nil
	}
	r := nettrace.NewCursor(payload)
	typ = r.RawUTF16Z()
	msg = r.RawUTF16Z()
	e.EIP = r.Ptr(ptrSize)
	e.HResult = r.U32()
	e.Flags = r.U16()
	e.ClrInstanceID = r.U16()
	if !r.OK() {
		return ExceptionThrown{}, nil, nil, short("ExceptionThrown", version, len(payload))
	}
	return e, typ, msg, nil
}

// ExceptionHandling is the payload of ExceptionCatchStart,
// ExceptionFinallyStart and ExceptionFilterStart (250, 252, 254; v0): the
// funclet's method.
type ExceptionHandling struct {
	EntryEIP      uint64 // the method's entry point
	MethodID      uint64 // its MethodDesc
	MethodName    string // "Namespace.Type.Method" as the runtime names it (may carry the signature)
	ClrInstanceID uint16
}

// DecodeExceptionHandling decodes ExceptionCatchStart, FinallyStart and
// FilterStart v0.
func DecodeExceptionHandling(payload []byte, version uint32, ptrSize int) (ExceptionHandling, error) {
	e, name, err := DecodeExceptionHandlingRaw(payload, version, ptrSize)
	if err != nil {
		return ExceptionHandling{}, err
	}
	e.MethodName, _, _ = nettrace.DecodeUTF16Z(name)
	return e, nil
}

// DecodeExceptionHandlingRaw is DecodeExceptionHandling leaving the method
// name as UTF-16LE bytes with their NUL (a slice of payload).
func DecodeExceptionHandlingRaw(payload []byte, version uint32, _ int) (e ExceptionHandling, name []byte, err error) {
	r := nettrace.NewCursor(payload)
	// Both are win:UInt64 in the manifest, pointers or not.
	e.EntryEIP = r.U64()
	e.MethodID = r.U64()
	name = r.RawUTF16Z()
	e.ClrInstanceID = r.U16()
	if !r.OK() {
		return ExceptionHandling{}, nil, short("ExceptionHandling", version, len(payload))
	}
	return e, name, nil
}

// ExceptionStop is the payload of the funclets' Stop events and of
// ExceptionThrownStop (251, 253, 255, 256; v0): nothing.
type ExceptionStop struct{}

// DecodeExceptionStop decodes an exception Stop event (its payload, if
// any, is not read: the manifest gives it no fields).
func DecodeExceptionStop(payload []byte, version uint32, ptrSize int) (ExceptionStop, error) {
	return ExceptionStop{}, nil
}
