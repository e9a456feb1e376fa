package clrevents

import (
	"errors"

	"github.com/clrspy/clrspy/nettrace"
)

// GCNoUserData is the payload of events that carry only the runtime
// instance (GCSuspendEEEnd, GCRestartEEBegin/End, GCFinalizersBegin,
// GCCreate/TerminateConcurrentThread).
type GCNoUserData struct {
	ClrInstanceID uint16
}

// DecodeGCNoUserData decodes a ClrInstanceID-only payload (v1; v0 is empty).
func DecodeGCNoUserData(p []byte, version uint32, _ int) (GCNoUserData, error) {
	r := reader{b: p}
	var v GCNoUserData
	if version >= 1 {
		v.ClrInstanceID = r.u16()
	}
	if !r.ok() {
		return v, short("GCNoUserData", version, len(p))
	}
	return v, nil
}

// ErrNoDecoder is returned by Decode for events this package has no typed
// decoder for.
var ErrNoDecoder = errors.New("no typed decoder for this event")

type decodeFunc func(p []byte, version uint32, ptrSize int) (any, error)

func wrap[T any](f func([]byte, uint32, int) (T, error)) decodeFunc {
	return func(p []byte, v uint32, ptr int) (any, error) { return f(p, v, ptr) }
}

type decodeKey struct {
	p  nettrace.ProviderKind
	id uint32
}

// decoders maps (provider, event id) to the typed decoder; the decoder
// handles every version.
var decoders = map[decodeKey]decodeFunc{
	{nettrace.Runtime, IDGCStart}:                     wrap(DecodeGCStart),
	{nettrace.Runtime, IDGCEnd}:                       wrap(DecodeGCEnd),
	{nettrace.Runtime, IDGCRestartEEEnd}:              wrap(DecodeGCNoUserData),
	{nettrace.Runtime, IDGCHeapStats}:                 wrap(DecodeGCHeapStats),
	{nettrace.Runtime, IDGCRestartEEBegin}:            wrap(DecodeGCNoUserData),
	{nettrace.Runtime, IDGCSuspendEEEnd}:              wrap(DecodeGCNoUserData),
	{nettrace.Runtime, IDGCSuspendEEBegin}:            wrap(DecodeGCSuspendEEBegin),
	{nettrace.Runtime, IDGCAllocationTick}:            wrap(DecodeAllocationTick),
	{nettrace.Runtime, IDGCCreateConcurrentThread}:    wrap(DecodeGCNoUserData),
	{nettrace.Runtime, IDGCTerminateConcurrentThread}: wrap(DecodeGCNoUserData),
	{nettrace.Runtime, IDGCFinalizersBegin}:           wrap(DecodeGCNoUserData),
	{nettrace.Runtime, IDBulkType}:                    wrap(DecodeBulkType),
	{nettrace.Runtime, IDGCSampledObjectAllocHigh}:    wrap(DecodeSampledObjectAllocation),
	{nettrace.Runtime, IDGCBulkSurvivingObjectRanges}: wrap(DecodeBulkSurvivingRanges),
	{nettrace.Runtime, IDGCBulkMovedObjectRanges}:     wrap(DecodeBulkMovedRanges),
	{nettrace.Runtime, IDGCGenerationRange}:           wrap(DecodeGenerationRange),
	{nettrace.Runtime, IDGCSampledObjectAllocLow}:     wrap(DecodeSampledObjectAllocation),
	{nettrace.Runtime, IDGCTriggered}:                 wrap(DecodeGCTriggered),
	{nettrace.Runtime, IDGCDynamicEvent}:              wrap(DecodeGCDynamicEvent),
	{nettrace.Runtime, IDContentionStart}:             wrap(DecodeContentionStart),
	{nettrace.Runtime, IDThreadCreated}:               wrap(DecodeThreadCreated),
	{nettrace.Runtime, IDThreadTerminated}:            wrap(DecodeThreadTerminated),
	{nettrace.Runtime, IDContentionLockCreated}:       wrap(DecodeContentionLockCreated),
	{nettrace.Runtime, IDContentionStop}:              wrap(DecodeContentionStop),
	{nettrace.Runtime, IDMethodLoad}:                  wrap(DecodeMethod),
	{nettrace.Runtime, IDMethodUnload}:                wrap(DecodeMethod),
	{nettrace.Runtime, IDMethodLoadVerbose}:           wrap(DecodeMethodVerbose),
	{nettrace.Runtime, IDMethodUnloadVerbose}:         wrap(DecodeMethodVerbose),
	{nettrace.Runtime, IDDomainModuleLoad}:            wrap(DecodeDomainModule),
	{nettrace.Runtime, IDModuleLoad}:                  wrap(DecodeModule),
	{nettrace.Runtime, IDModuleUnload}:                wrap(DecodeModule),
	{nettrace.Runtime, IDGCMarkWithType}:              wrap(DecodeGCMarkWithType),
	{nettrace.Runtime, IDGCPerHeapHistory}:            wrap(DecodeGCPerHeapHistory),
	{nettrace.Runtime, IDGCGlobalHeapHistory}:         wrap(DecodeGCGlobalHeapHistory),
	{nettrace.Runtime, IDWaitHandleWaitStart}:         wrap(DecodeWaitHandleWaitStart),
	{nettrace.Runtime, IDWaitHandleWaitStop}:          wrap(DecodeWaitHandleWaitStop),
	{nettrace.Runtime, IDAllocationSampled}:           wrap(DecodeAllocationSampled),

	{nettrace.Rundown, IDRundownMethodDCStartVerbose}: wrap(DecodeMethodVerbose),
	{nettrace.Rundown, IDRundownMethodDCEndVerbose}:   wrap(DecodeMethodVerbose),
	{nettrace.Rundown, IDRundownDomainModuleDCStart}:  wrap(DecodeDomainModule),
	{nettrace.Rundown, IDRundownDomainModuleDCEnd}:    wrap(DecodeDomainModule),
	{nettrace.Rundown, IDRundownModuleDCStart}:        wrap(DecodeModule),
	{nettrace.Rundown, IDRundownModuleDCEnd}:          wrap(DecodeModule),
	{nettrace.Rundown, IDRundownThreadDC}:             wrap(DecodeThreadCreated),

	{nettrace.SampleProfiler, IDThreadSample}: wrap(DecodeThreadSample),
}

// HasDecoder reports whether Decode knows the event type of m.
func HasDecoder(m *nettrace.Metadata) bool {
	_, ok := decoders[decodeKey{m.Runtime, m.EventID}]
	return ok
}

// Decode decodes any runtime event this package knows into its typed value
// (GCStart, Method, ContentionStart, ...), for tools that handle events
// generically (dumps, tests). Analyses call the specific decoders.
func Decode(ev *nettrace.Event, ptrSize int) (any, error) {
	f, ok := decoders[decodeKey{ev.Meta.Runtime, ev.Meta.EventID}]
	if !ok || ev.Meta.Runtime == nettrace.NotRuntime {
		return nil, ErrNoDecoder
	}
	return f(ev.Payload, ev.Meta.Version, ptrSize)
}
