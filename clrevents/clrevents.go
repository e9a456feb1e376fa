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
