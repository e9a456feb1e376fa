package nettrace

import (
	"fmt"
	"time"
)

// Container versions a Reader recognises. A V4 stream whose metadata carries
// V5 tags (opcode, V2 parameters) is still a V4 container; Stats.V5Tags says
// whether tags were seen.
const (
	FormatNetPerfV3  = 3
	FormatNetTraceV4 = 4
	FormatNetTraceV6 = 6
)

// Header holds the trace-wide facts from the Trace object (V3/V4) or Trace
// block (V6).
type Header struct {
	FormatVersion int // container version: 3, 4 or 6
	MinorVersion  int // V6 minor version; 0 otherwise

	SyncTimeUTC  time.Time // wall clock captured together with SyncTimeQPC
	SyncTimeQPC  int64     // timestamp (event clock) of SyncTimeUTC; session start
	QPCFrequency int64     // event clock ticks per second
	PointerSize  int       // 4 or 8: the target process's pointer size
	ProcessID    int
	// NumberOfProcessors is the logical CPU count of the traced machine.
	NumberOfProcessors int
	// ExpectedCPUSamplingRate is the sample profiler period in nanoseconds.
	ExpectedCPUSamplingRate int

	// KeyValues holds V6 trace-block pairs that have no field above.
	KeyValues map[string]string
}

// Nanos converts an event timestamp to nanoseconds since the session start
// (SyncTimeQPC). It avoids the overflow of a plain ticks*1e9/frequency.
func (h *Header) Nanos(ts int64) int64 {
	d := ts - h.SyncTimeQPC
	f := h.QPCFrequency
	if f <= 0 {
		return d
	}
	if f == 1_000_000_000 {
		return d
	}
	return d/f*1_000_000_000 + d%f*1_000_000_000/f
}

// Time converts an event timestamp to UTC wall-clock time.
func (h *Header) Time(ts int64) time.Time {
	return h.SyncTimeUTC.Add(time.Duration(h.Nanos(ts)))
}

// DurationNanos converts a tick difference into nanoseconds.
func (h *Header) DurationNanos(ticks int64) int64 {
	f := h.QPCFrequency
	if f <= 0 || f == 1_000_000_000 {
		return ticks
	}
	return ticks/f*1_000_000_000 + ticks%f*1_000_000_000/f
}

// TypeCode is a field type code of self-describing metadata (V4/V5 codes
// 1–19; V6 adds 20–26).
type TypeCode uint8

// Type codes. Values match the EventPipe metadata encoding.
const (
	TypeObject           TypeCode = 1
	TypeBoolean32        TypeCode = 3
	TypeChar             TypeCode = 4
	TypeSByte            TypeCode = 5
	TypeByte             TypeCode = 6
	TypeInt16            TypeCode = 7
	TypeUInt16           TypeCode = 8
	TypeInt32            TypeCode = 9
	TypeUInt32           TypeCode = 10
	TypeInt64            TypeCode = 11
	TypeUInt64           TypeCode = 12
	TypeSingle           TypeCode = 13
	TypeDouble           TypeCode = 14
	TypeDecimal          TypeCode = 15
	TypeDateTime         TypeCode = 16
	TypeGUID             TypeCode = 17
	TypeString           TypeCode = 18
	TypeArray            TypeCode = 19
	TypeVarInt           TypeCode = 20 // V6: zig-zag varint64
	TypeVarUInt          TypeCode = 21 // V6
	TypeFixedLengthArray TypeCode = 22 // V6
	TypeUTF8CodeUnit     TypeCode = 23 // V6
	TypeRelLoc           TypeCode = 24 // V6
	TypeDataLoc          TypeCode = 25 // V6
	TypeBoolean8         TypeCode = 26 // V6
)

// FieldType describes the type of one field of a self-describing event.
type FieldType struct {
	Code     TypeCode
	Elem     *FieldType // element type of arrays
	FixedLen int        // element count of V6 fixed-length arrays
	Fields   []Field    // members of an Object (struct)
}

// Field is one named field of a self-describing event.
type Field struct {
	Name string
	Type FieldType
}

// Metadata describes one event type as the stream defines it. Runtime
// (native) events carry minimal metadata: no name and no fields.
type Metadata struct {
	ID        uint32 // metadata id in this stream
	Provider  string
	EventID   uint32
	EventName string // as written in the stream; empty for runtime events
	Keywords  uint64
	Version   uint32
	Level     uint8
	Opcode    uint8
	// Fields is the self-describing field list; nil for runtime events.
	Fields []Field
	// HasFields is true when the metadata declared a field list (even an
	// empty one) so that payloads can be decoded from it.
	HasFields bool
	// Runtime classifies the provider when it is one of the runtime's own,
	// so consumers can switch on (Runtime, EventID) without string
	// comparisons.
	Runtime ProviderKind
	// Name is the TraceEvent-style display name: "GC/Start" for runtime
	// events (from the built-in table), the event name for EventSource
	// events, "Name/<opcode>" when an EventSource event has a non-default
	// opcode, and "EventID(N)" when nothing names it.
	Name string

	skip bool // Options.Keep rejected it
	// Every event of this record the consumer took, kept by Options.Keep
	// or not, and those with a stack (Reader.Summarize); listed: it is in
	// Reader.counted.
	readEvents, readStack uint64
	listed                bool
}

