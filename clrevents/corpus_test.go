//go:build compat

package clrevents

import (
	"testing"

	"github.com/clrspy/clrspy/internal/fuzzcorpus"
	"github.com/clrspy/clrspy/internal/fuzzcorpus/realtrace"
	"github.com/clrspy/clrspy/nettrace"
)

// TestFuzzCorpus keeps the checked-in seeds of the decoders' fuzz targets
// in step with the real traces: for every target, the first payload of each
// (event, version) it decodes in every real trace, with the trace's pointer
// size.
func TestFuzzCorpus(t *testing.T) {
	pay := func(target string, ids []uint32, args func(e realtrace.Event) []any, providers ...nettrace.ProviderKind) {
		if len(providers) == 0 {
			providers = []nettrace.ProviderKind{nettrace.Runtime}
		}
		var seeds []fuzzcorpus.Seed
		for _, p := range providers {
			for _, e := range realtrace.Of(t, p, 3, ids...) {
				seeds = append(seeds, fuzzcorpus.Seed{Label: e.Label(), Args: args(e)})
			}
		}
		fuzzcorpus.Check(t, target, seeds)
	}
	pay("FuzzContention", []uint32{IDContentionStart, IDContentionStop, IDContentionLockCreated, IDWaitHandleWaitStart,
		IDWaitHandleWaitStop, IDThreadCreated, IDThreadTerminated},
		func(e realtrace.Event) []any { return []any{e.Payload, e.Version, e.PtrSize} })
	pay("FuzzGCDecoders", []uint32{IDGCStart, IDGCEnd, IDGCSuspendEEBegin, IDGCHeapStats, IDGCGlobalHeapHistory,
		IDGCPerHeapHistory, IDGCMarkWithType, IDGCTriggered, IDGCDynamicEvent},
		func(e realtrace.Event) []any { return []any{e.Payload, uint8(e.Version), e.PtrSize == 8} })
	pay("FuzzMethodVerbose", []uint32{IDMethodLoad, IDMethodLoadVerbose, IDMethodUnloadVerbose},
		func(e realtrace.Event) []any { return []any{e.Payload, e.Version} }, nettrace.Runtime, nettrace.Rundown)
	pay("FuzzModule", []uint32{151, IDModuleLoad, IDModuleUnload, IDRundownModuleDCStart, IDRundownModuleDCEnd},
		func(e realtrace.Event) []any { return []any{e.Payload, e.Version} }, nettrace.Runtime, nettrace.Rundown)
	pay("FuzzThreadSample", []uint32{IDThreadSample},
		func(e realtrace.Event) []any { return []any{e.Payload} }, nettrace.SampleProfiler)
	pay("FuzzAllocationTick", []uint32{IDGCAllocationTick, IDAllocationSampled, IDGCSampledObjectAllocHigh, IDGCSampledObjectAllocLow},
		func(e realtrace.Event) []any { return []any{e.Payload, e.Version} })
	pay("FuzzMovement", []uint32{IDGCBulkMovedObjectRanges, IDGCBulkSurvivingObjectRanges, IDGCGenerationRange},
		func(e realtrace.Event) []any { return []any{e.Payload, e.Version} })
	pay("FuzzBulkType", []uint32{IDBulkType},
		func(e realtrace.Event) []any { return []any{e.Payload, e.Version} })
	pay("FuzzHeapDump", []uint32{IDGCBulkNode, IDGCBulkEdge, IDGCBulkRootEdge, IDGCBulkRootCWTEdge, IDGCBulkRootStaticVar, IDGCBulkRCW, IDGCBulkRootCCW},
		func(e realtrace.Event) []any { return []any{e.Payload, uint8(e.ID), e.PtrSize == 8} })

	// FuzzDecode picks its decoder by index into the sorted decoder keys.
	keys := decoderKeys()
	var seeds []fuzzcorpus.Seed
	for i, k := range keys {
		for _, e := range realtrace.Of(t, k.Provider, 2, k.ID) {
			seeds = append(seeds, fuzzcorpus.Seed{Label: e.Label(), Args: []any{uint16(i), e.Version, e.PtrSize == 4, e.Payload}})
		}
	}
	fuzzcorpus.Check(t, "FuzzDecode", seeds)
}