// metaCount is what a chunk counts of one record's events: all of them,
// and those with a non-empty resolved stack.
type metaCount struct {
	m             *Metadata
	events, stack uint64
}

// EventKeywords returns Keywords without the per-session bits (44-47) that
// EventSource ORs into every event's keywords; TraceEvent shows this form.
func (m *Metadata) EventKeywords() uint64 { return m.Keywords &^ 0x0000F00000000000 }

// FullName is "Provider/Name", the key TraceEvent's baselines use.
func (m *Metadata) FullName() string { return m.Provider + "/" + m.Name }

// ProviderKind says which of the runtime's own providers wrote an event
// (NotRuntime for any other provider): the key, with the event id, of what
// package clrevents knows about it.
type ProviderKind uint8

// Runtime providers.
const (
	NotRuntime     ProviderKind = iota
	Runtime                     // Microsoft-Windows-DotNETRuntime
	Rundown                     // Microsoft-Windows-DotNETRuntimeRundown
	Private                     // Microsoft-Windows-DotNETRuntimePrivate
	SampleProfiler              // Microsoft-DotNETCore-SampleProfiler
	EventPipe                   // Microsoft-DotNETCore-EventPipe
)

// Provider names of the runtime.
const (
	ProviderRuntime        = "Microsoft-Windows-DotNETRuntime"
	ProviderRundown        = "Microsoft-Windows-DotNETRuntimeRundown"
	ProviderPrivate        = "Microsoft-Windows-DotNETRuntimePrivate"
	ProviderSampleProfiler = "Microsoft-DotNETCore-SampleProfiler"
	ProviderEventPipe      = "Microsoft-DotNETCore-EventPipe"
)

// Name is the provider name of kind k (classifyProvider's inverse); ""
// for NotRuntime.
func (k ProviderKind) Name() string {
	switch k {
	case Runtime:
		return ProviderRuntime
	case Rundown:
		return ProviderRundown
	case Private:
		return ProviderPrivate
	case SampleProfiler:
		return ProviderSampleProfiler
	case EventPipe:
		return ProviderEventPipe
	}
	return ""
}

func classifyProvider(name string) ProviderKind {
	switch name {
	case ProviderRuntime:
		return Runtime
	case ProviderRundown:
		return Rundown
	case ProviderPrivate:
		return Private
	case ProviderSampleProfiler:
		return SampleProfiler
	case ProviderEventPipe:
		return EventPipe
	}
	return NotRuntime
}

// GUID is a Windows-layout GUID as it appears in payloads and headers.
type GUID [16]byte

// IsZero reports whether g is the empty GUID.
func (g GUID) IsZero() bool { return g == GUID{} }

// String formats g in the registry form 01234567-89ab-cdef-0123-456789abcdef.
func (g GUID) String() string {
	return fmt.Sprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15])
}

// Event is one event as delivered by Reader.Next. The Reader reuses the
// Event and the memory behind Payload and Stack: both are valid only until
// the next call to Next. Copy what must outlive it.
type Event struct {
	Meta *Metadata

	Timestamp       int64  // event clock ticks (see Header.Nanos, Header.Time)
	ThreadID        uint64 // OS thread the event is about
	CaptureThreadID uint64 // OS thread that wrote it (differs for samples)
	ProcessorNumber uint32 // CPU of the capturing thread; 0xFFFFFFFF unknown
	SequenceNumber  uint32 // per capture thread; 0 where the format has none
	StackID         uint32 // 0 = no stack
	// StackGen numbers the reader's stack-cache generations: within one,
	// a StackID always names the same instruction pointers (it changes at
	// a sequence point, where ids restart, when the cache evicts, and when
	// a stream redefines an id). A consumer that caches by stack may key
	// on (StackGen, StackID) instead of comparing Stack. 0: unknown (V3).
	StackGen uint32

	// Stack holds the resolved instruction pointers, leaf first; empty when
	// the event has no stack or an empty one.
	Stack []uint64

	ActivityID        GUID
	RelatedActivityID GUID

	// IsSorted is the writer's flag that every earlier event of the stream
	// has a timestamp at or below this one.
	IsSorted bool
	// run marks the ends of a run of events Options.Keep rejected (the
	// reader's, in padding): runHead, or runTail, which stands for every
	// event of the run after the head (the records between were dropped).
	run uint8

	// LostBefore counts events of this capture thread that were lost
	// immediately before this one (a sequence-number gap).
	LostBefore uint32

	Payload []byte
}
